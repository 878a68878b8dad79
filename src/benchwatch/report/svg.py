"""Inline SVG charts drawn in Python: grouped horizontal bars and x/y lines. No JS, no CDN."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

PALETTE = (
    "#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2",
    "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac",
)  # fmt: skip
FONT = "font-family:system-ui,-apple-system,'Segoe UI',sans-serif"


@dataclass(frozen=True)
class Bar:
    series: str
    value: float
    label: str = ""


@dataclass(frozen=True)
class Line:
    series: str
    points: Sequence[tuple[float, float]]
    dashed: bool = False


def colors_for(series: Sequence[str]) -> dict[str, str]:
    unique = list(dict.fromkeys(series))
    return {name: PALETTE[i % len(PALETTE)] for i, name in enumerate(unique)}


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


def _text(x: float, y: float, content: str, anchor: str = "start", size: int = 11,
          extra: str = "") -> str:  # fmt: skip
    return (f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" '
            f'{extra}>{escape(content)}</text>')  # fmt: skip


def _svg(width: int, height: int, title: str, body: list[str]) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" role="img" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" style="{FONT}">'
        f"<title>{escape(title)}</title>" + "".join(body) + "</svg>"
    )


def _legend(colors: dict[str, str], x: float, y: float, width: float) -> tuple[list[str], float]:
    parts, cx, cy = [], x, y
    for name, color in colors.items():
        step = 22 + 6.5 * len(name)
        if cx + step > x + width and cx > x:
            cx, cy = x, cy + 16
        parts.append(f'<rect x="{cx:.1f}" y="{cy - 9:.1f}" width="12" height="10" fill="{color}"/>')
        parts.append(_text(cx + 16, cy, name))
        cx += step
    return parts, cy + 10


def grouped_bars(
    title: str, unit: str, groups: dict[str, list[Bar]], colors: dict[str, str] | None = None,
    *, width: int = 720, scale_per_group: bool = False,
) -> str:  # fmt: skip
    """One block per group, one horizontal bar per series, the value printed at the bar's end."""
    groups = {g: bars for g, bars in groups.items() if bars}
    colors = colors or colors_for([b.series for bars in groups.values() for b in bars])
    bar_h, gap, label_w, value_w = 14, 10, 190, 110
    plot_w = width - label_w - value_w - 10
    body = [_text(8, 18, title, size=13, extra='font-weight="600"')]
    legend, y = _legend(colors, 8, 38, width - 16)
    body += legend
    y += 6
    overall = max((b.value for bars in groups.values() for b in bars), default=0.0)
    for group, bars in groups.items():
        top = max((b.value for b in bars), default=0.0) if scale_per_group else overall
        block_h = len(bars) * (bar_h + 2)
        body.append(_text(8, y + block_h / 2 + 4, _clip(group, 30)))
        for bar in bars:
            length = 0.0 if top <= 0 else max(1.0, plot_w * bar.value / top)
            body.append(
                f'<rect x="{label_w}" y="{y:.1f}" width="{length:.1f}" height="{bar_h}" '
                f'fill="{colors.get(bar.series, PALETTE[0])}"><title>{escape(bar.series)}: '
                f"{escape(short_number(bar.value))} {escape(unit)}</title></rect>"
            )
            text = bar.label or f"{short_number(bar.value)} {unit}"
            body.append(_text(label_w + length + 4, y + bar_h - 3, text, size=10))
            y += bar_h + 2
        y += gap
    if scale_per_group and len(groups) > 1:
        body.append(_text(8, y + 10, "bars scaled per group", size=10, extra='fill="#666"'))
        y += 14
    return _svg(width, int(y + 8), title, body)


def line_chart(
    title: str, x_label: str, y_label: str, lines: Sequence[Line],
    colors: dict[str, str] | None = None, *, width: int = 720, height: int = 320,
) -> str:  # fmt: skip
    """x/y lines with markers; axes from zero to round maxima."""
    lines = [line for line in lines if line.points]
    colors = colors or colors_for([line.series for line in lines])
    body = [_text(8, 18, title, size=13, extra='font-weight="600"')]
    legend, top = _legend(colors, 8, 38, width - 16)
    body += legend
    left, right, bottom = 60, 20, 44
    plot_top = top + 10
    plot_h = height - plot_top - bottom
    plot_w = width - left - right
    xs = [x for line in lines for x, _ in line.points]
    ys = [y for line in lines for _, y in line.points]
    x_ticks, y_ticks = nice_ticks(max(xs, default=1.0)), nice_ticks(max(ys, default=1.0))

    def px(x: float) -> float:
        return left + plot_w * x / x_ticks[-1]

    def py(y: float) -> float:
        return plot_top + plot_h * (1 - y / y_ticks[-1])

    for tick in y_ticks:
        body.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{py(tick):.1f}" y2="{py(tick):.1f}" '
                    'stroke="#e3e3e3"/>')  # fmt: skip
        body.append(_text(left - 6, py(tick) + 4, short_number(tick), "end", 10))
    for tick in x_ticks:
        body.append(_text(px(tick), plot_top + plot_h + 16, short_number(tick), "middle", 10))
    body.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{plot_top + plot_h}" '
                f'y2="{plot_top + plot_h}" stroke="#888"/>')  # fmt: skip
    body.append(_text(left + plot_w / 2, height - 8, x_label, "middle", 11))
    body.append(_text(14, plot_top + plot_h / 2, y_label, "middle", 11,
                      f'transform="rotate(-90 14 {plot_top + plot_h / 2:.1f})"'))  # fmt: skip
    for line in lines:
        color = colors.get(line.series, PALETTE[0])
        points = sorted(line.points)
        path = " ".join(f"{'M' if i == 0 else 'L'}{px(x):.1f},{py(y):.1f}" for i, (x, y) in enumerate(points))
        dash = ' stroke-dasharray="5 4"' if line.dashed else ""
        body.append(f'<path d="{path}" fill="none" stroke="{color}" stroke-width="2"{dash}/>')
        for x, y in points:
            body.append(
                f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3" fill="{color}"><title>'
                f"{escape(line.series)}: {short_number(x)} → {short_number(y)}</title></circle>"
            )
    return _svg(width, height, title, body)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
