"""The run-level sections of metrics.json that the reports read: a comparison with a baseline, the pairwise model
comparison, what the whole-output scores cost, a saved baseline (a model's sections: :mod:`.modelsections`).

Each section is a ``TypedDict`` whose ``Required`` keys are the keys its producer always writes; :func:`fill`
(run by :func:`.rundoc.complete` on every document a reader gets) gives a section present in a hand-made or
older document the keys it lacks, drops one that is not an object, and leaves a document this package made as it
is, so a reader uses key access a type checker sees. A key that is absent in ordinary runs stays ``NotRequired``
and is read with ``.get``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypedDict

from .shapes import Shape, filled

if TYPE_CHECKING:  # the annotations are strings (Python 3.10 has no NotRequired)
    from typing_extensions import NotRequired, Required

__all__ = [
    "BaselineComparison",
    "BaselineRef",
    "BaselineSaved",
    "Buckets",
    "CheckDict",
    "Comparison",
    "FieldDelta",
    "IntervalDict",
    "MetricDelta",
    "ModelComparison",
    "PairDict",
    "Pairing",
    "RankEntry",
    "RegressedSample",
    "RunSections",
    "WholeOutputCost",
    "fill",
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
    verdict_metric: str  # what the verdict reads: EQS when absent, else a toolcall, generate or repair pass rate
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


# -- the filler ------------------------------------------------------------------------------------------------


_INTERVAL = Shape({"low": None, "high": None, "confidence": 0.95})
_DELTA = Shape(
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
_FIELD_DELTA = Shape({"baseline": None, "current": None, "delta": None, "expected": None})
_PAIRING = Shape({"checked": False, "baseline_samples": 0, "unchanged": 0, "changed": 0, "added": 0, "removed": 0})
_REGRESSED = Shape(
    {
        "sample_id": None,
        "baseline_eqs": None,
        "current_eqs": None,
        "baseline_passed": None,
        "current_passed": None,
        "field_flips": [],
    }
)
_BUCKETS = Shape(
    {"eqs_delta": None, "counts": {}, "regressions": [], "field_flips": {}}, lists={"regressions": _REGRESSED}
)
_CHECK = Shape({"failed": False, "message": ""}, objects={"ci": _INTERVAL})
_MODEL_COMPARISON = Shape(
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
_BASELINE_COMPARISON = Shape(
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
    objects={"baseline": Shape({"name": "-", "created_at": None}), "pairing": _PAIRING},
    maps={"models": _MODEL_COMPARISON},
    lists={"checks": _CHECK},
)
_RANK = Shape(
    {
        "rank": 0,
        "model": "",
        "extraction_quality_score": 0.0,
        "ci_low": None,
        "ci_high": None,
        "significantly_better_than_next": None,
    }
)
_COMPARISON = Shape(
    {"models": [], "eqs_ranking": [], "pairwise": {}, "pareto_frontier": {}, "win_rate_matrix": {}},
    maps={"pairwise": Shape({"a": "", "b": "", "n_shared": 0}, maps={"metrics": _DELTA})},
    lists={"eqs_ranking": _RANK},
)
_WHOLE_OUTPUT_COST = Shape(
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
_RUN_SECTIONS = Shape(
    objects={
        "baseline_comparison": _BASELINE_COMPARISON,
        "comparison": _COMPARISON,
        "whole_output_cost": _WHOLE_OUTPUT_COST,
        "baseline_saved": Shape({"name": "", "path": ""}),
    }
)


def fill(document: dict[str, Any]) -> None:
    """Give the run-level sections of ``document`` the keys their types require, in place on ``document`` (the
    sections themselves are copied, not changed); a section that is not an object is dropped."""
    document.update(filled(_RUN_SECTIONS, {k: document[k] for k in _RUN_SECTIONS.objects if k in document}) or {})
    for key in _RUN_SECTIONS.objects:
        if key in document and not isinstance(document[key], Mapping):
            del document[key]
