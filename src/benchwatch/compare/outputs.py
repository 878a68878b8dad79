"""What a compare leaves behind: compare.json and comment.md in its folder, and each side as a run
directory of its own (run.json, gab-*.json)."""

from __future__ import annotations

from pathlib import Path

from benchwatch.compare.sides import Side
from benchwatch.judge.verdict import COMMENT_FILE, COMPARE_FILE, Comparison, SideInfo
from benchwatch.measure import inject
from benchwatch.measure.session import now
from benchwatch.results.files import write_json_atomic, write_run, write_text_atomic
from benchwatch.results.schema import Environment, Figure, Problem, Run


def side_info(side: Side, environment: Environment) -> SideInfo:
    """A side as the comment shows it: its own checkout's commit, only its own stacks."""
    env = environment.model_copy(deep=True)
    if side.commit:
        env.git_commit, env.git_dirty = side.commit, False
    own = {v.env_key for v in side.variants}
    env.stacks = {name: pins for name, pins in env.stacks.items() if name in own}
    env.interpreters = {name: python for name, python in env.interpreters.items() if name in own}
    return SideInfo(
        role=side.role,
        spec=side.spec,
        kind=side.kind,
        commit=side.commit,
        variants=[v.id for v in side.variants],
        environment=env,
        endpoint=side.endpoint.label if side.endpoint is not None else None,
        inject_cpu_us=inject.for_side(side.role).cpu_us,
        inject_slowdown=inject.for_side(side.role).slowdown,
        declarations_from=side.declarations_from,
    )


def write_side_run(
    directory: Path,
    side: Side,
    info: SideInfo,
    figures: list[Figure],
    problems: list[Problem],
    started: str,
) -> None:
    """One side as a run directory (run.json, gab-*.json): what the workflows hand to
    github-action-benchmark for the PR's compare-only check and the nightly trend."""
    run = Run(
        started_at=started,
        finished_at=now(),
        complete=True,
        command=["benchwatch", "compare", side.role, side.spec],
        environment=info.environment,
        figures=figures,
        problems=problems,
    )
    write_run(directory, run)


def write_outputs(comparison: Comparison, out: Path) -> None:
    from benchwatch.report.comment import render

    data = comparison.model_dump(mode="json")
    data["summary"] = {**comparison.counts(), "exit_code": comparison.exit_code()}
    write_json_atomic(out / COMPARE_FILE, data)
    write_text_atomic(out / COMMENT_FILE, render(comparison))
