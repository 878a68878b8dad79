"""data.js → charts: every figure of a github-action-benchmark trend file, grouped per scenario,
one chart per figure, one line per stack, the `(vs parent)` series beside the absolute one.
The drawing is benchwatch.publish.trends'.

data.js keeps only figure names, so they are read here the way benchwatch writes them
(benchwatch.figures.figure_key): `<variant> <figure…>`, `micro <case> <op>@<stack>`. A name benchwatch
never wrote gets a chart of its own in OTHER_GROUP.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from benchwatch.figures.figure_key import decode
from benchwatch.trend import histories, history
from benchwatch.trend.changes import is_gating

MICRO_GROUP = "micro-benchmarks"
OTHER_GROUP = "other figures"
UNKNOWN_SERIES = "unknown stack"


@dataclass(frozen=True)
class Name:
    group: str  # the app (`hello`), MICRO_GROUP or OTHER_GROUP
    figure: str  # what is measured (`GET / c=10 cpu/req`, `services validate_json`)
    series: str  # the line: a variant id (`hello-falcon@latest`) or a stack (micro)
    relative: bool  # a ratio measured side by side (`(vs parent)`)
    gating: bool


def read_name(name: str) -> Name:
    key = decode(name)
    if key is None:
        return Name(OTHER_GROUP, name, UNKNOWN_SERIES, False, False)
    group = MICRO_GROUP if key.kind == "micro" else key.app
    figure = (
        key.figure if key.relative else key.figure + key.mark
    )  # `(side by side)` is a figure of its own
    return Name(group, figure, key.series, key.relative, is_gating(name))


@dataclass(frozen=True)
class Point:
    x: int  # position on the chart's axis (a publish: one commit on main, one night on nightly)
    value: float
    half: float | None  # the published range (± half-width), when there is one
    commit: str
    date: str


@dataclass(frozen=True)
class Publish:
    """One x of a trend's axis: a commit on main, a night on nightly."""

    commit: str
    date: str  # YYYY-MM-DD
    time: str  # ISO 8601, UTC, when data.js has one
    message: str  # the commit message's first line


@dataclass
class Line:
    suite: str
    name: str
    series: str
    points: list[Point]
    gating: bool = False


@dataclass
class Chart:
    group: str
    figure: str
    unit: str
    bigger_is_better: bool
    absolute: list[Line] = field(default_factory=list)
    relative: list[Line] = field(default_factory=list)


@dataclass
class Trend:
    """One data.js: its axis (publishes in order) and its charts by group."""

    label: str
    path: str
    nightly: bool
    axis: list[Publish]
    groups: dict[str, list[Chart]]


def _publish(entry: dict[str, Any]) -> Publish:
    commit = entry["commit"]
    millis = entry.get("date")
    if isinstance(millis, int | float) and not isinstance(millis, bool) and millis > 0:
        when = dt.datetime.fromtimestamp(millis / 1000, dt.UTC)
        day, stamp = when.strftime("%Y-%m-%d"), when.strftime("%Y-%m-%dT%H:%M:%SZ")
    else:
        stamp = str(commit.get("timestamp") or "")
        day = stamp[:10]
    return Publish(commit["id"], day, stamp, str(commit.get("message") or "").split("\n")[0])


def read_trend(path: Path, label: str, nightly: bool) -> Trend:
    """Every figure of one data.js. Every entry is checked first (histories.series_of: one error
    naming the file and key)."""
    histories.series_of(path)
    data = history.read(path)
    keys: dict[tuple[str, str], int] = {}
    axis: list[Publish] = []
    charts: dict[tuple[str, str], Chart] = {}
    lines: dict[tuple[str, str], Line] = {}
    # main: one publish per commit; nightly: the same commit is measured night after night
    for suite, entries in data["entries"].items():
        for entry in entries:
            publish = _publish(entry)
            key = (publish.commit, publish.date if nightly else "")
            if key not in keys:
                keys[key] = len(axis)
                axis.append(publish)
            x = keys[key]
            bigger = entry["tool"] == histories.BIGGER_TOOL
            for bench in entry["benches"]:
                name = bench["name"]
                parsed = read_name(name)
                chart = charts.setdefault(
                    (parsed.group, parsed.figure), Chart(parsed.group, parsed.figure, "", bigger)
                )
                if not parsed.relative:
                    chart.unit = str(bench.get("unit", ""))
                    chart.bigger_is_better = bigger
                line = lines.get((suite, name))
                if line is None:
                    line = lines[(suite, name)] = Line(
                        suite, name, parsed.series, [], parsed.gating
                    )
                    (chart.relative if parsed.relative else chart.absolute).append(line)
                line.points.append(
                    Point(
                        x,
                        float(bench["value"]),
                        history.range_half(bench),
                        publish.commit,
                        publish.date,
                    )
                )
    groups: dict[str, list[Chart]] = {}
    order = {MICRO_GROUP: 1, OTHER_GROUP: 2}  # the apps first, by name
    for (group, _), chart in sorted(charts.items(), key=lambda kv: (order.get(kv[0][0], 0), kv[0])):
        groups.setdefault(group, []).append(chart)
    return Trend(label, str(path), nightly, axis, groups)


def gating_only(trend: Trend) -> Trend:
    """The gating figures (server CPU per request, micro-benchmark times) and every `(vs parent)`
    series: trends.html's charts."""
    groups: dict[str, list[Chart]] = {}
    for group, charts in trend.groups.items():
        for chart in charts:
            absolute = [line for line in chart.absolute if line.gating]
            if absolute or chart.relative:
                groups.setdefault(group, []).append(replace(chart, absolute=absolute))
    return replace(trend, groups=groups)
