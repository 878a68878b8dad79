"""Inline SVG charts drawn in Python: horizontal bars and x/y lines. No JS, no CDN.

Charts are narrow (WIDTH user units) and scale down with the page, never up: at a phone's
~390 px of content the smallest text (MIN_FONT) still renders at 10 px or more. Text and
grid lines use currentColor, so a chart follows the page's light or dark theme; series are
coloured by stack (benchwatch.report.palette), flavors by pattern, dash and marker."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

from benchwatch.report.palette import Style, styles

WIDTH = 400
MIN_FONT = 11
FONT = "font-family:system-ui,-apple-system,'Segoe UI',sans-serif"
_CHAR = 0.56  # average glyph width of the UI font, in ems (for wrapping and clipping)


@dataclass(frozen=True)
class Bar:
    series: str  # a variant id (`hello-falcon@latest`) or a stack name
    value: float
    label: str = ""


@dataclass(frozen=True)
class Line:
    series: str
    points: Sequence[tuple[float, float]]
    dashed: bool = False  # a second metric of the same series (p50 next to p99)


def nice_ticks(high: float, count: int = 5) -> list[float]:
    """Round tick values from 0 to at least `high`."""
    if high <= 0 or not math.isfinite(high):
        return [0.0, 1.0]
    raw = high / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    return [i * step for i in range(math.ceil(high / step - 1e-9) + 1)]


def short_number(value: float) -> str:
    if value == 0:
        return "0"
    if abs(value) >= 10000:
        return f"{value / 1000:.3g}k"
    return f"{value:.4g}"


def text(
    x: float, y: float, content: str, anchor: str = "start", size: int = MIN_FONT, extra: str = ""
) -> str:
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" font-size="{max(size, MIN_FONT)}" text-anchor="{anchor}"'
        f"{' ' + extra if extra else ''}>{escape(content)}</text>"
    )


def fits(content: str, width: float, size: int = MIN_FONT) -> str:
    """`content` clipped with … to about `width` user units at font `size`."""
    limit = max(4, int(width / (size * _CHAR)))
    return content if len(content) <= limit else content[: limit - 1] + "…"


def wrap(content: str, width: float, size: int, bold: bool = False) -> list[str]:
    limit = max(8, int(width / (size * (_CHAR + (0.08 if bold else 0.0)))))
    words = [
        w[i : i + limit] for w in content.split() for i in range(0, len(w), limit)
    ]  # a URL longer than a line
    lines, current = [], ""
    for word in words:
        if current and len(current) + 1 + len(word) > limit:
            lines.append(current)
            current = word
        else:
            current = f"{current} {word}".strip()
    return [*lines, current] if current else lines


def svg(width: int, height: float, title: str, body: list[str], kind: str = "") -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart{" " + kind if kind else ""}" role="img" '
        f'width="{width}" height="{height:.0f}" viewBox="0 0 {width} {height:.0f}" fill="currentColor" '
        f'style="{FONT}"><title>{escape(title)}</title>' + "".join(body) + "</svg>"
    )


def title_lines(title: str, width: int) -> tuple[list[str], float]:
    """The title wrapped over as many lines as it needs; returns (elements, y below it)."""
    body, y = [], 4.0
    for line in wrap(title, width - 12, 13, bold=True):
        y += 17
        body.append(text(6, y, line, size=13, extra='font-weight="600"'))
    return body, y + 4


def pattern_defs() -> str:
    """Hatches laid over a flavor's bar (in the page's background colour, so the stack's
    colour stays visible underneath); shared by every chart of a page (same ids)."""
    stroke = 'style="stroke:var(--bg,#fff)" stroke-width="1.6"'
    return (
        "<defs>"
        f'<pattern id="bw-hatch-diagonal" width="6" height="6" patternUnits="userSpaceOnUse" '
        f'patternTransform="rotate(45)"><line x1="0" y1="0" x2="0" y2="6" {stroke}/></pattern>'
        f'<pattern id="bw-hatch-dots" width="5" height="5" patternUnits="userSpaceOnUse">'
        f'<circle cx="2.5" cy="2.5" r="1.2" style="fill:var(--bg,#fff)"/></pattern>'
        f'<pattern id="bw-hatch-cross-hatch" width="6" height="6" patternUnits="userSpaceOnUse" '
        f'patternTransform="rotate(45)"><path d="M0,3H6M3,0V6" {stroke}/></pattern>'
        f'<pattern id="bw-hatch-horizontal" width="5" height="5" patternUnits="userSpaceOnUse">'
        f'<line x1="0" y1="2.5" x2="5" y2="2.5" {stroke}/></pattern>'
        "</defs>"
    )


def swatch(x: float, y: float, w: float, h: float, style: Style, series: str, tip: str = "") -> str:
    """A rectangle in the stack's colour, with the flavor's hatch laid over it."""
    tip_text = f"<title>{escape(tip)}</title>" if tip else ""
    out = (
        f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" fill="{style.color}" '
        f'data-stack="{escape(style.stack)}" data-series="{escape(series)}">{tip_text}</rect>'
    )
    if style.hatch:
        out += (
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{w:.1f}" height="{h:.1f}" '
            f'fill="url(#bw-hatch-{style.hatch})" class="hatch"/>'
        )
    return out


def marker(x: float, y: float, style: Style, series: str, tip: str = "", r: float = 3.2) -> str:
    tip_text = f"<title>{escape(tip)}</title>" if tip else ""
    common = (
        f'fill="{style.color}" data-stack="{escape(style.stack)}" data-series="{escape(series)}"'
    )
    if style.marker == "square":
        return f'<rect x="{x - r:.1f}" y="{y - r:.1f}" width="{2 * r:.1f}" height="{2 * r:.1f}" {common}>{tip_text}</rect>'
    if style.marker == "triangle":
        shape = (
            f"{x:.1f},{y - r * 1.2:.1f} {x + r * 1.1:.1f},{y + r:.1f} {x - r * 1.1:.1f},{y + r:.1f}"
        )
        return f'<polygon points="{shape}" {common}>{tip_text}</polygon>'
    if style.marker == "diamond":
        shape = f"{x:.1f},{y - r * 1.3:.1f} {x + r * 1.3:.1f},{y:.1f} {x:.1f},{y + r * 1.3:.1f} {x - r * 1.3:.1f},{y:.1f}"
        return f'<polygon points="{shape}" {common}>{tip_text}</polygon>'
    if style.marker == "cross":
        d = f"M{x - r:.1f},{y - r:.1f}L{x + r:.1f},{y + r:.1f}M{x - r:.1f},{y + r:.1f}L{x + r:.1f},{y - r:.1f}"
        return (
            f'<path d="{d}" stroke="{style.color}" stroke-width="2" fill="none" data-stack="{escape(style.stack)}" '
            f'data-series="{escape(series)}">{tip_text}</path>'
        )
    return f'<circle cx="{x:.1f}" cy="{y:.1f}" r="{r:.1f}" {common}>{tip_text}</circle>'


def legend(
    found: dict[str, Style], x: float, y: float, width: float, lines: bool = False
) -> tuple[list[str], float]:
    """Swatches (or a line with its marker) and names, wrapped to `width`; returns (parts, y below)."""
    parts, cx, cy = [], x, y
    for name, style in found.items():
        step = 26 + MIN_FONT * _CHAR * len(name) + 10
        if cx + step > x + width and cx > x:
            cx, cy = x, cy + 17
        if lines:
            dash = f' stroke-dasharray="{style.dash}"' if style.dash else ""
            parts.append(
                f'<line x1="{cx:.1f}" x2="{cx + 20:.1f}" y1="{cy - 4:.1f}" y2="{cy - 4:.1f}" '
                f'stroke="{style.color}" stroke-width="2"{dash} data-stack="{escape(style.stack)}"/>'
            )
            parts.append(marker(cx + 10, cy - 4, style, name, r=2.8))
        else:
            parts.append(swatch(cx, cy - 10, 20, 11, style, name))
        parts.append(text(cx + 25, cy, fits(name, width - 25)))
        cx += step
    return ['<g class="legend">', *parts, "</g>"], cy + 8


def grouped_bars(
    title: str,
    unit: str,
    groups: dict[str, list[Bar]],
    *,
    width: int = WIDTH,
    scale_per_group: bool = False,
) -> str:
    """One block per group; per series a label line (name, value) above its bar, so nothing is
    squeezed beside the bars at phone width."""
    groups = {g: bars for g, bars in groups.items() if bars}
    found = styles([b.series for bars in groups.values() for b in bars])
    body, y = title_lines(title, width)
    body.insert(0, pattern_defs())
    plot_w = width - 14
    overall = max((b.value for bars in groups.values() for b in bars), default=0.0)
    for group, bars in groups.items():
        top = max((b.value for b in bars), default=0.0) if scale_per_group else overall
        y += 15
        body.append(text(6, y, fits(group, width - 12, 12), size=12, extra='font-weight="600"'))
        y += 4
        for bar in bars:
            style = found[bar.series]
            value = bar.label or f"{short_number(bar.value)} {unit}"
            y += 14
            body.append(text(8, y, fits(bar.series, plot_w - 8 - MIN_FONT * _CHAR * len(value))))
            body.append(text(width - 6, y, value, "end"))
            y += 3
            length = 0.0 if top <= 0 else max(1.0, plot_w * bar.value / top)
            body.append(
                swatch(
                    7,
                    y,
                    length,
                    9,
                    style,
                    bar.series,
                    f"{bar.series}: {short_number(bar.value)} {unit}",
                )
            )
            y += 9
        y += 6
    if scale_per_group and len(groups) > 1:
        y += 14
        body.append(text(6, y, "bars scaled per group", extra='fill-opacity="0.7"'))
    return svg(width, y + 8, title, body, "bars")


def line_chart(
    title: str,
    x_label: str,
    y_label: str,
    lines: Sequence[Line],
    *,
    width: int = WIDTH,
    height: int = 300,
) -> str:
    """x/y lines with markers (the flavor's shape); axes from zero to round maxima."""
    lines = [line for line in lines if line.points]
    found = styles([line.series for line in lines])
    body, top = title_lines(title, width)
    parts, top = legend(found, 6, top + 12, width - 12, lines=True)
    body += parts
    left, right, bottom = 46, 12, 40
    plot_top = top + 8
    plot_h = max(120.0, height - plot_top - bottom)
    height = int(plot_top + plot_h + bottom)
    plot_w = width - left - right
    xs = [x for line in lines for x, _ in line.points]
    ys = [y for line in lines for _, y in line.points]
    x_ticks, y_ticks = nice_ticks(max(xs, default=1.0), 4), nice_ticks(max(ys, default=1.0), 4)

    def px(x: float) -> float:
        return left + plot_w * x / x_ticks[-1]

    def py(y: float) -> float:
        return plot_top + plot_h * (1 - y / y_ticks[-1])

    for tick in y_ticks:
        body.append(
            f'<line x1="{left}" x2="{left + plot_w}" y1="{py(tick):.1f}" y2="{py(tick):.1f}" '
            'stroke="currentColor" stroke-opacity="0.15"/>'
        )
        body.append(text(left - 5, py(tick) + 4, short_number(tick), "end"))
    for tick in x_ticks:
        body.append(text(px(tick), plot_top + plot_h + 15, short_number(tick), "middle"))
    body.append(
        f'<line x1="{left}" x2="{left + plot_w}" y1="{plot_top + plot_h}" y2="{plot_top + plot_h}" '
        'stroke="currentColor" stroke-opacity="0.5"/>'
    )
    body.append(text(left + plot_w / 2, height - 6, x_label, "middle"))
    body.append(
        text(
            12,
            plot_top + plot_h / 2,
            y_label,
            "middle",
            extra=f'transform="rotate(-90 12 {plot_top + plot_h / 2:.1f})"',
        )
    )
    for line in lines:
        style = found[line.series]
        points = sorted(line.points)
        path = " ".join(
            f"{'M' if i == 0 else 'L'}{px(x):.1f},{py(y):.1f}" for i, (x, y) in enumerate(points)
        )
        dash = (
            ' stroke-dasharray="5 4"'
            if line.dashed
            else (f' stroke-dasharray="{style.dash}"' if style.dash else "")
        )
        body.append(
            f'<path d="{path}" fill="none" stroke="{style.color}" stroke-width="2"{dash} '
            f'data-stack="{escape(style.stack)}" data-series="{escape(line.series)}"/>'
        )
        for x, y in points:
            body.append(
                marker(
                    px(x),
                    py(y),
                    style,
                    line.series,
                    f"{line.series}: {short_number(x)} → {short_number(y)}",
                )
            )
    return svg(width, height, title, body, "lines")
