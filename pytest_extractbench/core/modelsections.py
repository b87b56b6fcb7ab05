"""The sections of a model's metrics in metrics.json that the reports read by key.

A model's section stays a plain mapping (its metrics are the catalog's to decide, read by name); the sections
some runs have (subsets and groups, calibration, consistency over repeats, pass counts, confidence intervals) and
the sections every model of an extraction run has (performance, the SLA verdict, hallucinations, omissions, ...)
are typed here, with ``Required`` keys their producers always write, and :func:`fill_model` (run by
:func:`.rundoc.complete`) gives a section a hand-made or older document has, or on the extraction track lacks,
what its type requires. :func:`model_sections` and :func:`extraction_sections` are the typed views of a section
so filled.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypedDict, cast

from .sections import IntervalDict
from .shapes import Shape, each, filled

if TYPE_CHECKING:  # the annotations are strings (Python 3.10 has no NotRequired)
    from typing_extensions import NotRequired, Required

__all__ = [
    "Calibration",
    "CalibrationBin",
    "Consistency",
    "CopiedExamples",
    "EqsDistribution",
    "ExtractionSections",
    "GroupSummary",
    "Hallucinations",
    "LatencyStats",
    "ModelSections",
    "Omissions",
    "OmittedField",
    "Performance",
    "Reliability",
    "Repeats",
    "Sla",
    "Throughput",
    "extraction_sections",
    "fill_model",
    "model_sections",
]


class GroupSummary(TypedDict, total=False):
    """One subset or group of a model's samples (gating/subsets.py); an empty one has its count alone."""

    count: Required[int]
    aggregation: Required[str]
    score: NotRequired[float]
    metrics: NotRequired[dict[str, float]]
    confidence_intervals: NotRequired[dict[str, IntervalDict]]
    sample_ids: NotRequired[list[str]]


class CalibrationBin(TypedDict, total=False):
    low: Required[float]
    high: Required[float]
    midpoint: float
    count: Required[int]
    confidence: Required[float | None]
    accuracy: Required[float | None]
    gap: Required[float | None]


class Calibration(TypedDict, total=False):
    """A model's ``calibration`` (token logprobs): ECE, MCE, Brier and the reliability bins."""

    fields: Required[int]
    samples: Required[int]
    ece: Required[float | None]
    mce: Required[float | None]
    brier: Required[float | None]
    mean_confidence: Required[float | None]
    accuracy: Required[float | None]
    bins: Required[list[CalibrationBin]]


class Consistency(TypedDict, total=False):
    """A model's ``consistency`` over ``--extractbench-repeats`` runs of each sample."""

    samples: Required[int]
    runs_per_sample: Required[int | None]
    exact_match_consistency: Required[float | None]
    field_level_consistency: Required[float | None]
    value_variance: Required[float | None]
    fully_consistent_samples: Required[int | None]
    least_consistent_fields: Required[list[dict[str, Any]]]  # {"field", "agreement"}, least first


class Repeats(TypedDict, total=False):
    """A model's ``repeats``: pass counts over its runs, pass@j and pass^j, flaky samples and fields."""

    runs: Required[int | None]
    samples: Required[int]
    pass_counts: Required[dict[str, int]]  # passing runs -> samples
    pass_at: Required[dict[str, float]]
    pass_hat: Required[dict[str, float]]
    flaky_samples: Required[int]
    flaky_sample_list: Required[list[dict[str, Any]]]  # {"sample_id", "passed", "runs"}
    fields_compared: int
    flaky_fields: Required[list[dict[str, Any]]]  # {"field", "occurrences", "flipped", "rate", "transitions"}
    more_flaky_fields: Required[int]


class ModelSections(TypedDict, total=False):
    """The sections of a model's metrics that only some runs have, as :func:`fill` leaves them."""

    confidence_intervals: dict[str, IntervalDict]
    subsets: dict[str, GroupSummary]
    groups: dict[str, dict[str, GroupSummary]]  # field -> value -> summary
    calibration: Calibration
    consistency: Consistency
    repeats: Repeats
    pass_at_k: float
    pass_hat_k: float


class LatencyStats(TypedDict, total=False):
    """Milliseconds over the timed requests (``latency_stats``, analysis/performance.py); None when none was."""

    count: Required[int]
    min: Required[float | None]
    max: Required[float | None]
    mean: Required[float | None]
    std: float | None
    p50: Required[float | None]
    p95: Required[float | None]
    p99: Required[float | None]


class Reliability(TypedDict, total=False):
    """How the requests ended: rates of each outcome, errors by class (of the samples and of every attempt)."""

    measured: Required[bool]
    note: str | None
    success_rate: Required[float | None]
    parse_failure_rate: Required[float | None]
    schema_failure_rate: Required[float | None]
    timeout_rate: Required[float | None]
    retry_rate: Required[float | None]
    truncation_rate: Required[float | None]
    error_counts: Required[dict[str, int]]
    attempt_error_counts: Required[dict[str, int]]  # empty in documents written before attempts were counted


class Throughput(TypedDict, total=False):
    wall_time_s: float | None
    busy_time_s: float | None
    requests_per_s: Required[float | None]  # None: not measured, ``note`` says why
    samples_per_min: Required[float | None]
    tokens_per_s: Required[float | None]
    fields_per_s: Required[float | None]
    note: NotRequired[str]


class Performance(TypedDict, total=False):
    """A model's ``performance`` (analysis/performance.py): latency, throughput, tokens, cost, reliability."""

    measured: Required[bool]  # False: recorded predictions, nothing timed (``note`` says so)
    note: Required[str | None]
    requests: Required[dict[str, int]]
    latency_ms: Required[LatencyStats]  # the answering attempt
    end_to_end_ms: NotRequired[LatencyStats]  # every attempt and wait: not in documents written before it was
    attempt_latency_ms: LatencyStats
    latency_breakdown: Required[dict[str, Any]]
    latency_correlation: dict[str, Any]
    sla_compliance: dict[str, Any]
    throughput: Required[Throughput]
    tokens: Required[dict[str, Any]]
    cost: Required[dict[str, Any]]
    reliability: Required[Reliability]
    retried_samples: Required[list[dict[str, Any]]]  # {"sample_id", "attempts", "outcomes"}


class OmittedField(TypedDict):
    omission_rate: float
    missed: int
    total_occurrences: int


class Omissions(TypedDict, total=False):
    """A model's ``omission_analysis``: by field name, and omission rates by type, requiredness and depth."""

    by_field_name: Required[dict[str, OmittedField]]
    by_field_type: dict[str, float]
    by_required_vs_optional: dict[str, float]
    by_nesting_depth: dict[str, float]


class Hallucinations(TypedDict):
    """A model's ``hallucination_analysis``: spurious fields by type and by severity."""

    total: int
    by_type: dict[str, int]
    severity: dict[str, int]  # level -> count; a level no field reached is absent


class EqsDistribution(TypedDict):
    """A model's ``eqs_distribution``: the spread of per-sample EQS (None without samples)."""

    min: float | None
    max: float | None
    median: float | None
    perfect_samples: int
    zero_samples: int


class CopiedExamples(TypedDict):
    """A model's ``copied_examples``: answers equal to an example value of the schema."""

    total: int
    samples: int
    by_field: dict[str, int]


class Sla(TypedDict):
    """A model's ``sla``: the tier it was held to, whether it passed, each check."""

    tier: str | None  # None only in a document that did not say
    passed: bool | None
    checks: list[dict[str, Any]]


class ExtractionSections(ModelSections, total=False):
    """The sections every model of an extraction run has (besides the catalog's metrics, read by name)."""

    eqs_band: Required[str]
    recommendation: Required[str]
    performance: Required[Performance]
    sla: Required[Sla]
    hallucination_analysis: Required[Hallucinations]
    copied_examples: Required[CopiedExamples]
    error_patterns: Required[dict[str, dict[str, int]]]  # group (extraction_errors, type_errors, ...) -> error -> count
    top_field_errors: Required[list[dict[str, Any]]]  # {"field", "error", "count", "example"}, most first
    omission_analysis: Required[Omissions]
    field_scores_by_name: Required[dict[str, dict[str, Any]]]
    field_metrics_by_depth: Required[dict[str, dict[str, Any]]]
    metrics_by_complexity_bin: Required[dict[str, dict[str, Any]]]
    complexity_correlation: Required[dict[str, dict[str, Any]]]
    match_categories: Required[dict[str, int]]
    match_category_distribution: Required[dict[str, float]]
    eqs_distribution: Required[EqsDistribution]
    invalid_samples: Required[list[dict[str, Any]]]
    eqs_components: NotRequired[dict[str, float]]
    anls_star_by_field: NotRequired[dict[str, dict[str, Any]]]  # only when ANLS* was measured


def model_sections(metrics: Mapping[str, Any]) -> ModelSections:
    """The typed view of a model's section of a document that went through :func:`fill`."""
    return cast("ModelSections", metrics)


def extraction_sections(metrics: Mapping[str, Any]) -> ExtractionSections:
    """The typed view of a model's section of an extraction run's document that went through :func:`fill_model`."""
    return cast("ExtractionSections", metrics)


# -- the filler ------------------------------------------------------------------------------------------------

_INTERVAL = Shape({"low": None, "high": None, "confidence": 0.95})
_GROUP = Shape({"count": 0, "aggregation": "mean"}, maps={"confidence_intervals": _INTERVAL})
_CALIBRATION = Shape(
    {
        "fields": 0,
        "samples": 0,
        "ece": None,
        "mce": None,
        "brier": None,
        "mean_confidence": None,
        "accuracy": None,
        "bins": [],
    },
    lists={"bins": Shape({"low": 0.0, "high": 0.0, "count": 0, "confidence": None, "accuracy": None, "gap": None})},
)
_CONSISTENCY = Shape(
    {
        "samples": 0,
        "runs_per_sample": None,
        "exact_match_consistency": None,
        "field_level_consistency": None,
        "value_variance": None,
        "fully_consistent_samples": None,
        "least_consistent_fields": [],
    }
)
_REPEATS = Shape(
    {
        "runs": None,
        "samples": 0,
        "pass_counts": {},
        "pass_at": {},
        "pass_hat": {},
        "flaky_samples": 0,
        "flaky_sample_list": [],
        "flaky_fields": [],
        "more_flaky_fields": 0,
    }
)
_STATS = Shape({"count": 0, "min": None, "max": None, "mean": None, "p50": None, "p95": None, "p99": None})
_PERFORMANCE = Shape(
    {
        "measured": False,
        "note": None,
        "requests": {},
        "latency_ms": {},
        "latency_breakdown": {},
        "throughput": {},
        "tokens": {},
        "cost": {},
        "reliability": {},
        "retried_samples": [],
    },
    objects={
        "latency_ms": _STATS,
        "end_to_end_ms": _STATS,
        "throughput": Shape(
            {"requests_per_s": None, "samples_per_min": None, "tokens_per_s": None, "fields_per_s": None}
        ),
        "reliability": Shape(
            {
                "measured": False,
                "success_rate": None,
                "parse_failure_rate": None,
                "schema_failure_rate": None,
                "timeout_rate": None,
                "retry_rate": None,
                "truncation_rate": None,
                "error_counts": {},
                "attempt_error_counts": {},
            }
        ),
    },
)
_ERROR_GROUPS = ("extraction_errors", "type_errors", "structure_errors", "boundary_errors")
_EXTRACTION = Shape(
    {
        "eqs_band": "",
        "recommendation": "",
        "performance": {},
        "sla": {},
        "hallucination_analysis": {},
        "copied_examples": {},
        "error_patterns": {},
        "top_field_errors": [],
        "omission_analysis": {},
        "field_scores_by_name": {},
        "field_metrics_by_depth": {},
        "metrics_by_complexity_bin": {},
        "complexity_correlation": {},
        "match_categories": {},
        "match_category_distribution": {},
        "eqs_distribution": {},
        "invalid_samples": [],
    },
    objects={
        "performance": _PERFORMANCE,
        "sla": Shape({"tier": None, "passed": None, "checks": []}),
        "hallucination_analysis": Shape({"total": 0, "by_type": {}, "severity": {}}),
        "copied_examples": Shape({"total": 0, "samples": 0, "by_field": {}}),
        "eqs_distribution": Shape({"min": None, "max": None, "median": None, "perfect_samples": 0, "zero_samples": 0}),
        "error_patterns": Shape(dict.fromkeys(_ERROR_GROUPS, {})),
        "omission_analysis": Shape(
            {"by_field_name": {}},
            maps={"by_field_name": Shape({"omission_rate": 0.0, "missed": 0, "total_occurrences": 0})},
        ),
    },
)
_MODEL = Shape(
    objects={
        "calibration": _CALIBRATION,
        "consistency": _CONSISTENCY,
        "repeats": _REPEATS,
        "groups": Shape(),  # the mapping itself: its values' entries are filled below
    },
    maps={"confidence_intervals": _INTERVAL, "subsets": _GROUP},
)


def fill_model(found: Any, track: str) -> dict[str, Any]:
    """A model's section with the keys its present sections require, and on the extraction track the sections
    every model has (copied where it changes); one that is not an object reads as an empty one
    (:func:`.rundoc.read_metrics` refuses it)."""
    out = filled(_MODEL, found) or {}
    if track == "extraction":
        out = filled(_EXTRACTION, out) or {}
    if "groups" in out:
        out["groups"] = {
            name: each(_GROUP, values.items()) for name, values in out["groups"].items() if isinstance(values, Mapping)
        }
    return out
