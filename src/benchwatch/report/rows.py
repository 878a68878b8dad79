"""What the comment shows under a changed database-buffers row besides its buffers and plans: the
rows each statement returned per request (pg_stat_statements' `rows`, counts/database_work.py),
those that moved, on a line of their own. Shown as the mechanism, never judged:

    ↳ rows per request: `SELECT … FROM items WHERE items.owner = $1` 10 → 1000
"""

from __future__ import annotations

from benchwatch.counts.database_work import split_rows
from benchwatch.figures.metrics import DB_BUFFERS
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
