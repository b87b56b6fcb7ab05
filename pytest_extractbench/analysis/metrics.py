"""Dataset-level metrics of one model: pure functions over sample records.

Aggregation (docs/metrics.md): micro for precision/recall/F1 (every field
weighs the same) and for field-level rates (type accuracy, hallucination,
omission), macro for per-sample EQS, means for sample-level rates (validity,
exact match). Macro and weighted variants of P/R/F1 are reported too.
Records are sorted before summing, so the result does not depend on the order
in which items finished (xdist).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from ..dataset.records import SampleRecord, records_by_model
from ..scoring import CATEGORIES, EQS_COMPONENTS, MODES, FieldCounts, ScoringOptions
from . import breakdowns, catalog, diagnostics, distributions, performance
from .bands import eqs_band, recommendation
from .comparison import comparison_section
from .resampled import EQS_TOLERANCE, Columns, confidence_interval_section, measured, metric_values
from .sample_extras import calibration_section, consistency_section, repeats_section

# Bins of the composite score of compared fields, low to high.
SCORE_BINS = ("very_poor", "poor", "fair", "good", "excellent")
SCORE_BIN_EDGES = (0.0, 0.40, 0.60, 0.80, 0.95, 1.0)

Section = Callable[[Sequence[SampleRecord], ScoringOptions], dict[str, Any]]
# Run-level sections see every model at once (comparisons); their keys go to the top of metrics.json.
RunSection = Callable[[dict[str, dict[str, Any]], Sequence[SampleRecord], ScoringOptions], dict[str, Any]]


def _mean(values: Iterable[float]) -> float:
    values = list(values)
    return math.fsum(values) / len(values) if values else 0.0


def _ratio(numerator: float, denominator: float) -> float:
    return numerator / denominator if denominator else 0.0


def accuracy_section(records: Sequence[SampleRecord], options: ScoringOptions) -> dict[str, Any]:
    """Headline, core and diagnostic accuracy metrics."""
    return _accuracy(records, headline_only=False)


def headline_accuracy(records: Sequence[SampleRecord]) -> dict[str, Any]:
    """The headline keys of :func:`accuracy_section` alone (those of :data:`BIN_METRICS`, among others), with the
    same numbers: a complexity bin shows only these, and the diagnostics walk every field again."""
    return _accuracy(records, headline_only=True)


def _accuracy(records: Sequence[SampleRecord], *, headline_only: bool) -> dict[str, Any]:
    full = not headline_only  # the keys below in the order metrics.json shows them
    scores = [r.score for r in records]
    credited = sum((s.counts for s in scores), FieldCounts())
    observed = sum((s.observed for s in scores), FieldCounts())
    out: dict[str, Any] = {"num_samples": len(scores)}

    out["extraction_quality_score"] = _mean(s.eqs for s in scores)
    if full:  # one component at a time: no map of four per sample held for the whole run at once
        out["eqs_components"] = {name: _mean(s.eqs_components()[name] for s in scores) for name in EQS_COMPONENTS}
    out["schema_validity_rate"] = _mean(s.schema_valid for s in scores)
    if full:
        out["json_valid_rate"] = _mean(s.json_valid for s in scores)
    out["exact_match_rate"] = _mean(s.exact_match for s in scores)
    valid = [s for s in scores if s.valid]
    if full:
        out["exact_match_rate_valid"] = _mean(s.exact_match for s in valid)

    aggregation: dict[str, dict[str, float]] = {"micro": {}, "macro": {}, "weighted": {}}
    weights = [s.observed.expected for s in scores] if full else []
    for mode in MODES:
        p, r, f = credited.precision_recall_f1(mode)
        out[f"field_precision_{mode}"], out[f"field_recall_{mode}"], out[f"field_f1_{mode}"] = p, r, f
        if headline_only:
            continue
        aggregation["micro"].update({f"precision_{mode}": p, f"recall_{mode}": r, f"f1_{mode}": f})
        for metric, per_sample in (("precision", "precision"), ("recall", "recall"), ("f1", "f1")):
            values = [getattr(s, per_sample)[mode] for s in scores]
            aggregation["macro"][f"{metric}_{mode}"] = _mean(values)
            total = sum(weights)
            aggregation["weighted"][f"{metric}_{mode}"] = (
                math.fsum(v * w for v, w in zip(values, weights)) / total if total else _mean(values)
            )
    if full:
        out["aggregation"] = aggregation

    out["type_accuracy"] = _ratio(credited.type_correct, credited.typed) if credited.typed else (1.0 if valid else 0.0)
    out["hallucination_rate"] = _ratio(observed.spurious, observed.predicted)
    out["field_omission_rate"] = _ratio(observed.missed, observed.expected)
    if headline_only:
        return out

    categories = {
        "exact": credited.exact,
        "partial": credited.partial,
        "incorrect": credited.incorrect,
        "missed": credited.missed,
        "spurious": credited.spurious,
    }
    total_fields = sum(categories.values())
    out["match_categories"] = categories
    out["match_category_distribution"] = {k: _ratio(v, total_fields) for k, v in categories.items()}
    out["match_categories_lenient"] = {
        "exact": credited.exact,
        "partial": credited.partial_lenient,
        "incorrect": credited.compared - credited.exact - credited.partial_lenient,
        "missed": credited.missed,
        "spurious": credited.spurious,
    }
    out["field_counts"] = {
        "expected": observed.expected,
        "predicted": observed.predicted,
        "compared": observed.compared,
    }
    out["eqs_distribution"] = eqs_distribution([s.eqs for s in scores])
    out["type_confusion"] = type_confusion(records)
    out["composite_score_distribution"] = composite_score_distribution(records)
    out["invalid_samples"] = [
        {"sample_id": r.sample_id, "reason": r.score.parse_error or "; ".join(r.score.validation_errors[:3])}
        for r in records
        if not r.score.valid
    ]
    out["failed_samples"] = [r.sample_id for r in records if not r.passed]
    errored = [r.sample_id for r in records if getattr(r, "scoring_error", None)]
    if errored:  # samples whose scoring raised or ran out of time (scored as invalid output)
        out["scoring_errors"] = errored
    return out


def eqs_distribution(values: Sequence[float]) -> dict[str, Any]:
    """Min, max and median of the per-sample EQS, and how many samples scored exactly 1 and 0.

    The median is the usual one (the mean of the two middle values for an even count), not the upper
    middle value some tools report."""
    if not values:
        return {"min": None, "max": None, "median": None, "perfect_samples": 0, "zero_samples": 0}
    array = np.asarray(values, dtype=float)
    return {
        "min": float(array.min()),
        "max": float(array.max()),
        "median": float(np.median(array)),
        "perfect_samples": int(np.count_nonzero(array >= 1.0 - EQS_TOLERANCE)),
        "zero_samples": int(np.count_nonzero(array <= EQS_TOLERANCE)),
    }


def type_confusion(records: Sequence[SampleRecord]) -> dict[str, dict[str, int]]:
    """Expected type -> predicted type -> count, over fields that have both."""
    pairs: Counter[tuple[str, str]] = Counter(
        (field.expected_type, field.predicted_type)
        for record in records
        for field in record.score.fields
        if field.expected_type is not None and field.predicted_type is not None
    )
    matrix: dict[str, dict[str, int]] = {}
    for (expected, predicted), count in sorted(pairs.items()):
        matrix.setdefault(expected, {})[predicted] = count
    return matrix


def composite_score_distribution(records: Sequence[SampleRecord]) -> dict[str, int]:
    """How many compared fields fall in each quality bin (docs/metrics.md)."""
    values = [f.score for r in records for f in r.score.fields if f.category in CATEGORIES[:3]]
    counts, _ = np.histogram(np.asarray(values, dtype=float), bins=SCORE_BIN_EDGES)
    return {name: int(n) for name, n in zip(SCORE_BINS, counts)}


# --- per complexity bin ---
BIN_METRICS = (
    "extraction_quality_score",
    "schema_validity_rate",
    "field_f1_partial",
    "field_f1_strict",
    "field_precision_partial",
    "field_recall_partial",
    "field_precision_strict",
    "field_recall_strict",
    "exact_match_rate",
    "type_accuracy",
    "hallucination_rate",
    "field_omission_rate",
)


def complexity_bin_section(records: Sequence[SampleRecord], options: ScoringOptions) -> dict[str, Any]:
    """Binned performance: headline metrics of the simple, medium and complex samples."""
    from ..dataset.complexity import BINS

    grouped: dict[str, list[SampleRecord]] = {name: [] for name in BINS}
    for record in records:
        name = (record.meta.get("complexity") or {}).get("complexity_bin")
        if name in grouped:
            grouped[name].append(record)
    out: dict[str, Any] = {}
    for name, found in grouped.items():
        entry: dict[str, Any] = {"num_samples": len(found)}
        if found:
            metrics = headline_accuracy(found)
            entry.update({key: metrics[key] for key in BIN_METRICS})
            latencies = [r.response.get("latency_s") for r in found]
            timed = [x for x in latencies if isinstance(x, (int, float)) and not isinstance(x, bool)]
            entry["mean_latency_s"] = _mean(timed) if timed else None
        out[name] = entry
    return {"metrics_by_complexity_bin": out}


# Each section adds its keys to a model's metrics; later issues add performance,
# diagnostics and statistics sections here.
SECTIONS: tuple[Section, ...] = (
    accuracy_section,
    confidence_interval_section,
    diagnostics.hallucination_section,
    diagnostics.error_pattern_section,
    diagnostics.copied_example_section,
    breakdowns.breakdown_section,
    breakdowns.omission_section,
    breakdowns.field_score_section,
    breakdowns.anls_star_field_section,
    distributions.string_similarity_section,
    distributions.complexity_correlation_section,
    performance.performance_section,  # the session adds the cost once prices are known
    # present only with logprobs / --extractbench-repeats
    calibration_section,
    consistency_section,
    repeats_section,
    complexity_bin_section,
)


def model_metrics(records: Sequence[SampleRecord], options: ScoringOptions) -> dict[str, Any]:
    """All metrics of one model's records."""
    ordered = sorted(records, key=lambda r: r.sort_key)
    out: dict[str, Any] = {}
    for section in SECTIONS:
        found = section(ordered, options)
        # a later section's CIs (pass@k over repeats) join the resampled ones
        intervals = found.pop("confidence_intervals", None)
        out.update(found)
        if intervals is not None:
            out.setdefault("confidence_intervals", {}).update(intervals)
    # a catalog metric that no section computes gets its point value from the per-sample rows
    missing = [name for name in catalog.resampled() if name not in out]
    if missing and ordered:
        rows = Columns([r.score for r in ordered])
        out.update(metric_values(rows, measured(rows, missing)))
    out["eqs_band"] = eqs_band(out["extraction_quality_score"])
    out["recommendation"] = recommendation(out["extraction_quality_score"], out["hallucination_rate"])
    return out


def metrics_by_model(records: Iterable[SampleRecord], options: ScoringOptions) -> dict[str, dict[str, Any]]:
    """``{model: metrics}`` in model-name order."""
    grouped = records_by_model(records)
    return {model: model_metrics(grouped[model], options) for model in sorted(grouped)}


# Each run section adds top-level keys to metrics.json (e.g. "comparison").
RUN_SECTIONS: tuple[RunSection, ...] = (comparison_section,)


def run_level_metrics(
    by_model: dict[str, dict[str, Any]], records: Sequence[SampleRecord], options: ScoringOptions
) -> dict[str, Any]:
    """Metrics that span models, from every run section."""
    ordered = sorted(records, key=lambda r: r.sort_key)
    out: dict[str, Any] = {}
    for section in RUN_SECTIONS:
        out.update(section(by_model, ordered, options))
    return out
