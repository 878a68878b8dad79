"""The overview's nightly status: the last night of the nightly trend and its largest moves
since the night before. A night's move is coloured only when `benchwatch changes` found a
change point there: two separate nights differ by the host's speed as much as by the releases."""

from __future__ import annotations

import math
from html import escape
from typing import Any

from benchwatch.publish.trend_read import Trend
from benchwatch.publish.trends import mark_x
from benchwatch.report.tables import goodness, ratio_text

SHOWN = 5


def _moves(trend: Trend, marks: dict) -> list[tuple[str, float, dict[str, Any] | None]]:
    """(name, goodness, the change point at the last night or None) of every absolute line
    measured on the last night and the one before."""
    end = len(trend.axis) - 1
    found = []
    for charts in trend.groups.values():
        for chart in charts:
            for line in chart.absolute:
                if len(line.points) < 2 or line.points[-1].x != end:
                    continue
                good = goodness(
                    line.points[-1].value, line.points[-2].value, chart.bigger_is_better
                )
                if good is None:
                    continue
                mark = next(
                    (m for m in marks.get((line.suite, line.name), []) if mark_x(m, line) == end),
                    None,
                )
                found.append((line.name, good, mark))
    return sorted(found, key=lambda move: -abs(math.log(move[1])))


def _item(name: str, good: float, mark: dict[str, Any] | None, judged: bool) -> str:
    words, tone = ratio_text(good)
    moved = (
        "no move since the night before" if words == "same" else f"{words} than the night before"
    )
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
    return f"<li data-judged='{0 if mark is None else 1}'{attr}>{escape(f'{name}: {moved} — {verdict}')}</li>"


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
        parts += [_item(*move, judged=marks is not None) for move in moves[:SHOWN]]
        parts.append("</ul>")
    else:
        parts.append("<p class='note'>no earlier nightly run to compare with</p>")
    return f"<div id='nightly-status' data-state='ok'>{''.join(parts)}</div>"
