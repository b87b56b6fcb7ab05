"""Headline metrics rebuilt from per-sample rows: point values, bootstrap CIs and paired differences.

Samples are the unit of resampling. Each metric names the per-sample quantities
it is recomputed from and how (the catalog, :mod:`.catalog`): means of per-sample
values for EQS (macro), validity and exact match; micro ratios of summed field
counts for precision/recall/F1, type accuracy, hallucination and omission rates.
So the bootstrap CI of micro F1 is the spread of the micro F1 of resampled runs,
not of a mean of per-sample F1s, and the point values equal :mod:`.metrics`'.

A *row* is a flat dict of numbers per sample (:func:`sample_row`); baselines
store rows, so a stored run compares with a new one without re-scoring.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from ..scoring import MODES, SampleScore, StatsOptions
from . import catalog, stats

Row = Mapping[str, float]


def row_keys() -> tuple[str, ...]:
    """The row keys some catalog metric is recomputed from or tested on (besides the implicit "one")."""
    keys: dict[str, None] = {}
    for metric in catalog.resampled().values():
        keys.update(dict.fromkeys(metric.columns))
        keys[metric.per_sample or metric.columns[0]] = None
    return tuple(keys)


EQS_TOLERANCE = 1e-9
WHOLE_OUTPUT_SCORES = ("semantic_similarity", "judge_score")


def _row_values() -> dict[str, Callable[[SampleScore], float]]:
    """Each row key's value from one scored sample, in the order a row lists them (baselines store rows)."""
    values: dict[str, Callable[[SampleScore], float]] = {
        "eqs": lambda s: float(s.eqs),
        "schema_valid": lambda s: float(s.schema_valid),
        "json_valid": lambda s: float(s.json_valid),
        "exact_match": lambda s: float(s.exact_match),
        "predicted": lambda s: float(s.counts.predicted),
        "expected": lambda s: float(s.counts.expected),
        "typed": lambda s: float(s.counts.typed),
        "type_correct": lambda s: float(s.counts.type_correct),
        "obs_spurious": lambda s: float(s.observed.spurious),
        "obs_predicted": lambda s: float(s.observed.predicted),
        "obs_missed": lambda s: float(s.observed.missed),
        "obs_expected": lambda s: float(s.observed.expected),
        "precision_partial": lambda s: float(s.precision["partial"]),
        "recall_partial": lambda s: float(s.recall["partial"]),
        "type_accuracy": lambda s: float(s.type_accuracy),
        "hallucination_rate": lambda s: float(s.hallucination_rate),
        "omission_rate": lambda s: float(s.omission_rate),
        # EQS of 1 or 0 within rounding: the weighted sum of four floats is not always exact
        "perfect": lambda s: float(s.eqs >= 1.0 - EQS_TOLERANCE),
        "zero_score": lambda s: float(s.eqs <= EQS_TOLERANCE),
    }
    # whole-output scores, on the samples that have one (sum and count: their mean skips the others)
    for name in WHOLE_OUTPUT_SCORES:
        values[f"{name}_sum"] = partial(_extra_sum, name)
        values[f"{name}_n"] = partial(_extra_count, name)
    # ANLS*: absent from records written before it existed (such a run does not measure it)
    values["anls_star"] = lambda s: float(s.anls_star) if s.anls_star is not None else 0.0
    values["anls_star_n"] = lambda s: 1.0 if s.anls_star is not None else 0.0
    for mode in MODES:
        values[f"tp_{mode}"] = partial(_true_positives, mode)
        values[f"f1_{mode}"] = partial(_f1, mode)
    return values


def _extra_sum(name: str, score: SampleScore) -> float:
    value = score.extras.get(name)
    return float(value) if value is not None else 0.0


def _extra_count(name: str, score: SampleScore) -> float:
    return 1.0 if score.extras.get(name) is not None else 0.0


def _true_positives(mode: str, score: SampleScore) -> float:
    return float(score.counts.true_positives(mode))


def _f1(mode: str, score: SampleScore) -> float:
    return float(score.f1[mode])


ROW_VALUES = _row_values()


def sample_row(score: SampleScore) -> dict[str, float]:
    """Everything the resampled metrics need from one scored sample."""
    return {key: value(score) for key, value in ROW_VALUES.items()}


class Columns:
    """The rows of many scored samples as float columns, each built at its first use: what the resampled metrics
    read, without a dict of 30 numbers per sample (at 100,000 samples the rows were ~230 MB beside the records,
    the columns they use ~25 MB). Every function here that takes rows takes these too, with the same result."""

    def __init__(self, scores: Sequence[SampleScore]) -> None:
        self.scores = scores
        self._built: dict[str, np.ndarray] = {}

    def __len__(self) -> int:
        return len(self.scores)

    def column(self, key: str) -> np.ndarray:
        """One row key's values, sample by sample (``one``: all 1)."""
        found = self._built.get(key)
        if found is None:
            if key == "one":
                found = np.ones(len(self.scores), dtype=np.float64)
            else:
                value = ROW_VALUES[key]
                found = np.fromiter((value(s) for s in self.scores), dtype=np.float64, count=len(self.scores))
            self._built[key] = found
        return found

    def matrix(self, keys: Sequence[str]) -> np.ndarray:
        """The ``(n, len(keys))`` matrix :func:`row_matrix` makes of the same samples' rows. Each column built
        so far moves into it (a later :meth:`column` builds it again, equal): the bootstrap that reads the matrix
        would otherwise run beside a second copy of it (about 20 MB at 100,000 samples)."""
        matrix = np.empty((len(self.scores), len(keys)), dtype=np.float64)
        for i, key in enumerate(keys):
            matrix[:, i] = self.column(key)
            self._built.pop(key, None)
        return matrix

    def any(self, key: str) -> bool:
        """True when some sample's ``key`` is nonzero (a row's truth value of it)."""
        return key in ROW_VALUES and bool(np.any(self.column(key) != 0.0))


Rows = Sequence[Row] | Columns


def _matrix(rows: Rows, keys: Sequence[str]) -> np.ndarray:
    return rows.matrix(keys) if isinstance(rows, Columns) else row_matrix(rows, keys)


def complete_row(row: dict[str, float]) -> dict[str, float]:
    """A row saved by an earlier version (a baseline file) with the keys added since filled in: the perfect and
    zero-score flags follow from its EQS; whole-output scores and ANLS* were not measured."""
    if "eqs" in row:
        row.setdefault("perfect", float(row["eqs"] >= 1.0 - EQS_TOLERANCE))
        row.setdefault("zero_score", float(row["eqs"] <= EQS_TOLERANCE))
    for name in WHOLE_OUTPUT_SCORES:
        row.setdefault(f"{name}_sum", 0.0)
        row.setdefault(f"{name}_n", 0.0)
    row.setdefault("anls_star", 0.0)
    row.setdefault("anls_star_n", 0.0)
    return row


Metrics = Mapping[str, catalog.Metric]  # by name: the catalog's resampled metrics, or a track's figures


def measured(rows: Rows, names: Iterable[str], metrics: Metrics | None = None) -> list[str]:
    """The metrics among ``names`` that ``rows`` measured: a metric counted only on some samples
    (``measured_by``, e.g. the judge's grade) is left out when no sample has it. ``metrics``: where the names are
    defined (the catalog's by default; a track's figures, :mod:`.track_metrics`)."""
    # a track's rows (a baseline saved before one of its figures was kept) may lack a figure's counts: not measured
    complete = metrics is None
    metrics = catalog.resampled() if metrics is None else metrics
    out = []
    for name in names:
        metric = metrics[name]
        needed = (*metric.columns, metric.per_sample or metric.columns[0])
        if not complete and not isinstance(rows, Columns) and not all(key in row for row in rows for key in needed):
            continue
        counter = metric.measured_by
        if counter is None or (
            rows.any(counter) if isinstance(rows, Columns) else any(row.get(counter) for row in rows)
        ):
            out.append(name)
    return out


def resolve_metric(name: str) -> catalog.Metric:
    """A metric by its metrics.json name or a short alias (``eqs``, ``f1_partial``, ...)."""
    metrics, aliases = catalog.resampled(), catalog.aliases()
    key = name.strip().lower().replace("-", "_")
    key = aliases.get(key, key)
    if key not in metrics:
        known = ", ".join(sorted({*metrics, *aliases}))
        raise KeyError(f"unknown metric {name!r}; known: {known}")
    return metrics[key]


def _columns(names: Iterable[str], metrics: Metrics | None = None) -> tuple[str, ...]:
    metrics = catalog.resampled() if metrics is None else metrics
    keys = {"one": None}
    for name in names:
        keys.update(dict.fromkeys(metrics[name].columns))
    return tuple(keys)


def row_matrix(rows: Sequence[Row], keys: Sequence[str]) -> np.ndarray:
    """An ``(n, len(keys))`` matrix; the key ``one`` is 1 for every sample."""
    return np.array([[1.0 if key == "one" else row[key] for key in keys] for row in rows], dtype=np.float64).reshape(
        len(rows), len(keys)
    )


def metric_values(rows: Rows, names: Iterable[str] | None = None, metrics: Metrics | None = None) -> dict[str, float]:
    """Point values of metrics over ``rows`` (equal to :func:`.metrics.model_metrics`' values)."""
    names = list(catalog.names("headline") if names is None else names)
    if not rows:
        return {}
    metrics = catalog.resampled() if metrics is None else metrics
    keys = _columns(names, metrics)
    matrix = _matrix(rows, keys)
    sums = {key: math.fsum(matrix[:, i]) for i, key in enumerate(keys)}
    with np.errstate(divide="ignore", invalid="ignore"):
        return {name: float(metrics[name].compute(sums)) for name in names}  # type: ignore[misc]  # resampled: compute is set


def confidence_intervals(
    rows: Rows, options: StatsOptions, names: Iterable[str] | None = None
) -> dict[str, stats.Interval]:
    """Percentile bootstrap CIs of metrics over ``rows``, all from one seeded resampling."""
    names = list(catalog.names("headline") if names is None else names)
    if not rows:
        return {}
    metrics = catalog.resampled()
    keys = _columns(names)
    return stats.bootstrap_intervals(
        _matrix(rows, keys),
        {name: metrics[name].statistic(keys) for name in names},
        confidence=options.confidence,
        resamples=options.resamples,
        rng=options.seed,
    )


@dataclass(frozen=True)
class MetricDelta:
    """One metric of two paired runs: values, difference, its CI and the paired tests."""

    metric: str
    a: float
    b: float
    delta: float  # a - b
    ci: stats.Interval
    p_value: float | None
    test: str
    tests: dict[str, dict[str, Any]]
    significant: bool
    n: int
    higher_is_better: bool

    @property
    def worsening(self) -> float:
        """How much worse a is than b (positive = worse), whatever the metric's direction."""
        return -self.delta if self.higher_is_better else self.delta

    def as_dict(self) -> dict[str, Any]:
        return {
            "a": self.a,
            "b": self.b,
            "delta": self.delta,
            "ci": self.ci.as_dict(),
            "p_value": self.p_value,
            "test": self.test,
            "significant": self.significant,
            "tests": self.tests,
            "n_shared": self.n,
            "higher_is_better": self.higher_is_better,
        }


def paired_deltas(
    rows_a: Sequence[Row],
    rows_b: Sequence[Row],
    options: StatsOptions,
    names: Iterable[str],
    *,
    rng: Any = None,
    metrics: Metrics | None = None,
) -> dict[str, MetricDelta]:
    """Compare two runs on the same samples (row i of each is one sample), metric by metric.

    The CI of ``a - b`` is a paired bootstrap; significance comes from the test
    ``options.test`` names: ``permutation`` recomputes the metric itself under random
    swaps of each sample's two outputs; ``ttest`` and ``wilcoxon`` test the per-sample
    values (for micro metrics, each sample's own F1/rate). ``metrics``: where the names are defined (the catalog's
    by default; a track's figures).
    """
    names = list(names)
    metrics = catalog.resampled() if metrics is None else metrics
    keys = _columns(names, metrics)
    generator = stats.make_rng(options.seed if rng is None else rng)
    a, b = row_matrix(rows_a, keys), row_matrix(rows_b, keys)
    statistics = {name: metrics[name].statistic(keys) for name in names}
    intervals = stats.paired_bootstrap_intervals(
        a, b, statistics, confidence=options.confidence, resamples=options.resamples, rng=generator
    )
    permutations = stats.paired_permutation_tests(a, b, statistics, resamples=options.resamples, rng=generator)
    values_a, values_b = metric_values(rows_a, names, metrics), metric_values(rows_b, names, metrics)
    out = {}
    for name in names:
        metric = metrics[name]
        column = metric.per_sample
        assert column is not None, f"{name} is resampled, so it names its per-sample column"
        x = [row[column] for row in rows_a]
        y = [row[column] for row in rows_b]
        tests = {
            "permutation": permutations[name].as_dict(),
            "ttest": stats.paired_ttest(x, y).as_dict(),
            "wilcoxon": stats.wilcoxon_test(x, y).as_dict(),
        }
        p_value = tests[options.test]["p_value"]
        out[name] = MetricDelta(
            metric=name,
            a=values_a[name],
            b=values_b[name],
            delta=values_a[name] - values_b[name],
            ci=intervals[name],
            p_value=p_value,
            test=options.test,
            tests=tests,
            significant=p_value is not None and p_value < options.alpha,
            n=len(rows_a),
            higher_is_better=metric.higher_is_better,
        )
    return out


def pair_rows(rows_a: Mapping[str, Row], rows_b: Mapping[str, Row]) -> tuple[list[str], list[Row], list[Row]]:
    """Rows of the sample ids both runs scored, in id order."""
    shared = sorted(set(rows_a) & set(rows_b))
    return shared, [rows_a[i] for i in shared], [rows_b[i] for i in shared]


def confidence_interval_section(records: Sequence[Any], options: Any) -> dict[str, Any]:
    """Metrics section: ``confidence_intervals`` of every resampled metric of one model."""
    rows = Columns([record.score for record in records])
    intervals = confidence_intervals(rows, options.statistics, measured(rows, catalog.resampled()))
    return {"confidence_intervals": {name: interval.as_dict() for name, interval in intervals.items()}}
