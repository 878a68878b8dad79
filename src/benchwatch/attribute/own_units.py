"""The figures a step moves in their own unit, not by a ratio: SQL statements, database buffers and
retained memory per request. A release that adds a statement per request, makes the database touch
more pages or keeps memory per request is named with the figure's own unit ("SQL statements 1 → 101
statements per request (+100)"), in attribution.md (the nightly's issue) and on the releases page.

They are counts per request that add up over steps rather than multiply (one statement more in two
steps is two more, not a factor squared), and statements and retained memory are often 0: a line of
them has no product of ratios, and no check of it against the direct ratio."""

from __future__ import annotations

from benchwatch.figures.figure_key import label_metric
from benchwatch.figures.metrics import DB_BUFFERS, RETAINED, STATEMENTS
from benchwatch.judge.verdict import Row

# metric key -> (what it is called, its unit per request)
OWN_UNITS = {
    STATEMENTS.key: ("SQL statements", "statements per request"),
    DB_BUFFERS.key: ("database buffers", "buffers per request"),
    RETAINED.key: ("retained memory", "blocks per request"),
}


def in_own_unit(label: str) -> bool:
    """Whether the figure of this label is worded in its own unit (statements, buffers, blocks)."""
    return label_metric(label) in OWN_UNITS


def _amount(value: float) -> str:
    """1 → '1', 0.5 → '0.5', 1.333 → '1.33'."""
    return f"{value:.2f}".rstrip("0").rstrip(".")


def worded(row: Row) -> str | None:
    """`SQL statements 1 → 101 statements per request (+100)`; None for any other figure, or when a
    side has no value."""
    if row.metric not in OWN_UNITS or row.base_value is None or row.head_value is None:
        return None
    name, unit = OWN_UNITS[row.metric]
    change = row.head_value - row.base_value
    moved = f" ({'+' if change > 0 else '−'}{_amount(abs(change))})" if round(change, 2) else ""
    return f"{name} {_amount(row.base_value)} → {_amount(row.head_value)} {unit}{moved}"
