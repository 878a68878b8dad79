"""Head/base ratios with distribution-free confidence intervals, and the verdict rules.

Two designs, one idea. Samples measured in pairs (base and head side by side in each round)
give per-round log ratios; the ratio is their Hodges–Lehmann estimate (the median of the
Walsh averages, the means of every pair of them), exponentiated, and its interval is the set
of shifts scipy's Wilcoxon signed-rank test does not reject. Independent samples (asv
processes, one side after the other) use the Hodges–Lehmann shift between log(head) and
log(base) (the median of all pairwise differences) and scipy's Mann–Whitney U test. Either
test's p-value only changes at those averages or differences, so it is evaluated once
between each pair of neighbours (one vectorised call) and the interval read off.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

CONFIDENCE = 0.95
MIN_SAMPLES = 2

Verdict = Literal["improvement", "regression", "unchanged", "no verdict"]
Samples = Sequence[float] | np.ndarray  # one side's positive values, taken as floats


@dataclass(frozen=True)
class RatioInterval:
    """head/base: point estimate and confidence interval (all > 0)."""

    ratio: float
    low: float
    high: float
    confidence: float
    n_base: int
    n_head: int

    def excludes_one(self) -> bool:
        return self.low > 1.0 or self.high < 1.0


class TooFewSamples(ValueError):
    """The samples cannot give a finite interval at the requested confidence."""


def _logs(base: Samples, head: Samples) -> tuple[np.ndarray, np.ndarray]:
    b = np.asarray(base, dtype=float)
    h = np.asarray(head, dtype=float)
    if len(b) < MIN_SAMPLES or len(h) < MIN_SAMPLES:
        raise TooFewSamples(
            f"{len(b)} base and {len(h)} head samples; need at least {MIN_SAMPLES} each"
        )
    if np.any(b <= 0) or np.any(h <= 0):
        raise ValueError("ratios need positive samples")
    return np.log(b), np.log(h)


def ratio_interval(base: Samples, head: Samples, confidence: float = CONFIDENCE) -> RatioInterval:
    """Independent samples: Hodges–Lehmann shift of the logs, Mann–Whitney interval."""
    log_b, log_h = _logs(base, head)
    shifts = np.subtract.outer(log_h, log_b).ravel()

    def p_values(probes: np.ndarray) -> np.ndarray:
        # scipy.stats takes ~1.2 s to import: imported when an interval needs it, not on every command's start
        from scipy.stats import mannwhitneyu

        moved = log_h[None, :] - probes[:, None]
        return mannwhitneyu(moved, np.broadcast_to(log_b, (len(probes), len(log_b))), axis=1).pvalue

    return _interval(shifts, p_values, confidence, len(log_b), len(log_h))


def paired_ratio_interval(
    base: Sequence[float], head: Sequence[float], confidence: float = CONFIDENCE
) -> RatioInterval:
    """Samples paired by round (base[i] and head[i] measured together): Hodges–Lehmann
    estimate of the per-round log ratios, Wilcoxon signed-rank interval."""
    if len(base) != len(head):
        raise ValueError(
            f"paired samples need equal counts, got {len(base)} base and {len(head)} head"
        )
    log_b, log_h = _logs(base, head)
    d = log_h - log_b
    walsh = np.add.outer(d, d)[np.triu_indices(len(d))] / 2

    def p_values(probes: np.ndarray) -> np.ndarray:
        from scipy.stats import wilcoxon

        return wilcoxon(d[None, :] - probes[:, None], axis=1).pvalue

    return _interval(walsh, p_values, confidence, len(d), len(d))


def range_ratio(base: Sequence[float], head: Sequence[float]) -> RatioInterval:
    """A deterministic measure (instruction counts): the ratio of the medians, and the range
    every base sample against every head sample spans. Repetitions differ by rounding-level
    noise only, so this range is the whole uncertainty; no test, no minimum sample count."""
    log_b, log_h = _logs_any(base, head)
    ratio = math.exp(float(np.median(log_h) - np.median(log_b)))
    low, high = (
        math.exp(float(log_h.min() - log_b.max())),
        math.exp(float(log_h.max() - log_b.min())),
    )
    return RatioInterval(ratio, low, high, 1.0, len(log_b), len(log_h))


def _logs_any(base: Sequence[float], head: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    if not len(base) or not len(head):
        raise TooFewSamples("no samples on one side")
    b, h = np.asarray(base, dtype=float), np.asarray(head, dtype=float)
    if np.any(b <= 0) or np.any(h <= 0):
        raise ValueError("ratios need positive samples")
    return np.log(b), np.log(h)


def _interval(
    candidates: np.ndarray,
    p_values: Callable[[np.ndarray], np.ndarray],
    confidence: float,
    n_base: int,
    n_head: int,
) -> RatioInterval:
    """The estimate (median of `candidates`) and every shift the test does not reject."""
    estimate = float(np.median(candidates))
    steps = np.unique(candidates)
    if len(steps) == 1:
        only = math.exp(steps[0])
        return RatioInterval(only, only, only, confidence, n_base, n_head)
    probes = np.concatenate(([steps[0] - 1.0], (steps[:-1] + steps[1:]) / 2, [steps[-1] + 1.0]))
    accepted = np.flatnonzero(np.asarray(p_values(probes)) > 1.0 - confidence)
    if len(accepted) == 0:
        raise TooFewSamples("no shift is consistent with the samples")  # pathological ties
    first, last = int(accepted[0]), int(accepted[-1])
    if first == 0 or last == len(probes) - 1:
        raise TooFewSamples(
            f"{n_base} base and {n_head} head samples cannot give a {confidence:.0%} interval; "
            "use more rounds"
        )
    low, high = math.exp(steps[first - 1]), math.exp(steps[last])
    ratio = min(max(math.exp(estimate), low), high)
    return RatioInterval(ratio, low, high, confidence, n_base, n_head)


def goodness(ratio: float, bigger_is_better: bool) -> float:
    """> 1 means head is better, whatever the metric's direction."""
    return ratio if bigger_is_better else 1.0 / ratio


def relative_change(ratio: float) -> float:
    """Size of a change as a fraction, symmetric for up and down (1.25x and 0.8x both 0.25)."""
    return max(ratio, 1.0 / ratio) - 1.0


def verdict(interval: RatioInterval, bigger_is_better: bool, floor: float) -> Verdict:
    """Significant only when the interval excludes 1 and the change exceeds the noise floor."""
    if not interval.excludes_one() or relative_change(interval.ratio) <= floor:
        return "unchanged"
    return "improvement" if goodness(interval.ratio, bigger_is_better) > 1.0 else "regression"


def describe(interval: RatioInterval, bigger_is_better: bool, memory: bool = False) -> str:
    """'1.19x faster [1.12, 1.25]' — the factor and its interval, in the better/worse sense."""
    better, worse = ("smaller", "larger") if memory else ("faster", "slower")
    g = goodness(interval.ratio, bigger_is_better)
    g_bounds = sorted(goodness(x, bigger_is_better) for x in (interval.low, interval.high))
    if g >= 1.0:
        return f"{g:.2f}x {better} [{g_bounds[0]:.2f}, {g_bounds[1]:.2f}]"
    return f"{1 / g:.2f}x {worse} [{1 / g_bounds[1]:.2f}, {1 / g_bounds[0]:.2f}]"


def aa_floor(
    a: Sequence[float],
    b: Sequence[float],
    rounds: int,
    quantile: float = 0.99,
    resamples: int = 2000,
    seed: int = 0,
    paired: bool = True,
) -> float:
    """Noise floor from A/A samples paired by round: the `quantile` of |change| of the
    Hodges–Lehmann ratio (as compare computes it) over `rounds`-pair resamples drawn with
    replacement (the bootstrap); unpaired (or with unequal counts), the median ratio of
    independent `rounds`-sample resamples of each side: what two separate runs differ by.
    With replacement, because subsets drawn without it share most of their rounds when the A/A
    run is not much longer than a compare: 12 of 36 rounds understate the spread of a
    12-round compare by a sixth, 8 of 16 by a quarter, and such floors let 3-7 % of A/A
    figures through instead of 1 % (tests/test_stats.py measures it)."""
    rng = np.random.default_rng(seed)
    a_arr, b_arr = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    n = min(rounds, len(a_arr), len(b_arr))
    if n < 1:
        raise TooFewSamples("no A/A samples")
    if paired and len(a_arr) == len(b_arr):
        d = np.log(b_arr) - np.log(a_arr)
        chosen = d[rng.integers(0, len(d), (resamples, n))]
        upper = np.triu_indices(n)
        walsh = (chosen[:, :, None] + chosen[:, None, :])[:, upper[0], upper[1]] / 2
        ratios = np.exp(np.median(walsh, axis=1))
    else:
        pick_a = rng.integers(0, len(a_arr), (resamples, n))
        pick_b = rng.integers(0, len(b_arr), (resamples, n))
        ratios = np.median(b_arr[pick_b], axis=1) / np.median(a_arr[pick_a], axis=1)
    changes = np.maximum(ratios, 1.0 / ratios) - 1.0
    return float(np.quantile(changes, quantile))


def strayed(base: Sequence[float], head: Sequence[float]) -> float:
    """How far apart two sets of samples of an A/A compare lie, in their own unit: the farthest
    head sample from a base sample (a count judged by its difference: SQL statements per request)."""
    if not base or not head:
        return 0.0
    return max(max(head) - min(base), max(base) - min(head), 0.0)
