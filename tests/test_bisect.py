"""bisect: the search over commits (a fake compare), the refusals, and a real one (slow)."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, benchwatch

from benchwatch.attribute.bisect import Probe, first_parent_range, judge_comparison, search
from benchwatch.attribute.table import Ratio
from benchwatch.errors import UserError
from benchwatch.judge.verdict import Comparison, Row, SideInfo
from benchwatch.results.schema import Problem

COMMITS = [f"c{i}" for i in range(1, 9)]  # c8 is bad


def judge_with(first_bad: int, skip: set[str] = frozenset(), calls: list[str] | None = None):
    def judge(commit: str) -> Probe:
        if calls is not None:
            calls.append(commit)
        if commit in skip:
            return Probe(commit, commit, "skip", reason="head: [boot] server exited")
        bad = int(commit[1:]) >= first_bad
        return Probe(
            commit,
            commit,
            "bad" if bad else "good",
            Ratio(ratio=1.05 if bad else 1.0, low=1, high=1.1),
        )

    return judge


@pytest.mark.parametrize("first_bad", range(1, 9))
def test_finds_every_possible_first_bad_commit_in_log2_probes_after_checking_bad(first_bad):
    calls: list[str] = []
    result = search("c0", COMMITS, judge_with(first_bad, calls=calls))
    assert result.first_bad == f"c{first_bad}"
    assert calls[0] == "c8"  # bad is checked first, as `git bisect` needs a bad commit
    assert len(calls) - 1 <= math.ceil(math.log2(len(COMMITS)))
    assert result.found() is not None and result.candidates == [f"c{first_bad}"]


def test_a_commit_that_does_not_build_is_skipped_and_a_neighbour_is_tried():
    calls: list[str] = []
    result = search("c0", COMMITS, judge_with(6, skip={"c4"}, calls=calls))
    assert result.first_bad == "c6"
    assert [p.outcome for p in result.path if p.commit == "c4"] == ["skip"]
    assert "c4" in calls and result.path[calls.index("c4")].reason.startswith("head")


def test_skips_around_the_answer_leave_every_candidate_named():
    result = search("c0", COMMITS, judge_with(5, skip={"c4", "c5"}))
    assert result.first_bad == "c6" and result.candidates == ["c4", "c5", "c6"]


def test_bad_not_slower_than_good_is_bad_input():
    with pytest.raises(UserError, match="is not slower than --good") as caught:
        search("c0", COMMITS, judge_with(99))
    assert caught.value.exit_code == 3


def _row(verdict: str, ratio: float, metric: str = "cpu_us_per_request") -> Row:
    return Row(
        label=f"hello GET / c=10 {metric}",
        kind="load",
        scenario="hello",
        endpoint="GET /",
        metric=metric,
        floor_key="x",
        unit="us",
        bigger_is_better=False,
        base_figure="a",
        head_figure="b",
        ratio=ratio,
        low=ratio - 0.01,
        high=ratio + 0.01,
        verdict=verdict,
        text="",
        floor=0.02,
        floor_source="t",
        gating=True,
    )


def _cmp(rows, problems=()) -> Comparison:
    side = lambda role: SideInfo(role=role, spec="x", kind="ref")  # noqa: E731
    return Comparison(
        base=side("base"),
        head=side("head"),
        rounds=6,
        quick=True,
        rows=rows,
        problems=list(problems),
    )


def test_a_probe_is_bad_only_on_a_significant_regression_of_the_metric_and_skipped_when_head_failed():
    assert judge_comparison("c", "s", _cmp([_row("regression", 1.06)])).outcome == "bad"
    assert judge_comparison("c", "s", _cmp([_row("unchanged", 1.01)])).outcome == "good"
    assert judge_comparison("c", "s", _cmp([_row("improvement", 0.9)])).outcome == "good"
    failed = _cmp(
        [],
        [Problem(variant="hello@latest", phase="boot", reason="head: server exited with code 1")],
    )
    probe = judge_comparison("c", "s", failed)
    assert probe.outcome == "skip" and "server exited" in probe.reason


def _git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t", *args],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()


def test_good_not_an_ancestor_of_bad_is_bad_input_and_the_range_is_first_parent(tmp_path):
    _git(tmp_path, "init", "-q")
    for name in ("a", "b", "c"):
        (tmp_path / name).write_text(name)
        _git(tmp_path, "add", name)
        _git(tmp_path, "commit", "-qm", name)
    a, c = _git(tmp_path, "rev-parse", "HEAD~2"), _git(tmp_path, "rev-parse", "HEAD")
    assert len(first_parent_range(tmp_path, a, c)) == 2
    with pytest.raises(UserError, match="not an ancestor") as caught:
        first_parent_range(tmp_path, c, a)
    assert caught.value.exit_code == 3


def test_the_command_refuses_an_unknown_metric_in_one_line(cli):
    done = cli(
        "bisect",
        "--good",
        "HEAD~1",
        "--bad",
        "HEAD",
        "-k",
        "hello@latest",
        "--figure",
        "speed",
        root=REPO,
    )
    assert done.returncode == 3
    assert (
        done.stderr.startswith("ERROR: --figure 'speed': not a load metric")
        and len(done.stderr.splitlines()) == 1
    )


@pytest.mark.slow
@pytest.mark.load_independent
def test_real_bisect_finds_the_commit_that_made_hello_slower(tmp_path):
    """Three commits, the first one slow: bad is checked, then one probe finds it (2 compares)."""
    repo = tmp_path / "repo"
    made = subprocess.run(
        [
            sys.executable,
            str(REPO / "scripts" / "make_bisect_repo.py"),
            str(repo),
            "--commits",
            "3",
            "--slow-commit",
            "1",
            "--spin",
            "4000",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    slow = made.stdout.split()[-1]
    done = benchwatch(
        "bisect",
        "--good",
        "HEAD~3",
        "--bad",
        "HEAD",
        "-k",
        "hello@latest",
        "--rounds",
        "6",
        "--out",
        str(tmp_path / "out"),
        root=repo,
    )
    assert done.returncode == 0, done.stderr
    assert f"first bad commit: {slow}" in done.stdout
    assert "2 compares (the check of bad, then 1 probes)" in done.stdout
    assert len(_git(repo, "worktree", "list").splitlines()) == 1  # every worktree removed


def test_bisect_compares_each_probe_against_good_and_skips_a_commit_that_does_not_load(tmp_path):
    from types import SimpleNamespace

    from benchwatch.attribute.bisect import bisect

    _git(tmp_path, "init", "-q")
    for number in range(5):
        (tmp_path / "f").write_text(str(number))
        _git(tmp_path, "add", "f")
        _git(tmp_path, "commit", "-qm", f"c{number}")
    hashes = _git(tmp_path, "rev-list", "--reverse", "HEAD").split()  # c0 (good) .. c4 (bad)
    asked: list[tuple[str, str]] = []

    def compare_fn(project, base, head, options):
        asked.append((base, head))
        assert (options.load, options.counts, options.micro) == (
            False,
            True,
            False,
        )  # counts first: no timing rounds
        if head == hashes[2]:
            raise UserError("head: benchwatch.toml: not valid TOML")
        slow = hashes.index(head) >= 3
        return _cmp(
            [
                _row(
                    "regression" if slow else "unchanged",
                    1.1 if slow else 1.0,
                    "instructions_per_request",
                )
            ]
        ), options.out

    result = bisect(
        SimpleNamespace(root=tmp_path),
        "HEAD~4",
        "HEAD",
        "hello@latest",
        out=tmp_path / "out",
        quiet=True,
        compare_fn=compare_fn,
    )
    assert {base for base, _ in asked} == {hashes[0]}  # always against good
    assert result.first_bad == hashes[3]
    assert [p.outcome for p in result.path if p.commit == hashes[2]] == ["skip"]
