"""Headline metrics rebuilt from per-sample rows: point values, bootstrap CIs and paired differences.

Samples are the unit of resampling. Each metric names the per-sample quantities
it is recomputed from and how (spec 4.5.3's aggregation): means of per-sample
values for EQS (macro), validity and exact match; micro ratios of summed field
counts for precision/recall/F1, type accuracy, hallucination and omission rates.
So the bootstrap CI of micro F1 is the spread of the micro F1 of resampled runs,
not of a mean of per-sample F1s, and the point values equal :mod:`.metrics`'.

A *row* is a flat dict of numbers per sample (:func:`sample_row`); baselines
store rows, so a stored run compares with a new one without re-scoring.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from . import stats
from ..scoring import MODES, SampleScore, StatsOptions

Row = Mapping[str, float]

# Row keys summed by some metric (besides the implicit "one" per sample).
ROW_KEYS = (
    "eqs", "schema_valid", "json_valid", "exact_match",
    "tp_strict", "tp_partial", "tp_lenient", "predicted", "expected", "typed", "type_correct",
    "obs_spurious", "obs_predicted", "obs_missed", "obs_expected",
    # per-sample values of the micro metrics: t-test, Wilcoxon and win rates use them
    "f1_strict", "f1_partial", "f1_lenient", "precision_partial", "recall_partial",
    "type_accuracy", "hallucination_rate", "omission_rate",
)  # fmt: skip


def sample_row(score: SampleScore) -> dict[str, float]:
    """Everything the resampled metrics need from one scored sample."""
    counts, observed = score.counts, score.observed
    row = {
        "eqs": float(score.eqs),
        "schema_valid": float(score.schema_valid),
        "json_valid": float(score.json_valid),
        "exact_match": float(score.exact_match),
        "predicted": float(counts.predicted),
        "expected": float(counts.expected),
        "typed": float(counts.typed),
        "type_correct": float(counts.type_correct),
        "obs_spurious": float(observed.spurious),
        "obs_predicted": float(observed.predicted),
        "obs_missed": float(observed.missed),
        "obs_expected": float(observed.expected),
        "precision_partial": float(score.precision["partial"]),
        "recall_partial": float(score.recall["partial"]),
        "type_accuracy": float(score.type_accuracy),
        "hallucination_rate": float(score.hallucination_rate),
        "omission_rate": float(score.omission_rate),
    }
    for mode in MODES:
        row[f"tp_{mode}"] = float(counts.true_positives(mode))
        row[f"f1_{mode}"] = float(score.f1[mode])
    return row


Sums = Mapping[str, Any]  # row key -> column sum (a float, or an array over resamples)


def _ratio(numerator: Any, denominator: Any) -> Any:
    return np.where(denominator > 0, numerator / np.where(denominator > 0, denominator, 1), 0.0)


def _prf(tp: Any, predicted: Any, expected: Any) -> tuple[Any, Any, Any]:
    # scoring.prf, vectorized: an empty denominator scores 1.0 only when the other side is empty too
    precision = np.where(predicted > 0, tp / np.where(predicted > 0, predicted, 1), np.where(expected > 0, 0.0, 1.0))
    recall = np.where(expected > 0, tp / np.where(expected > 0, expected, 1), np.where(predicted > 0, 0.0, 1.0))
    total = precision + recall
    return precision, recall, np.where(total > 0, 2 * precision * recall / np.where(total > 0, total, 1), 0.0)


def _mean(key: str) -> Callable[[Sums], Any]:
    return lambda s: s[key] / s["one"]


def _micro(part: int, mode: str) -> Callable[[Sums], Any]:
    return lambda s: _prf(s[f"tp_{mode}"], s["predicted"], s["expected"])[part]


def _type_accuracy(s: Sums) -> Any:
    # metrics.accuracy_section: no typed field at all scores 1.0 when some output was valid
    return np.where(s["typed"] > 0, _ratio(s["type_correct"], s["typed"]), np.where(s["schema_valid"] > 0, 1.0, 0.0))


@dataclass(frozen=True)
class ResampledMetric:
    """A metric of metrics.json, as a function of per-sample row sums."""

    name: str
    label: str
    columns: tuple[str, ...]
    compute: Callable[[Sums], Any]
    per_sample: str  # the row key holding this metric's per-sample value
    higher_is_better: bool = True
    aggregation: str = "micro"

    def statistic(self, keys: Sequence[str]) -> stats.Statistic:
        """The metric as a function of a sums array whose last axis follows ``keys``."""
        index = {key: i for i, key in enumerate(keys)}
        positions = {key: index[key] for key in ("one", *self.columns)}
        return lambda sums: self.compute({key: sums[..., i] for key, i in positions.items()})


METRICS: dict[str, ResampledMetric] = {
    m.name: m
    for m in (
        ResampledMetric("extraction_quality_score", "EQS", ("eqs",), _mean("eqs"), "eqs", aggregation="macro"),
        ResampledMetric("schema_validity_rate", "schema validity", ("schema_valid",), _mean("schema_valid"),
                        "schema_valid", aggregation="mean"),
        ResampledMetric("json_valid_rate", "JSON valid", ("json_valid",), _mean("json_valid"), "json_valid",
                        aggregation="mean"),
        ResampledMetric("exact_match_rate", "exact match", ("exact_match",), _mean("exact_match"), "exact_match",
                        aggregation="mean"),
        *(
            ResampledMetric(f"field_f1_{mode}", f"field F1 ({mode})", (f"tp_{mode}", "predicted", "expected"),
                            _micro(2, mode), f"f1_{mode}")
            for mode in MODES
        ),
        ResampledMetric("field_precision_partial", "field precision (partial)", ("tp_partial", "predicted", "expected"),
                        _micro(0, "partial"), "precision_partial"),
        ResampledMetric("field_recall_partial", "field recall (partial)", ("tp_partial", "predicted", "expected"),
                        _micro(1, "partial"), "recall_partial"),
        ResampledMetric("type_accuracy", "type accuracy", ("type_correct", "typed", "schema_valid"), _type_accuracy,
                        "type_accuracy"),
        ResampledMetric("hallucination_rate", "hallucination rate", ("obs_spurious", "obs_predicted"),
                        lambda s: _ratio(s["obs_spurious"], s["obs_predicted"]), "hallucination_rate",
                        higher_is_better=False),
        ResampledMetric("field_omission_rate", "omission rate", ("obs_missed", "obs_expected"),
                        lambda s: _ratio(s["obs_missed"], s["obs_expected"]), "omission_rate", higher_is_better=False),
    )
}  # fmt: skip

# The spec 4.5.1 headline metrics, in display order; they get CIs in every summary.
HEADLINE = (
    "extraction_quality_score",
    "schema_validity_rate",
    "field_f1_partial",
    "field_f1_strict",
    "field_f1_lenient",
    "exact_match_rate",
    "hallucination_rate",
)

ALIASES = {
    "eqs": "extraction_quality_score",
    "validity": "schema_validity_rate",
    "schema_validity": "schema_validity_rate",
    "json_valid": "json_valid_rate",
    "exact_match": "exact_match_rate",
    "f1": "field_f1_partial",
    "field_f1": "field_f1_partial",
    "f1_strict": "field_f1_strict",
    "f1_partial": "field_f1_partial",
    "f1_lenient": "field_f1_lenient",
    "precision": "field_precision_partial",
    "recall": "field_recall_partial",
    "hallucination": "hallucination_rate",
    "omission": "field_omission_rate",
    "omission_rate": "field_omission_rate",
}


def resolve_metric(name: str) -> ResampledMetric:
    """A metric by its metrics.json name or a short alias (``eqs``, ``f1_partial``, ...)."""
    key = name.strip().lower().replace("-", "_")
    key = ALIASES.get(key, key)
    if key not in METRICS:
        known = ", ".join(sorted({*METRICS, *ALIASES}))
        raise KeyError(f"unknown metric {name!r}; known: {known}")
    return METRICS[key]


def _columns(names: Iterable[str]) -> tuple[str, ...]:
    keys = {"one": None}
    for name in names:
        keys.update(dict.fromkeys(METRICS[name].columns))
    return tuple(keys)


def row_matrix(rows: Sequence[Row], keys: Sequence[str]) -> np.ndarray:
    """An ``(n, len(keys))`` matrix; the key ``one`` is 1 for every sample."""
    return np.array([[1.0 if key == "one" else row[key] for key in keys] for row in rows], dtype=np.float64).reshape(
        len(rows), len(keys)
    )


def metric_values(rows: Sequence[Row], names: Iterable[str] = HEADLINE) -> dict[str, float]:
    """Point values of metrics over ``rows`` (equal to :func:`.metrics.model_metrics`' values)."""
    names = list(names)
    if not rows:
        return {}
    keys = _columns(names)
    matrix = row_matrix(rows, keys)
    sums = {key: math.fsum(matrix[:, i]) for i, key in enumerate(keys)}
    with np.errstate(divide="ignore", invalid="ignore"):
        return {name: float(METRICS[name].compute(sums)) for name in names}


def confidence_intervals(
    rows: Sequence[Row], options: StatsOptions, names: Iterable[str] = HEADLINE
) -> dict[str, stats.Interval]:
    """Percentile bootstrap CIs of metrics over ``rows``, all from one seeded resampling."""
    names = list(names)
    if not rows:
        return {}
    keys = _columns(names)
    return stats.bootstrap_intervals(
        row_matrix(rows, keys),
        {name: METRICS[name].statistic(keys) for name in names},
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
    rows_a: Sequence[Row], rows_b: Sequence[Row], options: StatsOptions, names: Iterable[str], *, rng: Any = None
) -> dict[str, MetricDelta]:
    """Compare two runs on the same samples (row i of each is one sample), metric by metric.

    The CI of ``a - b`` is a paired bootstrap; significance comes from the test
    ``options.test`` names: ``permutation`` recomputes the metric itself under random
    swaps of each sample's two outputs; ``ttest`` and ``wilcoxon`` test the per-sample
    values (for micro metrics, each sample's own F1/rate).
    """
    names = list(names)
    keys = _columns(names)
    generator = stats.make_rng(options.seed if rng is None else rng)
    a, b = row_matrix(rows_a, keys), row_matrix(rows_b, keys)
    statistics = {name: METRICS[name].statistic(keys) for name in names}
    intervals = stats.paired_bootstrap_intervals(
        a, b, statistics, confidence=options.confidence, resamples=options.resamples, rng=generator
    )
    permutations = stats.paired_permutation_tests(a, b, statistics, resamples=options.resamples, rng=generator)
    values_a, values_b = metric_values(rows_a, names), metric_values(rows_b, names)
    out = {}
    for name in names:
        metric = METRICS[name]
        x = [row[metric.per_sample] for row in rows_a]
        y = [row[metric.per_sample] for row in rows_b]
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
    """Metrics section: ``confidence_intervals`` of every resampled metric of one model (spec 4.5.6)."""
    rows = [sample_row(record.score) for record in records]
    intervals = confidence_intervals(rows, options.statistics, METRICS)
    return {"confidence_intervals": {name: interval.as_dict() for name, interval in intervals.items()}}
