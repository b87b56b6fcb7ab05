"""Held records made smaller as they arrive: equal values shared instead of kept once per record.

The controller holds every scored record until the finish aggregates them. Much of a record repeats across
samples: texts, counts, the per-mode precision/recall/F1 of invalid or perfect outputs (all 0 or all 1), the
diagnostics of outputs alike. :class:`SharedValues` replaces each with an equal one it has seen, so 100,000 records keep
few copies of each. A value is shared only with one of exactly the same type all the way down (``1``, ``1.0``
and ``True`` are equal in Python but not the same JSON; ``-0.0`` equals ``0.0``), so every figure read from a
record stays what it was. Each table is emptied when it reaches :data:`TABLE_LIMIT` entries: most values seen
once are never seen again, and a table of all of them would cost more than it saves.

A record's ``response`` also leaves out the keys at their defaults, as samples.jsonl does: the finish reads a
response with ``.get``, which finds None, and every reader takes None for the empty usage, no attempts or not
cached. Its raw output, which samples.jsonl holds, becomes its length (:class:`~..dataset.records.HeldOutput`),
all the finish reads of it, and the response is then shared like the other maps. A run that writes the answers
out again (``--extractbench-record``) keeps them whole.

A record's score is held as a :class:`HeldScore`: the same figures, but its field results (most of a record) packed
into a few bytes of shape ids and flags per field plus the values those do not stand for, and its P/R/F1 maps and
ANLS* per key path made again when read. The values, the ANLS* figures per key path and the validation messages are
one ``marshal`` string (a text costs its length and two bytes there instead of ~50 bytes and a reference as an
object; a float nine bytes instead of 32), when they are all JSON's own types (anything else, a value a transform
made, stays as objects, shared as above). Once a few hundred records have arrived, the last 8 KB of their strings
become a zlib dictionary, and every string is compressed with it (most of one repeats the others': names and codes
of a few families, messages of a few templates; ~600 bytes a harsh record become ~200). The finish reads them as
before; they cost time only when read (each section that walks the fields builds them again: ~7 us a record to
expand and read the string, and about a microsecond a field).

Shared containers must not be changed afterwards: the finish only reads records, except the whole-output
scores (semantic similarity, a judge's grade), which write into a record's diagnostics and extras; a run that
asks for them keeps its records as they are (:func:`shares_safely`).
"""

from __future__ import annotations

import marshal
import zlib
from array import array
from collections.abc import Sequence
from functools import partial
from math import copysign
from typing import Any, TypeVar

from ..analysis.performance import output_chars
from ..core.recordform import compact_response
from ..dataset.records import HeldOutput, SampleRecord
from ..scoring.result import FieldResult, SampleScore, credit_maps

_new_field = partial(tuple.__new__, FieldResult)
# a held field's flags (HeldScore): no expected value, no predicted value, the predicted value is the expected
# one (the same object), no similarity, a score of 0.0 (not -0.0), a score of 1.0; the values they stand for are
# not kept (most fields score 0.0 or 1.0: a reference less each, ~10 MB at 100,000 harsh samples)
_NO_EXPECTED, _NO_PREDICTED, _SAME_VALUE, _NO_SIMILARITY, _SCORE_ZERO, _SCORE_ONE = 1, 2, 4, 8, 16, 32
_REPR_LIMIT = 400  # a larger diagnostics or ANLS* map is rarely equal to another: not worth its repr
TABLE_LIMIT = 1 << 16
# held values compressed with a dictionary of the first records' (raw deflate, an 8 KB window): ~600 bytes a harsh
# record become ~210, for ~35 us to compress and ~4 us to expand at each read
DICTIONARY_SIZE = 8192
_WBITS, _LEVEL, _MEMORY = -13, 6, 8
_PENDING_RECORDS = 256  # held raw until the dictionary is made (from this many, or 4 dictionaries' worth of bytes)
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
        self._numbers: dict[float, float] = {}
        # a field's shape: all it holds but its values and score (see HeldScore); never emptied, held scores
        # name their fields' shapes by their place in it
        self._codec = _Codec()
        self._shapes = self._codec.shapes
        self._shape_ids: dict[tuple[Any, ...], int] = {}
        self._pending: list[HeldScore] = []  # held with their values raw until the dictionary is made
        self._pending_bytes = 0

    def compact(self, record: Any) -> Any:
        """``record`` with its values shared and its score held compactly (:class:`HeldScore`), as a new record:
        the record given and its score stay as they were (a ``sample_scored`` hook that kept them still finds
        them whole, raw output included). A record of another track is returned as it is."""
        if type(record) is not SampleRecord:
            return record
        response = record.response
        if not self._whole_responses and type(response) is dict:
            response = compact_response(response)
            chars = output_chars(response.get("content"))
            if chars is not None:
                response["content"] = self._outputs.get(chars) or _kept(self._outputs, chars, HeldOutput(chars))
            response = self._map(response)  # offline, only the output's length is left: mostly seen before
        held = HeldRecord(
            record.model,
            record.sample_id,
            self._score(record.score),
            record.meta,
            response,
            record.passed,
            self._text(record.failure),
            self._map(record.diagnostics),
            record.scoring_error,
        )
        meta = record.meta
        if type(meta) is dict and all(type(key) is str for key in meta):
            _META.__set__(held, (self._counts(tuple(meta)), *meta.values()))
        return held

    def _score(self, score: SampleScore) -> SampleScore:
        """A :class:`HeldScore` that reads as ``score`` does; ``score`` itself when it is some other kind."""
        if type(score) is not SampleScore:
            return score
        text, number = self._text, self._number
        held: HeldScore = object.__new__(HeldScore)
        held.sample_id = text(score.sample_id)
        held.options = score.options
        held.json_valid = score.json_valid
        held.schema_valid = score.schema_valid
        held.parse_error = text(score.parse_error)
        held.observed = self._counts(score.observed)
        held.counts = counts = self._counts(score.counts)
        held.exact_match = score.exact_match
        held.type_accuracy = number(score.type_accuracy)
        held.hallucination_rate = number(score.hallucination_rate)
        held.omission_rate = number(score.omission_rate)
        held.eqs = number(score.eqs)
        held.extras = self._map(score.extras)
        held._codec = self._codec
        given = (score.precision, score.recall, score.f1)
        derived = credit_maps(counts, score.schema_valid)  # what the held score computes when read
        held._credit = (
            None if repr(given) == repr(derived) else (self._map(given[0]), self._map(given[1]), self._map(given[2]))
        )
        observed, by_path = score._anls_pair()
        held._anls_observed = number(observed)
        held._anls_keys = self._counts(tuple(map(text, by_path)))
        # the values as one string when marshal gives each back as it was; else as objects, shared
        fields, errors, anls = score.fields, tuple(score.validation_errors), tuple(by_path.values())
        packed, values = self._pack(fields, share=False)
        blob = None if packed is None else _marshalled((packed, values, anls, errors))
        if blob is None:
            if packed is not None:
                packed, values = self._pack(fields, share=True)
            errors = self._counts(tuple(map(text, errors)))
            held._blob, held._loose = None, (packed, values, tuple(map(number, anls)), errors)
            return held
        held._loose = None
        if self._codec.zdict is not None:
            held._blob = self._codec.deflate(blob)
            return held
        held._blob = blob
        self._pending.append(held)
        self._pending_bytes += len(blob)
        if len(self._pending) >= _PENDING_RECORDS or self._pending_bytes >= 4 * DICTIONARY_SIZE:
            self._compress_pending()
        return held

    def _compress_pending(self) -> None:
        """The dictionary made from the values held so far (the last :data:`DICTIONARY_SIZE` bytes of them), and
        those values compressed with it; a record's values are compressed from then on as it arrives."""
        raw = [held._blob for held in self._pending if held._blob is not None]
        self._codec.start(b"".join(raw)[-DICTIONARY_SIZE:])
        for held in self._pending:
            if held._blob is not None:  # None: its fields were assigned since, held as objects
                held._blob = self._codec.deflate(held._blob)
        self._pending, self._pending_bytes = [], 0

    def _number(self, value: Any) -> Any:
        """An equal float seen before (not NaN or -0.0, which JSON writes apart from their equals), or ``value``."""
        if type(value) is not float or _inexact(value):
            return value
        found = self._numbers.get(value)
        return found if found is not None else _kept(self._numbers, value, value)

    def _pack(self, fields: Sequence[FieldResult], *, share: bool) -> tuple[bytes | None, tuple[Any, ...]]:
        """A score's field results as :class:`HeldScore` holds them: a header of each field's shape as its place in
        the shapes' table (two bytes each, or four past 65,535 shapes), a byte of flags per field (:data:`_NO_EXPECTED`
        ...) and the shapes' width; and a tuple of the values its flags do not stand for (the score unless it is 0.0
        or 1.0, expected, predicted, similarity), field by field. ``share``: the scores and values shared with those
        seen before (held as objects; unshared, they go into one string). ``(None, fields)`` (the fields as they are,
        shared) when a field does not fit: a flag of another type (``1`` for ``True`` would read back as ``True``), a
        shape that cannot be a key."""
        ids: list[int] = []
        flags = bytearray()
        values: list[Any] = []
        text, number = (self._text, self._number) if share else (_same, _same)
        shape_ids, shapes = self._shape_ids, self._shapes
        for field in fields:
            (path, category, score, expected, predicted, e_type, p_type, type_ok, equal, depth, required, origin,
             similarity, comparator, error) = field  # fmt: skip
            if (
                type(equal) is not bool
                or type(required) is not bool
                or type(depth) is not int
                or (type_ok is not None and type(type_ok) is not bool)
            ):
                return None, tuple(map(self._field, fields))
            shape = (path, category, e_type, p_type, type_ok, equal, depth, required, origin, comparator, error)
            try:
                found = shape_ids.get(shape)
            except TypeError:  # an unhashable comparator name or error
                return None, tuple(map(self._field, fields))
            if found is None:
                found = shape_ids[shape] = len(shapes)
                shapes.append(shape)
            ids.append(found)
            if type(score) is float and score == 1.0:
                flag = _SCORE_ONE
            elif type(score) is float and score == 0.0 and copysign(1.0, score) > 0:
                flag = _SCORE_ZERO
            else:
                flag = 0
                values.append(number(score))
            if expected is None:
                flag |= _NO_EXPECTED
            else:
                values.append(expected := text(expected))
            if predicted is None:
                flag |= _NO_PREDICTED
            elif (predicted := text(predicted)) is expected or (
                type(predicted) is str and type(expected) is str and predicted == expected
            ):  # the same object (an exact text, a small int), or an equal text
                flag |= _SAME_VALUE
            else:
                values.append(predicted)
            if similarity is None:
                flag |= _NO_SIMILARITY
            else:
                if share and all(type(x) is float and not _inexact(x) for x in similarity):
                    similarity = self._counts(similarity)
                values.append(similarity)
            flags.append(flag)
        width = 2 if len(shapes) <= 0xFFFF else 4
        return array("H" if width == 2 else "I", ids).tobytes() + flags + bytes((width,)), tuple(values)

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


_META = SampleRecord.__dict__["meta"]  # the record's own slot, under HeldRecord's property


class HeldRecord(SampleRecord):
    """A record as the controller holds it: its metadata as one tuple, the keys' tuple (shared by the records of a
    dataset) and then the values, made into a map again at each read (as it was: the same keys in the same order,
    the same value objects). A map of four keys costs 184 bytes, the tuple 96. Assigning ``meta`` keeps what is
    given."""

    __slots__ = ()

    @property
    def meta(self) -> dict[str, Any]:
        held = _META.__get__(self, HeldRecord)
        if type(held) is tuple:
            return dict(zip(held[0], held[1:]))
        found: dict[str, Any] = held
        return found

    @meta.setter
    def meta(self, value: dict[str, Any]) -> None:
        _META.__set__(self, value)


class HeldScore(SampleScore):
    """A score as the controller holds it until the finish: what is large and can be made again is kept small and
    made again at each read. Its field results are their shapes in the run's table, flags and their scores and
    values (:meth:`SharedValues._pack`), read back as new :class:`FieldResult` tuples equal to those scored; its
    precision, recall and F1 are computed again from its counts (as they were first); its ANLS* per key path is
    rebuilt from its keys and values; its validation messages are read back with the field values. Every other
    attribute is the score's own. Assigning ``fields``, ``validation_errors``, ``precision``, ``recall`` or ``f1``
    keeps what is given."""

    __slots__ = ("_codec", "_blob", "_loose", "_credit", "_anls_observed", "_anls_keys")

    _codec: _Codec  # the run's shapes and the dictionary of its values' strings
    # the packed fields, their values, the ANLS* values per key path and the validation messages: as one marshal
    # string, or (``_blob`` None) as objects in ``_loose``
    _blob: bytes | None
    _loose: tuple[bytes | None, tuple[Any, ...], tuple[Any, ...], tuple[Any, ...]] | None
    _credit: tuple[dict[str, float], dict[str, float], dict[str, float]] | None
    _anls_observed: float | None
    _anls_keys: tuple[str, ...]

    def _held(self) -> tuple[bytes | None, tuple[Any, ...], tuple[Any, ...], tuple[Any, ...]]:
        """The packed fields (None: ``values`` are the fields), the values, ANLS* per key path's values and the
        validation messages."""
        blob = self._blob
        if blob is not None:
            found: tuple[bytes | None, tuple[Any, ...], tuple[Any, ...], tuple[Any, ...]] = marshal.loads(
                self._codec.inflate(blob)
            )
            return found
        assert self._loose is not None
        return self._loose

    def _keep(self, index: int, value: tuple[Any, ...]) -> None:
        """The fields (``index`` 1: no longer packed) or the validation messages (3) replaced; held as objects."""
        packed, values, anls, errors = self._held()
        if index == 1:
            packed, values = None, value
        else:
            errors = value
        self._blob, self._loose = None, (packed, values, anls, errors)

    @property
    def fields(self) -> tuple[FieldResult, ...]:
        packed, values, _, _ = self._held()
        if packed is None:
            return values
        width = packed[-1]
        count = (len(packed) - 1) // (1 + width)  # the shape's place and a byte of flags a field
        ids = array("H" if width == 2 else "I")
        ids.frombytes(packed[: width * count])
        shapes, out, at = self._codec.shapes, [], 0
        for shape_id, flag in zip(ids, packed[width * count : -1]):
            path, category, e_type, p_type, type_ok, equal, depth, required, origin, comparator, error = shapes[
                shape_id
            ]
            if flag & _SCORE_ONE:
                score = 1.0
            elif flag & _SCORE_ZERO:
                score = 0.0
            else:
                score, at = values[at], at + 1
            if flag & _NO_EXPECTED:
                expected = None
            else:
                expected, at = values[at], at + 1
            if flag & _NO_PREDICTED:
                predicted = None
            elif flag & _SAME_VALUE:
                predicted = expected
            else:
                predicted, at = values[at], at + 1
            if flag & _NO_SIMILARITY:
                similarity = None
            else:
                similarity, at = values[at], at + 1
            out.append(
                _new_field(
                    (
                        path,
                        category,
                        score,
                        expected,
                        predicted,
                        e_type,
                        p_type,
                        type_ok,
                        equal,
                        depth,
                        required,
                        origin,
                        similarity,
                        comparator,
                        error,
                    )
                )  # fmt: skip
            )
        return tuple(out)

    @fields.setter
    def fields(self, value: tuple[FieldResult, ...]) -> None:
        self._keep(1, tuple(value))

    @property
    def validation_errors(self) -> tuple[str, ...]:
        return self._held()[3]

    @validation_errors.setter
    def validation_errors(self, value: tuple[str, ...]) -> None:
        self._keep(3, tuple(value))

    def _credit_maps(self) -> tuple[dict[str, float], dict[str, float], dict[str, float]]:
        return self._credit or credit_maps(self.counts, self.schema_valid)

    @property
    def precision(self) -> dict[str, float]:
        return self._credit_maps()[0]

    @precision.setter
    def precision(self, value: dict[str, float]) -> None:
        self._credit = (value, self.recall, self.f1)

    @property
    def recall(self) -> dict[str, float]:
        return self._credit_maps()[1]

    @recall.setter
    def recall(self, value: dict[str, float]) -> None:
        self._credit = (self.precision, value, self.f1)

    @property
    def f1(self) -> dict[str, float]:
        return self._credit_maps()[2]

    @f1.setter
    def f1(self, value: dict[str, float]) -> None:
        self._credit = (self.precision, self.recall, value)

    def _anls_pair(self) -> tuple[float | None, dict[str, float]]:
        return self._anls_observed, dict(zip(self._anls_keys, self._held()[2]))

    @property
    def anls_star_observed(self) -> float | None:
        return self._anls_observed  # read for every resampled column: the values per key path stay packed


class _Codec:
    """A run's table of field shapes, and the dictionary its held values' strings are compressed with (None until
    enough records have arrived to make one: until then every string is raw)."""

    __slots__ = ("shapes", "zdict", "_deflater")

    def __init__(self) -> None:
        self.shapes: list[tuple[Any, ...]] = []
        self.zdict: bytes | None = None
        self._deflater: zlib._Compress | None = None

    def start(self, zdict: bytes) -> None:
        self.zdict = zdict
        self._deflater = zlib.compressobj(_LEVEL, zlib.DEFLATED, _WBITS, _MEMORY, zlib.Z_DEFAULT_STRATEGY, zdict)

    def deflate(self, raw: bytes) -> bytes:
        assert self._deflater is not None  # started
        deflater = self._deflater.copy()  # a copy of one primed with the dictionary: not primed again each time
        return deflater.compress(raw) + deflater.flush()

    def inflate(self, blob: bytes) -> bytes:
        if self.zdict is None:
            return blob
        return zlib.decompressobj(_WBITS, self.zdict).decompress(blob)


def _kept(table: dict[Any, V], key: Any, value: V) -> V:
    """``value``, kept in ``table`` under ``key``; a full table is emptied first."""
    if len(table) >= TABLE_LIMIT:
        table.clear()
    table[key] = value
    return value


def _same(value: V) -> V:
    return value


_JSON_LEAVES = frozenset((str, int, float, bool, type(None)))


def _plain(value: Any) -> bool:
    """Whether marshal gives ``value`` back with the same types all the way down: JSON's own (a subclass, an array
    or a bytes-like value would come back as another type)."""
    kind = type(value)
    if kind in _JSON_LEAVES:
        return True
    if kind is tuple or kind is list:
        return all(map(_plain, value))
    if kind is dict:
        return all(type(key) is str and _plain(item) for key, item in value.items())
    return False


def _marshalled(parts: tuple[Any, ...]) -> bytes | None:
    """``parts`` as one marshal string, or None when a value would not come back as it was (or is too deep)."""
    try:
        return marshal.dumps(parts) if all(map(_plain, parts[1:])) else None
    except (RecursionError, ValueError):
        return None


def _inexact(value: Any) -> bool:
    """NaN (never equal) and a negative zero (equal to ``0.0``, though JSON writes it apart)."""
    return type(value) is float and not value > 0.0 and (value != value or copysign(1.0, value) < 0)
