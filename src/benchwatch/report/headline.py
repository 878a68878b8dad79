"""The comment's headline (also `benchwatch compare`'s last line): the changed estimated cost per
request first (changed SQL statements per request before it), then how many figures went which way
and how many of them gate."""

from __future__ import annotations

from benchwatch.figures.metrics import COST
from benchwatch.judge.verdict import Comparison, Row
from benchwatch.report.retained import retained_headline
from benchwatch.report.statements import statements_headline


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _gating_note(rows: list[Row], verdict: str) -> str:
    """' (1 gating)' when some of the rows with this verdict do not gate, '' when all do."""
    found = [r for r in rows if r.verdict == verdict]
    gating = sum(r.gating for r in found)
    if not found or gating == len(found):
        return ""
    return f" ({gating} gating)" if gating else " (none gating)"


def cost_headline(rows: list[Row]) -> str:
    """The estimated cost per request first: the one changed cost with its interval and endpoint,
    or how many costs went which way."""
    costs = [r for r in rows if r.metric == COST.key]
    if not costs:
        return ""
    moved = [r for r in costs if r.significant]
    if len(moved) == 1 and (ratio := moved[0].ratio) is not None:
        row = moved[0]
        low, high = row.low or ratio, row.high or ratio
        factor, low, high, word = (
            (ratio, low, high, "higher") if ratio > 1 else (1 / ratio, 1 / high, 1 / low, "lower")
        )
        where = row.scenario + (f" {row.endpoint}" if row.endpoint else "")
        return f"estimated cost per request {factor:.2f}x {word} [{low:.2f}, {high:.2f}] ({where})"
    higher = sum(r.verdict == "regression" for r in moved)
    return (
        f"estimated cost per request: {higher} higher, {len(moved) - higher} lower, "
        f"{len(costs) - len(moved)} unchanged"
    )


def headline(comparison: Comparison) -> str:
    counts = comparison.counts()
    parts = [
        plural(counts["regression"], "regression") + _gating_note(comparison.rows, "regression"),
        plural(counts["improvement"], "improvement") + _gating_note(comparison.rows, "improvement"),
        f"{counts['unchanged']} unchanged",
    ]
    if counts["unconfirmed"]:
        parts.append(f"{counts['unconfirmed']} not confirmed")
    if counts["no verdict"]:
        parts.append(f"{counts['no verdict']} without a verdict")
    leads = [
        retained_headline(comparison.rows),
        statements_headline(comparison.rows),
        cost_headline(comparison.rows),
    ]
    return "".join(f"{lead}; " for lead in leads if lead) + ", ".join(parts)
