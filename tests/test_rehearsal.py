"""The relative trend rehearsed for real (scripts/rehearse_history.py): a throwaway repository
with a one-endpoint FastAPI app, five commits, the last adding a busy loop to every request;
for each commit what publish.yml runs (compare with the parent side by side, relative,
trend-add, changes). `changes` needs 8 points in a `(vs parent)` series before it gives a
verdict, so the history starts from the flat part of an earlier real rehearsal on this
project's development machine (tests/fixtures/rehearsal/data.js: commits 2-5 of a
10-commit run, none slower; real measured ratios), as publish.yml starts from gh-pages."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
START = REPO / "tests" / "fixtures" / "rehearsal" / "data.js"


@pytest.mark.slow
def test_changes_finds_the_commit_that_made_every_request_slower(tmp_path: Path) -> None:
    out = tmp_path / "rehearsal"
    done = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "rehearse_history.py"), "--commits", "5", "--culprit", "5",
         "--rounds", "6", "--start-history", str(START), "--out", str(out)],
        capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert (out / "rehearsal.json").is_file(), done.stderr[-2000:]
    summary = json.loads((out / "rehearsal.json").read_text())
    culprit = summary["culprit"]
    steps = {s["number"]: s for s in summary["steps"]}
    assert all(s["point"] for s in steps.values()), done.stdout  # every push gave a relative point
    assert steps[5]["compare_exit"] == 1, done.stdout  # compare itself calls the culprit a regression
    final = summary["final_changes"]
    assert final and {c["commit"] for c in final} == {culprit}, done.stdout
    assert {c["kind"] for c in final} == {"regression"}
    # the timing (vs parent) series, and the counts: absolute (one point says it) and (vs parent)
    relative = [c for c in final if c["series"].endswith("cpu/req (vs parent)")]
    counted = [c for c in final if " seq instr/req" in c["series"] or " seq syscalls/req" in c["series"]]
    assert relative and len(relative) + len(counted) == len(final), final
    assert summary["found_in_counts"], final
    assert summary["found"] and done.returncode == 0
    # 4 earlier points + 4 pushes: the culprit's own push brings the series to 8 points and alerts
    assert [s["changes_exit"] for _, s in sorted(steps.items())] == [0, 0, 0, 1]
    assert summary["first_found_at_push"] == 5
