"""The verdict on SQL statements per request (figures.metrics.STATEMENTS), base against head.

Statements are counted, not timed: the same code sends the same statements to the same data, in
every phase (a no-op compare reads 1 → 1, 101 → 101). So the rule is absolute and needs no
interval from a test: a change is significant when every head phase lies beyond every base phase
(the ranges apart, as for the other counts) **and** the medians differ by more than the floor, a
number of statements per request (default 0.5, STATEMENTS.default_floor): one more statement per
request is a change, whatever the endpoint sent before (an index lookup more is a round trip more
on 1 statement or on 100), while a statement every few requests (a pool's ping, a cache that
expires) stays below it. A relative floor would hide 100 → 101 and blow 0 → 1 up to infinity.

Statements do not enter the estimated cost (counts/cost.py): what the server spends sending and
reading them is in its instructions and system calls already, and the database's own work is
another process's. They gate on their own. `calibrate --counts-from` gives an endpoint a floor of
its own from A/A compares: COUNT_FLOOR_FACTOR x the farthest a head phase strayed from a base
phase, in statements per request, at least the default.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

from benchwatch.judge.stats import Verdict

# database buffers per request (figures.metrics.DB_BUFFERS) are judged by a ratio, which a side of
# zeros has not (an endpoint that sends no statement touches 0 pages): then, as statements are, by
# the difference of the medians, the ranges apart: more than one page per request is a change
# (0 → 3: an index lookup more), 0 → 0 is not
BUFFERS_FROM_ZERO = 1.0


def amount(value: float) -> str:
    """1 → '1', 0.5 → '0.5', 1.333 → '1.33'."""
    return f"{value:.2f}".rstrip("0").rstrip(".") if value % 1 else f"{value:.0f}"


def statements_verdict(base: Sequence[float], head: Sequence[float], floor: float) -> Verdict:
    """'regression' (more statements), 'improvement' (fewer) or 'unchanged'."""
    change = statistics.median(head) - statistics.median(base)
    apart = min(head) > max(base) or max(head) < min(base)
    if not apart or abs(change) <= floor:
        return "unchanged"
    return "regression" if change > 0 else "improvement"
