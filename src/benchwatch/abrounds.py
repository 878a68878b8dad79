"""Base and head measured round by round (A B A B …) with the load stage of each side."""

from __future__ import annotations

import dataclasses
import fnmatch
import statistics
from pathlib import Path

from benchwatch.load import FULL, QUICK, LoadPlan, LoadStage, half_iqr, start_run
from benchwatch.progress import Progress
from benchwatch.results import Figure, Problem, Run
from benchwatch.sides import Side

COMPARE_QUICK_ROUNDS = 8
COMPARE_FULL_ROUNDS = 8
QUICK_DURATION = 2.0


def compare_plan(quick: bool, rounds: int | None) -> LoadPlan:
    if quick:
        return dataclasses.replace(QUICK, rounds=rounds or COMPARE_QUICK_ROUNDS, duration=QUICK_DURATION)
    return dataclasses.replace(FULL, rounds=rounds or COMPARE_FULL_ROUNDS)


def side_stage(side: Side, plan: LoadPlan, out_dir: Path, run: Run) -> LoadStage:
    """The load stage of one side, driven one round at a time by measure_load."""
    return LoadStage(side.project, side.variants, plan, out_dir, run=run, quiet=True,
                     inject_cpu_us=side.inject_cpu_us)  # fmt: skip


def measure_load(
    base: Side, head: Side, plan: LoadPlan, out_dir: Path, environment: dict, quiet: bool = False
) -> tuple[Run, Run]:
    stages = [
        side_stage(side, plan, out_dir / f"{side.role}-load", start_run(["compare", side.role], dict(environment)))
        for side in (base, head)
    ]  # fmt: skip
    for stage in stages:
        stage.prepare()
    progress = Progress(plan.rounds * sum(len(s.slots) for s in stages), "compare", quiet=quiet)
    for round_index in range(plan.rounds):
        for side, stage in zip((base, head), stages, strict=True):
            stage.measure_round(round_index, progress, prefix=f"{side.role} ")
    return stages[0].checkpoint(complete=True), stages[1].checkpoint(complete=True)


MICRO_ROUNDS = 5  # asv processes per side; fewer cannot give a 95 % interval that excludes 1 often


def measure_micro(
    base: Side, head: Side, quick: bool, rounds: int | None, patterns: str | None, out_dir: Path
) -> tuple[list[Figure], list[Figure], list[Problem]]:
    """asv on both sides, one process per side per round, alternating (A B A B ...). Each
    round gives one sample per benchmark, the median of its repeats: repeats inside one asv
    process share its memory layout and its moment on the machine, so counting them as
    independent samples made intervals far too narrow (an A/A compare saw 1.57x)."""
    from benchwatch.micro import run_micro

    samples: dict[str, dict[str, Figure]] = {"base": {}, "head": {}}
    problems: list[Problem] = []
    for round_index in range(rounds or MICRO_ROUNDS):
        for side in (base, head):
            found, trouble = run_micro(
                _micro_stacks(side), None, quick, out_dir / f"micro-{side.role}-{round_index}",
                root=side.project.root, rounds=1, publish=False,
            )  # fmt: skip
            problems += trouble
            for figure in found:
                one = statistics.median(figure.samples)
                earlier = samples[side.role].get(figure.name)
                kept = (earlier.samples if earlier else []) + [one]
                samples[side.role][figure.name] = figure.model_copy(
                    update={"samples": kept, "value": statistics.median(kept), "spread": half_iqr(kept)}
                )
    base_figs, head_figs = list(samples["base"].values()), list(samples["head"].values())
    if patterns:
        wanted = [p.strip() for p in patterns.split(",") if p.strip()]
        keep = lambda f: any(fnmatch.fnmatchcase(f.variant, p) for p in wanted)  # noqa: E731
        base_figs, head_figs = [f for f in base_figs if keep(f)], [f for f in head_figs if keep(f)]
    return base_figs, head_figs, problems


def _micro_stacks(side: Side) -> list:
    """The stack a stack side names, or the stacks a ref side's variants use."""
    if side.kind == "stack":
        return [side.project.stack(side.spec)]
    return [side.project.stack(name) for name in sorted({v.stack.name for v in side.variants})]
