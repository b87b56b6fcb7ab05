"""The sections of metrics.json that the reports read: the run-level sections (a comparison with a baseline, the
pairwise model comparison, what the whole-output scores cost, a saved baseline) and the sections of a model's
metrics that only some runs have (subsets and groups, calibration, consistency, repeats, confidence intervals).

Each section is a ``TypedDict`` whose ``Required`` keys are the keys its producer always writes; :func:`fill`
(run by :func:`.rundoc.complete` on every document a reader gets) gives a section present in a hand-made or
older document the keys it lacks, drops one that is not an object, and leaves a document this package made as it
is, so a reader uses key access a type checker sees. A key that is absent in ordinary runs stays ``NotRequired``
and is read with ``.get``. A model's section stays a plain mapping (its metrics are the catalog's to decide):
:func:`model_sections` is its typed view.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypedDict, cast

if TYPE_CHECKING:  # the annotations are strings (Python 3.10 has no NotRequired)
    from typing_extensions import NotRequired, Required

__all__ = [
    "BaselineComparison",
    "BaselineRef",
    "BaselineSaved",
    "Buckets",
    "Calibration",
    "CalibrationBin",
    "CheckDict",
    "Comparison",
    "Consistency",
    "FieldDelta",
    "GroupSummary",
    "IntervalDict",
    "MetricDelta",
    "ModelComparison",
    "ModelSections",
    "PairDict",
    "Pairing",
    "RankEntry",
    "RegressedSample",
    "Repeats",
    "RunSections",
    "WholeOutputCost",
    "fill",
    "model_sections",
]


class IntervalDict(TypedDict, total=False):
    """A confidence interval (``Interval.as_dict()``, analysis/stats.py); ``low`` and ``high`` None when unknown."""

    value: float | None
    low: Required[float | None]
    high: Required[float | None]
    confidence: Required[float]
    method: str
    resamples: int
    n: int


class MetricDelta(TypedDict, total=False):
    """One metric compared on paired samples (``MetricDelta.as_dict()``, analysis/resampled.py): ``a`` current
    (or the first model), ``b`` baseline (or the second)."""

    a: Required[float | None]
    b: Required[float | None]
    delta: Required[float | None]
    ci: Required[IntervalDict]
    p_value: Required[float | None]
    test: str
    significant: Required[bool | None]
    tests: dict[str, Any]
    n_shared: int
    higher_is_better: Required[bool | None]  # None only in a document that did not say: the catalog decides


class FieldDelta(TypedDict):
    """One field's F1 (partial) against the baseline; ``delta`` None when one side never saw the field."""

    baseline: float | None
    current: float | None
    delta: float | None
    expected: int | float | None


class Pairing(TypedDict, total=False):
    """How the baseline's samples pair with this run's (``Pairing.as_dict()``, gating/pairing.py)."""

    checked: Required[bool]  # False: no content hashes in the baseline, paired by id alone
    baseline_samples: Required[int]
    unchanged: Required[int]
    changed: Required[int]
    added: Required[int]
    removed: Required[int]
    unchanged_fraction: float | None
    changed_samples: list[str]


class RegressedSample(TypedDict, total=False):
    """A sample that got worse against the baseline, with its field flips ``[path, before, after]``."""

    sample_id: Required[str | None]
    bucket: str
    baseline_eqs: Required[float | None]
    current_eqs: Required[float | None]
    eqs_delta: float | None
    baseline_passed: Required[bool | None]
    current_passed: Required[bool | None]
    field_flips: Required[list[list[Any]]]


class Buckets(TypedDict, total=False):
    """A model's samples by bucket against the baseline (``Buckets.as_dict()``, gating/buckets.py)."""

    eqs_delta: Required[float | None]  # the EQS drop past which a sample counts as regressed
    counts: Required[dict[str, int]]
    samples: dict[str, list[str]]
    regressions: Required[list[RegressedSample]]  # the worst first
    field_flips: Required[dict[str, int]]  # "before -> after": how many fields
    fields: dict[str, Any]


class CheckDict(TypedDict, total=False):
    """One ``--extractbench-compare-fail`` check (``CheckResult.as_dict()``, gating/regression.py)."""

    check: str
    outcome: str
    metric: str | None
    model: str | None
    scope: str | None
    failed: Required[bool]
    exceeds_margin: bool | None
    allowed_drop: float | None
    message: Required[str]
    baseline: float | None  # this and the rest: only when the metric was measured on both sides
    current: float | None
    delta: float | None
    ci: IntervalDict
    p_value: float | None
    test: str
    significant: bool | None
    n_shared: int


class ModelComparison(TypedDict, total=False):
    """One model against the baseline (``ModelComparison.as_dict()``, gating/regression.py)."""

    baseline_model: Required[str | None]  # None only in a document that did not say: the model itself
    n_shared: Required[int]
    only_current: int
    only_baseline: int
    n_changed: int
    samples: dict[str, Any]
    paired_on: Required[str]
    verdict: Required[str]
    baseline_accuracy: float | None
    candidate_accuracy: float | None
    delta: float | None
    metrics: Required[dict[str, MetricDelta]]
    per_field_deltas: Required[dict[str, FieldDelta]]
    checks: Required[list[CheckDict]]
    buckets: NotRequired[Buckets]  # not in comparisons made before buckets were kept
    repeats: NotRequired[dict[str, Any]]  # pass@k against a baseline: only when both runs repeated samples


class BaselineRef(TypedDict, total=False):
    """Which baseline a run was compared with."""

    name: Required[str]
    path: str
    created_at: Required[str | None]
    provenance: dict[str, Any]


class BaselineComparison(TypedDict, total=False):
    """metrics.json ``baseline_comparison``: the run against ``--extractbench-compare``'s baseline."""

    baseline: Required[BaselineRef]
    test: Required[str]
    alpha: Required[float | None]
    confidence: Required[float | None]
    notes: Required[list[str]]
    pairing: Required[Pairing | None]  # None: the baseline was not paired by content hash
    models: Required[dict[str, ModelComparison]]
    checks: Required[list[CheckDict]]
    passed: Required[bool | None]


class PairDict(TypedDict, total=False):
    """Two of a run's models on the samples both scored (``comparison.pairwise``)."""

    a: Required[str]
    b: Required[str]
    n_shared: Required[int]
    only_in_a: int
    only_in_b: int
    note: NotRequired[str]  # only when they share no sample: then no metrics
    metrics: NotRequired[dict[str, MetricDelta]]


class RankEntry(TypedDict, total=False):
    """One model in ``comparison.eqs_ranking``, best first."""

    rank: Required[int]
    model: Required[str]
    extraction_quality_score: Required[float]
    ci_low: Required[float | None]
    ci_high: Required[float | None]
    significantly_better_than_next: Required[bool | None]  # None: the last, or not tested


class Comparison(TypedDict, total=False):
    """metrics.json ``comparison``: a run's models against each other (analysis/comparison.py)."""

    models: Required[list[str]]
    metric: str
    test: str
    alpha: float
    confidence: float
    eqs_ranking: Required[list[RankEntry]]
    eqs_delta: dict[str, float]
    statistical_significance: dict[str, Any]
    pairwise: Required[dict[str, PairDict]]
    best_by_metric: dict[str, Any]
    pareto_frontier: Required[dict[str, dict[str, Any]]]
    win_rate_matrix: Required[dict[str, dict[str, float]]]  # a -> b -> share of shared samples a scores higher
    win_rate_metric: str
    gap_rule: dict[str, Any]


class WholeOutputCost(TypedDict):
    """metrics.json ``whole_output_cost``: what the embeddings and the judge took (scoring/whole_output.py)."""

    embedded_texts: int
    embedding_seconds: float
    embedding_errors: int
    judge_requests: int
    judge_prompt_tokens: int
    judge_completion_tokens: int
    judge_seconds: float
    judge_errors: int


class BaselineSaved(TypedDict):
    """metrics.json ``baseline_saved``: the baseline ``--extractbench-save`` wrote."""

    name: str
    path: str


class RunSections(TypedDict, total=False):
    """The run-level sections of metrics.json, each only in the runs that made it."""

    baseline_comparison: BaselineComparison
    comparison: Comparison
    whole_output_cost: WholeOutputCost
    baseline_saved: BaselineSaved


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


def model_sections(metrics: Mapping[str, Any]) -> ModelSections:
    """The typed view of a model's section of a document that went through :func:`fill`."""
    return cast("ModelSections", metrics)


# -- the filler ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Shape:
    """What a section needs: the defaults of its required keys, and the shapes of what it nests (one object, a
    mapping of objects, or a list of objects under a key). A nested key with a default is required: a malformed
    value becomes the default; one without is dropped."""

    defaults: Mapping[str, Any] = field(default_factory=dict)
    objects: Mapping[str, _Shape] = field(default_factory=dict)
    maps: Mapping[str, _Shape] = field(default_factory=dict)
    lists: Mapping[str, _Shape] = field(default_factory=dict)


_INTERVAL = _Shape({"low": None, "high": None, "confidence": 0.95})
_DELTA = _Shape(
    {
        "a": None,
        "b": None,
        "delta": None,
        "ci": {},
        "p_value": None,
        "significant": None,
        "higher_is_better": None,
    },
    objects={"ci": _INTERVAL},
)
_FIELD_DELTA = _Shape({"baseline": None, "current": None, "delta": None, "expected": None})
_PAIRING = _Shape({"checked": False, "baseline_samples": 0, "unchanged": 0, "changed": 0, "added": 0, "removed": 0})
_REGRESSED = _Shape(
    {
        "sample_id": None,
        "baseline_eqs": None,
        "current_eqs": None,
        "baseline_passed": None,
        "current_passed": None,
        "field_flips": [],
    }
)
_BUCKETS = _Shape(
    {"eqs_delta": None, "counts": {}, "regressions": [], "field_flips": {}}, lists={"regressions": _REGRESSED}
)
_CHECK = _Shape({"failed": False, "message": ""}, objects={"ci": _INTERVAL})
_MODEL_COMPARISON = _Shape(
    {
        "baseline_model": None,
        "n_shared": 0,
        "paired_on": "",
        "verdict": "-",
        "metrics": {},
        "per_field_deltas": {},
        "checks": [],
    },
    objects={"buckets": _BUCKETS},
    maps={"metrics": _DELTA, "per_field_deltas": _FIELD_DELTA},
    lists={"checks": _CHECK},
)
_BASELINE_COMPARISON = _Shape(
    {
        "baseline": {},
        "test": "permutation",
        "alpha": None,
        "confidence": None,
        "notes": [],
        "pairing": None,
        "models": {},
        "checks": [],
        "passed": None,
    },
    objects={"baseline": _Shape({"name": "-", "created_at": None}), "pairing": _PAIRING},
    maps={"models": _MODEL_COMPARISON},
    lists={"checks": _CHECK},
)
_RANK = _Shape(
    {
        "rank": 0,
        "model": "",
        "extraction_quality_score": 0.0,
        "ci_low": None,
        "ci_high": None,
        "significantly_better_than_next": None,
    }
)
_COMPARISON = _Shape(
    {"models": [], "eqs_ranking": [], "pairwise": {}, "pareto_frontier": {}, "win_rate_matrix": {}},
    maps={"pairwise": _Shape({"a": "", "b": "", "n_shared": 0}, maps={"metrics": _DELTA})},
    lists={"eqs_ranking": _RANK},
)
_WHOLE_OUTPUT_COST = _Shape(
    {
        "embedded_texts": 0,
        "embedding_seconds": 0.0,
        "embedding_errors": 0,
        "judge_requests": 0,
        "judge_prompt_tokens": 0,
        "judge_completion_tokens": 0,
        "judge_seconds": 0.0,
        "judge_errors": 0,
    }
)
_RUN_SECTIONS = _Shape(
    objects={
        "baseline_comparison": _BASELINE_COMPARISON,
        "comparison": _COMPARISON,
        "whole_output_cost": _WHOLE_OUTPUT_COST,
        "baseline_saved": _Shape({"name": "", "path": ""}),
    }
)
_GROUP = _Shape({"count": 0, "aggregation": "mean"}, maps={"confidence_intervals": _INTERVAL})
_CALIBRATION = _Shape(
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
    lists={"bins": _Shape({"low": 0.0, "high": 0.0, "count": 0, "confidence": None, "accuracy": None, "gap": None})},
)
_CONSISTENCY = _Shape(
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
_REPEATS = _Shape(
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
_MODEL = _Shape(
    objects={
        "calibration": _CALIBRATION,
        "consistency": _CONSISTENCY,
        "repeats": _REPEATS,
        "subsets": _Shape(),  # the mapping itself: its entries are filled below
        "groups": _Shape(),
    },
    maps={"confidence_intervals": _INTERVAL},
)


def _copy(value: Any) -> Any:
    return value.copy() if type(value) in (dict, list) else value


def _filled(shape: _Shape, found: Any) -> dict[str, Any] | None:
    """``found`` with what ``shape`` requires, or None when it is not an object. Copies what it changes."""
    if not isinstance(found, Mapping):
        return None
    out = dict(found)
    for key, value in shape.defaults.items():
        if key not in out or (type(value) in (dict, list) and not isinstance(out[key], type(value))):
            out[key] = _copy(value)  # a container where the type says one: null or a number there reads as empty
    for key, inner in shape.objects.items():
        if key in out and not (out[key] is None and key in shape.defaults and shape.defaults[key] is None):
            _put(out, key, shape, _filled(inner, out[key]))
    for key, inner in shape.maps.items():
        if key in out:
            entries = out[key]
            _put(out, key, shape, _each(inner, entries.items()) if isinstance(entries, Mapping) else None)
    for key, inner in shape.lists.items():
        if key in out:
            entries = out[key]
            kept = _each(inner, enumerate(entries)) if isinstance(entries, list) else None
            _put(out, key, shape, None if kept is None else list(kept.values()))
    return out


def _each(shape: _Shape, items: Any) -> dict[Any, Any]:
    return {k: v for k, v in ((k, _filled(shape, v)) for k, v in items) if v is not None}


def _put(out: dict[str, Any], key: str, shape: _Shape, value: Any) -> None:
    if value is not None:
        out[key] = value
    elif key not in shape.defaults:
        del out[key]
    elif shape.defaults[key] is not None and key in shape.objects:
        out[key] = _filled(shape.objects[key], {})
    else:
        out[key] = _copy(shape.defaults[key])


def _model(found: dict[str, Any]) -> dict[str, Any]:
    out = _filled(_MODEL, found) or {}
    if "subsets" in out:
        out["subsets"] = _each(_GROUP, out["subsets"].items())
    if "groups" in out:
        out["groups"] = {
            name: _each(_GROUP, values.items()) for name, values in out["groups"].items() if isinstance(values, Mapping)
        }
    return out


def fill(document: dict[str, Any]) -> None:
    """Give the run-level sections of ``document`` and the sections of each of its models the keys their types
    require (in place on ``document``, whose ``models`` must be a dict; nested sections are copied, not changed).
    A model's section that is not an object reads as an empty one (:func:`.rundoc.read_metrics` refuses it)."""
    document.update(_filled(_RUN_SECTIONS, {k: document[k] for k in _RUN_SECTIONS.objects if k in document}) or {})
    for key in _RUN_SECTIONS.objects:
        if key in document and not isinstance(document[key], Mapping):
            del document[key]
    document["models"] = {
        model: _model(section if isinstance(section, dict) else {}) for model, section in document["models"].items()
    }
