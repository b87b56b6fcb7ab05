"""Per-field and per-sample results, and the per-sample metrics (P/R/F1 per mode, type accuracy, EQS).

Invalid output (unparseable or schema-invalid) scores 0 on every accuracy metric
(a consumer could not use it), but its fields are still diagnosed: ``observed`` holds what the
comparison found, ``counts`` what the sample is credited with.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import partial
from operator import itemgetter
from typing import Any, NamedTuple

from .options import ScoringOptions

EXACT, PARTIAL, INCORRECT, MISSED, SPURIOUS = "exact", "partial", "incorrect", "missed", "spurious"
CATEGORIES = (EXACT, PARTIAL, INCORRECT, MISSED, SPURIOUS)
# Statuses outside every metric (no verdict is no evidence either way): a comparator that failed, and a batch
# comparator's field awaiting its verdict (resolved before a SampleScore is built).
ERROR, PENDING = "error", "pending"
MODES = ("strict", "partial", "lenient")
EQS_COMPONENTS = ("validity", "f1_partial", "type_accuracy", "no_hallucination")

# Why a missed/spurious field exists, for hallucination and structure diagnostics.
ORIGIN_KEY = ""  # an ordinary key present on one side only
ORIGIN_EXTRA_ELEMENT = "extra_element"  # an unmatched predicted array element (hallucination type 4)
ORIGIN_MISSING_ELEMENT = "missing_element"  # an unmatched gold array element
ORIGIN_STRUCTURE = "structure"  # object vs array vs scalar at the same path
ORIGIN_UNKNOWN_KEY = "unknown_key"  # a predicted key the schema does not declare
ORIGIN_NULL = "null"  # the other side holds an explicit null (not a missing key): see postprocess.py


class FieldResult(NamedTuple):
    """One leaf field (``contact.email``, ``items[2].sku``, ``tags``) and how it was judged."""

    path: str
    category: str
    # composite similarity in [0, 1] for compared fields; 0.0 for missed/spurious
    score: float
    expected: Any = None
    predicted: Any = None
    expected_type: str | None = None
    predicted_type: str | None = None
    # None when the field carries no expected type (missed, or undeclared spurious keys)
    type_ok: bool | None = None
    equal: bool = False
    depth: int = 0
    required: bool = False
    origin: str = ORIGIN_KEY
    # (token_f1, levenshtein, containment) for string pairs
    similarity: tuple[float, float, float] | None = None
    # the x-eval-compare comparator that judged the field (None: the default one)
    comparator: str | None = None
    # why the comparator failed (category "error")
    error: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """JSON-able form: ``similarity`` as a list, and only what differs from the defaults (samples.jsonl
        holds tens of fields per sample; :meth:`from_dict` restores the rest)."""
        data = {
            name: value
            for name, value in zip(self._fields, self)
            if name not in _DEFAULTS
            or value is not _DEFAULTS[name]
            and (type(value) is not type(_DEFAULTS[name]) or value != _DEFAULTS[name])
        }
        if self.similarity is not None:
            data["similarity"] = list(self.similarity)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> FieldResult:
        """Inverse of :meth:`as_dict`."""
        data = dict(data)
        if data.get("similarity") is not None:
            data["similarity"] = tuple(data["similarity"])
        return cls(**data)


_DEFAULTS = FieldResult._field_defaults

# ``FieldResult(...)`` runs the Python-level ``__new__`` that NamedTuple generates, a third of the cost of
# a field; the walk makes ~20 a sample, so it builds them from a complete tuple: all 15 values, in order.
_new_field = partial(tuple.__new__, FieldResult)


class FieldCounts(NamedTuple):
    """Field tallies of one sample or of many (they add up)."""

    exact: int = 0
    partial: int = 0  # partial-mode partial: partial_threshold <= score < exact
    partial_lenient: int = 0  # lenient-mode partial: lenient_threshold <= score < exact
    incorrect: int = 0  # compared fields that are neither exact nor (partial-mode) partial
    missed: int = 0
    spurious: int = 0
    typed: int = 0  # predicted fields with an expected type
    type_correct: int = 0

    @property
    def compared(self) -> int:
        return self.exact + self.partial + self.incorrect

    @property
    def predicted(self) -> int:
        return self.compared + self.spurious

    @property
    def expected(self) -> int:
        return self.compared + self.missed

    def true_positives(self, mode: str) -> float:
        """Credit for correct fields under ``mode``: strict counts exact fields, partial adds half of each
        partial one, lenient counts every field scoring from the lenient threshold (0.3) up as correct."""
        if mode == "strict":
            return float(self.exact)
        if mode == "partial":
            return self.exact + 0.5 * self.partial
        if mode == "lenient":
            return float(self.exact + self.partial_lenient)
        raise ValueError(f"unknown mode {mode!r}; expected one of {MODES}")

    def precision_recall_f1(self, mode: str) -> tuple[float, float, float]:
        """P, R and F1 under ``mode``; nothing expected and nothing predicted is a perfect 1.0."""
        return prf(self.true_positives(mode), self.predicted, self.expected)

    def __add__(self, other: object) -> FieldCounts:
        if not isinstance(other, FieldCounts):
            return NotImplemented
        return FieldCounts(*(a + b for a, b in zip(self, other)))

    def as_dict(self) -> dict[str, int]:
        return self._asdict()


def prf(true_positives: float, predicted: int, expected: int) -> tuple[float, float, float]:
    """Precision, recall, F1; an empty denominator scores 1.0 only when the other side is empty too."""
    precision = true_positives / predicted if predicted else (1.0 if not expected else 0.0)
    recall = true_positives / expected if expected else (1.0 if not predicted else 0.0)
    total = precision + recall
    return precision, recall, (2 * precision * recall / total if total else 0.0)


def count_fields(fields: Sequence[FieldResult], options: ScoringOptions) -> FieldCounts:
    """Tally categories, lenient partials and type agreement (C-level counting: this runs per sample)."""
    # list.count over a sample's ~20 fields beats building a Counter, whose set-up is most of the cost
    categories = list(map(_CATEGORY, fields))
    incorrect = categories.count(INCORRECT)
    lenient_rescued = 0
    if incorrect:
        threshold = options.lenient_threshold
        for category, score in zip(categories, map(_SCORE, fields)):
            if category == INCORRECT and score >= threshold:
                lenient_rescued += 1
    partial = categories.count(PARTIAL)
    types = list(map(_TYPE_OK, fields))
    typed = len(types) - types.count(None)
    return _new_counts(
        (
            categories.count(EXACT),
            partial,
            partial + lenient_rescued,
            incorrect,
            categories.count(MISSED),
            categories.count(SPURIOUS),
            typed,
            types.count(True),
        )
    )


_CATEGORY = itemgetter(1)
_SCORE = itemgetter(2)
_TYPE_OK = itemgetter(7)
# FieldCounts from a complete tuple, without NamedTuple's Python-level ``__new__`` (as ``_new_field``)
_new_counts = partial(tuple.__new__, FieldCounts)
_NO_CREDIT = dict.fromkeys(MODES, 0.0)


def credit_maps(counts: FieldCounts, valid: bool) -> tuple[dict[str, float], dict[str, float], dict[str, float]]:
    """A sample's precision, recall and F1 per mode from its credited counts: new maps, nothing credited when the
    output is invalid. (A held score computes them again from its counts instead of keeping them.)"""
    if not valid:
        return dict(_NO_CREDIT), dict(_NO_CREDIT), dict(_NO_CREDIT)
    predicted, expected = counts.predicted, counts.expected
    exact = counts.exact
    strict = prf(exact, predicted, expected)
    half = prf(exact + 0.5 * counts.partial, predicted, expected)
    lenient = prf(exact + counts.partial_lenient, predicted, expected)
    return (
        {"strict": strict[0], "partial": half[0], "lenient": lenient[0]},
        {"strict": strict[1], "partial": half[1], "lenient": lenient[1]},
        {"strict": strict[2], "partial": half[2], "lenient": lenient[2]},
    )


_weights: dict[int, tuple[Any, tuple[float, float, float, float]]] = {}


def _eqs_weights(options: ScoringOptions) -> tuple[float, float, float, float]:
    """The options' EQS weights as floats, in EQS_COMPONENTS' order (made once per weights, not per sample)."""
    weights = options.eqs_weights
    entry = _weights.get(id(weights))
    if entry is None or entry[0] is not weights:
        values = (
            float(weights.validity),
            float(weights.f1_partial),
            float(weights.type_accuracy),
            float(weights.no_hallucination),
        )
        if len(_weights) >= 256:
            _weights.clear()
        entry = _weights[id(weights)] = (weights, values)
    return entry[1]


class SampleScore:
    """Everything scoring knows about one model output for one sample.

    An invalid output's validation errors may be listed at their first read (``validation_errors_source``, with
    ``schema_valid`` decided by the caller): a caller that never reads them, such as a throughput benchmark of the
    field scores, never pays for the listing.
    """

    __slots__ = (
        "sample_id",
        "json_valid",
        "schema_valid",
        "parse_error",
        "_errors",
        "fields",
        "observed",
        "counts",
        "precision",
        "recall",
        "f1",
        "exact_match",
        "type_accuracy",
        "hallucination_rate",
        "omission_rate",
        "eqs",
        "extras",
        "_anls",
        "options",
    )

    def __init__(
        self,
        *,
        sample_id: str,
        json_valid: bool,
        schema_valid: bool,
        parse_error: str | None,
        validation_errors: Sequence[str],
        fields: Sequence[FieldResult],
        options: ScoringOptions,
        anls_star: float | None = None,
        anls_star_fields: Mapping[str, float] | None = None,
        anls_star_source: Callable[[], tuple[float, Mapping[str, float]]] | None = None,
        validation_errors_source: Callable[[], Sequence[str]] | None = None,
    ) -> None:
        self.sample_id = sample_id
        self.options = options  # what scored it: a field diff pairs list elements by the same rules
        self.json_valid = json_valid
        self.schema_valid = schema_valid and json_valid
        self.parse_error = parse_error
        # the errors, or what lists them at the first read (a property: the other attributes stay plain slots, read
        # at full speed; a __getattr__ for this one would slow every attribute read of every score sixfold)
        self._errors: tuple[str, ...] | Callable[[], Sequence[str]] = (
            validation_errors_source if validation_errors_source is not None else tuple(validation_errors)
        )
        self.fields = tuple(fields)
        self.observed = observed = count_fields(self.fields, options)
        valid = self.schema_valid
        if valid:
            self.counts = counts = observed
        else:  # no credit: every compared field is wrong, types earn nothing
            self.counts = counts = _new_counts(
                (0, 0, 0, observed.compared, observed.missed, observed.spurious, observed.typed, 0)
            )
        maps = credit_maps(counts, valid)
        self.precision: dict[str, float] = maps[0]
        self.recall: dict[str, float] = maps[1]
        self.f1: dict[str, float] = maps[2]
        self.exact_match = (
            valid
            and observed.missed == 0
            and observed.spurious == 0
            and all(f.equal and f.type_ok is not False for f in self.fields)
        )
        if counts.typed:
            self.type_accuracy = counts.type_correct / counts.typed
        else:
            self.type_accuracy = 1.0 if valid else 0.0
        self.hallucination_rate = observed.spurious / observed.predicted if observed.predicted else 0.0
        self.omission_rate = observed.missed / observed.expected if observed.expected else 0.0
        self.eqs = self._eqs(options)
        # scores of the whole output added after field scoring (semantic similarity, an LLM judge's grade)
        self.extras: dict[str, float] = {}
        # ANLS* of the output as it was (None: not measured, a record written before it existed) and per key path;
        # ``anls_star_source`` computes both at the first read instead (most of a sample's scoring time otherwise)
        self._anls: tuple[float | None, dict[str, float]] | Callable[[], tuple[float, Mapping[str, float]]] = (
            anls_star_source if anls_star_source is not None else (anls_star, dict(anls_star_fields or {}))
        )

    @property
    def validation_errors(self) -> tuple[str, ...]:
        """Why the output violates the schema, as ``"$.path: message"`` (empty when valid or not JSON)."""
        found = self._errors
        if callable(found):
            found = self._errors = tuple(found())  # listed once; the output and schema it read are let go
        return found

    @validation_errors.setter
    def validation_errors(self, errors: tuple[str, ...]) -> None:
        self._errors = errors

    def _anls_pair(self) -> tuple[float | None, dict[str, float]]:
        found = self._anls
        if callable(found):
            observed, fields = found()
            found = self._anls = (observed, dict(fields))
        return found

    @property
    def anls_star_observed(self) -> float | None:
        """ANLS* of the output as it was, whatever its validity (None when not measured)."""
        return self._anls_pair()[0]

    @property
    def anls_star_fields(self) -> dict[str, float]:
        """Mean ANLS* per index-free key path (empty when not measured)."""
        return self._anls_pair()[1]

    @property
    def anls_star(self) -> float | None:
        """ANLS* credited like every accuracy metric: 0 for an invalid output, None when not measured."""
        if self.anls_star_observed is None:
            return None
        return self.anls_star_observed if self.valid else 0.0

    def eqs_components(self) -> dict[str, float]:
        """The four EQS inputs of this sample (all 0 when the output is not even JSON)."""
        return dict(zip(EQS_COMPONENTS, self._components()))

    def _components(self) -> tuple[float, float, float, float]:
        if not self.json_valid:  # nothing usable at all: no component earns anything
            return (0.0, 0.0, 0.0, 0.0)
        return (float(self.schema_valid), self.f1["partial"], self.type_accuracy, 1.0 - self.hallucination_rate)

    def _eqs(self, options: ScoringOptions) -> float:
        validity, f1_partial, type_accuracy, no_hallucination = self._components()
        w_validity, w_f1_partial, w_type_accuracy, w_no_hallucination = _eqs_weights(options)
        # the weighted components in EQS_COMPONENTS' order
        return sum(
            (
                w_validity * validity,
                w_f1_partial * f1_partial,
                w_type_accuracy * type_accuracy,
                w_no_hallucination * no_hallucination,
            )
        )

    @property
    def valid(self) -> bool:
        """Parseable JSON that conforms to the schema."""
        return self.schema_valid

    def failing_fields(self) -> list[FieldResult]:
        """Fields that are not exact, in path order."""
        return [f for f in self.fields if f.category != EXACT]

    def as_dict(self) -> dict[str, Any]:
        """A JSON-able record; :meth:`from_dict` restores it."""
        return {
            "sample_id": self.sample_id,
            "json_valid": self.json_valid,
            "schema_valid": self.schema_valid,
            "parse_error": self.parse_error,
            "validation_errors": list(self.validation_errors),
            "eqs": self.eqs,
            "exact_match": self.exact_match,
            "precision": dict(self.precision),
            "recall": dict(self.recall),
            "f1": dict(self.f1),
            "type_accuracy": self.type_accuracy,
            "hallucination_rate": self.hallucination_rate,
            "omission_rate": self.omission_rate,
            "counts": self.counts.as_dict(),
            "observed": self.observed.as_dict(),
            "fields": [f.as_dict() for f in self.fields],
            **({"extras": dict(self.extras)} if self.extras else {}),
            **(
                {
                    "anls_star": self.anls_star,
                    "anls_star_observed": self.anls_star_observed,
                    "anls_star_fields": dict(self.anls_star_fields),
                }
                if self.anls_star_observed is not None
                else {}
            ),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any], options: ScoringOptions) -> SampleScore:
        """Rebuild a score (for aggregation on the xdist controller or from samples.jsonl)."""
        score = cls(
            sample_id=data["sample_id"],
            json_valid=data["json_valid"],
            schema_valid=data["schema_valid"],
            parse_error=data.get("parse_error"),
            validation_errors=data.get("validation_errors", ()),
            fields=[FieldResult.from_dict(f) for f in data.get("fields", ())],
            options=options,
            anls_star=data.get("anls_star_observed"),
            anls_star_fields=data.get("anls_star_fields"),
        )
        score.extras.update(data.get("extras") or {})
        return score

    def __repr__(self) -> str:
        return (
            f"SampleScore({self.sample_id!r}, valid={self.valid}, eqs={self.eqs:.3f}, "
            f"f1_partial={self.f1['partial']:.3f}, fields={len(self.fields)})"
        )
