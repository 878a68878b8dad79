"""The confirmation rounds of a compare: only the flagged timing figures, measured once more side
by side exactly as the first time (the same plan, the same injection), judged alone."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from benchwatch.compare.sides import Side
from benchwatch.judge.calibrate import Calibration
from benchwatch.judge.verdict import Row, compare_figures
from benchwatch.project.variants import Variant
from benchwatch.results.schema import Environment, Figure, Problem

if TYPE_CHECKING:  # annotations only: the rounds are imported when a confirmation runs
    from benchwatch.measure.rig import Rig

CONFIRM_DIR = "confirm"


@dataclasses.dataclass(frozen=True)
class ConfirmOptions:
    """How the first rounds were measured, so that the confirmation repeats them exactly."""

    rig: Rig | None  # the first rounds' rig (measure/rig.py); None: no load rounds ran
    environment: Environment
    calibration: Calibration | None
    key: Callable[[Figure], tuple]  # how a base figure finds its head figure
    quick: bool
    patterns: str | None
    out: Path  # the compare's folder; the confirmation writes into its CONFIRM_DIR
    quiet: bool = False


@dataclasses.dataclass
class Again:
    rows: list[Row]
    problems: list[Problem]
    figures: int  # how many figures were measured again, per side


def _narrowed(side: Side, wanted: dict[str, set[str]]) -> Side:
    """The side with only the variants and endpoints named in `wanted` (variant id -> endpoint labels)."""
    variants: list[Variant] = []
    for variant in side.variants:
        labels = wanted.get(variant.id)
        if not labels:
            continue
        endpoints = tuple(e for e in variant.endpoints if e.label in labels)
        variants.append(
            dataclasses.replace(variant, endpoints=endpoints, quick_endpoints=endpoints)
        )
    return dataclasses.replace(side, variants=variants)


def measure_again(
    flagged: list[Row],
    figures: dict[str, list[Figure]],
    base: Side,
    head: Side,
    options: ConfirmOptions,
) -> Again:
    """Rows of the flagged figures measured once more: load figures by booting only their
    variants with only their endpoints, micro figures by timing only their asv cases."""
    from benchwatch.compare.rounds import measure_base_and_head, measure_micro

    rig, out = options.rig, options.out
    named = {role: {f.name: f for f in figures[role]} for role in ("base", "head")}
    again: dict[str, list[Figure]] = {"base": [], "head": []}
    problems: list[Problem] = []
    load_rows = [r for r in flagged if r.kind == "load"]
    if load_rows and rig is not None:
        wanted: dict[str, dict[str, set[str]]] = {"base": {}, "head": {}}
        for row in load_rows:
            for role, name in (("base", row.base_figure), ("head", row.head_figure)):
                figure = named[role].get(name or "")
                if figure is not None and figure.endpoint is not None:
                    wanted[role].setdefault(figure.variant, set()).add(figure.endpoint)
        sides = _narrowed(base, wanted["base"]), _narrowed(head, wanted["head"])
        if sides[0].variants and sides[1].variants:
            runs = measure_base_and_head(
                rig,
                *sides,
                out / CONFIRM_DIR,
                options.environment,
                failed_stacks={},
                quiet=options.quiet,
            )
            for side, run in zip(sides, runs, strict=True):
                again[side.role] += run.figures
                problems += [
                    p.model_copy(update={"reason": f"{side.role} (confirmation): {p.reason}"})
                    for p in run.problems
                ]
    micro_rows = [r for r in flagged if r.kind == "micro"]
    cases = sorted(
        {
            f.micro_case
            for r in micro_rows
            for f in [named["base"].get(r.base_figure or "")]
            if f is not None and f.micro_case
        }
    )
    if cases:
        found = measure_micro(
            base,
            head,
            options.quick,
            None,
            options.patterns,
            out / CONFIRM_DIR,
            instructions=False,
            cases=cases,
        )
        again["base"] += found.base
        again["head"] += found.head
        problems += found.problems
    rows, _ = compare_figures(again["base"], again["head"], options.calibration, key=options.key)
    return Again(rows, problems, len(again["base"]))
