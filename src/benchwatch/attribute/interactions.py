"""When the product of the steps and the direct ratio disagree, why.

First the sides themselves: the direct compare must move exactly the union of the steps, each
package once, on one interpreter; a package that no step moved, or that two steps both moved,
makes the product and the direct ratio measure different things. Then the second order: the
largest movers of a disagreeing figure are moved two at a time, each pair measured side by side
against base like a step; a pair interacts when what it does together differs from the product
of what each does alone, beyond the scatter of the three compares involved."""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence

from pydantic import BaseModel

from benchwatch.attribute.outcomes import Line, StepOutcome
from benchwatch.attribute.ratios import Ratio, product, quotient
from benchwatch.attribute.steps import Step
from benchwatch.figures.figure_key import label_metric
from benchwatch.figures.metrics import FALLBACK_FLOOR, metric

LARGEST_MOVERS = 3  # a figure's steps moved two at a time: at most three pairs


class Consistency(BaseModel):
    """What the direct compare moved that the steps did not (or moved twice), and the interpreters."""

    unmoved: dict[str, tuple[str | None, str | None]] = {}  # moved directly, by no step
    moved_twice: dict[str, list[str]] = {}  # package -> the steps that each moved it
    interpreters: dict[str, str] = {}  # stack -> its interpreter, when they are not all one

    def lines(self) -> list[str]:
        said = []
        if self.unmoved:
            said.append(
                "moved directly but by no step (the product leaves them out): "
                + ", ".join(f"{p} {a or '—'}→{b or '—'}" for p, (a, b) in self.unmoved.items())
            )
        if self.moved_twice:
            said.append(
                "moved by more than one step (the product counts them twice): "
                + ", ".join(f"{p} ({', '.join(steps)})" for p, steps in self.moved_twice.items())
            )
        if self.interpreters:
            said.append(
                "the sides ran on different interpreters: "
                + ", ".join(f"{stack} {python}" for stack, python in self.interpreters.items())
            )
        return said


class Interaction(BaseModel):
    label: str
    pair: tuple[str, str]  # the two steps moved together
    stack: str  # the pair's intermediate stack
    together: Ratio = Ratio()
    apart: Ratio = Ratio()  # the product of the two steps alone
    interaction: Ratio = Ratio()  # together / apart
    interacts: bool | None = None  # None: not measured
    error: str | None = None

    def sentence(self) -> str:
        a, b = self.pair
        return (
            f"{a} × {b}: together {self.together.shown()}, apart {self.apart.shown()}, "
            f"together/apart {self.interaction.shown()}"
        )


def consistency(
    steps: Sequence[StepOutcome], direct: StepOutcome, interpreters: Mapping[str, str]
) -> Consistency:
    """The direct compare against the union of the steps; `interpreters` by stack name."""
    measured = [s for s in steps if s.error is None]
    movers: dict[str, list[str]] = {}
    for step in measured:
        for package in step.moved or dict.fromkeys(step.group):
            movers.setdefault(package, []).append(step.step)
    unmoved = {p: versions for p, versions in direct.moved.items() if p not in movers}
    twice = {p: names for p, names in movers.items() if len(names) > 1}
    builds = set(interpreters.values())
    return Consistency(
        unmoved=unmoved,
        moved_twice=twice,
        interpreters=dict(interpreters) if len(builds) > 1 else {},
    )


def floor_of(label: str) -> float:
    """The default floor of the figure a label names (its last word is the metric's key)."""
    known = metric("load", label_metric(label))
    return known.default_floor if known is not None else FALLBACK_FLOOR


def interacts(together_over_apart: Ratio, floor: float) -> bool | None:
    """Beyond the noise of three compares and with an interval that excludes 1. together/apart
    is made of three ratios (the pair, each step alone), each from its own boots: a figure's floor
    holds the scatter between the boots of one ratio, so three of them in quadrature, √3 × floor."""
    r = together_over_apart
    if r.ratio is None or r.low is None or r.high is None:
        return None
    excludes_one = r.low > 1 or r.high < 1
    return excludes_one and abs(math.log(r.ratio)) > math.log1p(floor * math.sqrt(3))


def pairs_to_try(line: Line, steps: Sequence[Step]) -> list[tuple[Step, Step]]:
    """The largest movers of a disagreeing figure (package and group steps), two at a time."""
    movable = {
        s.name: s
        for s in steps
        if s.kind != "transitive" and s.stack is not None and s.error is None
    }
    sized = [
        (abs(math.log(r.ratio)), name)
        for name, r in line.steps.items()
        if name in movable and r.ratio is not None and r.ratio > 0
    ]
    largest = [name for size, name in sorted(sized, reverse=True)[:LARGEST_MOVERS] if size > 0]
    return [(movable[a], movable[b]) for a, b in itertools.combinations(largest, 2)]


def judge(
    label: str, pair: tuple[str, str], stack: str, together: Ratio, alone: Sequence[Ratio]
) -> Interaction:
    apart = product(list(alone))
    ratio = quotient(together, apart)
    return Interaction(
        label=label,
        pair=pair,
        stack=stack,
        together=together,
        apart=apart,
        interaction=ratio,
        interacts=interacts(ratio, floor_of(label)),
    )


def joined(disagreeing: Sequence[Line], pair: tuple[str, str]) -> list[Line]:
    """The disagreeing figures whose largest movers the pair joins."""
    return [line for line in disagreeing if all(name in line.steps for name in pair)]


def judged(
    stack: str,
    pair: tuple[str, str],
    mine: Sequence[Line],
    ratios: Mapping[str, Ratio],
    trouble: str | None,
) -> list[Interaction]:
    """The pair moved together (`ratios`, measured against base) judged on each of its figures."""
    found = []
    for line in mine:
        together = ratios.get(line.label)
        if together is None:
            found.append(
                Interaction(
                    label=line.label,
                    pair=pair,
                    stack=stack,
                    error=trouble or "the figure was not measured",
                )
            )
            continue
        found.append(judge(line.label, pair, stack, together, [line.steps[n] for n in pair]))
    return found
