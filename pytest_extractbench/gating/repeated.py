"""pass@k and pass^k against a baseline: the same samples, each run several times in both runs, compared pairwise.

A baseline keeps every repeated sample's pass count (runs, passing runs). Both runs' per-sample estimators are taken
at one k, the smallest run count either run gave any shared sample, so a baseline of 5 runs compares with a run of
3 at k = 3. The paired CI and tests are the ones every other baseline metric gets. A baseline saved before counts
were kept, or from a run that asked each sample once, has no pass@k: a check on it could not be measured, it never
holds. Pure functions, no pytest.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..analysis import catalog, stats
from ..analysis.repeats import pass_at_k, pass_hat_k
from ..analysis.resampled import MetricDelta
from ..scoring import StatsOptions
from .baseline import SampleSnapshot

REPEATED = ("pass_at_k", "pass_hat_k")
_ESTIMATORS = {"pass_at_k": pass_at_k, "pass_hat_k": pass_hat_k}
_ASK = "--extractbench-repeats N, N >= 2"


def repeated_metric(name: str) -> catalog.Metric | None:
    """pass@k or pass^k by its name or alias (``pass@k``, ``pass^k``), else None."""
    key = name.strip().lower().replace("-", "_")
    entry = catalog.get(catalog.aliases().get(key, key))
    return entry if entry is not None and entry.name in REPEATED else None


@dataclass(frozen=True)
class RepeatComparison:
    """pass@k and pass^k of one model against its baseline: the deltas at ``k`` over ``samples``, or why none."""

    deltas: dict[str, MetricDelta]
    k: int = 0
    samples: tuple[str, ...] = ()
    why: str | None = None  # why there is no delta (baseline or run without counts), None when there is

    def as_dict(self) -> dict[str, object]:
        if self.why is not None:
            return {"compared": False, "reason": self.why}
        return {"compared": True, "runs": self.k, "samples": len(self.samples)}

    def note(self, model: str) -> str | None:
        """One line for the comparison's notes: at which k pass@k was compared, or why it was not."""
        if self.why is not None:
            return f"model {model!r}: pass@k / pass^k not compared: {self.why}"
        if self.k:
            return (
                f"model {model!r}: pass@{self.k} / pass^{self.k} compared on the {len(self.samples)} samples "
                f"both runs ran at least {self.k} times"
            )
        return None


def compare_repeats(
    current: Mapping[str, SampleSnapshot],
    baseline: Mapping[str, SampleSnapshot],
    shared: Sequence[str],
    options: StatsOptions,
    *,
    keeps_repeats: bool,
    rng: np.random.Generator,
) -> RepeatComparison:
    """The paired pass@k and pass^k deltas on the ``shared`` samples both runs repeated (``keeps_repeats``: the
    baseline's format holds counts). Empty, with no reason, when this run repeated nothing."""
    now = [i for i in shared if current[i].repeats is not None]
    both = [i for i in now if baseline[i].repeats is not None]
    if not now:  # this run repeated nothing: nothing to compare (a check on pass@k says why: CHECK_WITHOUT)
        return RepeatComparison({})
    if not both:
        if not keeps_repeats:
            why = (
                "not measured in the baseline: it was saved before pass counts over repeats were kept "
                f"(baseline format 1); save it again from a run with {_ASK}"
            )
        elif not any(baseline[i].repeats is not None for i in shared):
            why = f"not measured in the baseline: its run asked each sample once (save it from a run with {_ASK})"
        else:
            why = "no shared sample was run more than once in both runs"
        return RepeatComparison({}, why=why)
    counts_now = [current[i].repeats or (0, 0) for i in both]
    counts_then = [baseline[i].repeats or (0, 0) for i in both]
    k = min(n for n, _ in counts_now + counts_then)
    deltas = {
        name: paired_mean_delta(
            name,
            [estimator(n, c, k) for n, c in counts_now],
            [estimator(n, c, k) for n, c in counts_then],
            options,
            rng,
        )
        for name, estimator in _ESTIMATORS.items()
    }
    return RepeatComparison(deltas, k, tuple(both))


CHECK_WITHOUT = f"this run asked each shared sample once ({_ASK})"


def paired_mean_delta(
    name: str, a: Sequence[float], b: Sequence[float], options: StatsOptions, rng: np.random.Generator
) -> MetricDelta:
    """The mean of per-sample values ``a`` (this run) against ``b`` (the baseline, same samples in the same order):
    the paired bootstrap CI and the paired tests, as :func:`..analysis.resampled.paired_deltas` gives a macro
    metric."""
    n = len(a)
    x, y = np.asarray(a, dtype=np.float64).reshape(n, 1), np.asarray(b, dtype=np.float64).reshape(n, 1)
    statistic = {name: stats.mean_of(n)}
    interval = stats.paired_bootstrap_intervals(
        x, y, statistic, confidence=options.confidence, resamples=options.resamples, rng=rng
    )[name]
    permutation = stats.paired_permutation_tests(x, y, statistic, resamples=options.resamples, rng=rng)[name]
    tests = {
        "permutation": permutation.as_dict(),
        "ttest": stats.paired_ttest(a, b).as_dict(),
        "wilcoxon": stats.wilcoxon_test(a, b).as_dict(),
    }
    p_value = tests[options.test]["p_value"]
    value_a, value_b = math.fsum(a) / n, math.fsum(b) / n
    return MetricDelta(
        metric=name,
        a=value_a,
        b=value_b,
        delta=value_a - value_b,
        ci=interval,
        p_value=p_value,
        test=options.test,
        tests=tests,
        significant=p_value is not None and p_value < options.alpha,
        n=n,
        higher_is_better=True,
    )
