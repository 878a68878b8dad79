"""The overview's nightly status: the last night of the nightly trend and its largest moves
since the night before (a count that appeared from 0 or went to 0 first, by its values). A night's move is coloured only when `benchwatch changes` found a
change point there: two separate nights differ by the host's speed as much as by the releases."""

from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape
from typing import Any

from benchwatch.publish.trend_read import Trend
from benchwatch.publish.trends import mark_x
from benchwatch.report.tables import goodness, ratio_text

SHOWN = 5


@dataclass(frozen=True)
class Move:
    """One line's move from the night before to the last night."""

    name: str
    good: float | None  # > 1 better (report.tables.goodness); None: no ratio (a value is 0 or less)
    mark: dict[str, Any] | None  # the change point at the last night, if any
    before: float
    after: float

    @property
    def rank(self) -> float:
        """Larger first: a move with no ratio that a change point marks or that starts or ends at
        0 (a count whose no-op is 0: statements, database buffers, retained memory) first of all."""
        return math.inf if self.good is None else abs(math.log(self.good))


def _moves(trend: Trend, marks: dict) -> list[Move]:
    """Every absolute line measured on the last night and the one before, its move. A move with
    no ratio (from or to 0, or below it: retained memory can be) is kept when a change point
    marks it or when it starts or ends at 0: a figure that appeared or went away."""
    end = len(trend.axis) - 1
    found = []
    for charts in trend.groups.values():
        for chart in charts:
            for line in chart.absolute:
                if len(line.points) < 2 or line.points[-1].x != end:
                    continue
                before, after = line.points[-2].value, line.points[-1].value
                good = goodness(after, before, chart.bigger_is_better)
                mark = next(
                    (m for m in marks.get((line.suite, line.name), []) if mark_x(m, line) == end),
                    None,
                )
                if good is None and (
                    before == after or (mark is None and 0 not in (before, after))
                ):
                    continue
                found.append(Move(line.name, good, mark, before, after))
    return sorted(found, key=lambda move: -move.rank)


def _item(move: Move, judged: bool) -> str:
    if move.good is None:
        words, tone = f"{move.before:g} → {move.after:g}", ""
        moved = f"{words} since the night before"
    else:
        words, tone = ratio_text(move.good)
        moved = (
            "no move since the night before"
            if words == "same"
            else f"{words} than the night before"
        )
    mark = move.mark
    if not judged:
        verdict, tone = "not judged: no change-point analysis given", ""
    elif mark is None:
        verdict, tone = "no change point: within the night-to-night noise", ""
    elif mark.get("acknowledged"):
        verdict, tone = f"change point (acknowledged: {mark['acknowledged']})", ""
    else:
        verdict = f"change point ({mark['kind']})"
        tone = "worse" if mark["kind"] == "regression" else "better"
    attr = f" class='{tone}'" if tone else ""
    return f"<li data-judged='{0 if mark is None else 1}'{attr}>{escape(f'{move.name}: {moved} — {verdict}')}</li>"


def nightly_status(trend: Trend | None, problem: str | None, marks: dict | None) -> str:
    """The block under "Nightly status": `problem` is why the nightly trend could not be read;
    `marks` None: no change-point analysis was given."""
    if problem is not None:
        return f"<div id='nightly-status' data-state='corrupt'><div class='message error'>{escape(problem)}</div></div>"
    if trend is None:
        return (
            "<div id='nightly-status' data-state='missing'><div class='message'>nightly/data.js: no nightly trend "
            "(none published yet, or not given to benchwatch site --data)</div></div>"
        )
    if not trend.axis:
        return "<div id='nightly-status' data-state='ok'><div class='message'>the nightly trend has no runs yet</div></div>"
    last = trend.axis[-1]
    parts = [
        f"<p>Last nightly: {escape(last.time or '?')}, commit {escape(last.commit[:10])} {escape(last.message)}</p>"
    ]
    moves = _moves(trend, marks or {})
    if moves:
        parts.append("<p>Largest moves since the previous nightly run:</p><ul>")
        parts += [_item(move, judged=marks is not None) for move in moves[:SHOWN]]
        parts.append("</ul>")
    else:
        parts.append("<p class='note'>no earlier nightly run to compare with</p>")
    return f"<div id='nightly-status' data-state='ok'>{''.join(parts)}</div>"
