"""`benchwatch relative` and `benchwatch trend-add`: a compare's rows as '(vs parent)' points,
appended to a data.js as github-action-benchmark does. The rows here are TEST DATA."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchwatch.judge.verdict import Comparison, Row, SideInfo
from benchwatch.trend import histories
from benchwatch.trend.changes import params_for

CPU_NAME = "svc@latest GET /s c=10 cpu/req (side by side)"
RPS_NAME = "svc@latest GET /s c=10 rps (side by side)"


def row(
    name: str,
    metric: str,
    ratio: float | None,
    low: float | None,
    high: float | None,
    *,
    bigger: bool = False,
    gating: bool = False,
    verdict: str = "unchanged",
    reason: str = "",
) -> Row:
    return Row(
        label=f"svc GET /s c=10 {metric}",
        kind="load",
        scenario="svc",
        endpoint="GET /s",
        metric=metric,
        floor_key=metric,
        unit="req/s" if bigger else "us",
        bigger_is_better=bigger,
        base_figure=name,
        head_figure=name,
        ratio=ratio,
        low=low,
        high=high,
        verdict=verdict,
        text="",
        floor=0.05,
        floor_source="default",
        gating=gating,
        reason=reason,
    )


def write_compare(directory: Path, rows: list[Row]) -> Path:
    side = lambda role, sha: SideInfo(role=role, spec=sha, kind="ref", commit=sha * 40)  # noqa: E731
    comparison = Comparison(
        base=side("base", "a"), head=side("head", "b"), rounds=8, quick=True, rows=rows
    )
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "compare.json").write_text(comparison.model_dump_json())
    return directory


def test_gating_rows_become_vs_parent_points_and_bigger_is_better_is_inverted(tmp_path, cli):
    compare = write_compare(
        tmp_path / "c",
        [
            row(
                CPU_NAME, "cpu_us_per_request", 1.05, 1.03, 1.07, gating=True, verdict="regression"
            ),
            row(RPS_NAME, "rps", 0.8, 0.75, 0.85, bigger=True),
        ],
    )
    out = tmp_path / "gab-relative.json"
    done = cli("relative", str(compare), "--out", str(out))
    assert done.returncode == 0, done.stderr
    [cpu] = json.loads(out.read_text())
    assert cpu["name"] == "svc@latest GET /s c=10 cpu/req (vs parent)" and cpu["unit"] == "x"
    assert cpu["value"] == 1.05 and cpu["range"] == "± 0.02" and "> 1 means worse" in cpu["extra"]
    assert params_for(cpu["name"]).mode == "spike"  # what `changes` looks for in these series
    assert cli("relative", str(compare), "--out", str(out), "--all").returncode == 0
    by_name = {e["name"]: e for e in json.loads(out.read_text())}
    rps = by_name["svc@latest GET /s c=10 rps (vs parent)"]
    assert (
        rps["value"] == 1.25 and "inverted so > 1 means worse" in rps["extra"]
    )  # 20 % fewer req/s: worse
    assert "[1.1765, 1.3333]" in rps["extra"]


def test_rows_without_an_interval_give_no_point_and_say_so(tmp_path, cli):
    compare = write_compare(
        tmp_path / "c",
        [
            row(CPU_NAME, "cpu_us_per_request", 1.0, 0.99, 1.01, gating=True),
            row(
                CPU_NAME.replace("c=10", "rate=50%"),
                "cpu_us_per_request",
                None,
                None,
                None,
                gating=True,
                verdict="no verdict",
                reason="too few samples for an interval",
            ),
        ],
    )
    out = tmp_path / "gab.json"
    done = cli("relative", str(compare / "compare.json"), "--out", str(out))
    assert done.returncode == 0
    assert len(json.loads(out.read_text())) == 1
    assert "no point for svc GET /s c=10 cpu_us_per_request: too few samples" in done.stderr


def test_a_failed_compare_publishes_no_relative_point(tmp_path, cli):
    compare = write_compare(
        tmp_path / "c",
        [
            row(
                CPU_NAME,
                "cpu_us_per_request",
                None,
                None,
                None,
                gating=True,
                verdict="no verdict",
                reason="invalid measurement on head",
            ),
        ],
    )
    out = tmp_path / "gab.json"
    done = cli("relative", str(compare), "--out", str(out))
    assert done.returncode == 2 and not out.exists()  # not measured
    assert done.stderr.startswith("ERROR: ") and "no relative point published" in done.stderr
    assert (
        len(done.stderr.strip().splitlines()) == 1 and "invalid measurement on head" in done.stderr
    )
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "compare.json").write_text("{")
    done = cli("relative", str(tmp_path / "bad"), "--out", str(out))
    assert done.returncode == 3 and "not a benchwatch compare.json" in done.stderr


def test_trend_add_appends_entries_that_changes_reads(tmp_path, cli):
    gab = tmp_path / "gab.json"
    data_js = tmp_path / "dev" / "bench" / "data.js"
    for i, value in enumerate([1.0, 1.01, 0.99]):
        gab.write_text(json.dumps([{"name": "x cpu/req (vs parent)", "unit": "x", "value": value}]))
        done = cli(
            "trend-add",
            str(data_js),
            "--gab",
            str(gab),
            "--suite",
            "benchwatch (vs parent)",
            "--commit",
            f"{i:x}" * 40,
            "--message",
            f"commit {i}",
            "--timestamp",
            "2026-11-23T10:00:00Z",
            "--url",
            f"https://example.org/c/{i}",
        )
        assert done.returncode == 0, done.stderr
    [series] = histories.series_of(data_js)
    assert series.suite == "benchwatch (vs parent)" and not series.bigger_is_better
    assert [p.value for p in series.points] == [1.0, 1.01, 0.99]
    assert series.points[2].url == "https://example.org/c/2" and series.points[0].commit == "0" * 40


@pytest.mark.parametrize(
    "content, message",
    [
        ('[{"name": "x", "unit": "x", "value": null}]', "bad gab entry"),
        ('{"name": "x"}', "JSON array"),
        ("[]", "no points to add"),
    ],
)
def test_trend_add_refuses_bad_gab_files_and_keeps_the_history(tmp_path, cli, content, message):
    data_js = tmp_path / "data.js"
    data_js.write_text('window.BENCHMARK_DATA = {"entries": {}}\n')
    before = data_js.read_text()
    gab = tmp_path / "gab.json"
    gab.write_text(content)
    done = cli("trend-add", str(data_js), "--gab", str(gab), "--suite", "s", "--commit", "a" * 40)
    assert done.returncode == 3 and message in done.stderr and done.stderr.startswith("ERROR: ")
    assert data_js.read_text() == before


def test_trend_add_never_overwrites_a_corrupt_history(tmp_path, cli):
    data_js = tmp_path / "data.js"
    data_js.write_text('window.BENCHMARK_DATA = {"entries": {')
    gab = tmp_path / "gab.json"
    gab.write_text('[{"name": "x", "unit": "x", "value": 1.0}]')
    done = cli("trend-add", str(data_js), "--gab", str(gab), "--suite", "s", "--commit", "a" * 40)
    assert done.returncode == 3 and "corrupt history" in done.stderr
    assert data_js.read_text() == 'window.BENCHMARK_DATA = {"entries": {'
