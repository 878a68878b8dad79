"""`benchwatch bisect`: binary search over the first-parent commits between a good and a bad
ref, each probe a side-by-side compare of the commit against good. A probe that cannot be
built or booted is skipped (as `git bisect skip`) and a neighbour is tried instead."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from benchwatch.attribute.by_compare import CompareFn
from benchwatch.attribute.table import Ratio
from benchwatch.compare.options import CompareOptions
from benchwatch.errors import EXIT_UNMEASURED, UserError
from benchwatch.figures.metrics import COUNTS, CPU, INSTRUCTIONS, Metric
from benchwatch.judge.verdict import Comparison
from benchwatch.measure.session import open_session
from benchwatch.project.variants import Project

Outcome = Literal["bad", "good", "skip"]


@dataclass(frozen=True)
class Probe:
    commit: str
    subject: str
    outcome: Outcome
    ratio: Ratio | None = None
    reason: str = ""

    def line(self) -> str:
        ratio = f" {self.ratio.shown()}" if self.ratio and self.ratio.ratio is not None else ""
        why = f" ({self.reason})" if self.reason else ""
        return f"{self.commit[:10]} {self.outcome}{ratio}{why}  {self.subject}"


@dataclass
class BisectResult:
    good: str
    bad: str
    commits: list[str]
    path: list[Probe] = field(default_factory=list)  # every probe in order, the check of bad first
    first_bad: str | None = None
    candidates: list[str] = field(default_factory=list)  # when skips leave more than one

    @property
    def compares(self) -> int:
        return len(self.path)

    def found(self) -> Probe | None:
        return next(
            (p for p in self.path if p.commit == self.first_bad and p.outcome == "bad"), None
        )


Judge = Callable[[str], Probe]


def _git(root: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, timeout=120
    )


def commit_of(root: Path, ref: str) -> str:
    done = (
        _git(root, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")
        if not ref.startswith("-")
        else None
    )
    if done is None or done.returncode != 0:
        raise UserError(f"{ref!r} is not a commit of {root}")
    return done.stdout.strip()


def first_parent_range(root: Path, good: str, bad: str) -> list[str]:
    """The first-parent commits after good up to and including bad, oldest first."""
    if _git(root, "merge-base", "--is-ancestor", good, bad).returncode != 0:
        raise UserError(
            f"--good {good[:10]} is not an ancestor of --bad {bad[:10]}: give an older good ref"
        )
    done = _git(root, "rev-list", "--first-parent", "--reverse", f"{good}..{bad}")
    commits = done.stdout.split()
    if not commits:
        raise UserError("--good and --bad are the same commit: nothing to bisect")
    return commits


def subject(root: Path, commit: str) -> str:
    return _git(root, "log", "-1", "--format=%s", commit).stdout.strip()


def search(good: str, commits: list[str], judge: Judge) -> BisectResult:
    """Check that the last commit (bad) is slower, then bisect the ones before it."""
    result = BisectResult(good=good, bad=commits[-1], commits=commits)
    last = judge(commits[-1])
    result.path.append(last)
    if last.outcome == "skip":
        raise UserError(
            f"--bad {commits[-1][:10]} could not be measured ({last.reason}): give a bad ref that builds",
            EXIT_UNMEASURED,
        )
    if last.outcome != "bad":
        shown = last.ratio.shown() if last.ratio else "no ratio"
        raise UserError(
            f"--bad {commits[-1][:10]} is not slower than --good {good[:10]} ({shown}): nothing to find"
        )
    low, high = (
        -1,
        len(commits) - 1,
    )  # commits[low] (or good) is known good, commits[high] known bad
    skipped: set[int] = set()
    while True:
        between = [i for i in range(low + 1, high) if i not in skipped]
        if not between:
            break
        index = between[(len(between) - 1) // 2]
        probe = judge(commits[index])
        result.path.append(probe)
        if probe.outcome == "skip":
            skipped.add(index)
        elif probe.outcome == "bad":
            high = index
        else:
            low = index
    result.first_bad = commits[high]
    result.candidates = [commits[i] for i in range(low + 1, high + 1)]
    return result


def judge_comparison(
    commit: str, title: str, comparison: Comparison, metric: Metric = CPU
) -> Probe:
    """bad: a figure of the metric regressed significantly beyond its floor; skip: the commit's
    side did not build, boot or answer; good otherwise."""
    head_trouble = [p for p in comparison.problems if p.reason.startswith("head")]
    rows = [r for r in comparison.rows if r.metric == metric.key and r.kind == "load"]
    judged = [r for r in rows if r.ratio is not None]
    if head_trouble or not judged:
        reason = head_trouble[0].line() if head_trouble else f"no {metric.title} figure measured"
        return Probe(commit, title, "skip", reason=reason[:200])
    worse = [r for r in judged if r.verdict == "regression"]
    worst = max(worse or judged, key=lambda r: abs((r.ratio or 1.0) - 1.0))
    return Probe(commit, title, "bad" if worse else "good", Ratio.of(worst), reason=worst.label)


def bisect(
    project: Project,
    good: str,
    bad: str,
    patterns: str,
    *,
    metric: Metric = INSTRUCTIONS,
    quick: bool = True,
    rounds: int | None = None,
    out: Path | None = None,
    quiet: bool = False,
    compare_fn: CompareFn | None = None,
) -> BisectResult:
    """Find the first commit in good..bad whose compare against good regressed `metric`. A count
    (instructions or system calls per request) is measured alone, once per side and probe: no
    timing rounds."""
    if compare_fn is None:
        from benchwatch.compare.compare import compare

        compare_fn = compare
    counted = metric in COUNTS
    root = project.root
    good_commit, bad_commit = commit_of(root, good), commit_of(root, bad)
    commits = first_parent_range(root, good_commit, bad_commit)
    session = open_session(root, out, name="bisect", load_tests=not counted)

    def judge(commit: str) -> Probe:
        title = subject(root, commit)
        if not quiet:
            print(
                f"bisect: compare {good_commit[:10]} (good) with {commit[:10]} {title}",
                file=sys.stderr,
                flush=True,
            )
        try:
            options = CompareOptions(
                patterns=patterns,
                quick=quick,
                rounds=rounds,
                out=session.out / commit[:10],
                micro=False,
                quiet=True,
                load=not counted,
                counts=counted,
                session=session,
            )
            comparison, _ = compare_fn(project, good_commit, commit, options)
        except UserError as exc:  # e.g. the commit's declarations do not load
            return Probe(commit, title, "skip", reason=str(exc)[:200])
        return judge_comparison(commit, title, comparison, metric)

    return search(good_commit, commits, judge)
