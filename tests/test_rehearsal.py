"""The relative trend rehearsed (scripts/rehearse_history.py): a throwaway repository with a
one-endpoint FastAPI app whose last commit adds a busy loop to every request; for each push what
publish.yml runs (compare with the parent side by side, relative, trend-add, changes).

`changes` needs 8 points in a `(vs parent)` series before it gives a verdict. The recorded
rehearsal (tests/fixtures/rehearsal: data.js, the published history, and pushes/, a real
5-commit rehearsal's compares; README there) carries the bookkeeping of many pushes: replayed
without measuring, the three unchanged pushes alert nothing and the culprit's push alerts, in the
timing and the count series. The slow test measures one push for real, the culprit's, on top of
the seven earlier real points: compare, relative, trend-add and changes name that commit, and
the compare's counts say where the loop's instructions went."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FIXTURE = REPO / "tests" / "fixtures" / "rehearsal"
START = FIXTURE / "data.js"  # seven real (vs parent) points, none slower
RECORDED = (
    FIXTURE / "pushes"
)  # the pushes of commits 2-5 that made the last three of them, and the culprit's
EARLIER = 4  # data.js's points from before the recorded pushes


def _check(summary: dict, culprit_push: int) -> None:
    """Every push gave a point, only the culprit's push alerts, and every change point it names is
    the culprit, a regression, in the timing (vs parent) series and the counts."""
    steps = {s["number"]: s for s in summary["steps"]}
    assert all(s["point"] for s in steps.values()), summary["steps"]
    assert steps[culprit_push]["compare_exit"] == 1  # compare itself calls the culprit a regression
    final = summary["final_changes"]
    assert final and {c["commit"] for c in final} == {summary["culprit"]}, final
    assert {c["kind"] for c in final} == {"regression"}
    # the timing (vs parent) series, and the counts: absolute (one point says it) and (vs parent)
    relative = [c for c in final if c["series"].endswith("cpu/req (vs parent)")]
    counted = [
        c for c in final if " seq instr/req" in c["series"] or " seq syscalls/req" in c["series"]
    ]
    assert relative and len(relative) + len(counted) == len(final), final
    assert summary["found_in_counts"], final
    assert summary["found"]
    assert [s["changes_exit"] for _, s in sorted(steps.items())] == [0] * (len(steps) - 1) + [1]
    assert summary["first_found_at_push"] == culprit_push


def _script():
    spec = importlib.util.spec_from_file_location(
        "rehearse_history", REPO / "scripts" / "rehearse_history.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _entries(path: Path) -> list[tuple[str, dict[str, float]]]:
    data = json.loads(path.read_text().split("=", 1)[1])
    (entries,) = data["entries"].values()
    return [(e["commit"]["id"], {b["name"]: b["value"] for b in e["benches"]}) for e in entries]


def test_replayed_pushes_alert_only_at_the_culprit_in_the_timings_and_the_counts(
    tmp_path, cli, monkeypatch
) -> None:
    """The recorded compares of a real rehearsal through the script's own relative, trend-add and
    changes (in this process): after the four earlier points, three unchanged pushes and the culprit."""
    script = _script()

    def in_process(root: Path, *args: str) -> subprocess.CompletedProcess:
        done = cli(*args, root=root)
        return subprocess.CompletedProcess(args, done.returncode, done.stdout, done.stderr)

    monkeypatch.setattr(script, "benchwatch", in_process)
    earlier = tmp_path / "earlier.js"  # the published history before the recorded pushes
    text = START.read_text()
    data = json.loads(text.split("=", 1)[1])
    (suite,) = data["entries"]
    data["entries"][suite] = data["entries"][suite][:EARLIER]
    earlier.write_text(text.split("=", 1)[0] + "= " + json.dumps(data))
    out = tmp_path / "replay"
    summary = script.replay(out, RECORDED, earlier)
    recorded = json.loads((RECORDED / "rehearsal.json").read_text())
    assert summary["commits"] == recorded["commits"] and len(summary["steps"]) == 4
    _check(summary, culprit_push=5)
    # the counts history starts with the first push's parent (the compare's base side), then each pushed commit
    counts = [commit for commit, _ in _entries(out / "history-counts" / "data.js")]
    assert counts == recorded["commits"]
    # the unchanged pushes publish the points data.js holds after its first four
    assert _entries(out / "history" / "data.js")[: len(_entries(START))] == _entries(START)


@pytest.mark.slow
def test_changes_finds_the_commit_that_made_every_request_slower(tmp_path: Path) -> None:
    """One push measured for real: the culprit against its parent, after data.js's seven points."""
    out = tmp_path / "rehearsal"
    done = subprocess.run(
        [
            sys.executable,
            str(REPO / "scripts" / "rehearse_history.py"),
            "--commits",
            "2",
            "--culprit",
            "2",
            "--rounds",
            "6",
            "--start-history",
            str(START),
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert (out / "rehearsal.json").is_file(), done.stderr[-2000:]
    summary = json.loads((out / "rehearsal.json").read_text())
    _check(summary, culprit_push=2)
    assert done.returncode == 0, done.stdout
    # the counts: the parent's (the compare's base side) and the culprit's, both measured here
    assert set(summary["steps"][0]["counts"]) == {
        "tiny@latest GET /hi seq instr/req",
        "tiny@latest GET /hi seq syscalls/req",
        "tiny@latest GET /hi seq retained/req",  # memory kept per request (no database: no SQL)
    }
    # the culprit's compare: its loop is a gating regression of the estimated cost, its instructions
    # per request the mechanism (a regression, not gating alone), and the comment says where they went
    compared = out / summary["culprit"][:12] / "compare"
    data = json.loads((compared / "compare.json").read_text())
    instructions = next(r for r in data["rows"] if r["metric"] == "instructions_per_request")
    assert (
        instructions["verdict"] == "regression"
        and not instructions["gating"]
        and instructions["low"] > 1.2
    )
    cost = next(r for r in data["rows"] if r["metric"] == "cost_us_per_request")
    assert cost["verdict"] == "regression" and cost["gating"] and cost["low"] > 1.1
    syscalls = next(r for r in data["rows"] if r["metric"] == "syscalls_per_request")
    assert syscalls["verdict"] == "unchanged" and "epoll_pwait" in syscalls["detail"]
    assert data["extra"]["counts_seconds"] > 0
    comment = (compared / "comment.md").read_text()
    assert "Where the instructions went: tiny GET /hi seq instructions_per_request" in comment
    if data["head"]["environment"]["interpreters"]["latest"][
        "symbols"
    ]:  # the loop's own function, by name
        assert "rangeiter_next (libpython)" in comment
    else:  # a stripped interpreter: its functions are not named, and the comment says so
        assert "libpython: " in comment and "without a name" in comment
