"""The layout allowance of database buffers per request (figures.metrics.DB_BUFFERS).

The same statement on the same rows touches the same pages only if the rows lie where they lay
before. Between two boots they do not when the keys are drawn at random (a `uuid4` or
`gen_random_uuid()` primary key, a logged-in user created at start-up): a user's entries in an
index on `owner_id` fall on one leaf page in one boot and straddle two in another, its rows on one
heap page more or fewer. Within one boot every phase agrees, so the ranges of base and head lie
apart and a 10 % floor alone flags it: the template-shaped fixture's `GET /api/v1/items/` read 22
or 26 pages per request on boots of the same commit, each of its two item statements 2 pages
more per call (docs/counts.md, "Database buffers between boots").

So a change of buffers must pass the ratio floor **and** an allowance in pages per request:
LAYOUT_PAGES_PER_CALL (one index leaf page and one heap page) for every statement call per
request that both sides make. The calls come from the figure's detail (the `plan <statement>:
<scans>` lines, calls per request by statement and plan: counts/database_work.py); a statement
counts the fewer of its calls on base and head, so a statement head adds (an N+1's lookup) or one
that runs more often brings no allowance of its own. A statement that could not be planned has no
calls line and no allowance. The allowance is turned into the row's floor as a fraction (the
allowance over the smaller median: past it in either direction is exactly more than the
allowance). The estimated cost's floor (judge/cost_floor.py) weighs the buffers' floor with their
share of each side's cost, and takes the allowance over that side's buffers: layout noise passes
the cost no more than the buffers' own row, and a head whose buffers grew tenfold does not widen
the cost's floor tenfold.
"""

from __future__ import annotations

import statistics

from benchwatch.counts.database_work import PLAN
from benchwatch.figures.metrics import DB_BUFFERS
from benchwatch.judge.verdict import Row, judge_again

# pages one statement call may touch more or fewer between boots of the same code and data: one
# index leaf page and one heap page (measured: docs/counts.md, "Database buffers between boots")
LAYOUT_PAGES_PER_CALL = 2.0
FROM_LAYOUT = "layout"  # Row.floor_source of a buffers row whose floor is its layout allowance


def shared_calls(detail: dict[str, list[float | None]]) -> float:
    """Statement calls per request both sides make: per statement (its plans' lines added up),
    the fewer of base's and head's."""
    statements = sorted((k for k in detail if not k.startswith(PLAN)), key=len, reverse=True)
    calls: dict[str, list[float]] = {}
    for key, pair in detail.items():
        if not key.startswith(PLAN):
            continue
        text = key.removeprefix(PLAN)
        # the longest statement the line names (a plan's scans follow its statement and ': ')
        statement = next((s for s in statements if text.startswith(f"{s}: ")), text)
        both = calls.setdefault(statement, [0.0, 0.0])
        for side, value in enumerate(pair):
            both[side] += value or 0.0
    return sum(min(base, head) for base, head in calls.values())


def allowance(row: Row) -> float:
    """The row's layout allowance in pages per request (0 for a row of another figure)."""
    if row.metric != DB_BUFFERS.key:
        return 0.0
    return LAYOUT_PAGES_PER_CALL * shared_calls(row.detail)


def layout_floor(row: Row) -> float:
    """The allowance as a fraction of the smaller median (0 when there is none or no ratio)."""
    pages = allowance(row)
    if pages <= 0 or not row.base_samples or not row.head_samples:
        return 0.0
    smaller = min(statistics.median(row.base_samples), statistics.median(row.head_samples))
    return pages / smaller if smaller > 0 else 0.0


def set_layout_floors(rows: list[Row]) -> None:
    """Each database buffers row judged by a ratio whose layout allowance exceeds its floor: that
    floor, and its verdict judged again (after the costs' floors, which take the allowance over
    each side's buffers themselves)."""
    for row in rows:
        if row.metric != DB_BUFFERS.key or row.ratio is None or row.low is None:
            continue
        if min([*row.base_samples, *row.head_samples], default=0.0) <= 0:
            continue  # a side of zeros: judged by its difference (judge/statements.py)
        floor = layout_floor(row)
        if floor > row.floor:
            judge_again(row, floor, FROM_LAYOUT)


def layout_text(row: Row) -> str:
    """The floor column's words for a row on its layout allowance: '(layout: 2 pages × 3
    statement calls = 6 pages/request)'."""
    calls = shared_calls(row.detail)
    return (
        f" (layout: {LAYOUT_PAGES_PER_CALL:g} pages × {calls:g} statement"
        f" call{'' if calls == 1 else 's'} = {allowance(row):g} pages/request)"
    )
