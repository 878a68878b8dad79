"""Base and head measured round by round: load tests side by side (both servers at once, see
lanes.py), micro-benchmarks alternating (A B A B …)."""

from __future__ import annotations

import dataclasses
import fnmatch
import statistics
from pathlib import Path

from benchwatch.compare.sides import Side
from benchwatch.measure.load import FULL, QUICK, LoadPlan, LoadStage, half_iqr, start_run
from benchwatch.measure.rounds import boot_and_measure
from benchwatch.progress import Progress
from benchwatch.results import Figure, Problem, Run

SIDE_BY_SIDE_TAG = " (side by side)"
COMPARE_QUICK_ROUNDS = 8
COMPARE_FULL_ROUNDS = 8
QUICK_DURATION = 2.0


def compare_plan(quick: bool, rounds: int | None) -> LoadPlan:
    if quick:
        return dataclasses.replace(QUICK, rounds=rounds or COMPARE_QUICK_ROUNDS, duration=QUICK_DURATION)
    return dataclasses.replace(FULL, rounds=rounds or COMPARE_FULL_ROUNDS)


def side_stage(side: Side, plan: LoadPlan, out_dir: Path, run: Run) -> LoadStage:
    """The load stage of one side, driven one round at a time by measure_load."""
    return LoadStage(side.project, side.variants, plan, out_dir, run=run, quiet=True, inject=side.inject,
                     name_tag=SIDE_BY_SIDE_TAG)  # fmt: skip


def measure_load(
    base: Side, head: Side, plan: LoadPlan, out_dir: Path, environment: dict, quiet: bool = False
) -> tuple[Run, Run]:
    stages = [
        side_stage(side, plan, out_dir / f"{side.role}-load", start_run(["compare", side.role], dict(environment)))
        for side in (base, head)
    ]  # fmt: skip
    for stage in stages:
        stage.prepare()
    pairs = list(zip(stages[0].slots, stages[1].slots, strict=True))  # sides.pairs lined them up
    progress = Progress(plan.rounds * len(pairs), "compare", quiet=quiet)
    for round_index in range(plan.rounds):
        for base_slot, head_slot in pairs:
            progress.step(f"{base_slot.label} | {head_slot.label}", f"side by side, round {round_index + 1}/{plan.rounds}")
            entries = [(stage, slot) for stage, slot in zip(stages, (base_slot, head_slot), strict=True)
                       if slot.label not in stage.data.failed]  # fmt: skip
            if round_index % 2:  # who boots first and whose oha starts first, alternately
                entries.reverse()
            boot_and_measure(entries, round_index)
            progress.advance()
            for stage in stages:
                stage.checkpoint(complete=False)
        if round_index == 0:
            for stage in stages:
                stage.cross_check_answers()
    return stages[0].checkpoint(complete=True), stages[1].checkpoint(complete=True)


MICRO_ROUNDS = 5  # asv processes per side; fewer cannot give a 95 % interval that excludes 1 often


def measure_micro(
    base: Side, head: Side, quick: bool, rounds: int | None, patterns: str | None, out_dir: Path
) -> tuple[list[Figure], list[Figure], list[Problem]]:
    """asv on both sides, one process per side per round, alternating (A B A B ...). Each
    round gives one sample per benchmark, the median of its repeats: repeats inside one asv
    process share its memory layout and its moment on the machine, so counting them as
    independent samples made intervals far too narrow (an A/A compare saw 1.57x)."""
    from benchwatch.measure.micro import run_micro

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
