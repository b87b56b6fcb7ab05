"""Statistics for benchmark results: bootstrap CIs, paired tests, effect sizes.

Pure numpy/scipy, no pytest. Every random function takes an explicit ``rng``
(a seed or a ``numpy.random.Generator``), so the same inputs give the same numbers.

Metrics are statistics of *column sums*: a run is an ``(n, k)`` matrix of
per-sample quantities (EQS, validity, true positives, predicted fields, ...) and
a statistic maps sums of shape ``(..., k)`` to values of shape ``(...)``. A mean
is ``sums[..., 0] / n``; micro F1 is recomputed from summed field counts. This
keeps samples the unit of resampling while ratio metrics stay what they are
(micro F1 of a resample, not a mean of per-sample F1s), and lets one resampling
serve every metric at once through a single matrix product.

Resampling draws ``rng.integers(0, n, (chunk, n))`` per chunk, exactly as
``scipy.stats.bootstrap`` does per batch, so with ``batch=chunk`` and the same seed
the two give identical percentile intervals (the unit tests check this).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Iterator, Mapping
from typing import Any, NamedTuple

import numpy as np
from threadpoolctl import threadpool_limits

Statistic = Callable[[np.ndarray], np.ndarray]
"""Column sums ``(..., k)`` -> statistic values ``(...)``."""

DEFAULT_RESAMPLES = 10_000
DEFAULT_CONFIDENCE = 0.95
PERCENTILE = "percentile bootstrap"
# Elements of one resampling chunk: small enough that the (chunk x n) index and weight matrices
# stay in cache (2 MB each), which makes 10,000 x 10,000 resampling 1.5x faster than 32 MB chunks.
_CHUNK_ELEMENTS = 1 << 18
# Under this (relative to max(1, |observed|)) a permuted statistic ties the observed one: the null values
# come from sums in another order than the observed value, and metrics live on a [0, 1] scale where real
# differences between arrangements are far larger (scipy.stats.permutation_test has the same idea).
_TIE_TOLERANCE = 1e-10


class Interval(NamedTuple):
    """A point estimate and its confidence interval."""

    value: float
    low: float
    high: float
    confidence: float
    method: str
    resamples: int
    n: int

    def as_dict(self) -> dict[str, Any]:
        return self._asdict()

    def format(self, digits: int = 3) -> str:
        """``0.823 [95% CI: 0.812, 0.834]``."""
        level = f"{100 * self.confidence:g}%"
        return f"{self.value:.{digits}f} [{level} CI: {self.low:.{digits}f}, {self.high:.{digits}f}]"


class TestResult(NamedTuple):
    """A hypothesis test: ``statistic`` and ``p_value`` may be None when undefined (see ``note``)."""

    statistic: float | None
    p_value: float | None
    note: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return self._asdict()


def format_p(p_value: float | None) -> str:
    """``p = 0.031``, ``p = 0.0002``, or ``p n/a`` when the test is undefined."""
    if p_value is None:
        return "p n/a"
    return f"p = {p_value:.2g}" if p_value < 0.001 else f"p = {p_value:.3f}"


def make_rng(seed: Any = None) -> np.random.Generator:
    """A generator from a seed, a sequence of ints, or a generator (returned as is)."""
    if isinstance(seed, np.random.Generator):
        return seed
    return np.random.default_rng(seed)


def _as_columns(columns: Any) -> np.ndarray:
    array = np.asarray(columns, dtype=np.float64)
    if array.ndim == 1:
        array = array[:, None]
    if array.ndim != 2:
        raise ValueError(f"expected an (n, k) matrix of per-sample columns, got shape {array.shape}")
    return array


def _chunk_size(n: int, resamples: int, chunk: int | None) -> int:
    if chunk is not None:
        return max(1, min(int(chunk), resamples))
    return max(1, min(resamples, _CHUNK_ELEMENTS // max(n, 1)))


def resample_indices(n: int, resamples: int, rng: Any, *, chunk: int | None = None) -> Iterator[np.ndarray]:
    """Bootstrap index matrices of shape ``(c, n)`` (int64), ``resamples`` rows in all."""
    generator = make_rng(rng)
    size = _chunk_size(n, resamples, chunk)
    for start in range(0, resamples, size):
        yield generator.integers(0, n, (min(size, resamples - start), n))


def resample_weights(n: int, resamples: int, rng: Any, *, chunk: int | None = None) -> Iterator[np.ndarray]:
    """How often each sample is drawn in each resample: ``(c, n)`` float64 count matrices."""
    for idx in resample_indices(n, resamples, rng, chunk=chunk):
        c = idx.shape[0]
        idx += (np.arange(c, dtype=np.int64) * n)[:, None]  # one bincount for the whole chunk
        yield np.bincount(idx.ravel(), minlength=c * n).reshape(c, n).astype(np.float64)


def _one_blas_thread() -> threadpool_limits:
    # The chunks are many small matrix products: OpenBLAS threads spin and wait on each one,
    # which made resampling 3-5x slower on a busy 2-core machine than a single thread.
    return threadpool_limits(limits=1, user_api="blas")


def bootstrap_sums(columns: Any, resamples: int, rng: Any, *, chunk: int | None = None) -> np.ndarray:
    """Column sums of every bootstrap resample: ``(resamples, k)``."""
    matrix = _as_columns(columns)
    n = matrix.shape[0]
    if n == 0:
        raise ValueError("cannot resample zero samples")
    with _one_blas_thread():
        return np.concatenate([w @ matrix for w in resample_weights(n, resamples, rng, chunk=chunk)], axis=0)


def percentile_interval(distribution: np.ndarray, confidence: float) -> tuple[float, float]:
    """The central ``confidence`` interval of a bootstrap distribution (linear interpolation, as numpy/scipy)."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    alpha = (1 - confidence) / 2
    finite = distribution[np.isfinite(distribution)]
    if finite.size == 0:
        return math.nan, math.nan
    low, high = np.quantile(finite, [alpha, 1 - alpha])
    return float(low), float(high)


def mean_of(n: int, column: int = 0) -> Statistic:
    """The mean of one column of ``n`` samples, as a statistic of column sums."""
    return lambda sums: sums[..., column] / n


def _exact_sums(matrix: np.ndarray) -> np.ndarray:
    # math.fsum: the point estimate must not depend on summation order (xdist, BLAS threads).
    return np.array([math.fsum(column) for column in matrix.T], dtype=np.float64)


def bootstrap_intervals(
    columns: Any,
    statistics: Mapping[str, Statistic],
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    resamples: int = DEFAULT_RESAMPLES,
    rng: Any = None,
    chunk: int | None = None,
) -> dict[str, Interval]:
    """Percentile bootstrap CIs of several statistics of the same samples, from one resampling."""
    matrix = _as_columns(columns)
    n = matrix.shape[0]
    sums = bootstrap_sums(matrix, resamples, rng, chunk=chunk)
    observed = _exact_sums(matrix)
    out = {}
    with np.errstate(divide="ignore", invalid="ignore"):
        for name, statistic in statistics.items():
            low, high = percentile_interval(np.asarray(statistic(sums), dtype=np.float64), confidence)
            out[name] = Interval(float(statistic(observed)), low, high, confidence, PERCENTILE, resamples, n)
    return out


def bootstrap_ci(
    values: Any,
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    resamples: int = DEFAULT_RESAMPLES,
    rng: Any = None,
    chunk: int | None = None,
) -> Interval:
    """Percentile bootstrap CI of a mean (``compute_confidence_interval``)."""
    array = np.asarray(values, dtype=np.float64).ravel()
    return bootstrap_intervals(
        array, {"mean": mean_of(len(array))}, confidence=confidence, resamples=resamples, rng=rng, chunk=chunk
    )["mean"]


def paired_bootstrap_intervals(
    columns_a: Any,
    columns_b: Any,
    statistics: Mapping[str, Statistic],
    *,
    confidence: float = DEFAULT_CONFIDENCE,
    resamples: int = DEFAULT_RESAMPLES,
    rng: Any = None,
    chunk: int | None = None,
) -> dict[str, Interval]:
    """CIs of ``statistic(a) - statistic(b)`` when row i of a and of b are the same sample (resampled together)."""
    a, b = _paired(columns_a, columns_b)
    k = a.shape[1]

    def difference(statistic: Statistic) -> Statistic:
        return lambda sums: statistic(sums[..., :k]) - statistic(sums[..., k:])

    found = bootstrap_intervals(
        np.hstack([a, b]),
        {name: difference(s) for name, s in statistics.items()},
        confidence=confidence,
        resamples=resamples,
        rng=rng,
        chunk=chunk,
    )
    return {name: interval._replace(method="paired " + PERCENTILE) for name, interval in found.items()}


def _paired(columns_a: Any, columns_b: Any) -> tuple[np.ndarray, np.ndarray]:
    a, b = _as_columns(columns_a), _as_columns(columns_b)
    if a.shape != b.shape:
        raise ValueError(f"paired samples need the same shape, got {a.shape} and {b.shape}")
    if a.shape[0] == 0:
        raise ValueError("no paired samples")
    return a, b


def _swap_masks(n: int, resamples: int, rng: Any, chunk: int | None) -> tuple[Iterator[np.ndarray], bool]:
    """0/1 matrices saying, per permutation and sample, whether a and b trade places.

    With ``2**n <= resamples`` every pattern is enumerated (an exact test);
    otherwise random patterns are drawn from random bytes, 8 samples per byte.
    """
    if n < 63 and 2**n <= resamples:
        patterns = np.arange(2**n, dtype=np.int64)[:, None]
        return iter([((patterns >> np.arange(n, dtype=np.int64)) & 1).astype(np.float64)]), True
    generator = make_rng(rng)
    size = _chunk_size(n, resamples, chunk)

    def random_masks() -> Iterator[np.ndarray]:
        for start in range(0, resamples, size):
            c = min(size, resamples - start)
            packed = generator.integers(0, 256, (c, (n + 7) // 8), dtype=np.uint8)
            yield np.unpackbits(packed, axis=1, count=n).astype(np.float64)

    return random_masks(), False


def paired_permutation_tests(
    columns_a: Any,
    columns_b: Any,
    statistics: Mapping[str, Statistic],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    rng: Any = None,
    chunk: int | None = None,
) -> dict[str, TestResult]:
    """Two-sided paired permutation (approximate randomization) tests of ``statistic(a) - statistic(b)``.

    Under the null hypothesis the two outputs of each sample are exchangeable, so
    every sample's pair is swapped at random and the statistic recomputed; this is
    valid for ratio metrics such as micro F1, needs no normality, and gives p = 1
    when every sample's outputs are identical. Exact for ``2**n <= resamples``;
    otherwise the Monte Carlo p-value counts the observed arrangement
    (``(hits + 1) / (resamples + 1)``) and so is never 0. Two-sided p is
    ``min(1, 2 * min(p_less, p_greater))``, as in ``scipy.stats.permutation_test``.
    """
    a, b = _paired(columns_a, columns_b)
    n = a.shape[0]
    sum_a, sum_b = _exact_sums(a), _exact_sums(b)
    delta = b - a
    masks, exact = _swap_masks(n, resamples, rng, chunk)
    with _one_blas_thread():
        # per permutation: what the swapped samples move from b's sums to a's
        shift = np.concatenate([mask @ delta for mask in masks], axis=0)
    null: dict[str, np.ndarray] = {}
    with np.errstate(divide="ignore", invalid="ignore"):
        observed = {name: float(s(sum_a) - s(sum_b)) for name, s in statistics.items()}
        for name, statistic in statistics.items():
            null[name] = np.asarray(statistic(sum_a + shift) - statistic(sum_b - shift), dtype=np.float64)
    out = {}
    for name, distribution in null.items():
        value = observed[name]
        if not math.isfinite(value):
            out[name] = TestResult(None, None, "the statistic is undefined for these samples")
            continue
        tolerance = _TIE_TOLERANCE * max(1.0, abs(value))
        less = np.count_nonzero(distribution <= value + tolerance)
        greater = np.count_nonzero(distribution >= value - tolerance)
        count = distribution.size
        if not exact:  # the observed arrangement is one of the equally likely ones
            less, greater, count = less + 1, greater + 1, count + 1
        p_value = float(min(1.0, 2 * min(less, greater) / count))
        note = "exact (all 2^n swaps)" if exact else f"Monte Carlo ({resamples} random swaps)"
        if np.all(delta == 0):
            note = "identical per-sample values: no difference to test"
        out[name] = TestResult(value, p_value, note)
    return out


def paired_permutation_test(a: Any, b: Any, *, resamples: int = DEFAULT_RESAMPLES, rng: Any = None) -> TestResult:
    """Permutation test of ``mean(a) - mean(b)`` for paired per-sample values."""
    x = np.asarray(a, dtype=np.float64).ravel()
    return paired_permutation_tests(x, b, {"mean": mean_of(len(x))}, resamples=resamples, rng=rng)["mean"]


NOT_FINITE = "a difference is NaN or infinite: no test"


def _differences(a: Any, b: Any) -> np.ndarray:
    x, y = np.asarray(a, dtype=np.float64).ravel(), np.asarray(b, dtype=np.float64).ravel()
    if x.shape != y.shape:
        raise ValueError(f"paired samples need the same length, got {len(x)} and {len(y)}")
    return x - y


def paired_ttest(a: Any, b: Any) -> TestResult:
    """``scipy.stats.ttest_rel`` with its undefined cases defined.

    Fewer than 2 pairs: no test (None). All differences zero: t = 0, p = 1.
    Constant non-zero differences (zero variance): p = 0 and t infinite (None in
    JSON), the limit scipy also reports. A difference that is NaN or infinite: no test.
    """
    d = _differences(a, b)
    if len(d) < 2:
        return TestResult(None, None, "fewer than 2 paired samples")
    if not np.isfinite(d).all():
        return TestResult(None, None, NOT_FINITE)
    if np.all(d == 0):
        return TestResult(0.0, 1.0, "all differences are zero")
    if np.ptp(d) == 0:
        return TestResult(None, 0.0, "every difference is the same non-zero value: t is infinite")
    from scipy.stats import ttest_rel  # scipy.stats takes a second to import: only when a test runs

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # near-constant data: scipy warns about precision
        result = ttest_rel(a, b)
    return TestResult(float(result.statistic), float(result.pvalue))


def wilcoxon_test(a: Any, b: Any) -> TestResult:
    """``scipy.stats.wilcoxon`` (zero differences dropped, scipy's default) with its degenerate cases defined.

    No pairs: no test (statistic and p None). All differences zero (nothing to rank): statistic 0, p = 1.
    A difference that is NaN or infinite: no test (ranking it would give a p-value that means nothing, p = 0
    for all-NaN differences).
    """
    d = _differences(a, b)
    if len(d) == 0:
        return TestResult(None, None, "no paired samples")
    if not np.isfinite(d).all():
        return TestResult(None, None, NOT_FINITE)
    if np.all(d == 0):
        return TestResult(0.0, 1.0, "all differences are zero")
    zeros = int(np.count_nonzero(d == 0))
    note = f"{zeros} zero difference(s) dropped" if zeros else None
    if len(d) <= _EXHAUSTIVE_SIGNED_RANK_MAX:
        nonzero = np.abs(d[d != 0])
        if zeros or len(np.unique(nonzero)) < len(nonzero):
            statistic, p = _exhaustive_signed_rank(d)
            return TestResult(statistic, p, note)
    from scipy.stats import wilcoxon

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # one or two non-zero differences: scipy warns
        result = wilcoxon(d)
    return TestResult(float(result.statistic), float(result.pvalue), note)


# scipy.stats.wilcoxon answers up to 13 differences with zeros or ties by an exhaustive sign-flip
# permutation test (2**n flips, fewer than its 9,999 resamples), but calls its statistic once per flip:
# 4 s at n = 12, for each of the comparisons a finish makes. The same test, given a statistic that
# takes every flip at once, gives the same p-value in milliseconds.
_EXHAUSTIVE_SIGNED_RANK_MAX = 13


def _exhaustive_signed_rank(d: np.ndarray) -> tuple[float, float]:
    """scipy's exact test for small samples with zeros or ties: zeros dropped ("wilcox"), average
    ranks of the absolute differences, every sign flip; the statistic is ``min(R+, R-)``."""
    from scipy.stats import permutation_test, rankdata

    ranks = np.zeros(len(d))
    ranks[d != 0] = rankdata(np.abs(d[d != 0]))

    def positive_rank_sum(x: np.ndarray, axis: int = -1) -> np.ndarray:
        sums: np.ndarray = np.sum((x > 0) * ranks, axis=axis)  # numpy types a sum along an axis as Any
        return sums

    result = permutation_test(
        (d,), positive_rank_sum, permutation_type="samples", vectorized=True, alternative="two-sided", axis=-1
    )
    r_plus, r_minus = float(np.sum(ranks[d > 0])), float(np.sum(ranks[d < 0]))
    return min(r_plus, r_minus), float(result.pvalue)


def cohens_d(a: Any, b: Any) -> float:
    """Cohen's d with the pooled standard deviation ``sqrt((sd_a² + sd_b²) / 2)`` (population sds).

    Where the usual guard against a zero pooled sd gives 0, a non-zero mean difference gives
    ±inf instead: two constant, different score sets are as separated as can be.
    """
    x, y = np.asarray(a, dtype=np.float64).ravel(), np.asarray(b, dtype=np.float64).ravel()
    if len(x) == 0 or len(y) == 0:
        return 0.0
    diff = float(np.mean(x) - np.mean(y))
    pooled = math.sqrt((float(np.std(x)) ** 2 + float(np.std(y)) ** 2) / 2)
    if pooled == 0:
        return 0.0 if diff == 0 else math.copysign(math.inf, diff)
    return diff / pooled


def cohens_dz(a: Any, b: Any) -> float:
    """The paired effect size d_z = mean(a - b) / sd(a - b) (sample sd); reported beside d, never interpreted."""
    d = _differences(a, b)
    if len(d) < 2:
        return 0.0
    mean, sd = float(np.mean(d)), float(np.std(d, ddof=1))
    if sd == 0:
        return 0.0 if mean == 0 else math.copysign(math.inf, mean)
    return mean / sd


def interpret_cohens_d(d: float) -> str:
    """Cohen's bands: negligible < 0.2 <= small < 0.5 <= medium < 0.8 <= large."""
    size = abs(d)
    if size < 0.2:
        return "negligible"
    if size < 0.5:
        return "small"
    if size < 0.8:
        return "medium"
    return "large"


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def compare_paired(
    a: Any,
    b: Any,
    *,
    alpha: float = 0.05,
    confidence: float = DEFAULT_CONFIDENCE,
    resamples: int = DEFAULT_RESAMPLES,
    rng: Any = None,
) -> dict[str, Any]:
    """Two models compared on paired per-sample scores (t-test, Wilcoxon, Cohen's d), plus a permutation test and a
    bootstrap CI.

    ``p_value`` and ``significantly_different`` come from the paired permutation
    test (exact for small n, no normality assumption); the t-test and Wilcoxon
    results are reported beside it.
    """
    x, y = np.asarray(a, dtype=np.float64).ravel(), np.asarray(b, dtype=np.float64).ravel()
    generator = make_rng(rng)
    mean = {"mean": mean_of(len(x))}
    difference = paired_bootstrap_intervals(x, y, mean, confidence=confidence, resamples=resamples, rng=generator)
    permutation = paired_permutation_tests(x, y, mean, resamples=resamples, rng=generator)["mean"]
    return significance_report(x, y, difference=difference["mean"], test=permutation, alpha=alpha)


def significance_report(
    a: Any, b: Any, *, difference: Interval, test: TestResult, alpha: float, test_name: str = "paired permutation"
) -> dict[str, Any]:
    """The comparison result for paired per-sample scores, given the CI of the difference and the deciding test."""
    x, y = np.asarray(a, dtype=np.float64).ravel(), np.asarray(b, dtype=np.float64).ravel()
    t_test, wilcoxon = paired_ttest(x, y), wilcoxon_test(x, y)
    d = cohens_d(x, y)
    return {
        "n": len(x),
        "mean_a": float(np.mean(x)) if len(x) else None,
        "mean_b": float(np.mean(y)) if len(y) else None,
        "mean_difference": difference.value,
        "difference_ci": difference.as_dict(),
        "p_value": test.p_value,
        "test": test_name,
        "significantly_different": bool(test.p_value is not None and test.p_value < alpha),
        "alpha": alpha,
        "t_test": {
            "t_statistic": t_test.statistic,
            "p_value": t_test.p_value,
            "significant_at_0.05": t_test.p_value is not None and t_test.p_value < 0.05,
            "significant_at_0.01": t_test.p_value is not None and t_test.p_value < 0.01,
            "note": t_test.note,
        },
        "wilcoxon_test": {"statistic": wilcoxon.statistic, "p_value": wilcoxon.p_value, "note": wilcoxon.note},
        "permutation_test": test.as_dict() if test_name == "paired permutation" else None,
        "effect_size": {
            "cohens_d": _finite(d),
            "interpretation": interpret_cohens_d(d),
            # the paired effect size, for reference only: interpretation uses the pooled d
            "cohens_dz": _finite(cohens_dz(x, y)),
        },
    }


__all__ = [
    "DEFAULT_CONFIDENCE",
    "DEFAULT_RESAMPLES",
    "Interval",
    "Statistic",
    "TestResult",
    "bootstrap_ci",
    "bootstrap_intervals",
    "bootstrap_sums",
    "cohens_d",
    "cohens_dz",
    "compare_paired",
    "format_p",
    "interpret_cohens_d",
    "make_rng",
    "mean_of",
    "paired_bootstrap_intervals",
    "paired_permutation_test",
    "paired_permutation_tests",
    "paired_ttest",
    "percentile_interval",
    "resample_indices",
    "resample_weights",
    "significance_report",
    "wilcoxon_test",
]
