"""Statistics against scipy's reference results, hand-computed cases and the undefined corners."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from scipy import stats as sps

from pytest_extractbench.analysis import stats

RNG = np.random.default_rng(20240501)
X = RNG.random(120)
Y = np.clip(X - 0.03 + RNG.normal(0, 0.08, 120), 0, 1)


def mean_difference(a, b, axis=-1):
    return np.mean(a, axis=axis) - np.mean(b, axis=axis)


@pytest.mark.parametrize("confidence", [0.9, 0.95, 0.99])
def test_bootstrap_ci_is_scipys_percentile_interval_for_the_same_draws(confidence: float) -> None:
    ours = stats.bootstrap_ci(X, confidence=confidence, resamples=3000, rng=7, chunk=500)
    ref = sps.bootstrap(
        (X,),
        np.mean,
        confidence_level=confidence,
        method="percentile",
        n_resamples=3000,
        batch=500,
        rng=np.random.default_rng(7),
    )
    assert ours.low == pytest.approx(ref.confidence_interval.low, abs=1e-12)
    assert ours.high == pytest.approx(ref.confidence_interval.high, abs=1e-12)
    assert ours.value == pytest.approx(np.mean(X)) and ours.confidence == confidence and ours.n == 120


def test_paired_bootstrap_is_scipys_paired_bootstrap() -> None:
    (ours,) = stats.paired_bootstrap_intervals(
        X, Y, {"d": lambda s: s[..., 0] / len(X)}, resamples=4000, rng=3, chunk=1000
    ).values()
    ref = sps.bootstrap(
        (X, Y),
        mean_difference,
        paired=True,
        method="percentile",
        n_resamples=4000,
        batch=1000,
        rng=np.random.default_rng(3),
    )
    assert (ours.low, ours.high) == pytest.approx(tuple(ref.confidence_interval), abs=1e-12)
    assert ours.value == pytest.approx(np.mean(X) - np.mean(Y))


def test_bootstrap_width_matches_the_normal_theory_for_a_large_sample() -> None:
    values = np.random.default_rng(1).exponential(size=5000)
    ci = stats.bootstrap_ci(values, rng=1)
    expected_half_width = 1.959964 * np.std(values) / math.sqrt(len(values))
    assert (ci.high - ci.low) / 2 == pytest.approx(expected_half_width, rel=0.05)


@pytest.mark.slow
def test_percentile_intervals_cover_the_true_mean_at_their_level() -> None:
    generator = np.random.default_rng(11)
    covered = 0
    trials = 300
    for seed in range(trials):
        sample = generator.normal(0.5, 0.2, 80)
        ci = stats.bootstrap_ci(sample, resamples=1000, rng=seed)
        covered += ci.low <= 0.5 <= ci.high
    # percentile intervals under-cover slightly at n = 80; a broken one misses by far
    assert 0.90 <= covered / trials <= 0.98


def test_seeded_resampling_is_reproducible() -> None:
    first = stats.bootstrap_ci(X, rng=5)
    assert stats.bootstrap_ci(X, rng=5) == first
    assert stats.bootstrap_ci(X, rng=6) != first


def test_resample_weights_count_the_drawn_indices() -> None:
    weights = np.concatenate(list(stats.resample_weights(30, 50, 9, chunk=7)))
    indices = np.concatenate(list(stats.resample_indices(30, 50, 9, chunk=7)))
    assert weights.shape == (50, 30) and np.all(weights.sum(axis=1) == 30)
    for w, i in zip(weights, indices):
        assert np.array_equal(w, np.bincount(i, minlength=30))


@pytest.mark.parametrize("n", [5, 9, 12])
def test_exact_permutation_p_values_are_scipys(n: int) -> None:
    a, b = X[:n], Y[:n]
    ours = stats.paired_permutation_test(a, b)
    ref = sps.permutation_test((a, b), mean_difference, permutation_type="samples", n_resamples=np.inf)
    assert ours.note == "exact (all 2^n swaps)"
    assert ours.p_value == pytest.approx(ref.pvalue, abs=1e-12)
    assert ours.statistic == pytest.approx(ref.statistic)


def test_exact_permutation_with_ties_and_zero_differences() -> None:
    a = np.array([1.0, 1.0, 0.5, 0.5, 0.2, 0.9, 0.9, 0.3])
    b = np.array([1.0, 0.5, 0.5, 0.0, 0.2, 0.4, 0.9, 0.8])
    ref = sps.permutation_test((a, b), mean_difference, permutation_type="samples", n_resamples=np.inf)
    assert stats.paired_permutation_test(a, b).p_value == pytest.approx(ref.pvalue, abs=1e-12)


def test_monte_carlo_permutation_p_value_is_close_to_the_exact_one() -> None:
    a, b = X[:16], Y[:16]  # 65,536 arrangements: exact by scipy, Monte Carlo by us
    exact = sps.permutation_test((a, b), mean_difference, permutation_type="samples", n_resamples=np.inf).pvalue
    ours = stats.paired_permutation_test(a, b, resamples=20000, rng=2)
    assert ours.note.startswith("Monte Carlo")
    assert ours.p_value == pytest.approx(exact, abs=0.015)


def test_monte_carlo_p_value_is_never_zero() -> None:
    result = stats.paired_permutation_test(X + 1, X, resamples=1000, rng=0)
    assert result.p_value == pytest.approx(2 / 1001)


def test_identical_values_give_p_one_in_every_test() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the degenerate cases are defined, not warned about
        assert stats.paired_permutation_test(X, X.copy()).p_value == 1.0
        assert stats.paired_ttest(X, X.copy()) == stats.TestResult(0.0, 1.0, "all differences are zero")
        assert stats.wilcoxon_test(X, X.copy()) == stats.TestResult(0.0, 1.0, "all differences are zero")


def test_constant_nonzero_differences_are_defined() -> None:
    a = np.array([0.9, 0.8, 0.7, 0.6])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        t = stats.paired_ttest(a, a - 0.25)
        w = stats.wilcoxon_test(a, a - 0.25)
        perm = stats.paired_permutation_test(a, a - 0.25)
    assert t.statistic is None and t.p_value == 0.0 and "infinite" in t.note
    # Wilcoxon ranks the four equal differences: exact p = 2 / 2**4, as scipy
    assert w.p_value == pytest.approx(sps.wilcoxon(a, a - 0.25).pvalue) == pytest.approx(0.125)
    assert perm.p_value == pytest.approx(0.125)


def test_ttest_and_wilcoxon_are_scipys_on_ordinary_data() -> None:
    t = stats.paired_ttest(X, Y)
    ref = sps.ttest_rel(X, Y)
    assert (t.statistic, t.p_value) == pytest.approx((ref.statistic, ref.pvalue))
    w = stats.wilcoxon_test(X, Y)
    ref = sps.wilcoxon(X, Y)
    assert (w.statistic, w.p_value) == pytest.approx((ref.statistic, ref.pvalue))


# Small samples with zeros or ties: scipy's exhaustive sign-flip test, which we answer with a statistic that
# takes every flip at once. Its p-value and statistic must be scipy's own, exactly (n kept small: scipy's
# side of the comparison pays a call per flip).
SMALL_DIFFERENCES = st.lists(
    st.sampled_from([-2.0, -1.0, -0.5, -0.125, 0.0, 0.125, 0.5, 1.0, 2.0]), min_size=1, max_size=5
)


@pytest.mark.slow
@given(SMALL_DIFFERENCES)
def test_small_samples_with_zeros_or_ties_get_scipys_exact_wilcoxon(differences: list[float]) -> None:
    d = np.array(differences)
    assume(np.any(d != 0))
    ours = stats.wilcoxon_test(d, np.zeros_like(d))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        ref = sps.wilcoxon(d)
    assert (ours.statistic, ours.p_value) == (float(ref.statistic), float(ref.pvalue))


@pytest.mark.slow  # scipy's side pays a call per flip: 4,096 and 8,192 of them
@pytest.mark.parametrize("n", [12, 13])
def test_the_largest_exhaustive_samples_match_scipy(n: int) -> None:
    d = np.zeros(n)
    d[:5] = [-0.125, 0.25, -0.125, 0.5, 0.25]  # zeros and ties: the exhaustive path, 2**n flips
    ours = stats.wilcoxon_test(d, np.zeros(n))
    ref = sps.wilcoxon(d)
    assert (ours.statistic, ours.p_value) == (float(ref.statistic), float(ref.pvalue))
    assert ours.note == f"{n - 5} zero difference(s) dropped"


def test_too_few_pairs() -> None:
    assert stats.paired_ttest([0.5], [0.2]).p_value is None
    assert stats.wilcoxon_test([], []).p_value is None
    assert stats.paired_permutation_test([0.5], [0.2]).p_value == 1.0


def test_cohens_d_uses_the_spec_pooled_sd() -> None:
    a, b = [1.0, 2.0, 3.0, 4.0], [0.0, 1.0, 1.0, 2.0]
    # means 2.5 and 1.0; population sds sqrt(1.25) and sqrt(0.5): pooled sqrt(0.875)
    assert stats.cohens_d(a, b) == pytest.approx(1.5 / math.sqrt(0.875))
    # d_z: differences 1, 1, 2, 2 -> mean 1.5, sample sd sqrt(1/3)
    assert stats.cohens_dz(a, b) == pytest.approx(1.5 / math.sqrt(1 / 3))
    assert stats.cohens_d([1, 1], [1, 1]) == 0.0
    assert stats.cohens_d([1, 1], [0, 0]) == math.inf  # a d of 0 would call total separation negligible
    assert stats.interpret_cohens_d(stats.cohens_d([1, 1], [0, 0])) == "large"


@pytest.mark.parametrize(
    ("d", "label"),
    [
        (0.0, "negligible"),
        (-0.19, "negligible"),
        (0.2, "small"),
        (-0.49, "small"),
        (0.5, "medium"),
        (0.79, "medium"),
        (-0.8, "large"),
        (3.0, "large"),
    ],
)
def test_cohens_d_bands(d: float, label: str) -> None:
    assert stats.interpret_cohens_d(d) == label


def test_compare_paired_has_the_spec_shape() -> None:
    result = stats.compare_paired(X, Y, rng=1)
    assert result["mean_difference"] == pytest.approx(np.mean(X) - np.mean(Y))
    assert result["t_test"]["p_value"] == pytest.approx(sps.ttest_rel(X, Y).pvalue)
    assert result["wilcoxon_test"]["p_value"] == pytest.approx(sps.wilcoxon(X, Y).pvalue)
    # Cohen's d with the pooled population sd, written out: about 0.12, so "negligible"
    d = (np.mean(X) - np.mean(Y)) / math.sqrt((np.var(X) + np.var(Y)) / 2)
    assert 0 < d < 0.2
    assert result["effect_size"]["cohens_d"] == pytest.approx(d)
    assert result["effect_size"]["interpretation"] == "negligible"
    ci = result["difference_ci"]
    assert ci["low"] < result["mean_difference"] < ci["high"]
    # scipy's paired permutation test puts p near 1/10,000: a significant difference
    reference = sps.permutation_test(
        (X, Y), mean_difference, permutation_type="samples", n_resamples=9999, vectorized=True, random_state=0
    )
    assert reference.pvalue < 0.001
    assert result["p_value"] < 0.001
    assert result["significantly_different"] is True


def test_compare_paired_calls_a_small_difference_not_significant() -> None:
    a = [0.9, 0.6, 0.8, 0.5, 0.7]
    b = [0.6, 0.8, 0.7, 0.6, 0.5]  # differences 0.3, -0.2, 0.1, -0.1, 0.2: mean 0.06
    result = stats.compare_paired(a, b, rng=1)
    assert result["mean_difference"] == pytest.approx(0.06)
    # Exact test over the 32 sign patterns of the differences: the sum is >= 0.3 (the observed one) when the
    # negated ones add up to at most 0.3: none (1), any one (5), 0.2+0.1 (4) or 0.1+0.1 (1), 11 patterns;
    # two-sided p = 2 * 11 / 32.
    assert result["p_value"] == pytest.approx(22 / 32)
    reference = sps.permutation_test(
        (np.array(a), np.array(b)), mean_difference, permutation_type="samples", n_resamples=np.inf, vectorized=True
    )
    assert reference.pvalue == pytest.approx(22 / 32)
    assert result["significantly_different"] is False
    assert result["t_test"]["p_value"] == pytest.approx(sps.ttest_rel(a, b).pvalue)
    assert result["t_test"]["significant_at_0.05"] is False
    # means 0.7 and 0.64, population variances 0.02 and 0.0104: d = 0.06 / sqrt(0.0152) = 0.4867, "small"
    assert result["effect_size"]["cohens_d"] == pytest.approx(0.06 / math.sqrt(0.0152))
    assert result["effect_size"]["interpretation"] == "small"
    ci = result["difference_ci"]
    assert ci["low"] < 0 < ci["high"]


def test_interval_format_is_the_spec_reporting_format() -> None:
    interval = stats.Interval(0.8234, 0.8121, 0.8344, 0.95, stats.PERCENTILE, 10000, 50)
    assert interval.format() == "0.823 [95% CI: 0.812, 0.834]"
