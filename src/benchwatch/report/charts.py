"""The report's charts, per app: rps, CPU per request, latency vs offered rate, memory."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from benchwatch.figures.metrics import (
    CPU,
    P50,
    P99,
    RPS,
    RSS_IDLE,
    RSS_PEAK,
    RSS_WARM,
    Closed,
    Open,
)
from benchwatch.report.svg import Bar, Line, grouped_bars, line_chart
from benchwatch.report.tables import app_of, variant_order
from benchwatch.results.schema import Figure, Run

_MEMORY = ((RSS_IDLE.key, "idle"), (RSS_WARM.key, "warm"), (RSS_PEAK.key, "peak"))


def _top_closed(figures: list[Figure], metric: str) -> dict[tuple[str, str], Figure]:
    """Per (endpoint, variant): the closed-loop figure at the highest concurrency."""
    chosen: dict[tuple[str, str], Figure] = {}
    for f in figures:
        if f.metric != metric or not isinstance(f.setting, Closed) or not f.valid:
            continue
        key = (f.endpoint or "", f.variant)
        if key not in chosen or f.setting.concurrency > _concurrency(chosen[key]):
            chosen[key] = f
    return chosen


def _concurrency(figure: Figure) -> int:
    setting = figure.setting
    return setting.concurrency if isinstance(setting, Closed) else 0


def _bars_by_endpoint(
    chosen: dict[tuple[str, str], Figure], variants: Sequence[str]
) -> dict[str, list[Bar]]:
    groups: dict[str, list[Bar]] = defaultdict(list)
    for endpoint in dict.fromkeys(e for e, _ in chosen):
        for variant in variants:
            figure = chosen.get((endpoint, variant))
            if figure is not None:
                groups[endpoint].append(Bar(variant, figure.value))
    return dict(groups)


def app_charts(run: Run, app: str, stacks: Sequence[str]) -> list[str]:
    figures = [f for f in run.figures if f.kind == "load" and app_of(f) == app]
    variants = variant_order(figures, stacks)
    charts = []
    cpu = _top_closed(figures, CPU.key)
    if cpu:
        concurrency = max(_concurrency(f) for f in cpu.values())
        charts.append(
            grouped_bars(
                f"{app}: server CPU per request (c={concurrency}; shorter is better)",
                "µs",
                _bars_by_endpoint(cpu, variants),
                scale_per_group=True,
            )
        )
    rps = _top_closed(figures, RPS.key)
    if rps:
        concurrency = max(_concurrency(f) for f in rps.values())
        charts.append(
            grouped_bars(
                f"{app}: requests per second (c={concurrency}; longer is better)",
                "req/s",
                _bars_by_endpoint(rps, variants),
                scale_per_group=True,
            )
        )
    charts += _latency_charts(figures, variants)
    memory: dict[str, list[Bar]] = defaultdict(list)
    for metric, label in _MEMORY:
        for variant in variants:
            figure = next(
                (f for f in figures if f.variant == variant and f.metric == metric and f.valid),
                None,
            )
            if figure is not None:
                memory[label].append(Bar(variant, figure.value))
    if memory:
        charts.append(grouped_bars(f"{app}: server memory (RSS, process tree)", "MB", dict(memory)))
    return charts


def _latency_charts(figures: list[Figure], variants: Sequence[str]) -> list[str]:
    """Per endpoint: p50 (dashed) and p99 against the offered rate of the open-loop runs."""
    open_loop = [  # (figure, its offered rate)
        (f, f.setting.rate_rps)
        for f in figures
        if isinstance(f.setting, Open)
        and f.setting.rate_rps is not None
        and f.valid
        and f.metric in (P50.key, P99.key)
    ]
    charts = []
    for endpoint in dict.fromkeys(f.endpoint for f, _ in open_loop):
        lines = []
        for variant in variants:
            for metric, dashed in ((P99.key, False), (P50.key, True)):
                points = [
                    (float(rate), f.value)
                    for f, rate in open_loop
                    if f.endpoint == endpoint and f.variant == variant and f.metric == metric
                ]
                if points:
                    lines.append(Line(variant, points, dashed))
        if lines:
            title = f"{endpoint}: latency vs offered rate (p99 solid, p50 dashed)"
            charts.append(line_chart(title, "offered rate (req/s)", "latency (ms)", lines))
    return charts
