"""Retained memory per request judged by a difference, not a ratio: a no-op keeps 0 blocks per
request, so base is often 0 and head/base means nothing.

The change is head's median less base's; its range is every head sample against every base
sample (as a count's range: the phases differ by a few blocks over hundreds of requests, no
test). It is significant when that range leaves out 0 and the change is past the floor, an
absolute number of blocks per request (RETAINED.default_floor, or the endpoint's own in
calibration.json), and past twice either side's own scatter (the range of its segments; three
segments show only part of an endpoint's swing, as a count's floor is twice its A/A's): an endpoint
whose retained memory swings from segment to segment (posts' read, its requests in the thread
pool: -3.4 to +5.0 blocks per request over five segments of 50) is judged against that swing,
not the floor alone, so a no-op stays quiet; a leak smaller than the swing is not seen there. It gates on its own, not in the estimated cost: a leak is not CPU, and a
request that keeps one object more costs hardly an instruction more."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

Judged = Literal["improvement", "regression", "unchanged"]
SCATTER_FACTOR = 2.0


@dataclass(frozen=True)
class Difference:
    """head - base in blocks per request: the medians' difference and its range."""

    base: float
    head: float
    low: float
    high: float
    scatter: float = 0.0  # the larger of the two sides' ranges (max - min of their samples)

    @property
    def change(self) -> float:
        return self.head - self.base

    def excludes_zero(self) -> bool:
        return self.low > 0.0 or self.high < 0.0


def difference(base: Sequence[float], head: Sequence[float]) -> Difference:
    if not base or not head:
        raise ValueError("no samples on one side")
    return Difference(
        statistics.median(base),
        statistics.median(head),
        min(head) - max(base),
        max(head) - min(base),
        max(max(base) - min(base), max(head) - min(head)),
    )


def judge(found: Difference, floor: float) -> Judged:
    """More retained is worse."""
    if not found.excludes_zero() or abs(found.change) <= max(floor, SCATTER_FACTOR * found.scatter):
        return "unchanged"
    return "regression" if found.change > 0 else "improvement"


def describe(found: Difference, judged: Judged = "regression") -> str:
    """'retained memory 0 → 3.0 blocks per request (a leak: grows with requests) [+2.9, +3.1]'."""
    what = f"retained memory {_blocks(found.base)} → {_blocks(found.head)} blocks per request"
    if judged == "regression":
        what += " (a leak: grows with requests)"
    return f"{what} [{found.low:+.2f}, {found.high:+.2f}]"


def _blocks(value: float) -> str:
    if round(value, 2) == 0:
        return "0"
    return f"{value:.1f}" if abs(value) >= 0.1 else f"{value:.2f}"


def shown_parts(base: dict[str, float], head: dict[str, float]) -> dict[str, list[float | None]]:
    """The two sides' details (allocations per request: counts/allocations.py), shown under the
    row as its mechanism and never judged: name -> [base, head]."""
    return {n: [base.get(n), head.get(n)] for n in sorted({*base, *head})}
