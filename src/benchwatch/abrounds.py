"""Base and head measured round by round (A B A B …) with the load stage of each side."""

from __future__ import annotations

import dataclasses
import fnmatch
from pathlib import Path

from benchwatch.load import FULL, QUICK, LoadPlan, LoadStage, start_run
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


def measure_micro(
    base: Side, head: Side, quick: bool, rounds: int | None, patterns: str | None, out_dir: Path
) -> tuple[list[Figure], list[Figure], list[Problem]]:
    """asv on both sides, interleaved by run_micro across the two stacks (compares of two
    stacks) or by alternating one round per side (ref compares, and a stack against itself,
    whose two sides must be measured separately or A/A would compare one sample set with itself)."""
    from benchwatch.micro import run_micro

    if base.kind == "stack" and base.spec != head.spec:
        stacks = [base.project.stack(base.spec), head.project.stack(head.spec)]
        figures, problems = run_micro(stacks, None, quick, out_dir / "micro", root=base.project.root,
                                      rounds=rounds, publish=False)  # fmt: skip
        base_figs = [f for f in figures if f.stack == base.spec]
        head_figs = [f for f in figures if f.stack == head.spec]
    else:
        stack_names = sorted({v.stack.name for v in base.variants})
        samples: dict[str, dict[str, Figure]] = {"base": {}, "head": {}}
        problems = []
        for round_index in range(rounds or 1):
            for side in (base, head):
                stacks = [side.project.stack(s) for s in stack_names]
                found, trouble = run_micro(
                    stacks, None, quick, out_dir / f"micro-{side.role}-{round_index}",
                    root=side.project.root, rounds=1, publish=False,
                )  # fmt: skip
                problems += trouble
                for figure in found:
                    earlier = samples[side.role].get(figure.name)
                    if earlier is not None:
                        figure = figure.model_copy(update={"samples": earlier.samples + figure.samples})
                    samples[side.role][figure.name] = figure
        base_figs, head_figs = list(samples["base"].values()), list(samples["head"].values())
    if patterns:
        wanted = [p.strip() for p in patterns.split(",") if p.strip()]
        keep = lambda f: any(fnmatch.fnmatchcase(f.variant, p) for p in wanted)  # noqa: E731
        base_figs, head_figs = [f for f in base_figs if keep(f)], [f for f in head_figs if keep(f)]
    return base_figs, head_figs, problems
