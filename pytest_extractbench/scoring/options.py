"""How fields are compared and runs summarized: every knob in one frozen value, recorded in metrics.json."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any


@dataclass(frozen=True)
class EqsWeights:
    """Weights of the Extraction Quality Score; they must sum to 1 so that EQS stays in [0, 1]."""

    validity: float = 0.15
    f1_partial: float = 0.50
    type_accuracy: float = 0.20
    no_hallucination: float = 0.15

    def __post_init__(self) -> None:
        values = (self.validity, self.f1_partial, self.type_accuracy, self.no_hallucination)
        if any(v < 0 for v in values) or not math.isclose(sum(values), 1.0, abs_tol=1e-9):
            raise ValueError(f"EQS weights must be non-negative and sum to 1, got {values}")


TESTS = ("permutation", "ttest", "wilcoxon")


@dataclass(frozen=True)
class StatsOptions:
    """How a run's numbers are turned into intervals and decisions: bootstrap CIs, the paired test that
    decides significance, and the EQS gap past which a smaller model is flagged."""

    resamples: int = 10_000  # bootstrap resamples and permutation-test swaps (the customary 10,000)
    confidence: float = 0.95
    seed: int = 0  # resampling is seeded: the same run gives the same intervals
    alpha: float = 0.05  # significance level of paired tests
    test: str = "permutation"  # the paired test that decides significance: one of TESTS
    # Flag a model trailing the reference (the "large" model) by more than this much EQS: past it, a
    # smaller model is not a drop-in replacement and fine-tuning is recommended.
    # No reference named: the model with the highest EQS is the reference.
    reference_model: str | None = None
    gap_threshold: float = 0.15

    def __post_init__(self) -> None:
        if self.resamples < 100:
            raise ValueError(f"resamples must be at least 100, got {self.resamples}")
        if not 0 < self.confidence < 1 or not 0 < self.alpha < 1:
            raise ValueError(f"confidence and alpha must be in (0, 1), got {self.confidence}, {self.alpha}")
        if self.test not in TESTS:
            raise ValueError(f"unknown test {self.test!r}; choose one of {', '.join(TESTS)}")
        if self.gap_threshold < 0:
            raise ValueError("gap_threshold must be >= 0")


@dataclass(frozen=True)
class ScoringOptions:
    """Field-matching rules, and in ``statistics`` how runs are summarized; defaults are docs/metrics.md's.

    Exactness respects ``case_sensitive`` and ``normalize_whitespace``; the
    composite partial score is computed on the same normalized strings, so a
    case-sensitive run cannot sneak case differences back in through the 0.95
    composite threshold.
    """

    case_sensitive: bool = False
    normalize_whitespace: bool = True
    float_epsilon: float = 1e-6
    # The default prompt tells the model to "omit the field or use null" when the text lacks it, so null == absent.
    null_equals_absent: bool = True
    # "", [] and {} carry nothing to extract either; constrained decoders with
    # required fields often emit them instead of omitting the key.
    empty_equals_absent: bool = True
    # strict: "123" vs 123 is a type error (a consumer of the JSON gets a string for a number); configurable.
    strict_types: bool = True
    # Sample-level exact match compares arrays in order (line items, steps: order often carries meaning).
    array_order_matters: bool = True
    exact_threshold: float = 0.95
    # None: the default rule (any composite score >= exact_threshold is exact). A number (REL): a number is exact
    # only within REL of the gold (relative; at least float_epsilon), and a value of the wrong JSON type is never
    # exact (unless types are lenient); both otherwise fall into partial/incorrect by their composite score.
    exact_within: float | None = None
    partial_threshold: float = 0.5
    lenient_threshold: float = 0.3
    # None: an array of scalars scores by Jaccard of its equal elements. A number: elements left unequal also pair
    # by string similarity (an optimal assignment, pairs at least this similar), giving partial credit for
    # "Newgistics, Inc." against "Newgistics Inc."; exactness is unchanged.
    list_similarity: float | None = None
    # Transforms (by name, default parameters) every compared string goes through before case and whitespace
    # folding: e.g. ("no_punctuation", "no_legal_suffix") makes "Newgistics, Inc." equal "Newgistics Inc".
    normalisers: tuple[str, ...] = ()
    composite_weights: tuple[float, float, float] = (0.5, 0.3, 0.2)
    # JSON Schema "format" (date, email, ...) is asserted when validating output.
    validate_formats: bool = True
    eqs_weights: EqsWeights = field(default_factory=EqsWeights)
    # Names of post-processors run on every sample's fields before metrics (postprocess.py).
    post_processors: tuple[str, ...] = ()
    # Backends of the "semantic" comparator (semantic.py): embeddings ("local", "local:PATH" or an
    # OpenAI-compatible base URL) and/or an LLM judge model (with its base URL). Neither set: the
    # comparator falls back to the composite string score ("partial").
    semantic: str | None = None
    semantic_model: str | None = None
    semantic_threshold: float = 0.85
    judge_model: str | None = None
    judge_url: str | None = None
    # How run-level numbers get intervals and significance; carried here so metric sections see it.
    statistics: StatsOptions = field(default_factory=StatsOptions)
    # ANLS* of every output (and its per-key scores): as costly as the field walk; off, the metric is not measured.
    anls_star: bool = True

    def __post_init__(self) -> None:
        for name in _SWITCHES:  # 0 and 1 given from Python read as False and True; the compiled core takes only bools
            value = getattr(self, name)
            if type(value) is not bool:
                if type(value) is not int or value not in (0, 1):
                    raise ValueError(f"{name} must be true or false, got {value!r}")
                object.__setattr__(self, name, bool(value))
        if not 0 <= self.lenient_threshold <= self.partial_threshold <= self.exact_threshold <= 1:
            raise ValueError(
                "thresholds must satisfy 0 <= lenient <= partial <= exact <= 1, got "
                f"{self.lenient_threshold}, {self.partial_threshold}, {self.exact_threshold}"
            )
        if len(self.composite_weights) != 3 or not math.isclose(sum(self.composite_weights), 1.0):
            raise ValueError(f"composite_weights must be three weights summing to 1, got {self.composite_weights}")
        if self.float_epsilon < 0:
            raise ValueError("float_epsilon must be >= 0")
        if self.exact_within is not None and not 0 <= self.exact_within < math.inf:
            raise ValueError(f"exact_within must be a finite number >= 0, got {self.exact_within}")
        if self.list_similarity is not None and not 0 < self.list_similarity <= 1:
            raise ValueError(f"list_similarity must be in (0, 1], got {self.list_similarity}")
        if not 0 <= self.semantic_threshold <= 1:
            raise ValueError(f"semantic_threshold must be in [0, 1], got {self.semantic_threshold}")

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-able form, recorded in metrics.json."""
        data = asdict(self)
        data["composite_weights"] = list(self.composite_weights)
        data["post_processors"] = list(self.post_processors)
        data["normalisers"] = list(self.normalisers)
        if self.anls_star:  # recorded only when off: a run with the default records what runs recorded before
            del data["anls_star"]
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ScoringOptions:
        """Inverse of :meth:`to_dict`; unknown keys raise ``TypeError``."""
        data = dict(data)
        if "eqs_weights" in data and isinstance(data["eqs_weights"], dict):
            data["eqs_weights"] = EqsWeights(**data["eqs_weights"])
        if "statistics" in data and isinstance(data["statistics"], dict):
            data["statistics"] = StatsOptions(**data["statistics"])
        if "composite_weights" in data:
            data["composite_weights"] = tuple(data["composite_weights"])
        if "post_processors" in data:
            data["post_processors"] = tuple(data["post_processors"])
        if "normalisers" in data:
            data["normalisers"] = tuple(data["normalisers"])
        return cls(**data)

    @property
    def exactness_rule(self) -> str:
        """Which rule made a field "exact", in words for the summary and the report."""
        if self.exact_within is None:
            return (
                f"composite score >= {self.exact_threshold:g} (the default rule: a near number or a value of "
                f"another JSON type can be exact)"
            )
        types = "" if self.strict_types else '; lenient types: a lossless coercion such as "12" for 12 counts'
        return (
            f"numbers exact only within {self.exact_within:g} relative (at least {self.float_epsilon:g}), "
            f"a value of the wrong JSON type never exact{types}; strings: composite score >= "
            f"{self.exact_threshold:g}"
        )

    def replace(self, **changes: Any) -> ScoringOptions:
        """A copy with some options changed."""
        return replace(self, **changes)


_SWITCHES = tuple(name for name, kind in ScoringOptions.__annotations__.items() if kind == "bool")
"""The options that are on or off."""

DEFAULT_OPTIONS = ScoringOptions()
