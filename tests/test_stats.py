import math

import numpy as np
import pytest

from benchwatch.judge.stats import (
    TooFewSamples,
    aa_floor,
    describe,
    paired_ratio_interval,
    ratio_interval,
    verdict,
)


def samples(rng, center, n=12, cv=0.03):
    return rng.normal(center, center * cv, n)


def test_equal_distributions_interval_contains_one():
    rng = np.random.default_rng(7)
    interval = ratio_interval(samples(rng, 100), samples(rng, 100))
    assert interval.low <= 1.0 <= interval.high
    assert verdict(interval, bigger_is_better=False, floor=0.0) == "unchanged"


def test_shift_by_twenty_percent_excludes_one_and_is_near_it():
    rng = np.random.default_rng(8)
    interval = ratio_interval(samples(rng, 100), samples(rng, 120))
    assert interval.low > 1.0
    assert interval.ratio == pytest.approx(1.2, rel=0.03)
    assert interval.low < 1.2 < interval.high


def test_direction_decides_improvement_or_regression():
    rng = np.random.default_rng(9)
    interval = ratio_interval(samples(rng, 100), samples(rng, 120))
    assert verdict(interval, bigger_is_better=True, floor=0.05) == "improvement"  # rps up
    assert verdict(interval, bigger_is_better=False, floor=0.05) == "regression"  # latency up
    assert describe(interval, bigger_is_better=False).endswith("]")
    assert "slower" in describe(interval, bigger_is_better=False)
    assert "faster" in describe(interval, bigger_is_better=True)


def test_noise_floor_gates_a_real_but_small_change():
    rng = np.random.default_rng(10)
    interval = ratio_interval(samples(rng, 100, n=40, cv=0.005), samples(rng, 103, n=40, cv=0.005))
    assert interval.excludes_one()
    assert verdict(interval, bigger_is_better=False, floor=0.05) == "unchanged"
    assert verdict(interval, bigger_is_better=False, floor=0.01) == "regression"


def test_too_few_samples_give_no_interval():
    with pytest.raises(TooFewSamples):
        ratio_interval([100.0, 101.0, 99.0], [120.0, 121.0, 119.0])
    with pytest.raises(TooFewSamples):
        ratio_interval([100.0], [120.0, 121.0, 119.0, 118.0])


def test_four_samples_per_side_are_enough():
    interval = ratio_interval([100.0, 101.0, 99.0, 100.5], [120.0, 121.0, 119.0, 120.5])
    assert interval.low > 1.15 and interval.high < 1.25


def test_coverage_on_equal_distributions_is_about_95_percent():
    rng = np.random.default_rng(11)
    outside = 0
    for _ in range(150):
        interval = ratio_interval(samples(rng, 100, n=8), samples(rng, 100, n=8))
        outside += not (interval.low <= 1.0 <= interval.high)
    assert outside / 150 < 0.10


def test_aa_floor_grows_with_noise():
    rng = np.random.default_rng(12)
    quiet = aa_floor(samples(rng, 100, n=20, cv=0.01), samples(rng, 100, n=20, cv=0.01), rounds=8)
    noisy = aa_floor(samples(rng, 100, n=20, cv=0.10), samples(rng, 100, n=20, cv=0.10), rounds=8)
    assert 0 < quiet < noisy


def test_paired_interval_is_the_textbook_walsh_average_interval():
    # n = 8 pairs: the exact 95 % signed-rank interval runs from the 4th smallest to the 4th
    # largest of the 36 Walsh averages (critical value 3 in the tables), exponentiated
    rng = np.random.default_rng(13)
    base = rng.uniform(90, 110, 8)
    head = base * np.exp(rng.normal(0.05, 0.02, 8))
    d = np.log(head / base)
    walsh = np.sort([(d[i] + d[j]) / 2 for i in range(8) for j in range(i, 8)])
    interval = paired_ratio_interval(base, head)
    assert interval.low == pytest.approx(np.exp(walsh[3]))
    assert interval.high == pytest.approx(np.exp(walsh[-4]))
    assert interval.ratio == pytest.approx(np.exp(np.median(walsh)))


def test_pairing_sees_through_a_host_that_wanders_between_rounds():
    # each round's host speed hits base and head alike (side by side); head is 5 % slower
    rng = np.random.default_rng(14)
    host = np.exp(rng.normal(0, 0.2, 10))
    base = 200 * host * np.exp(rng.normal(0, 0.01, 10))
    head = 210 * host * np.exp(rng.normal(0, 0.01, 10))
    paired = paired_ratio_interval(base, head)
    assert 1.0 < paired.low < 1.05 < paired.high < 1.1
    assert verdict(paired, bigger_is_better=False, floor=0.02) == "regression"
    unpaired = ratio_interval(base, head)  # the same samples taken as independent: lost in noise
    assert unpaired.low < 1.0 < unpaired.high


def test_paired_interval_needs_six_pairs_and_equal_counts():
    with pytest.raises(TooFewSamples, match="use more rounds"):
        paired_ratio_interval([100.0, 101, 99, 100, 102], [110.0, 111, 109, 110, 112])
    assert (
        paired_ratio_interval([100.0, 101, 99, 100, 102, 98], [110.0, 111, 109, 110, 112, 108]).low
        > 1.0
    )
    with pytest.raises(ValueError, match="equal counts"):
        paired_ratio_interval([100.0] * 6, [110.0] * 7)


def test_paired_aa_floor_ignores_what_both_sides_share():
    rng = np.random.default_rng(15)
    host = np.exp(rng.normal(0, 0.2, 16))
    a = 100 * host * np.exp(rng.normal(0, 0.01, 16))
    b = 100 * host * np.exp(rng.normal(0, 0.01, 16))
    assert aa_floor(a, b, rounds=8) < 0.03  # the host's 20 % cancels between lanes
    assert aa_floor(a, b[:-1], rounds=8) > 0.1  # unpaired, it does not


def test_aa_floor_lets_about_one_percent_of_fresh_aa_compares_through():
    # calibrate's case: 36 A/A rounds, floors for 12-round compares. Floors drawn from many
    # calibrations, each judged on fresh 12-round A/A compares: the share above the floor is
    # what compare's false-alarm rate would be. Subsets without replacement gave 3 %.
    rng = np.random.default_rng(16)
    fresh = np.array(
        [
            abs(
                math.log(paired_ratio_interval(np.ones(12), np.exp(rng.normal(0, 0.015, 12))).ratio)
            )
            for _ in range(1500)
        ]
    )
    through = []
    for _ in range(40):
        a = np.full(36, 100.0)
        floor = aa_floor(
            a,
            a * np.exp(rng.normal(0, 0.015, 36)),
            rounds=12,
            resamples=1000,
            seed=int(rng.integers(1 << 30)),
        )
        through.append(np.mean(fresh > math.log1p(floor)))
    assert 0.002 < np.mean(through) < 0.02
