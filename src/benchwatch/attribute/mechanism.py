"""What moved inside an endpoint's counts in one step, kept in attribution.json so the releases
page can say how a release moved a figure: its estimated cost per request on both sides, where the
instructions went by shared object (compare's breakdown of a changed instructions row) and the
system calls per request by name that changed (the syscalls row's detail).

Recorded for every endpoint whose cost, instructions or system calls changed significantly in the
step's compare; an attribution written before this has none (the page says "not recorded")."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from pydantic import BaseModel

from benchwatch.counts.breakdown import ByObject
from benchwatch.figures.figure_key import label_without_metric
from benchwatch.figures.metrics import COST, INSTRUCTIONS, SYSCALLS
from benchwatch.judge.verdict import Comparison, Row

CALL_MOVE = 0.01  # a call by name changed when its count per request moved by this much (as compare's comment)
Pair = tuple[float | None, float | None]  # base, head


class Mechanism(BaseModel):
    cost_us: Pair | None = (
        None  # the estimated cost per request (µs), base and head; None: not weighed
    )
    instructions: ByObject | None = (
        None  # None: the instructions did not change (or their files were missing)
    )
    calls: dict[str, Pair] | None = (
        None  # the calls by name that changed, per request; None: not counted
    )


def _values(row: Row) -> Pair:
    return (row.base_value, row.head_value)


def changed_calls(row: Row) -> dict[str, Pair]:
    moved = {}
    for name, values in row.detail.items():
        base, head = (list(values) + [None, None])[:2]
        if abs((head or 0.0) - (base or 0.0)) >= CALL_MOVE:
            moved[name] = (base, head)
    return moved


def mechanisms(comparison: Comparison) -> dict[str, Mechanism]:
    """{endpoint key: its mechanism} of every counted endpoint that changed in a compare."""
    return mechanisms_of(comparison.rows, comparison.extra.counts.by_object)


def mechanisms_of(rows: Iterable[Row], went: Mapping[str, ByObject]) -> dict[str, Mechanism]:
    """The same from judged rows and where each changed instructions row's instructions went (by its label)."""
    by_endpoint: dict[str, dict[str, Row]] = {}
    for row in rows:
        if row.kind == "load" and row.metric in (COST.key, INSTRUCTIONS.key, SYSCALLS.key):
            by_endpoint.setdefault(label_without_metric(row.label), {})[row.metric] = row
    found = {}
    for key, by_metric in by_endpoint.items():
        if not any(row.significant for row in by_metric.values()):
            continue
        cost, instructions, calls = (
            by_metric.get(COST.key),
            by_metric.get(INSTRUCTIONS.key),
            by_metric.get(SYSCALLS.key),
        )
        found[key] = Mechanism(
            cost_us=_values(cost) if cost else None,
            instructions=went.get(instructions.label) if instructions else None,
            calls=changed_calls(calls) if calls else None,
        )
    return found
