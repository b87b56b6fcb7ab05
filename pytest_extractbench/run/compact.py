"""Held records made smaller as they arrive: equal values shared instead of kept once per record.

The controller holds every scored record until the finish aggregates them. Much of a record repeats across
samples: field values (enums, names, codes), whole field results (an exact match of the same value), the
per-mode precision/recall/F1 of invalid or perfect outputs (all 0 or all 1), the diagnostics and ANLS* maps
of outputs alike. :class:`SharedValues` replaces each with an equal one it has seen, so 100,000 records keep
few copies of each. A value is shared only with one of exactly the same type all the way down (``1``, ``1.0``
and ``True`` are equal in Python but not the same JSON; ``-0.0`` equals ``0.0``), so every figure read from a
record stays what it was. Each table is emptied when it reaches :data:`TABLE_LIMIT` entries: most values seen
once are never seen again, and a table of all of them would cost more than it saves.

A record's ``response`` also leaves out the keys at their defaults, as samples.jsonl does: the finish reads a
response with ``.get``, which finds None, and every reader takes None for the empty usage, no attempts or not
cached. Its raw output, which samples.jsonl holds, becomes its length (:class:`~..dataset.records.HeldOutput`),
all the finish reads of it. A run that writes the answers out again (``--extractbench-record``) keeps them whole.

Shared containers must not be changed afterwards: the finish only reads records, except the whole-output
scores (semantic similarity, a judge's grade), which write into a record's diagnostics and extras; a run that
asks for them keeps its records as they are (:func:`shares_safely`).
"""

from __future__ import annotations

from functools import partial
from math import copysign
from typing import Any, TypeVar

from ..analysis.performance import output_chars
from ..core.recordform import compact_response
from ..dataset.records import HeldOutput, SampleRecord
from ..scoring.result import FieldResult

_new_field = partial(tuple.__new__, FieldResult)
_REPR_LIMIT = 400  # a larger diagnostics or ANLS* map is rarely equal to another: not worth its repr
TABLE_LIMIT = 1 << 16
V = TypeVar("V")


def shares_safely(settings: Any) -> bool:
    """True when nothing in the finish changes a record: no semantic similarity and no judge."""
    scoring = settings.scoring
    return not (scoring.semantic or scoring.judge_model)


class SharedValues:
    """Tables of the values seen so far, one run's worth; :meth:`compact` shares a record's values with them."""

    def __init__(self, *, whole_responses: bool = False) -> None:
        self._whole_responses = whole_responses
        self._strings: dict[str, str] = {}
        self._fields: dict[FieldResult, FieldResult] = {}
        self._tuples: dict[tuple[Any, ...], tuple[Any, ...]] = {}
        self._maps: dict[int, dict[str, Any]] = {}  # by the hash of the map's repr
        self._outputs: dict[float, HeldOutput] = {}

    def compact(self, record: Any) -> Any:
        """``record`` with its values shared, as a new record with the same score (whose values are replaced by
        equal ones) and a smaller response: a ``sample_scored`` hook that kept the record still finds its raw
        output. A record of another track is returned as it is."""
        if type(record) is not SampleRecord:
            return record
        score = record.score
        text = self._text
        score.fields = tuple(map(self._field, score.fields))
        score.validation_errors = self._counts(tuple(map(text, score.validation_errors)))
        if type(score.parse_error) is str:
            score.parse_error = text(score.parse_error)
        score.counts = self._counts(score.counts)
        score.observed = self._counts(score.observed)
        score.precision = self._map(score.precision)
        score.recall = self._map(score.recall)
        score.f1 = self._map(score.f1)
        score.extras = self._map(score.extras)
        anls = score._anls
        if type(anls) is tuple:
            score._anls = (anls[0], self._map(anls[1]))
        response = record.response
        if not self._whole_responses and type(response) is dict:
            response = compact_response(response)
            chars = output_chars(response.get("content"))
            if chars is not None:
                response["content"] = self._outputs.get(chars) or _kept(self._outputs, chars, HeldOutput(chars))
        return SampleRecord(
            record.model,
            record.sample_id,
            score,
            record.meta,
            response,
            record.passed,
            text(record.failure),
            self._map(record.diagnostics),
            record.scoring_error,
        )

    def _text(self, value: Any) -> Any:
        if type(value) is not str:
            return value
        found = self._strings.get(value)
        return found if found is not None else _kept(self._strings, value, value)

    def _field(self, field: FieldResult) -> FieldResult:
        """An equal field result seen before, or this one with its texts shared (and kept for the next)."""
        score, expected, predicted, similarity = field[2], field[3], field[4], field.similarity
        # _inexact inlined for the common values: a positive number, a text, None
        if (
            (type(score) is float and not score > 0.0 and _inexact(score))
            or (type(expected) is float and not expected > 0.0 and _inexact(expected))
            or (type(predicted) is float and not predicted > 0.0 and _inexact(predicted))
        ):
            return field
        if similarity is not None and min(similarity) <= 0.0 and any(map(_inexact, similarity)):
            return field
        try:
            found = self._fields.get(field)
        except TypeError:  # a list or a dict among its values
            return field
        if found is not None:
            # equal; the same only with the same types (the other items' types follow from their values: a
            # text, None, a bool or an int, never two of these)
            if (
                type(found[2]) is type(score)
                and type(found[3]) is type(expected)
                and type(found[4]) is type(predicted)
                and (similarity is None or tuple(map(type, similarity)) == tuple(map(type, found.similarity or ())))
            ):
                return found
            return field
        if type(expected) is str or type(predicted) is str:
            field = _new_field((*field[:3], self._text(expected), self._text(predicted), *field[5:]))
        return _kept(self._fields, field, field)

    def _counts(self, value: tuple[Any, ...]) -> Any:
        """Counts (ints) and messages (texts): equal only when the same."""
        found = self._tuples.get(value)
        return found if found is not None else _kept(self._tuples, value, value)

    def _map(self, value: dict[str, Any]) -> dict[str, Any]:
        """An equal map seen before (by its repr, which tells ``1`` from ``1.0`` and ``True``, and keeps the
        key order), or ``value`` itself."""
        if type(value) is not dict:
            return value
        text = repr(value)
        if len(text) > _REPR_LIMIT:
            return value
        key = hash(text)
        found = self._maps.get(key)
        if found is not None and repr(found) == text:
            return found
        return _kept(self._maps, key, value)  # in place of another map whose repr has the same hash, if any


def _kept(table: dict[Any, V], key: Any, value: V) -> V:
    """``value``, kept in ``table`` under ``key``; a full table is emptied first."""
    if len(table) >= TABLE_LIMIT:
        table.clear()
    table[key] = value
    return value


def _inexact(value: Any) -> bool:
    """NaN (never equal) and a negative zero (equal to ``0.0``, though JSON writes it apart)."""
    return type(value) is float and not value > 0.0 and (value != value or copysign(1.0, value) < 0)
