"""Hand-computed boundary cases of the statistics that mutation testing found unpinned."""

import math

import numpy as np
import pytest

from pytest_extractbench.analysis.stats import (
    cohens_dz,
    format_p,
    interpret_cohens_d,
    paired_permutation_test,
    paired_ttest,
    percentile_interval,
)


def test_monte_carlo_p_value_counts_the_observed_arrangement_in_both_tails():
    # n = 70 > 62 pairs: Monte Carlo. a - b = 1 for every pair, so a random swap pattern reaches
    # the observed mean difference 1 only when it swaps nothing (probability 2**-70): 0 hits of 9.
    # With the +1 correction: p = 2 * (0 + 1) / (9 + 1) = 0.2, never 0.
    ones, zeros = [1.0] * 70, [0.0] * 70
    upper = paired_permutation_test(ones, zeros, resamples=9, rng=1)
    lower = paired_permutation_test(zeros, ones, resamples=9, rng=1)
    assert upper.statistic == 1.0 and upper.p_value == pytest.approx(0.2)
    assert lower.statistic == -1.0 and lower.p_value == pytest.approx(0.2)
    assert upper.note == "Monte Carlo (9 random swaps)"


def test_the_permutation_test_is_exact_when_two_to_the_n_equals_the_resamples():
    # n = 3, 2**3 = 8 <= 8 resamples: all 8 swap patterns; only "swap nothing" reaches +1,
    # so p = 2 * 1 / 8 = 0.25 exactly (no +1 correction).
    result = paired_permutation_test([1.0, 1.0, 1.0], [0.0, 0.0, 0.0], resamples=8, rng=1)
    assert result.p_value == pytest.approx(0.25)
    assert result.note == "exact (all 2^n swaps)"


def test_percentile_interval_bounds_by_hand():
    # 0..10, 80% interval: the 10th and 90th percentiles with linear interpolation are 1 and 9.
    assert percentile_interval(np.arange(11, dtype=float), 0.8) == pytest.approx((1.0, 9.0))
    # a 50% interval of 0..4: quantiles 0.25 and 0.75 are 1 and 3
    assert percentile_interval(np.arange(5, dtype=float), 0.5) == pytest.approx((1.0, 3.0))
    for confidence in (0.0, 1.0):
        with pytest.raises(ValueError):
            percentile_interval(np.arange(3, dtype=float), confidence)


@pytest.mark.parametrize(
    ("d", "band"),
    [(0.19, "negligible"), (0.2, "small"), (0.49, "small"), (0.5, "medium"), (-0.5, "medium"),
     (0.79, "medium"), (0.8, "large"), (-0.8, "large")],
)
def test_cohens_bands_at_their_exact_boundaries(d, band):
    assert interpret_cohens_d(d) == band


def test_the_t_test_with_two_pairs_is_defined():
    # d = [1, 2]: mean 1.5, sample sd 0.7071, se 0.5, t = 3 (df 1);
    # p = 1 - 2 * atan(3) / pi for a t with 1 degree of freedom (Cauchy).
    result = paired_ttest([1.0, 2.0], [0.0, 0.0])
    assert result.statistic == pytest.approx(3.0)
    assert result.p_value == pytest.approx(1 - 2 * math.atan(3) / math.pi)
    assert paired_ttest([1.0], [0.0]).p_value is None


def test_d_z_with_two_pairs_and_with_one():
    # d = [1, 3]: mean 2, sample sd sqrt(2): d_z = 2 / sqrt(2) = sqrt(2)
    assert cohens_dz([1.0, 3.0], [0.0, 0.0]) == pytest.approx(math.sqrt(2))
    assert cohens_dz([5.0], [0.0]) == 0.0
    # constant non-zero differences: infinite, with the sign of the mean
    assert cohens_dz([0.0, 0.0], [1.0, 1.0]) == -math.inf


def test_format_p_switches_notation_below_one_thousandth():
    assert format_p(0.001) == "p = 0.001"
    assert format_p(0.0009) == "p = 0.0009"
    assert format_p(None) == "p n/a"
