"""The statistics where a mutation run of analysis/stats.py found no test looking: what an unseeded call draws, the
random swap patterns of a sample whose bytes are not whole 32-bit words, a statistic undefined on the samples, the
edges of the tie tolerance, the flags of a t-test p-value exactly at 0.05 and 0.01, and the None of an undefined
value. Every expected value is worked out by hand (or redone independently with numpy) in the comments."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from pytest_extractbench.analysis import stats
from pytest_extractbench.analysis.stats import (
    Interval,
    bootstrap_ci,
    bootstrap_intervals,
    compare_paired,
    make_rng,
    mean_of,
    paired_bootstrap_intervals,
    paired_permutation_test,
    paired_permutation_tests,
    paired_ttest,
    significance_report,
    wilcoxon_test,
)

Result = stats.TestResult  # imported under its own name, pytest would try to collect it as a test class

# 30 distinct values: two resamplings of them give the same interval only if they draw the same multisets of samples
VALUES = np.random.default_rng(7).random(30)


def test_make_rng_without_a_seed_draws_afresh_each_time() -> None:
    # no seed: numpy's fresh entropy, so two generators give the same four 62-bit draws with probability 2**-248
    first, second = make_rng().integers(0, 2**62, 4), make_rng().integers(0, 2**62, 4)
    assert first.tolist() != second.tolist()


def test_bootstrap_intervals_without_a_seed_differ_from_call_to_call() -> None:
    # 20 resamples of 30 distinct values each time: the 2.5th and 97.5th percentiles of two independent runs coincide
    # only if they drew the same resamples (a chance of about C(59, 30)**-1 = 1e-17 for each resample)
    def interval(call):
        found = call()
        return (found.low, found.high)

    calls = [
        lambda: bootstrap_intervals(VALUES, {"mean": mean_of(30)}, resamples=20)["mean"],
        lambda: bootstrap_ci(VALUES, resamples=20),
        lambda: paired_bootstrap_intervals(VALUES, VALUES[::-1], {"mean": mean_of(30)}, resamples=20)["mean"],
    ]
    for call in calls:
        assert interval(call) != interval(call)


def test_compare_paired_without_a_seed_differs_from_call_to_call() -> None:
    # as above: the CI of the difference comes from an unseeded resampling
    first = compare_paired(VALUES, VALUES[::-1], resamples=20)["difference_ci"]
    second = compare_paired(VALUES, VALUES[::-1], resamples=20)["difference_ci"]
    assert (first["low"], first["high"]) != (second["low"], second["high"])


def test_permutation_tests_without_a_seed_differ_from_call_to_call() -> None:
    # 70 pairs: Monte Carlo. The p-value is 2 * (hits + 1) / 2001 with hits about binomial(2000, 1/4) (the observed
    # mean difference sits near the null's quartile): two runs share a hit count with probability about 1/70, all five
    # with about 1e-7. A seeded default would give five identical p-values.
    d = np.round(np.random.default_rng(21).normal(0.05, 1.0, 70), 3)
    plain = {paired_permutation_test(d, np.zeros(70), resamples=2000).p_value for _ in range(5)}
    tests = {
        paired_permutation_tests(d, np.zeros(70), {"m": mean_of(70)}, resamples=2000)["m"].p_value for _ in range(5)
    }
    assert len(plain) > 1 and len(tests) > 1


def test_random_swaps_of_70_pairs_come_from_one_draw_of_nine_bytes_a_pattern() -> None:
    # 70 pairs: ceil(70 / 8) = 9 random bytes a pattern, the first 70 bits of each row (bit i = 1: pair i swapped). 500
    # patterns fit one chunk (2**18 // 70 = 3744), so the documented draw is integers(0, 256, (500, 9)) at once; numpy
    # draws bytes four from a 32-bit word within one call, so 500 draws of one 9-byte row would give other patterns.
    # Redone here: a pattern's mean difference is sum((1 - 2 * bit) * d) / 70, and the Monte Carlo p counts the
    # observed arrangement: min(1, 2 * (min(hits below, hits above) + 1) / 501).
    d = np.round(np.random.default_rng(21).normal(0.05, 1.0, 70), 3)
    swaps = np.unpackbits(np.random.default_rng(0).integers(0, 256, (500, 9), dtype=np.uint8), axis=1, count=70)
    null = ((1 - 2 * swaps) * d).sum(axis=1) / 70
    observed = d.sum() / 70
    hits = min(np.count_nonzero(null <= observed), np.count_nonzero(null >= observed))
    expected = min(1.0, 2 * (hits + 1) / 501)
    result = paired_permutation_tests(d, np.zeros(70), {"m": mean_of(70)}, resamples=500, rng=0)["m"]
    assert result.p_value == pytest.approx(expected)
    # patterns drawn one row at a time (chunk=1) give another p-value for this seed: the check above can tell them apart
    one_by_one = paired_permutation_tests(d, np.zeros(70), {"m": mean_of(70)}, resamples=500, rng=0, chunk=1)["m"]
    assert one_by_one.p_value != pytest.approx(expected)


def test_a_statistic_undefined_on_the_samples_has_no_test() -> None:
    # column 1 sums to 0 on both sides: the ratio 0 / 0 is nan, so no statistic and no p-value; the mean of column 0
    # beside it is tested: a - b = 1 on both pairs, the four swap patterns give +1, 0, 0, -1, and the observed +1 is
    # the largest: p = 2 * 1/4 = 0.5
    a, b = [[1.0, 0.0], [1.0, 0.0]], [[0.0, 0.0], [0.0, 0.0]]
    found = paired_permutation_tests(a, b, {"mean": lambda s: s[..., 0] / 2, "ratio": lambda s: s[..., 0] / s[..., 1]})
    assert found["ratio"] == Result(None, None, "the statistic is undefined for these samples")
    assert (found["mean"].statistic, found["mean"].p_value) == (1.0, 0.5)


def _table(values: list[float]):
    """A statistic of one column that looks its sum up in ``values`` (sums here are 0, 1, 2 or 3)."""
    table = np.array(values)
    return lambda sums: table[np.rint(sums[..., 0]).astype(int)]


def test_a_permuted_value_exactly_at_the_tolerance_above_the_observed_one_ties_it() -> None:
    # a = [0, 0], b = [1, 2]: the four swap patterns move a's sum to 0, 1, 2, 3 and b's to 3, 2, 1, 0, so the
    # statistic f(a) - f(b) takes f(0) - f(3), f(1) - f(2), f(2) - f(1), f(3) - f(0). With f = [0, T, 0, 1] the
    # observed value is -1, the tolerance 1e-10 * max(1, |-1|) = 1e-10, and T = -1 + 1e-10 (the same float sum the test
    # makes) lies exactly at its edge: the null values are -1, T, -T, 1. Lower tail: -1 and T are <= -1 + 1e-10, 2 of
    # 4; upper tail: all 4 are >= -1 - 1e-10. p = 2 * 2/4 = 1 (counting T outside the tie would give 2 * 1/4 = 0.5)
    edge = -1.0 + 1e-10
    found = paired_permutation_tests([0.0, 0.0], [1.0, 2.0], {"f": _table([0.0, edge, 0.0, 1.0])})["f"]
    assert (found.statistic, found.p_value) == (-1.0, 1.0)


def test_a_permuted_value_exactly_at_the_tolerance_below_the_observed_one_ties_it() -> None:
    # mirrored: f = [0, U, 0, -1] with U = 1 - 1e-10: observed +1, null values 1, U, -U, -1. Upper tail: 1 and U are
    # >= 1 - 1e-10, 2 of 4; lower tail: all 4 are <= 1 + 1e-10. p = 2 * 2/4 = 1 (0.5 if U were not a tie)
    edge = 1.0 - 1e-10
    found = paired_permutation_tests([0.0, 0.0], [1.0, 2.0], {"f": _table([0.0, edge, 0.0, -1.0])})["f"]
    assert (found.statistic, found.p_value) == (1.0, 1.0)


def _report_with_t_test(monkeypatch: pytest.MonkeyPatch, p_value: float) -> dict:
    # the t-test's p-value is set, so that the flags are read at their exact boundaries (scipy's t distribution
    # gives no simple input a p of exactly 0.05 or 0.01)
    monkeypatch.setattr(stats, "paired_ttest", lambda a, b: Result(2.0, p_value))
    a, b = [1.0, 2.0, 3.0], [0.0, 0.0, 0.0]
    interval = Interval(2.0, 1.0, 3.0, 0.95, "paired percentile bootstrap", 100, 3)
    return significance_report(a, b, difference=interval, test=Result(2.0, 0.25), alpha=0.05)["t_test"]


@pytest.mark.parametrize(
    ("p_value", "at_005", "at_001"),
    [
        (0.05, False, False),  # exactly 0.05: not below it
        (0.01, True, False),  # exactly 0.01: below 0.05, not below 0.01
        (0.0099, True, True),
    ],
)
def test_the_t_test_flags_need_a_p_value_strictly_below_the_level(monkeypatch, p_value, at_005, at_001) -> None:
    t_test = _report_with_t_test(monkeypatch, p_value)
    assert (t_test["p_value"], t_test["significant_at_0.05"], t_test["significant_at_0.01"]) == (
        p_value,
        at_005,
        at_001,
    )


def test_a_t_test_result_has_no_note_unless_a_case_needs_one() -> None:
    # d = [1, 2]: t = 1.5 / (0.7071 / sqrt(2)) = 3, a defined test, so scipy's answer goes out without a note
    result = paired_ttest([1.0, 2.0], [0.0, 0.0])
    assert result.note is None
    assert Result(3.0, 0.2).note is None


def test_too_few_pairs_have_neither_statistic_nor_p_value() -> None:
    # one pair: no t-test (its sd has 0 degrees of freedom); no pair at all: no Wilcoxon test
    assert paired_ttest([1.0], [0.0]) == Result(None, None, "fewer than 2 paired samples")
    assert wilcoxon_test([], []) == Result(None, None, "no paired samples")


def test_the_t_test_of_nearly_constant_differences_raises_no_warning() -> None:
    # d = [1, 1 + 2**-52]: mean 1 + 2**-53, sd 2**-52 / sqrt(2), so t = (1 + 2**-53) / 2**-53 = 2**53 + 1 (9.0e15, df 1)
    # and p = 1 - 2 * atan(t) / pi, about 2 / (pi * t) = 7e-17. scipy warns of precision lost in the variance of such
    # near-identical differences (its t comes out about 6e15): the warning is muted, the result kept.
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = paired_ttest([1.0, 1.0 + 2**-52], [0.0, 0.0])
    assert result.statistic is not None and result.p_value is not None
    assert result.statistic > 1e15 and 0.0 <= result.p_value < 1e-15


def test_infinite_effect_sizes_are_reported_as_none() -> None:
    # a = [1, 1], b = [0, 0]: both sds are 0 and the means differ by 1, so d = +inf and d_z = 1 / 0 = +inf: JSON has
    # no infinity, so both are None, while the interpretation of |d| = inf >= 0.8 is "large"
    a, b = [1.0, 1.0], [0.0, 0.0]
    interval = Interval(1.0, 1.0, 1.0, 0.95, "paired percentile bootstrap", 100, 2)
    effect = significance_report(a, b, difference=interval, test=Result(1.0, 0.5), alpha=0.05)["effect_size"]
    assert effect == {"cohens_d": None, "interpretation": "large", "cohens_dz": None}


def test_a_report_on_no_samples_has_no_means() -> None:
    # no pair: the means of nothing are None (not 0, which would read as a measured score), the tests None
    interval = Interval(math.nan, math.nan, math.nan, 0.95, "paired percentile bootstrap", 100, 0)
    report = significance_report([], [], difference=interval, test=Result(None, None), alpha=0.05)
    assert (report["n"], report["mean_a"], report["mean_b"]) == (0, None, None)
    assert (report["t_test"]["p_value"], report["wilcoxon_test"]["p_value"]) == (None, None)


@pytest.mark.parametrize("test", [stats.paired_ttest, stats.wilcoxon_test])
@pytest.mark.parametrize(
    ("a", "b"),
    [
        ([math.nan] * 3, [0.0] * 3),  # all NaN: the signed-rank path once ranked them into p = 0
        ([math.nan, 1.0, 2.0, 3.0], [0.0] * 4),
        ([math.inf, 1.0, 2.0], [0.0] * 3),  # an infinite difference once gave the signed rank p = 0.25
        ([0.5] * 20, [math.nan] * 20),
    ],
)
def test_a_difference_that_is_not_finite_gives_no_test(test, a, b) -> None:
    assert test(a, b) == stats.TestResult(None, None, stats.NOT_FINITE)
