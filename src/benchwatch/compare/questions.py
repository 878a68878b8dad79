"""A project's questions (benchwatch.toml's [[questions]]) as side-by-side measurements: which
servers are loaded at the same moment.

Each `Group` is one question and one `run_rounds` call: its lanes are booted together in every
round and loaded at the same moment, step by step (a step is one endpoint per lane: the same
endpoint for a question about variants, or the lanes' own endpoints for a question about
endpoints). Its ratios are head lane / base lane for each of its pairs. No I/O here:
`findings_rounds` measures them, `report.questions` shows them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from benchwatch.declarations.project_file import Question
from benchwatch.figures.metrics import Metric, metric


@dataclass(frozen=True)
class Lane:
    variant: str  # variant id
    endpoints: tuple[str, ...]  # endpoint name per step, in the group's step order
    name: str  # what the report calls it


@dataclass(frozen=True)
class Group:
    key: str
    steps: tuple[str, ...]
    lanes: tuple[Lane, ...]
    metrics: tuple[Metric, ...]
    pairs: tuple[tuple[int, int], ...]  # (base, head) lane indexes

    @property
    def boot_every_round(self) -> bool:
        """Memory after boot needs a fresh boot per round; otherwise the servers, booted once, are
        measured in every round (boots are most of the cost)."""
        return any(m.per_variant for m in self.metrics)

    def ratios(self) -> list[tuple[Lane, Lane]]:
        return [(self.lanes[b], self.lanes[h]) for b, h in self.pairs]


def group_of(question: Question) -> Group:
    lanes = tuple(
        Lane(lane.variant, tuple(question.lane_endpoints(lane)), lane.label)
        for lane in question.lanes
    )
    index = {lane.name: i for i, lane in enumerate(lanes)}
    metrics = tuple(m for key in question.metrics if (m := metric("load", key)))
    pairs = tuple((index[base], index[head]) for base, head in question.lane_pairs)
    return Group(question.name, tuple(question.step_names), lanes, metrics, pairs)


def chosen_lanes(group: Group, selected: Sequence[str]) -> tuple[Lane, ...] | str:
    """The lanes of the group's pairs whose two variants were both selected, or why the group
    cannot run (no such pair)."""
    present = set(selected)
    runnable = [(b, h) for b, h in group.ratios() if b.variant in present and h.variant in present]
    if not runnable:
        missing = sorted({lane.variant for lane in group.lanes if lane.variant not in present})
        return f"not selected ({', '.join(missing)} not in this run)"
    return tuple(lane for lane in group.lanes if any(lane in pair for pair in runnable))
