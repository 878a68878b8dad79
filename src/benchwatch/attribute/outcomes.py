"""What attribute measured: each step's outcome (and the direct one), and each gating figure's line
of steps, their product and the direct ratio."""

from __future__ import annotations

from pydantic import BaseModel

from benchwatch.attribute.mechanism import Mechanism
from benchwatch.attribute.ratios import Ratio
from benchwatch.attribute.steps import Step


class StepOutcome(BaseModel):
    step: str  # the intermediate stack, or "direct"
    kind: str
    requested: str
    group: list[str]
    moved: dict[str, tuple[str | None, str | None]] = {}
    note: str = ""
    error: str | None = None
    ratios: dict[str, Ratio] = {}  # by figure label
    out: str | None = None
    # by endpoint (a figure label without its metric, figure_key.label_without_metric): what moved
    # inside the counts of each endpoint that changed; {} in an attribution written before it was kept
    mechanism: dict[str, Mechanism] = {}
    # why the step was not counted although it built: it moves only what the servers never import
    # (attribute/imported.py), so it cannot move a count; left out of the product (a factor of 1)
    skipped: str | None = None


class Line(BaseModel):
    """One gating figure of one variant: every step, their product, the direct ratio."""

    scenario: str
    label: str
    steps: dict[str, Ratio]
    product: Ratio
    direct: Ratio
    agrees: bool | None  # product and direct intervals overlap; None when either is missing


def outcome_of(step: Step) -> StepOutcome:
    """A step's outcome before anything of it is measured: what was asked, moved, noted or failed."""
    return StepOutcome(
        step=step.name,
        kind=step.kind,
        requested=step.requested,
        group=list(step.group),
        moved=step.moved,
        note=step.note,
        error=step.error,
    )
