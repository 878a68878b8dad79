"""What the comment shows as mechanism, never judged: under a changed database-buffers row besides
its buffers and plans, the rows each statement returned per request (pg_stat_statements' `rows`,
counts/database_work.py) that moved, on a line of their own; under a changed instructions row, the
same endpoint's rows and allocations per request (counts/allocations.py, in retained memory's
detail) that moved while their own rows did not (else they are shown there):

    ↳ rows per request: `SELECT … FROM items WHERE items.owner = $1` 10 → 1000
    ↳ allocations per request: 6128 → 8085.5
"""

from __future__ import annotations

from benchwatch.counts.allocations import ALLOCATIONS
from benchwatch.counts.database_work import split_rows
from benchwatch.figures.metrics import DB_BUFFERS, INSTRUCTIONS, RETAINED
from benchwatch.judge.statements import amount
from benchwatch.judge.verdict import Row

Pair = list[float | None]


def without_rows(row: Row) -> dict[str, Pair]:
    """The row's parts but its rows (a database-buffers row's), as shown before rows were read."""
    return split_rows(row.detail)[0] if row.metric == DB_BUFFERS.key else row.detail


def rows_lines(row: Row, limit: int = 6) -> list[str]:
    """The comment's table line of the statements whose rows per request moved, largest change
    first; none when the row is not a database-buffers row or no statement's rows moved."""
    if row.metric != DB_BUFFERS.key:
        return []
    moved = [
        (text, b or 0.0, h or 0.0)
        for text, (b, h) in split_rows(row.detail)[1].items()
        if round(b or 0.0, 2) != round(h or 0.0, 2)
    ]
    if not moved:
        return []
    moved.sort(key=lambda item: (-abs(item[2] - item[1]), item[0]))
    shown = [
        "`" + text.replace("`", "'").replace("|", "\\|") + f"` {amount(b)} → {amount(h)}"
        for text, b, h in moved[:limit]
    ]
    if len(moved) > limit:
        shown.append(f"and {len(moved) - limit} more")
    return [f"| | ↳ rows per request: {', '.join(shown)} | | | | |"]


def allocations_lines(row: Row) -> list[str]:
    """A retained-memory row's allocations per request, when they moved by 0.01 or more."""
    base, head = (list(row.detail.get(ALLOCATIONS, [])) + [None, None])[:2]
    if row.metric != RETAINED.key or base is None or head is None:
        return []
    if round(base, 2) == round(head, 2):
        return []
    return [f"| | ↳ allocations per request: {amount(base)} → {amount(head)} | | | | |"]


def _endpoint(row: Row) -> tuple[str, str, str | None, str]:
    return (row.kind, row.scenario, row.endpoint, row.label.removesuffix(row.metric))


def beside_instructions(row: Row, every: list[Row]) -> list[str]:
    """Under a changed instructions row: its endpoint's rows and allocations per request that moved,
    from its database-buffers and retained-memory rows when those are unchanged."""
    if row.metric != INSTRUCTIONS.key or not row.significant:
        return []
    found: list[str] = []
    for other in every:
        if other.significant or _endpoint(other) != _endpoint(row):
            continue
        found += rows_lines(other) + allocations_lines(other)
    return found
