"""Hand-computed boundary cases of the statistics that mutation testing found unpinned."""

import math

import numpy as np
import pytest
from threadpoolctl import threadpool_info

from pytest_extractbench.analysis.stats import (
    _one_blas_thread,
    bootstrap_ci,
    bootstrap_sums,
    cohens_d,
    cohens_dz,
    compare_paired,
    format_p,
    interpret_cohens_d,
    mean_of,
    paired_bootstrap_intervals,
    paired_permutation_test,
    paired_permutation_tests,
    paired_ttest,
    percentile_interval,
    resample_indices,
    significance_report,
    wilcoxon_test,
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
    [
        (0.19, "negligible"),
        (0.2, "small"),
        (0.49, "small"),
        (0.5, "medium"),
        (-0.5, "medium"),
        (0.79, "medium"),
        (0.8, "large"),
        (-0.8, "large"),
    ],
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
    assert format_p(0.25) == "p = 0.250"  # three decimals, not two significant digits ("0.25")
    assert format_p(0.0009) == "p = 0.0009"
    assert format_p(None) == "p n/a"


def test_more_samples_than_a_chunk_holds_are_resampled_one_row_at_a_time():
    # 2**18 + 1 samples: more than one resampling chunk's 2**18 elements, so each chunk is a single
    # resample. Every resample draws n indexes, so the sum of a column of ones is n in each of them.
    n = 2**18 + 1
    sums = bootstrap_sums(np.ones(n), 3, rng=0)
    assert sums.tolist() == [[float(n)]] * 3


def test_uneven_chunks_give_exactly_the_requested_resamples():
    # 5 resamples in chunks of 2: 2 + 2 + 1 rows. Each row's weights sum to n = 4.
    sums = bootstrap_sums(np.ones((4, 2)), 5, rng=0, chunk=2)
    assert sums.tolist() == [[4.0, 4.0]] * 5
    # a chunk under one row is taken as one row
    assert bootstrap_sums(np.ones(4), 3, rng=0, chunk=0).tolist() == [[4.0]] * 3
    # 9 Monte Carlo swaps in chunks of 4 (4 + 4 + 1): with a - b = 1 on all 70 pairs only "swap nothing"
    # reaches the observed difference, so p = 2 * (0 + 1) / (9 + 1) = 0.2 as with one chunk
    ones, zeros = np.ones(70), np.zeros(70)
    tests = paired_permutation_tests(ones, zeros, {"mean": lambda s: s[..., 0] / 70}, resamples=9, rng=1, chunk=4)
    assert tests["mean"].p_value == pytest.approx(0.2)


def test_every_sample_takes_part_in_the_random_swaps():
    # 70 pairs (Monte Carlo), equal except the last 6, where a - b = 1: the observed mean difference 6/70
    # is reached by a random swap pattern only when it swaps none of those 6 (probability 2**-6), so
    # about 1000 / 64 = 16 of 1000 swaps tie it and p = 2 * (hits + 1) / 1001 is about 0.03, well under 0.2.
    # If the last samples were never swapped every pattern would tie the observed value and p would be 1.
    a = np.array([0.0] * 64 + [1.0] * 6)
    b = np.zeros(70)
    result = paired_permutation_test(a, b, resamples=1000, rng=5)
    assert result.note == "Monte Carlo (1000 random swaps)"
    assert result.p_value < 0.2


def test_the_documented_defaults_95_percent_10000_resamples_alpha_005():
    # the defaults: 10,000 resamples, 95% intervals; paired tests at alpha 0.05. Constant values give a
    # zero-width interval at the value whatever the draws.
    interval = bootstrap_ci([1.0, 1.0, 1.0, 1.0, 1.0], rng=0)
    assert (interval.value, interval.low, interval.high) == (1.0, 1.0, 1.0)
    assert (interval.confidence, interval.resamples, interval.n) == (0.95, 10_000, 5)
    report = compare_paired([1.0, 1.0, 1.0], [0.0, 0.0, 0.0], rng=0)
    assert report["alpha"] == 0.05
    assert report["difference_ci"]["confidence"] == 0.95 and report["difference_ci"]["resamples"] == 10_000


def test_an_interval_of_one_finite_value_is_that_value():
    # the undefined resamples (nan) are dropped; one finite value is a zero-width interval, none is nan
    assert percentile_interval(np.array([0.5, np.nan, np.nan]), 0.9) == (0.5, 0.5)
    low, high = percentile_interval(np.array([np.nan, np.inf]), 0.9)
    assert math.isnan(low) and math.isnan(high)


def test_one_pair_is_a_permutation_test_of_two_arrangements():
    # n = 1: the two arrangements give +1 and -1; the observed +1 is the largest, so p = 2 * 1 / 2 = 1
    result = paired_permutation_test([1.0], [0.0], resamples=100, rng=0)
    assert (result.statistic, result.p_value, result.note) == (1.0, 1.0, "exact (all 2^n swaps)")
    with pytest.raises(ValueError):
        paired_permutation_test([], [], resamples=100, rng=0)


def test_every_random_swap_pattern_can_come_up():
    # 70 pairs (Monte Carlo), a - b = 1 on the first 8 only: the observed difference 8/70 is reached only when
    # none of those 8 is swapped, probability 1/256, so the exact two-sided p is 2 / 256 = 0.0078. 25,600 random
    # patterns estimate it (100 +- 10 hits: p = 0.0078 +- 0.0008); a generator that never leaves all 8
    # unswapped would give p = 2 * (0 + 1) / 25601 = 0.00008.
    a = np.array([1.0] * 8 + [0.0] * 62)
    result = paired_permutation_test(a, np.zeros(70), resamples=25_600, rng=3)
    assert result.p_value == pytest.approx(2 / 256, abs=0.003)


def test_resampling_goes_in_chunks_of_at_most_2_to_the_18_indexes():
    # 100 samples: 2**18 // 100 = 2621 resamples a chunk, so 10,000 come as 3 * 2621 + 2137 rows
    assert [idx.shape for idx in resample_indices(100, 10_000, 0)] == [(2621, 100)] * 3 + [(2137, 100)]
    # an explicit chunk, the last one short
    assert [idx.shape for idx in resample_indices(10, 25, 0, chunk=10)] == [(10, 10), (10, 10), (5, 10)]
    # zero samples: rows of no index, not a division by zero
    assert [idx.shape for idx in resample_indices(0, 5, 0)] == [(5, 0)]


def test_resampling_runs_blas_on_one_thread():
    with _one_blas_thread():
        blas = [info["num_threads"] for info in threadpool_info() if info["user_api"] == "blas"]
    assert blas and set(blas) == {1}


def test_wilcoxon_drops_zero_differences_and_says_how_many():
    # d = [2, 3, 4, 0, 0]: the two zeros are dropped; 3 positive ranks, none negative: W = 0 and the exact
    # two-sided p = 2 * (1 / 2**3) = 0.25
    result = wilcoxon_test([2.0, 3.0, 4.0, 0.0, 5.0], [0.0, 0.0, 0.0, 0.0, 5.0])
    assert (result.statistic, result.p_value) == (0.0, pytest.approx(0.25))
    assert result.note == "2 zero difference(s) dropped"
    assert wilcoxon_test([2.0, 3.0, 4.0], [0.0, 0.0, 0.0]).note is None


def test_cohens_d_with_one_value_on_a_side_and_with_none():
    # x = [2] (sd 0), y = [0, 2] (mean 1, population sd 1): pooled sd = sqrt((0 + 1) / 2), d = 1 / 0.7071 = sqrt(2)
    assert cohens_d([2.0], [0.0, 2.0]) == pytest.approx(math.sqrt(2))
    assert cohens_d([0.0, 2.0], [2.0]) == pytest.approx(-math.sqrt(2))
    # an empty side: no effect to measure, 0.0 (a float, as metrics.json writes it)
    for x, y in (([], [1.0]), ([1.0], []), ([], [])):
        d = cohens_d(x, y)
        assert d == 0.0 and isinstance(d, float)


def test_d_z_of_all_zero_differences_is_a_float_zero():
    # no difference at all: 0.0, not an infinite effect; one pair: 0.0 too (floats, as metrics.json writes them)
    for a, b in (([1.0, 1.0], [1.0, 1.0]), ([5.0], [0.0])):
        d_z = cohens_dz(a, b)
        assert d_z == 0.0 and isinstance(d_z, float)
    # differences of exactly 1 with sd 0: infinite, not "no difference"
    assert cohens_dz([1.0, 1.0], [0.0, 0.0]) == math.inf


def test_differences_of_one_everywhere_are_not_called_identical():
    # a - b = -1 on both pairs (b - a = 1): a real difference, exact over 2**2 = 4 swaps
    assert paired_permutation_test([0.0, 0.0], [1.0, 1.0], resamples=100, rng=0).note == "exact (all 2^n swaps)"


def _report(a, b, alpha=0.05, test_name="paired permutation"):
    difference = paired_bootstrap_intervals(a, b, {"mean": mean_of(len(a))}, resamples=100, rng=0)["mean"]
    test = paired_permutation_test(a, b, resamples=100, rng=0)
    return significance_report(a, b, difference=difference, test=test, alpha=alpha, test_name=test_name)


def test_significance_needs_a_p_value_below_alpha():
    # three pairs, a - b = 1 each: exact permutation p = 2 * 1 / 8 = 0.25 (see above)
    ones, zeros = [1.0, 1.0, 1.0], [0.0, 0.0, 0.0]
    assert _report(ones, zeros, alpha=0.25)["significantly_different"] is False
    assert _report(ones, zeros, alpha=0.2501)["significantly_different"] is True


@pytest.mark.parametrize(
    ("a", "at_005", "at_001"),
    [
        # two pairs, t with 1 degree of freedom: p = 1 - 2 * atan(t) / pi
        ([1.0, 2.0], False, False),  # d = [1, 2]: t = 1.5 / 0.5 = 3, p = 0.205
        ([1.0, 1.1], True, False),  # d = [1, 1.1]: t = 1.05 / 0.05 = 21, p = 0.0303
        ([1.0, 1.01], True, True),  # d = [1, 1.01]: t = 1.005 / 0.005 = 201, p = 0.0032
    ],
)
def test_the_t_test_flags_at_005_and_001(a, at_005, at_001):
    t_test = _report(a, [0.0, 0.0])["t_test"]
    assert (t_test["significant_at_0.05"], t_test["significant_at_0.01"]) == (at_005, at_001)


def test_the_permutation_details_are_reported_only_when_it_decides():
    report = _report([1.0, 1.0, 1.0], [0.0, 0.0, 0.0])
    assert report["test"] == "paired permutation"
    assert report["permutation_test"] == {
        "statistic": 1.0,
        "p_value": pytest.approx(0.25),
        "note": "exact (all 2^n swaps)",
    }
    assert _report([1.0, 1.0, 1.0], [0.0, 0.0, 0.0], test_name="t-test")["permutation_test"] is None


def test_monte_carlo_swaps_are_the_bits_of_random_bytes_as_documented():
    # 64 pairs (a multiple of 8: eight bytes a pattern). Redo the documented draw independently: per pattern,
    # 8 random bytes from the seeded generator, unpacked to 64 bits, bit i = 1: pair i swapped. The mean
    # difference of a pattern is sum((1 - 2 * bit) * d) / 64; the Monte Carlo p counts the observed pattern.
    rng = np.random.default_rng(11)
    d = rng.normal(0.1, 1.0, 64)
    swaps = np.unpackbits(np.random.default_rng(4).integers(0, 256, (500, 8), dtype=np.uint8), axis=1)
    null = ((1 - 2 * swaps) * d).sum(axis=1) / 64
    observed = d.sum() / 64
    hits = min(np.count_nonzero(null <= observed), np.count_nonzero(null >= observed))
    expected = min(1.0, 2 * (hits + 1) / 501)
    result = paired_permutation_test(d, np.zeros(64), resamples=500, rng=4)
    assert result.p_value == pytest.approx(expected)
    assert 0 < hits < 250  # a p-value that depends on the draws


def test_arrangements_within_the_tie_tolerance_are_ties_at_every_scale():
    # two pairs, mean(a) - mean(b); the four swap patterns give +-50 +- 1e-9. The one that swaps only the second
    # pair (50 - 1e-9) is a tie of the observed 50 + 1e-9 within the tolerance 1e-10 * 50: both tails hold two of
    # the four arrangements, so p = 2 * 2/4 = 1 (a tolerance not scaled by the value would give 2 * 1/4)
    result = paired_permutation_test([100.0, 2e-9], [0.0, 0.0])
    assert (result.statistic, result.p_value) == (pytest.approx(50.0 + 1e-9, abs=0, rel=1e-15), 1.0)
    # below a value of 1 the tolerance stays 1e-10: the arrangements 2e-11, 1e-11, -1e-11, -2e-11 are all ties
    # of the observed 2e-11, so p = 1 (a tolerance shrunk with the value would leave one arrangement per tail)
    assert paired_permutation_test([3e-11, 1e-11], [0.0, 0.0]).p_value == 1.0


def test_wilcoxon_statistic_is_the_smaller_rank_sum_for_fractional_differences():
    # d = [0.5, 0.5, -0.25, 0]: the zero is dropped; |d| ranks 2.5, 2.5, 1: R+ = 5, R- = 1, W = 1. Of the 8 sign
    # patterns of the three, R+ >= 5 in two (5 and 6): exact two-sided p = 2 * 2/8 = 0.5
    result = wilcoxon_test([0.5, 0.5, 0.0, 0.25], [0.0, 0.0, 0.25, 0.25])
    assert (result.statistic, result.p_value) == (1.0, pytest.approx(0.5))
    # mirrored, R+ = 1 and R- = 5: the same W and p
    result = wilcoxon_test([0.0, 0.0, 0.25, 0.25], [0.5, 0.5, 0.0, 0.25])
    assert (result.statistic, result.p_value) == (1.0, pytest.approx(0.5))


@pytest.mark.parametrize(
    ("d", "exhaustive"),
    [
        ([1.0] * 6 + [-0.9, -0.8, 0.5, 0.25, -0.75, 0.3, 0.2], True),  # 13 differences, tied at 1 (score flips)
        ([0.0] + [0.1 * k for k in range(1, 13)], True),  # 13 with a zero, the rest distinct
        ([1.0] * 7 + [-1.0] * 3 + [0.5, 0.5, 0.25, -0.75], False),  # 14 with ties: scipy's normal approximation
        ([0.1, 0.2, -0.3, 0.4, 0.5], False),  # no zeros, no ties: scipy's exact distribution
    ],
)
def test_small_samples_with_zeros_or_ties_take_the_one_pass_exhaustive_test(monkeypatch, d, exhaustive):
    # scipy answers these by calling its statistic once per sign flip (4 s at n = 12): the one-pass version must
    # take exactly those cases, and leave the others to scipy
    import scipy.stats

    calls = []
    real = scipy.stats.wilcoxon
    monkeypatch.setattr(scipy.stats, "wilcoxon", lambda x, *args, **kw: calls.append(len(x)) or real(x, *args, **kw))
    wilcoxon_test(d, [0.0] * len(d))
    assert calls == ([] if exhaustive else [len(d)])
