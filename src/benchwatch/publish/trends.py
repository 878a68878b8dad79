"""The one trend renderer: a data.js trend (benchwatch.publish.trend_read) drawn as static SVG
(benchwatch.report.svg) — per scenario, one chart per figure over commits (main) or nights
(nightly), one line per stack, the change points of `benchwatch changes` marked, the
`(vs parent)` series beside the absolute one. trends.html draws the gating figures with it,
index.html every figure; no script draws anything."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from html import escape
from typing import Any

from benchwatch.publish.trend_read import Chart, Line, Publish, Trend
from benchwatch.report.palette import styles
from benchwatch.report.svg import (
    WIDTH,
    legend,
    marker,
    short_number,
    svg,
    text,
    title_lines,
)

# --- drawing ------------------------------------------------------------------------------

DENSE = (
    60  # more points than this on an axis: no marker or whisker per point (the page stays small)
)
_MARK_COLORS = {"regression": "#dc2626", "improvement": "#16a34a", "acknowledged": "#6b7280"}
_PLOT_H = 150


def mark_x(mark: dict[str, Any], line: Line) -> int | None:
    """The x of the first point of the new level (the change's `index` in the series, as
    `benchwatch changes` counted it; the after-commit when the index is missing)."""
    index = mark.get("index")
    if isinstance(index, int) and 0 <= index < len(line.points):
        return line.points[index].x
    found = [p.x for p in line.points if p.commit == mark["after"].get("commit")]
    return found[0] if found else None


def difference_word(mark: dict[str, Any]) -> str | None:
    """`+101 statements/req` for a change judged by its difference (statements, retained memory)."""
    moved = mark.get("difference")
    if not isinstance(moved, int | float):
        return None
    return f"{moved:+.2f}".rstrip("0").rstrip(".") + f" {mark.get('unit', '')}/req"


def mark_size(mark: dict[str, Any]) -> str:
    """`+10.0% (1.100x [1.090, 1.110])`, `+101 statements/req` for a difference, or `?` without a ratio."""
    moved = difference_word(mark)
    if moved is not None:
        before, after = mark["before"].get("value"), mark["after"].get("value")
        if isinstance(before, int | float) and isinstance(after, int | float):
            return f"{moved} ({before:g} → {after:g})"
        return moved
    ratio, low, high = mark.get("ratio"), mark.get("low"), mark.get("high")
    if not isinstance(ratio, int | float):
        return "?"
    interval = (
        f" [{low:.3f}, {high:.3f}]"
        if isinstance(low, int | float) and isinstance(high, int | float)
        else ""
    )
    return f"{(ratio - 1) * 100:+.1f}% ({ratio:.3f}x{interval})"


def mark_status(mark: dict[str, Any]) -> str:
    if mark.get("acknowledged"):
        return f"acknowledged: {mark['acknowledged']}"
    return "ALERT" if mark.get("alert") else mark["kind"]


def mark_text(mark: dict[str, Any]) -> str:
    return (
        f"change point {str(mark['before'].get('commit'))[:8]} → {str(mark['after'].get('commit'))[:8]}: "
        f"{mark_size(mark)}, {mark['kind']} ({mark_status(mark)})"
    )


def _draw(
    title: str,
    lines: list[Line],
    unit: str,
    n: int,
    axis: list[Publish],
    marks: dict,
    *,
    relative: bool,
    nightly: bool,
) -> tuple[str, list[str]]:
    """One chart and the text of its change points."""
    found = styles([line.series for line in lines])
    body, top = title_lines(title, WIDTH)
    parts, top = legend(
        {line.series: found[line.series] for line in lines}, 6, top + 12, WIDTH - 12, lines=True
    )
    body += parts
    left, right, plot_top = 50, 14, top + 14
    plot_w, plot_h = WIDTH - left - right, _PLOT_H
    lows = [p.value - (p.half or 0) for line in lines for p in line.points]
    highs = [p.value + (p.half or 0) for line in lines for p in line.points]
    lo, hi = min(lows + ([1.0] if relative else [])), max(highs + ([1.0] if relative else []))
    log = not relative and lo > 0 and hi / lo > 3  # stacks far apart: equal steps look equal
    if log:
        lo, hi = math.log(lo), math.log(hi)
    pad = (hi - lo) * 0.08 or abs(hi) * 0.05 or 1.0
    floor = (
        0.0 if not log and min(p.value for line in lines for p in line.points) > 0 else -math.inf
    )
    lo, hi = max(lo - pad, floor), hi + pad

    def px(x: float) -> float:
        return left + (plot_w / 2 if n <= 1 else plot_w * x / (n - 1))

    def py(value: float) -> float:
        v = math.log(max(value, 1e-12)) if log else value
        return plot_top + plot_h * (1 - (v - lo) / (hi - lo))

    ticks = [math.exp(lo + (hi - lo) * f) if log else lo + (hi - lo) * f for f in (0.1, 0.5, 0.9)]
    for tick in ticks:
        body.append(
            f'<line x1="{left}" x2="{left + plot_w}" y1="{py(tick):.1f}" y2="{py(tick):.1f}" '
            'stroke="currentColor" stroke-opacity="0.15"/>'
        )
        body.append(text(left - 4, py(tick) + 4, short_number(tick), "end"))
    if relative:
        body.append(
            f'<line x1="{left}" x2="{left + plot_w}" y1="{py(1.0):.1f}" y2="{py(1.0):.1f}" '
            'stroke="currentColor" stroke-opacity="0.6" stroke-dasharray="3 3" class="parity"/>'
        )
    bottom = plot_top + plot_h
    body.append(
        f'<line x1="{left}" x2="{left + plot_w}" y1="{bottom}" y2="{bottom}" stroke="currentColor" stroke-opacity="0.5"/>'
    )
    if axis and n:
        first, last = axis[0], axis[n - 1]
        label = (lambda p: p.date) if nightly else (lambda p: p.commit[:7])
        body.append(text(left, bottom + 15, label(first), "start"))
        if n > 1:
            body.append(text(left + plot_w, bottom + 15, label(last), "end"))
        body.append(
            text(
                left + plot_w / 2,
                bottom + 30,
                f"{n} {'nights' if nightly else 'commits'} →",
                "middle",
                extra='fill-opacity="0.7"',
            )
        )
    notes: list[str] = []
    for line in lines:
        style = found[line.series]
        d = " ".join(
            f"{'M' if i == 0 else 'L'}{px(p.x):.1f},{py(p.value):.1f}"
            for i, p in enumerate(line.points)
        )
        dash = f' stroke-dasharray="{style.dash}"' if style.dash else ""
        body.append(
            f'<path d="{d}" fill="none" stroke="{style.color}" stroke-width="1.8"{dash} '
            f'data-stack="{escape(style.stack)}" data-series="{escape(line.series)}"/>'
        )
        for p in (
            line.points if n <= DENSE else line.points[-1:]
        ):  # a long history: the line and its last point
            if p.half:
                body.append(
                    f'<line x1="{px(p.x):.1f}" x2="{px(p.x):.1f}" y1="{py(p.value - p.half):.1f}" '
                    f'y2="{py(p.value + p.half):.1f}" stroke="{style.color}" stroke-opacity="0.55" '
                    f'data-stack="{escape(style.stack)}" class="whisker"/>'
                )
            tip = f"{p.date} {p.commit[:8]}: {short_number(p.value)} {unit}" + (
                f" ± {short_number(p.half)}" if p.half else ""
            )
            body.append(marker(px(p.x), py(p.value), style, line.series, tip, r=2.4))
        for mark in marks.get((line.suite, line.name), []):
            x = mark_x(mark, line)
            if x is None:
                continue
            at = px(x) if (mark.get("mode") == "spike" or x == 0) else (px(x - 1) + px(x)) / 2
            tone = "acknowledged" if mark.get("acknowledged") else mark["kind"]
            color = _MARK_COLORS.get(tone, "#6b7280")
            ratio = mark.get("ratio")
            word = ("ack " if mark.get("acknowledged") else "") + (
                difference_word(mark)
                or (f"{(ratio - 1) * 100:+.1f}%" if isinstance(ratio, int | float) else "?")
            )
            body.append(
                f'<g class="change-point" data-commit="{escape(str(mark["after"].get("commit")))}" '
                f'data-kind="{escape(mark["kind"])}" data-acknowledged="{1 if mark.get("acknowledged") else 0}" '
                f'data-x="{x}"><line x1="{at:.1f}" x2="{at:.1f}" y1="{plot_top}" y2="{bottom}" stroke="{color}" '
                f'stroke-width="1.6" stroke-dasharray="4 3"/>'
                + (
                    text(at + 3, plot_top + 11, word, extra=f'fill="{color}"')
                    if at < left + plot_w * 0.7
                    else text(at - 3, plot_top + 11, word, "end", extra=f'fill="{color}"')
                )
                + f"<title>{escape(line.series + ': ' + mark_text(mark))}</title></g>"
            )
            notes.append(f"{line.series}: {mark_text(mark)}")
    return svg(WIDTH, bottom + 38, title, body, "trend" + (" relative" if relative else "")), notes


def chart_html(trend: Trend, chart: Chart, marks: dict) -> str:
    n = len(trend.axis)
    unit = "µs" if chart.unit == "us" else chart.unit
    better = "higher" if chart.bigger_is_better else "lower"
    parts, notes = [], []
    if chart.absolute:
        drawn, found = _draw(
            f"{chart.figure} ({unit}, {better} is better)",
            chart.absolute,
            unit,
            n,
            trend.axis,
            marks,
            relative=False,
            nightly=trend.nightly,
        )
        parts.append(drawn)
        notes += found
    if chart.relative:
        drawn, found = _draw(
            f"{chart.figure} vs parent, side by side (x; above 1 is worse)",
            chart.relative,
            "x",
            n,
            trend.axis,
            marks,
            relative=True,
            nightly=trend.nightly,
        )
        parts.append(drawn)
        notes += found
    items = "".join(f"<li>{escape(note)}</li>" for note in notes)
    caption = f"<ul class='marks'>{items}</ul>" if items else ""
    words = " ".join(
        [chart.group, chart.figure, *(line.series for line in chart.absolute + chart.relative)]
    )
    return (
        f"<figure class='trend-chart' data-group='{escape(chart.group)}' data-figure='{escape(chart.figure)}' "
        f"data-filter='{escape(words.lower())}'>"
        f"<div class='pair'>{''.join(parts)}</div>{caption}</figure>"
    )


HOW = {
    False: (
        "Each point: one publish of main (`./bw run --quick` on a GitHub runner: one round, each variant "
        "measured alone, one after the other). Whiskers: ± half the interquartile range of the run's rounds "
        "(none with one round). Separate runs differ by the host's speed (~20 % CPU per request between runs "
        "here), so a trend is judged by change points over many commits, not by one point. "
        "The (vs parent) charts: each commit against its parent, both loaded at the same moment; whiskers are "
        "the 95 % interval."
    ),
    True: (
        "Each point: one night, `next` (the newest releases) measured side by side with `latest` "
        "(`compare --quick`, 12 paired rounds); whiskers: ± the published range."
    ),
}


def trend_section(
    trend: Trend, marks: dict, *, level: int = 2, what: str = "gating figures"
) -> str:
    """One data.js: a heading (h`level`), how its points were measured, per group its charts."""
    parts = [
        f"<section class='trend-source' data-source='{escape(trend.path)}' data-state='ok'>",
        f"<h{level}>{escape(trend.label)}</h{level}>",
        f"<p class='note how'>{escape(HOW[trend.nightly])}</p>",
    ]
    if not trend.groups:
        parts.append(f"<div class='message'>no {escape(what)} in this trend yet</div>")
    nav = " ".join(f"<a href='#{escape(_anchor(trend, g))}'>{escape(g)}</a>" for g in trend.groups)
    if len(trend.groups) > 1:
        parts.append(f"<nav class='groups'>{nav}</nav>")
    for group, charts in trend.groups.items():
        parts.append(
            f"<div class='trend-group'><h{level + 1} id='{escape(_anchor(trend, group))}'>{escape(group)}"
            f"</h{level + 1}><div class='chart-grid'>"
        )
        parts += [chart_html(trend, chart, marks) for chart in charts]
        parts.append("</div></div>")
    parts.append("</section>")
    return "".join(parts)


def _anchor(trend: Trend, group: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", f"{trend.label.split(':')[0]}-{group}".lower()).strip("-")


def marks_by_series(
    changes: Sequence[dict[str, Any]] | None,
) -> dict[tuple[str, str], list[dict[str, Any]]]:
    found: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for mark in changes or []:
        found.setdefault((mark["suite"], mark["name"]), []).append(mark)
    return found
