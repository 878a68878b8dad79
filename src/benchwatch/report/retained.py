"""How the comment names retained memory per request: in the headline, the endpoint whose
requests now keep memory ("`POST /items`: retained memory 0 → 3 blocks per request (a leak:
grows with requests)"), and the floor in blocks per request, not in percent."""

from __future__ import annotations

from benchwatch.figures.metrics import RETAINED
from benchwatch.judge.retained import Difference, describe
from benchwatch.judge.verdict import Row


def is_retained(row: Row) -> bool:
    return row.metric == RETAINED.key


def floor_text(row: Row) -> str:
    return f"{row.floor:g} blocks/req"


def retained_headline(rows: list[Row]) -> str:
    """The leaks first (the endpoints whose retained memory per request went up), '' when none."""
    leaks = [r for r in rows if is_retained(r) and r.verdict == "regression"]
    found: list[str] = []
    for row in leaks[:2]:
        if row.base_value is None or row.head_value is None:
            continue
        medians = Difference(row.base_value, row.head_value, 1.0, 1.0)
        shown = describe(medians, "regression").split(" [")[0]
        where = f"`{row.endpoint}`" if row.endpoint else row.scenario
        found.append(f"{where}: {shown}")
    if len(leaks) > 2:
        found.append(f"{len(leaks) - 2} more endpoint(s) retain more memory per request")
    return "; ".join(found)
