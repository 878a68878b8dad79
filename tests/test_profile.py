"""compare --profile: speedscope parsing and the differential table (no servers), and what
the comment says when py-spy is missing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchwatch.judge.verdict import CompareExtra, Comparison, SideInfo
from benchwatch.profiling import profile
from benchwatch.profiling.speedscope import (
    ProfileReport,
    VariantProfile,
    difference,
    markdown,
    per_request,
)
from benchwatch.report.comment import render

FRAMES = [
    {"name": "run", "file": "/env/lib/python3.11/site-packages/uvicorn/main.py", "line": 1},
    {
        "name": "Config.load_app",
        "file": "/env/lib/python3.11/site-packages/uvicorn/config.py",
        "line": 2,
    },
    {"name": "app", "file": "/repo/apps/hello/app.py", "line": 3},
    {"name": "spin_cpu", "file": "/repo/apps/_inject.py", "line": 41},
    {
        "name": "serialize",
        "file": "/env/lib/python3.11/site-packages/fastapi/routing.py",
        "line": 5,
    },
]


def speedscope(path: Path, samples: list[list[int]], weight: float = 0.004) -> Path:
    path.write_text(
        json.dumps(
            {
                "$schema": "https://www.speedscope.app/file-format-schema.json",
                "shared": {"frames": FRAMES},
                "profiles": [
                    {
                        "type": "sampled",
                        "name": "Thread 1",
                        "unit": "seconds",
                        "startValue": 0,
                        "endValue": 1,
                        "samples": samples,
                        "weights": [weight] * len(samples),
                    }
                ],
            }
        )
    )
    return path


def test_per_request_self_and_inclusive_time_leave_the_boot_out(tmp_path):
    samples = (
        [[0, 1]] * 50 + [[0, 2, 4]] * 10 + [[0, 2]] * 5
    )  # boot (left out), then 15 request samples
    side = per_request(speedscope(tmp_path / "p.json", samples), requests=100)
    assert side.seconds == pytest.approx(15 * 0.004)
    assert side.self_us["serialize (fastapi/routing.py)"] == pytest.approx(10 * 4000 / 100)
    assert side.self_us["app (hello/app.py)"] == pytest.approx(5 * 4000 / 100)
    assert side.total_us["app (hello/app.py)"] == pytest.approx(15 * 4000 / 100)
    assert not any("load_app" in name for name in side.self_us)


def test_difference_puts_the_function_that_grew_most_first(tmp_path):
    base = per_request(
        speedscope(tmp_path / "b.json", [[0, 2, 4]] * 10 + [[0, 2]] * 5), requests=100
    )
    head = per_request(
        speedscope(tmp_path / "h.json", [[0, 2, 4]] * 10 + [[0, 2]] * 5 + [[0, 2, 3]] * 6),
        requests=100,
    )
    rows = difference(base, head)
    assert rows[0].function == "spin_cpu (apps/_inject.py)"
    assert rows[0].base_us == 0 and rows[0].head_us == pytest.approx(6 * 4000 / 100)
    assert all(abs(r.change_us) <= abs(rows[0].change_us) for r in rows)


def _comparison(report: ProfileReport) -> Comparison:
    side = lambda role: SideInfo(role=role, spec="latest", kind="stack")  # noqa: E731
    return Comparison(
        base=side("base"),
        head=side("head"),
        rounds=6,
        quick=True,
        rows=[],
        extra=CompareExtra(profile=report),
    )


def test_missing_py_spy_is_said_and_nothing_is_started(monkeypatch, tmp_path):
    monkeypatch.setattr(profile, "py_spy", lambda: None)
    report = profile.profile_pairs(
        "oha",
        [],
        {},
        tmp_path,
        quick=True,
        duration=1.0,
    )
    assert not report.available and "py-spy not found" in report.reason
    assert "Profiles unavailable: py-spy not found" in render(_comparison(report))


def test_the_comment_shows_where_the_time_went(tmp_path):
    base = per_request(speedscope(tmp_path / "b.json", [[0, 2, 4]] * 10), requests=100)
    head = per_request(
        speedscope(tmp_path / "h.json", [[0, 2, 4]] * 10 + [[0, 2, 3]] * 6), requests=100
    )
    variant = VariantProfile(
        scenario="hello",
        requests={"base": 100, "head": 100},
        sampled_seconds={},
        functions=difference(base, head),
        files={},
    )
    text = "\n".join(markdown(ProfileReport(available=True, variants=[variant])))
    assert "Where the time went" in text
    assert "| `spin_cpu (apps/_inject.py)` | 0.0 | 240.0 | +240.0 |" in text
