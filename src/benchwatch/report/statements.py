"""What the comment says under a changed SQL-statements row: which statements moved, by how many per
request, from the two sides' figures' detail (normalized text → statements per request).

    ↳ `SELECT … FROM comment WHERE comment.post_id = ?` ×100 (new)
    ↳ `SELECT … FROM post ORDER BY post.id DESC LIMIT ? OFFSET ?` ×1 → ×2
"""

from __future__ import annotations

from benchwatch.figures.metrics import STATEMENTS
from benchwatch.judge.statements import amount
from benchwatch.judge.verdict import Row


def moved_statements(row: Row, limit: int = 6) -> list[str]:
    """One phrase per statement whose count per request moved, largest change first."""
    moved = [
        (text, b or 0.0, h or 0.0)
        for text, (b, h) in row.detail.items()
        if round(b or 0.0, 2) != round(h or 0.0, 2)
    ]
    moved.sort(key=lambda item: (-abs(item[2] - item[1]), item[0]))
    phrases = [_phrase(text, b, h) for text, b, h in moved[:limit]]
    if len(moved) > limit:
        phrases.append(f"and {len(moved) - limit} more")
    return phrases


def _phrase(text: str, base: float, head: float) -> str:
    shown = "`" + text.replace("`", "'").replace("|", "\\|") + "`"
    if not base:
        return f"{shown} ×{amount(head)} (new)"
    if not head:
        return f"{shown} ×{amount(base)} (gone)"
    return f"{shown} ×{amount(base)} → ×{amount(head)}"


def statements_line(row: Row) -> str:
    """The headline's phrase for one row: "`GET /posts`: statements 1 → 101 per request: …"."""
    where = f"`{row.endpoint}`" if row.endpoint else row.scenario
    moved = moved_statements(row, limit=2)
    return f"{where} ({row.scenario}): statements {row.text}" + (
        f": {'; '.join(moved)}" if moved else ""
    )


def statements_headline(rows: list[Row]) -> str:
    """The headline's lead when statements moved: the one changed row, or how many went which way."""
    moved = [r for r in rows if r.metric == STATEMENTS.key and r.significant]
    if not moved:
        return ""
    if len(moved) == 1:
        row = moved[0]
        where = row.scenario + (f" {row.endpoint}" if row.endpoint else "")
        before, after = row.base_value or 0.0, row.head_value or 0.0
        return f"SQL statements per request {amount(before)} → {amount(after)} ({where})"
    more = sum(r.verdict == "regression" for r in moved)
    return f"SQL statements per request: {more} endpoints more, {len(moved) - more} fewer"
