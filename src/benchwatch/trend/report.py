"""`benchwatch changes` output: a JSON document for workflows and the dashboard, markdown
for people (job summaries, issue bodies)."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any

from benchwatch.judge.stats import CONFIDENCE, RatioInterval, describe
from benchwatch.trend.acks import Ack
from benchwatch.trend.changes import (
    ABSOLUTE,
    PARENT,
    RELATIVE,
    RELATIVE_MARK,
    Change,
    Point,
    SeriesResult,
    params_for,
)

SCHEMA_VERSION = 1
Covered = dict[tuple[int, int], Ack]


def alerts(results: list[SeriesResult], covered: Covered) -> list[tuple[int, int]]:
    """(result, change) of every unacknowledged regression in a gating series: exit 1."""
    return [
        (r, c)
        for r, result in enumerate(results)
        for c, change in enumerate(result.changes)
        if result.series.gating and change.kind == "regression" and (r, c) not in covered
    ]


def _number(x: float) -> float | None:
    return None if math.isnan(x) else round(x, 6)


def _point(point: Point) -> dict[str, Any]:
    return {"commit": point.commit, "date": point.date, "url": point.url, "value": point.value}


def _change(result: SeriesResult, change: Change, ack: Ack | None) -> dict[str, Any]:
    points = result.series.points
    # a change judged by its difference (statements, retained memory) says it in the series' unit
    difference = {} if change.difference is None else {"difference": round(change.difference, 6)}
    return {
        "index": change.index,
        "before": _point(points[change.index - 1]),
        "after": _point(points[change.index]),
        "ratio": _number(change.ratio),
        "low": _number(change.low),
        "high": _number(change.high),
        "confidence": CONFIDENCE,
        "p_value": change.p_value,
        "n_before": change.n_before,
        "n_after": change.n_after,
        "kind": change.kind,
        **difference,
        "acknowledged": None
        if ack is None
        else {
            "ack": ack.number,
            "figure": ack.figure,
            "commit": ack.commit,
            "reason": ack.reason,
        },
    }


def to_json(
    results: list[SeriesResult],
    covered: Covered,
    files: list[Path],
    warnings: list[str],
    since: int | None,
    acks_file: Path | None,
) -> dict[str, Any]:
    alerted = set(alerts(results, covered))
    series = []
    for r, result in enumerate(results):
        s = result.series
        series.append(
            {
                "source": s.source,
                "suite": s.suite,
                "name": s.name,
                "unit": s.unit,
                "bigger_is_better": s.bigger_is_better,
                "gating": s.gating,
                "relative": RELATIVE_MARK in s.name,
                "mode": params_for(s.name).mode,
                "points": len(s.points),
                "verdict": result.verdict,
                "note": result.note,
                "alert": any((r, c) in alerted for c in range(len(result.changes))),
                "changes": [
                    _change(result, ch, covered.get((r, c))) for c, ch in enumerate(result.changes)
                ],
            }
        )
    return {
        "schema_version": SCHEMA_VERSION,
        "files": [str(f) for f in files],
        "since": since,
        "acks_file": str(acks_file) if acks_file else None,
        "params": {
            "parent": dataclasses.asdict(PARENT),
            "relative": dataclasses.asdict(RELATIVE),
            "absolute": dataclasses.asdict(ABSOLUTE),
        },
        "summary": {
            "series": len(results),
            "with_changes": sum(1 for r in results if r.changes),
            "changes": sum(len(r.changes) for r in results),
            "acknowledged": len(covered),
            "alerts": len(alerted),
            "too_few_points": sum(1 for r in results if r.verdict == "too few points"),
            "no_verdict": sum(1 for r in results if r.verdict == "no verdict"),
        },
        "series": series,
        "warnings": warnings,
    }


def difference_text(before: float, after: float, unit: str) -> str:
    """`0 → 101 statements per request (+101)`: a change judged by its difference."""
    shown = lambda x: f"{x:.2f}".rstrip("0").rstrip(".")  # noqa: E731
    return f"{shown(before)} → {shown(after)} {unit} per request ({after - before:+.2f})"


def _describe(result: SeriesResult, change: Change) -> tuple[str, str]:
    s = result.series
    if change.difference is not None:
        points = s.points
        before, after = points[change.index - 1].value, points[change.index].value
        return difference_text(before, after, s.unit), "n/a"
    memory = s.unit.upper() in ("MB", "B", "KB", "BYTES")
    if math.isnan(change.ratio):  # from 0 or below (a difference series): its two values
        before, after = s.points[change.index - 1].value, s.points[change.index].value
        return f"{before:g} → {after:g}", "n/a"
    if math.isnan(change.low):
        size = describe(
            RatioInterval(change.ratio, change.ratio, change.ratio, CONFIDENCE, 1, 1),
            s.bigger_is_better,
            memory,
        ).split(" [")[0]
        return size, "n/a"
    text = describe(
        RatioInterval(
            change.ratio, change.low, change.high, CONFIDENCE, change.n_before, change.n_after
        ),
        s.bigger_is_better,
        memory,
    )
    size, _, interval = text.partition(" [")
    return size, "[" + interval


def _short(point: Point) -> str:
    return f"`{point.commit[:8]}` ({point.date[:10]})" if point.date else f"`{point.commit[:8]}`"


def to_markdown(
    results: list[SeriesResult], covered: Covered, files: list[Path], warnings: list[str]
) -> str:
    alerted = set(alerts(results, covered))
    rows = [(r, c) for r, result in enumerate(results) for c in range(len(result.changes))]
    rows.sort(
        key=lambda rc: (
            (rc not in alerted),
            results[rc[0]].changes[rc[1]].kind != "regression",
            not results[rc[0]].series.gating,
            results[rc[0]].series.name,
        )
    )
    out = ["## Change points", "", f"Histories: {', '.join(str(f) for f in files)}", ""]
    if rows:
        out += [
            "| series | between | change | 95% interval | p | status |",
            "|---|---|---|---|---|---|",
        ]
        for r, c in rows:
            result, change = results[r], results[r].changes[c]
            points = result.series.points
            size, interval = _describe(result, change)
            ack = covered.get((r, c))
            status = change.kind + (", gating" if result.series.gating else "")
            if ack:
                status += f", acknowledged (ack.{ack.number}: {ack.reason})"
            elif (r, c) in alerted:
                status = f"**{status}**"
            out.append(
                f"| `{result.series.name}` ({result.series.suite}) | "
                f"{_short(points[change.index - 1])} → {_short(points[change.index])} | "
                f"{size} | {interval} | {change.p_value:.1g} | {status} |"
            )
    else:
        out.append("No change points.")
    few = [r for r in results if r.verdict in ("too few points", "no verdict")]
    if few:
        out += ["", f"No verdict for {len(few)} series:"]
        out += [f"- `{r.series.name}` ({r.series.suite}): {r.verdict}, {r.note}" for r in few]
    out += [""] + [f"WARNING: {w}" for w in warnings]
    out.append(
        f"{len(results)} series, {len(rows)} change points, {len(covered)} acknowledged, "
        f"{len(alerted)} unacknowledged regressions in gating series"
    )
    return "\n".join(out) + "\n"
