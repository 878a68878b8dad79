"""The cells releases.html is made of: a release's name and what moved with it, a figure's label
without its scenario, a step's effect worded by the figure's kind."""

from __future__ import annotations

from benchwatch.attribute.outcomes import StepOutcome
from benchwatch.attribute.own_units import in_own_unit
from benchwatch.attribute.ratios import Ratio
from benchwatch.environments.releases import PACKAGES
from benchwatch.figures.figure_key import label_metric, label_without_metric
from benchwatch.figures.metrics import (
    COST,
    DB_BUFFERS,
    INSTRUCTIONS,
    RETAINED,
    STATEMENTS,
    SYSCALLS,
    metric,
)
from benchwatch.report.tables import Cell, Tone


def figure_label(label: str, scenario: str) -> str:
    """`hello GET / c=10 cpu_us_per_request` -> `GET / c=10 cpu/req` (the scenario has its column)."""
    text = (
        label.removeprefix(scenario).strip() if scenario and label.startswith(scenario) else label
    )
    head = label_without_metric(text) if " " in text else ""
    found = metric("load", label_metric(text))
    return f"{head} {found.short}" if head and found is not None else text


# what a change is called, by the figure's kind: (a regression, an improvement); every attributed
# figure is smaller-is-better (attribute/table.ATTRIBUTED)
_WORDS = {
    COST.key: ("higher", "lower"),
    INSTRUCTIONS.key: ("more", "fewer"),
    SYSCALLS.key: ("more", "fewer"),
    STATEMENTS.key: ("more", "fewer"),
    DB_BUFFERS.key: ("more", "fewer"),
    RETAINED.key: ("more kept", "less kept"),
}
_JUDGED = ("regression", "improvement", "unchanged")


def effect(ratio: Ratio, label: str = "") -> Cell:
    """The step's ratio with its interval; coloured only when compare called it a change
    (interval excludes 1 and the change exceeds the noise floor). Statements, database buffers and
    retained memory say their values in their own unit (attribute/own_units.py): 0 → 1 has no ratio."""
    if in_own_unit(label) and ratio.verdict in _JUDGED and ratio.text:
        return own_unit_effect(ratio, label)
    if ratio.ratio is None:
        return Cell(f"not measured{': ' + ratio.text if ratio.text else ''}")
    tone: Tone = {"regression": "worse", "improvement": "better"}.get(ratio.verdict, "")  # type: ignore[assignment]
    more, less = _WORDS.get(label_metric(label), ("slower", "faster"))
    words = {"regression": more, "improvement": less}.get(ratio.verdict, "no significant change")
    return Cell(f"{ratio.shown()} {words}", tone)


def own_unit_effect(ratio: Ratio, label: str) -> Cell:
    """`SQL statements 1 → 101 statements per request (+100) more`, coloured when it is a change."""
    tone: Tone = {"regression": "worse", "improvement": "better"}.get(ratio.verdict, "")  # type: ignore[assignment]
    more, less = _WORDS[label_metric(label)]
    words = {"regression": more, "improvement": less}.get(ratio.verdict, "no significant change")
    return Cell(f"{ratio.text}: {words}", tone)


def moved_package(step: StepOutcome, package: str) -> str:
    old, new = step.moved.get(package, (None, None))
    return f"{package} {old or '—'} → {new or '?'}"


def ordered(step: StepOutcome) -> list[str]:
    """The packages a step moved: the four watched ones first, then the rest of its group, then
    what the resolver brought along (a package new in the head, e.g.)."""

    def rank(p: str) -> tuple:
        return (
            p not in PACKAGES,
            PACKAGES.index(p) if p in PACKAGES else 0,
            p not in step.group,
            p,
        )

    return sorted(dict.fromkeys([*step.group, *step.moved]) if step.moved else step.group, key=rank)


def release_name(step: StepOutcome) -> str:
    if step.kind == "transitive":
        return "unpinned dependencies (transitive)"
    packages = ordered(step)
    return moved_package(step, packages[0]) if packages else step.requested
