"""Head/base ratios with distribution-free confidence intervals, and the verdict rules.

The ratio is the Hodges–Lehmann estimate of the shift between log(head) and log(base)
(the median of all pairwise log differences), exponentiated. Its confidence interval is
the set of shifts that scipy's Mann–Whitney U test does not reject at 1 - confidence:
the test's p-value only changes at the pairwise differences, so it is evaluated once
between each pair of neighbouring differences (one vectorised call).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy.stats import mannwhitneyu

CONFIDENCE = 0.95
MIN_SAMPLES = 2

Verdict = Literal["improvement", "regression", "unchanged", "no verdict"]


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


def ratio_interval(
    base: Sequence[float], head: Sequence[float], confidence: float = CONFIDENCE
) -> RatioInterval:
    b = np.asarray(base, dtype=float)
    h = np.asarray(head, dtype=float)
    if len(b) < MIN_SAMPLES or len(h) < MIN_SAMPLES:
        raise TooFewSamples(f"{len(b)} base and {len(h)} head samples; need at least {MIN_SAMPLES} each")
    if np.any(b <= 0) or np.any(h <= 0):
        raise ValueError("ratios need positive samples")
    log_b, log_h = np.log(b), np.log(h)
    differences = np.unique(np.subtract.outer(log_h, log_b).ravel())
    estimate = float(np.median(np.subtract.outer(log_h, log_b)))
    if len(differences) == 1:
        only = math.exp(differences[0])
        return RatioInterval(only, only, only, confidence, len(b), len(h))
    probes = np.concatenate(
        ([differences[0] - 1.0], (differences[:-1] + differences[1:]) / 2, [differences[-1] + 1.0])
    )
    p_values = mannwhitneyu(
        log_h[None, :] - probes[:, None], np.broadcast_to(log_b, (len(probes), len(log_b))), axis=1
    ).pvalue
    accepted = np.flatnonzero(p_values > 1.0 - confidence)
    if len(accepted) == 0:
        raise TooFewSamples("no shift is consistent with the samples")  # pathological ties
    first, last = int(accepted[0]), int(accepted[-1])
    if first == 0 or last == len(probes) - 1:
        raise TooFewSamples(
            f"{len(b)} base and {len(h)} head samples cannot give a {confidence:.0%} interval; "
            "use more rounds"
        )
    low, high = math.exp(differences[first - 1]), math.exp(differences[last])
    ratio = min(max(math.exp(estimate), low), high)
    return RatioInterval(ratio, low, high, confidence, len(b), len(h))


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
    a: Sequence[float], b: Sequence[float], rounds: int, quantile: float = 0.99,
    resamples: int = 2000, seed: int = 0,
) -> float:  # fmt: skip
    """Noise floor from an A/A pair: the `quantile` of |change| of the median ratio between
    `rounds`-sample subsets drawn (without replacement) from each side."""
    rng = np.random.default_rng(seed)
    a_arr, b_arr = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    n = min(rounds, len(a_arr), len(b_arr))
    if n < 1:
        raise TooFewSamples("no A/A samples")
    pick_a = np.argsort(rng.random((resamples, len(a_arr))), axis=1)[:, :n]
    pick_b = np.argsort(rng.random((resamples, len(b_arr))), axis=1)[:, :n]
    ratios = np.median(b_arr[pick_b], axis=1) / np.median(a_arr[pick_a], axis=1)
    changes = np.maximum(ratios, 1.0 / ratios) - 1.0
    return float(np.quantile(changes, quantile))
