"""Change points in published histories: where a series stepped, by how much, how sure.

Level series (absolute figures, ratios against a fixed reference): ruptures' PELT
(KernelCPD, linear kernel: penalised least squares on the log values, scaled by a robust
estimate of the point-to-point noise) proposes segment boundaries; each boundary is then
tested between its neighbouring segments with the Mann–Whitney U test, and the weakest
non-significant boundary is dropped and its neighbours re-tested until all pass (the merge
step of Otava/Hunter, with a rank test). Sizing: the ratio of the medians on either side
and a rank-based (Mann–Whitney, Hodges–Lehmann) interval from benchwatch.judge.stats.

`(vs parent)` series compare each commit with its parent side by side, so a regression is
one point, not a new level: a point is a change when it lies far outside the series' own
noise (robust z-score). Parameters of both are tuned by scripts/changepoint_check.py.

Deterministic counts repeat: each point is judged against the one before it ("step"), by a ratio
past the metric's floor (instructions, system calls, database buffers). SQL statements and retained
memory per request are judged by a difference ("difference"), past an absolute floor in their own
unit, as compare judges them (judge/statements.py, judge/retained.py): their series are often all
zeros (an endpoint that sends no statement, a server that keeps nothing), which is a flat, quiet
series, and 0 → 101 statements is a change a ratio cannot size.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from benchwatch.figures.figure_key import PARENT_MARK, RELATIVE_MARK, decode
from benchwatch.figures.metrics import COUNTS, DB_BUFFERS, RETAINED, STATEMENTS, Metric
from benchwatch.judge.statements import BUFFERS_FROM_ZERO
from benchwatch.judge.stats import CONFIDENCE, TooFewSamples, ratio_interval

EXACT_BELOW = 8  # exact Mann–Whitney p-values when a side has at most this many points
SIZE_WINDOW = 30  # at most this many points on each side size a change


@dataclass(frozen=True)
class Params:
    min_side: int  # points on each side of a change point (so: commits until one is seen)
    penalty: float  # PELT penalty per boundary, in units of the noise variance
    max_pvalue: float  # Mann–Whitney p-value a boundary must beat
    min_points: int  # fewer points in a series: no verdict ("too few points")
    test: Literal["rank", "t"] = "rank"  # Mann–Whitney U, or Student's t on the logs
    min_effect: float = 0.0  # |shift of the medians| a boundary needs, in noise-scale units
    # "level": a change moves every later point (absolute figures, ratios against a fixed
    # reference); "spike": a change is one point (each point compares a commit with its
    # parent, so the commits after a regression compare slow with slow again)
    # "step" (deterministic counts): a change is any point that differs from the one before by
    # more than min_effect (the metric's floor, a fraction) and by more than both points' ranges
    # "difference" (counts whose no-op is 0: statements, retained memory, database buffers): a
    # change is a point that differs from the one before by more than min_difference (absolute)
    # and, that one above 0, by more than min_effect of it; 0 and negative values are values
    mode: Literal["level", "spike", "step", "difference"] = "level"
    min_difference: float = 0.0


# Tuned by scripts/changepoint_check.py on real A/A samples (see its table): relative
# series are side by side (~1 % noise) and may speak after 2 commits; absolute ones are
# separate runs and need more points on each side.
RELATIVE = Params(min_side=2, penalty=20.0, max_pvalue=0.01, min_points=8, min_effect=1.5)
ABSOLUTE = Params(min_side=5, penalty=8.0, max_pvalue=0.01, min_points=10, min_effect=1.0)
# (vs parent): a point is a change when its robust z-score's two-sided normal p-value
# beats max_pvalue (|z| > 4.9 at 1e-6); min_points give the noise scale
PARENT = Params(min_side=1, penalty=0.0, max_pvalue=1e-6, min_points=8, mode="spike")


# counts per request (instructions, system calls) repeat to ~0.3 %: one point says it
def counts_params(floor: float) -> Params:
    return Params(
        min_side=1, penalty=0.0, max_pvalue=0.0, min_points=2, min_effect=floor, mode="step"
    )


def difference_params(metric: Metric) -> Params:
    """Statements and retained memory by their floor, a number per request (0 → 1 is a change,
    0 → 0 is not); database buffers by their ratio floor, from 0 by more than one page."""
    buffers = metric is DB_BUFFERS
    return Params(
        min_side=1,
        penalty=0.0,
        max_pvalue=0.0,
        min_points=2,
        min_effect=metric.default_floor if buffers else 0.0,
        mode="difference",
        min_difference=BUFFERS_FROM_ZERO if buffers else metric.default_floor,
    )


Kind = Literal["regression", "improvement"]
Verdict = Literal["changes", "no change", "too few points", "no verdict"]


@dataclass(frozen=True)
class Point:
    commit: str
    date: str  # ISO 8601 commit timestamp as published
    value: float
    url: str = ""
    half: float | None = (
        None  # github-action-benchmark's `range` ("± h"): a (vs parent) point's interval
    )


@dataclass(frozen=True)
class Series:
    source: str  # the data.js path it came from
    suite: str  # github-action-benchmark's entries key
    name: str
    unit: str
    bigger_is_better: bool
    points: tuple[Point, ...]

    @property
    def gating(self) -> bool:
        return is_gating(self.name)


@dataclass(frozen=True)
class Change:
    index: int  # first point of the new level: the change is between index-1 and index
    ratio: float  # median after / median before
    low: float  # rank-based interval of after/before
    high: float
    p_value: float
    n_before: int
    n_after: int
    kind: Kind
    difference: float | None = None  # "difference" mode: after - before, in the series' unit


@dataclass
class SeriesResult:
    series: Series
    verdict: Verdict
    changes: list[Change] = field(default_factory=list)
    note: str = ""


def is_gating(name: str) -> bool:
    """The figures a compare gates on (metrics: Metric.gating), relative series of them too, and
    the counts per request: a compare gates on their weighed cost, which the trend has no series
    of (a cost depends on the weights of the runner that measured it; the counts do not), so a
    history gates on the counts themselves. data.js keeps only names, read back by figure_key.decode."""
    key = decode(name)
    return key is not None and (key.metric.gating or key.metric in COUNTS)


def noise_scale(logs: np.ndarray) -> float:
    """Robust standard deviation of one point, from the first differences (a step moves
    one difference only, so it barely shifts this estimate)."""
    diffs = np.diff(logs)
    mad = float(np.median(np.abs(diffs - np.median(diffs))))
    return 1.4826 * mad / math.sqrt(2.0)


def residual_scale(logs: np.ndarray, cuts: list[int]) -> float:
    edges = [0, *cuts, len(logs)]
    residuals = np.concatenate(
        [logs[a:b] - np.median(logs[a:b]) for a, b in itertools.pairwise(edges)]
    )
    return 1.4826 * float(np.median(np.abs(residuals)))


def p_value(left: np.ndarray, right: np.ndarray, test: str = "rank") -> float:
    """Two-sided p-value that the two segments (log values) have the same level. The rank
    test is exact when one side is short: its normal approximation is far off there."""
    from scipy.stats import mannwhitneyu, ttest_ind  # imported when used (~1.2 s): judge/stats.py

    if test == "t":
        return float(ttest_ind(left, right).pvalue)
    method = "exact" if min(len(left), len(right)) <= EXACT_BELOW else "asymptotic"
    return float(mannwhitneyu(left, right, alternative="two-sided", method=method).pvalue)


def params_for(name: str) -> Params:
    if PARENT_MARK in name:
        return PARENT
    if RELATIVE_MARK in name:
        return RELATIVE
    key = decode(name)
    if key is not None and key.metric in COUNTS:
        return counts_params(key.metric.default_floor)
    if key is not None and key.metric in (STATEMENTS, RETAINED, DB_BUFFERS):
        return difference_params(key.metric)
    return ABSOLUTE


def _step_changes(series: Series, values: np.ndarray, params: Params) -> list[Change]:
    """Deterministic counts: each point against the one before it."""
    changes = []
    for index in range(1, len(values)):
        before, after = series.points[index - 1], series.points[index]
        ratio = float(values[index] / values[index - 1])
        spread = (before.half or 0.0) + (after.half or 0.0)
        if abs(ratio - 1.0) <= params.min_effect or abs(after.value - before.value) <= spread:
            continue
        worse = ratio < 1.0 if series.bigger_is_better else ratio > 1.0
        low = (after.value - (after.half or 0.0)) / (before.value + (before.half or 0.0))
        high = (after.value + (after.half or 0.0)) / max(
            before.value - (before.half or 0.0), 1e-300
        )
        changes.append(
            Change(
                index=index,
                ratio=ratio,
                low=low,
                high=high,
                p_value=0.0,
                n_before=index,
                n_after=len(values) - index,
                kind="regression" if worse else "improvement",
            )
        )
    return changes


def _difference_changes(series: Series, values: np.ndarray, params: Params) -> list[Change]:
    """Counts whose no-op is 0: each point against the one before it, by their difference (a
    ratio from 0 is none: NaN)."""
    changes = []
    for index in range(1, len(values)):
        before, after = float(values[index - 1]), float(values[index])
        moved = after - before
        spread = (series.points[index - 1].half or 0.0) + (series.points[index].half or 0.0)
        relative = before > 0 and abs(moved) <= params.min_effect * before
        if abs(moved) <= max(params.min_difference, spread) or relative:
            continue
        worse = moved < 0 if series.bigger_is_better else moved > 0
        changes.append(
            Change(
                index=index,
                ratio=after / before if before > 0 else math.nan,
                low=math.nan,
                high=math.nan,
                p_value=0.0,
                n_before=index,
                n_after=len(values) - index,
                kind="regression" if worse else "improvement",
                difference=moved,
            )
        )
    return changes


def spikes(logs: np.ndarray, params: Params) -> list[tuple[int, float]]:
    """(index, p-value) of each point far outside the series' own noise: the median and
    the scaled median absolute deviation, which a few spikes do not move."""
    from scipy.stats import norm

    center = float(np.median(logs))
    scale = 1.4826 * float(np.median(np.abs(logs - center))) or float(np.std(logs)) or 1.0
    p_values = 2.0 * norm.sf(np.abs(logs - center) / scale)
    return [(int(i), float(p_values[i])) for i in np.flatnonzero(p_values < params.max_pvalue)]


def _spike_changes(series: Series, values: np.ndarray, params: Params) -> list[Change]:
    from scipy.stats import norm

    logs = np.log(values)
    center = float(np.median(logs))
    scale = 1.4826 * float(np.median(np.abs(logs - center))) or float(np.std(logs)) or 1.0
    half = norm.ppf(0.5 + CONFIDENCE / 2) * scale
    changes = []
    for index, p in spikes(logs, params):
        if index == 0:  # its parent's point is not in the history read: nothing to name
            continue
        point = series.points[index]
        if point.half is not None and abs(point.value - 1.0) <= point.half:
            # the compare that measured it could not tell it from its parent (its interval, up to
            # value ± half, holds 1): measured, 2 of 6 open-loop rounds at 1.14 read 1.06 [0.99, 1.15]
            continue
        shift = float(logs[index]) - center
        worse = shift < 0.0 if series.bigger_is_better else shift > 0.0
        changes.append(
            Change(
                index=index,
                ratio=math.exp(shift),
                low=math.exp(shift - half),
                high=math.exp(shift + half),
                p_value=p,
                n_before=len(values) - 1,
                n_after=1,
                kind="regression" if worse else "improvement",
            )
        )
    return changes


def boundaries(logs: np.ndarray, params: Params) -> list[tuple[int, float]]:
    """(index, p-value) of each confirmed change in a series of log values."""
    import ruptures

    min_side, n = params.min_side, len(logs)
    if n < 2 * min_side:
        return []

    def pelt(scale: float) -> list[int]:
        # PELT with the linear kernel is the least-squares (l2) cost, implemented in C
        found = ruptures.KernelCPD(kernel="linear", min_size=min_side).fit((logs / scale)[:, None])
        return [int(c) for c in found.predict(pen=params.penalty) if c < n]

    scale = noise_scale(logs)
    if scale <= 0.0:  # constant (or quantised) noise: fall back to the overall spread
        scale = float(np.std(logs)) or 1.0
    # the first differences are few and correlated: re-estimate the noise from the
    # residuals around each segment's median, and never below the first estimate
    scale = max(scale, residual_scale(logs, pelt(scale)))
    cuts = pelt(scale)
    while cuts:
        edges = [0, *cuts, n]
        p_values = []
        for i in range(len(cuts)):
            left, right = logs[edges[i] : edges[i + 1]], logs[edges[i + 1] : edges[i + 2]]
            small = abs(np.median(right) - np.median(left)) < params.min_effect * scale
            p_values.append(1.0 if small else p_value(left, right, params.test))
        weakest = int(np.argmax(p_values))
        if p_values[weakest] < params.max_pvalue:
            return list(zip(cuts, p_values, strict=True))
        del cuts[weakest]
    return []


def size(values: np.ndarray, before: slice, after: slice) -> tuple[float, float, float]:
    """(ratio of medians, interval low, interval high) of after/before."""
    left, right = values[before][-SIZE_WINDOW:], values[after][:SIZE_WINDOW]
    ratio = float(np.median(right) / np.median(left))
    try:
        interval = ratio_interval(left, right, CONFIDENCE)
        return ratio, interval.low, interval.high
    except TooFewSamples:
        return ratio, math.nan, math.nan


def analyse(series: Series, params: Params | None = None) -> SeriesResult:
    params = params or params_for(series.name)
    values = np.array([p.value for p in series.points], dtype=float)
    if len(values) < params.min_points:
        return SeriesResult(
            series, "too few points", note=f"{len(values)} points; needs {params.min_points}"
        )
    if not np.all(np.isfinite(values)):
        return SeriesResult(series, "no verdict", note="values must be finite numbers")
    if params.mode == "difference":
        changes = _difference_changes(series, values, params)
        return SeriesResult(series, "changes" if changes else "no change", changes)
    if np.any(values <= 0.0):
        return SeriesResult(series, "no verdict", note="values must be positive finite numbers")
    if params.mode in ("spike", "step"):
        changes = (_spike_changes if params.mode == "spike" else _step_changes)(
            series, values, params
        )
        return SeriesResult(series, "changes" if changes else "no change", changes)
    found = boundaries(np.log(values), params)
    edges = [0, *(i for i, _ in found), len(values)]
    changes = []
    for k, (index, p_value) in enumerate(found):
        before, after = slice(edges[k], index), slice(index, edges[k + 2])
        ratio, low, high = size(values, before, after)
        worse = ratio < 1.0 if series.bigger_is_better else ratio > 1.0
        changes.append(
            Change(
                index=index,
                ratio=ratio,
                low=low,
                high=high,
                p_value=p_value,
                n_before=index - edges[k],
                n_after=edges[k + 2] - index,
                kind="regression" if worse else "improvement",
            )
        )
    return SeriesResult(series, "changes" if changes else "no change", changes)


def analyse_all(series: Sequence[Series]) -> list[SeriesResult]:
    return [analyse(s) for s in series]
