"""The results half of the field walk: categories, one-sided subtrees, errors and batch comparators.

:class:`~.fields.FieldWalker` walks gold and prediction side by side; what it finds becomes
:class:`~.result.FieldResult` rows here. Kept apart so each half reads on its own.
"""

from __future__ import annotations

from typing import Any

from .comparators import COMPARATORS, ComparatorError, to_comparison
from .compare import compare_scalars, declared_type_ok, normalize_text, string_similarity, types_agree
from .options import ScoringOptions
from .result import (
    ERROR,
    EXACT,
    INCORRECT,
    MISSED,
    ORIGIN_KEY,
    ORIGIN_NULL,
    ORIGIN_STRUCTURE,
    PARTIAL,
    SPURIOUS,
    FieldResult,
    _new_field,
)
from .schema import SchemaNode, json_type

ABSENT: Any = type("Absent", (), {"__repr__": lambda self: "<absent>"})()
"""Marks a key that is not there at all (distinct from an explicit null)."""

_CONTAINERS = (dict, list)
_SCALAR_NAMES = {str: "string", int: "number", float: "number", bool: "boolean"}
_IDENTICAL_TEXT = (1.0, 1.0, 1.0)


# Field paths, one string per distinct path for the whole process: a run keeps every sample's field
# results to its end, and building ``items[2].sku`` anew for each sample cost ~1 KB a sample. Cleared
# when full, so a hostile output's many thousands of keys cannot grow them without end (cleared in place:
# the walk's object loop reads ``_KEY_PATHS`` directly).
_KEY_PATHS: dict[tuple[str, str], str] = {}
_INDEX_PATHS: dict[tuple[str, int], str] = {}
_PATHS_LIMIT = 65_536


def _join(path: str, key: Any) -> str:
    """``path.key`` (``key`` itself at the root), shared with every other sample that has it; ``key`` is any
    hashable a Python caller's dict holds (JSON has text keys only)."""
    joined = _KEY_PATHS.get((path, key))
    if joined is None:
        joined = f"{path}.{key}" if path else str(key)  # a path is text, a root key of 0 too
        if type(key) is str:  # 1, 1.0 and True are one dict key but three paths: only text keys are kept
            if len(_KEY_PATHS) >= _PATHS_LIMIT:
                _KEY_PATHS.clear()
            _KEY_PATHS[(path, key)] = joined
    return joined


def _element(path: str, index: int) -> str:
    """``path[index]``, shared like :func:`_join`'s paths."""
    joined = _INDEX_PATHS.get((path, index))
    if joined is None:
        joined = f"{path}[{index}]"
        if len(_INDEX_PATHS) >= _PATHS_LIMIT:
            _INDEX_PATHS.clear()
        _INDEX_PATHS[(path, index)] = joined
    return joined


def _scalars_only(values: list[Any]) -> bool:
    for value in values:  # noqa: SIM110 - a plain loop: all() over a generator costs more on every array
        if type(value) in _CONTAINERS:
            return False
    return True


def _elementwise(node: SchemaNode | None) -> bool:
    """Whether the elements of an array of scalars are fields of their own (else the array is one
    field, scored by Jaccard): a comparator on the array judges it whole; else an explicit alignment,
    or items that carry a comparator, a transform or skip, make each element a field ("partial"
    names the default and changes nothing)."""
    if node is None:
        return False
    rule = node.rule
    if rule is not None:
        if rule.whole:
            return False
        if rule.aligner is not None:
            return True
    items = node.items.rule if node.items is not None else None
    return items is not None and (items.whole or items.skip or bool(items.transforms))


class FieldEmitter:
    """Turns compared, one-sided and failed fields into results, for one (gold, prediction) pair at a time."""

    def __init__(self, options: ScoringOptions) -> None:
        self.options = options
        self._null_absent = options.null_equals_absent
        self._empty_absent = options.empty_equals_absent
        # (index in out, rule, expected, predicted) of fields awaiting a batch comparator
        self._pending: list[tuple[int, Any, Any, Any]] = []

    def is_absent(self, value: Any) -> bool:
        """Absent key, or (by default) null / empty string / empty container."""
        if value is ABSENT:
            return True
        if value is None:
            return self._null_absent
        if self._empty_absent:
            kind = type(value)
            if kind is str:
                return not value.strip()
            if kind is list or kind is dict:
                return not value
        return False

    def _text_similarity(self, expected: str, predicted: str) -> tuple[float, float, float]:
        """The three string similarities (for diagnostics) when a rule's comparator did not give them."""
        exp_norm = normalize_text(expected, self.options)
        pred_norm = normalize_text(predicted, self.options)
        if exp_norm == pred_norm:
            return _IDENTICAL_TEXT
        return string_similarity(pred_norm, exp_norm, self.options)[1:]

    def _error(
        self,
        path: str,
        expected: Any,
        predicted: Any,
        depth: int,
        required: bool,
        comparator: str | None,
        message: str,
        out: list[FieldResult],
    ) -> None:
        out.append(
            FieldResult(
                path or "$",
                ERROR,
                0.0,
                expected,
                predicted,
                json_type(expected),
                json_type(predicted),
                None,
                False,
                depth,
                required,
                ORIGIN_KEY,
                None,
                comparator,
                message,
            )
        )

    def _resolve_pending(self, out: list[FieldResult]) -> None:
        """Judge every batch-comparator field of this record: one call per comparator."""
        groups: dict[str, list[tuple[int, Any, Any, Any]]] = {}
        for entry in self._pending:
            groups.setdefault(entry[1].comparator, []).append(entry)
        self._pending = []
        for name, entries in groups.items():
            batch = COMPARATORS.get(name).fn
            items = [
                (expected, predicted, rule.params, out[index].path) for index, rule, expected, predicted in entries
            ]
            try:
                results = list(batch(items, self.options))
                if len(results) != len(items):
                    raise ComparatorError(f"returned {len(results)} results for {len(items)} fields")
            except Exception as exc:  # noqa: BLE001 - the whole batch failed: every field says why
                message = str(exc) if isinstance(exc, ComparatorError) else f"{type(exc).__name__}: {exc}"
                results = [ComparatorError(f"comparator {name!r} failed: {message}")] * len(items)
            for (index, _, expected, predicted), result in zip(entries, results):
                field = out[index]
                try:
                    if isinstance(result, BaseException):
                        raise ComparatorError(
                            str(result)
                            if isinstance(result, ComparatorError)
                            else f"comparator {name!r} failed: {type(result).__name__}: {result}"
                        )
                    score, equal, similarity = to_comparison(result)
                except ComparatorError as exc:
                    out[index] = field._replace(category=ERROR, type_ok=None, error=str(exc))
                    continue
                if similarity is None and type(expected) is str and type(predicted) is str:
                    similarity = self._text_similarity(expected, predicted)
                # the field's gold value and type verdict, as a comparator that is not a batch has them read:
                # under exact_within a number is exact only when equal, a value of the wrong type never
                category = self._category(score, equal, field.expected, field.type_ok)
                out[index] = field._replace(category=category, score=score, equal=equal, similarity=similarity)

    def _category(self, score: float, equal: bool, expected: Any, type_ok: bool | None) -> str:
        """Exact, partial or incorrect. Under ``--extractbench-exact-within`` a number is exact only when equal
        (within the tolerance) and a value of the wrong JSON type never is; otherwise the composite score decides."""
        options = self.options
        if options.exact_within is None:
            exact = equal or score >= options.exact_threshold
        else:
            number = type(expected) in (int, float)
            exact = type_ok is not False and (equal or (not number and score >= options.exact_threshold))
        if exact:
            return EXACT
        return PARTIAL if score >= options.partial_threshold else INCORRECT

    def _emit_compared(
        self,
        path: str,
        score: float,
        equal: bool,
        similarity: Any,
        expected: Any,
        predicted: Any,
        expected_type: str,
        type_ok: bool,
        depth: int,
        required: bool,
        out: list[FieldResult],
        comparator: str | None = None,
    ) -> None:
        category = self._category(score, equal, expected, type_ok)
        out.append(
            _new_field(
                (
                    path or "$",
                    category,
                    score,
                    expected,
                    predicted,
                    expected_type,
                    json_type(predicted),
                    type_ok,
                    equal,
                    depth,
                    required,
                    ORIGIN_KEY,
                    similarity,
                    comparator,
                    None,
                )
            )
        )

    def _scalars(
        self, expected: Any, predicted: Any, path: str, depth: int, required: bool, out: list[FieldResult]
    ) -> None:
        """Two present scalars where no rule applies, compared and emitted as :meth:`~.fields.FieldWalker._leaf`
        would (its calls for a rule, a type name and an emit, saved on the most common field of a run)."""
        score, equal, similarity = compare_scalars(expected, predicted, self.options)
        kind, other = type(expected), type(predicted)
        expected_type = _SCALAR_NAMES[kind]
        type_ok = kind is other or types_agree(expected_type, predicted, self.options)
        category = self._category(score, equal, expected, type_ok)
        out.append(_new_field((path or "$", category, score, expected, predicted, expected_type, _SCALAR_NAMES[other],
                               type_ok, equal, depth, required, ORIGIN_KEY, similarity, None, None)))  # fmt: skip

    def _null_element(
        self,
        expected: Any,
        predicted: Any,
        items: SchemaNode | None,
        path: str,
        depth: int,
        required: bool,
        out: list[FieldResult],
    ) -> None:
        """Two paired elements, at least one null, where a lone null counts as absent. A null element is still an
        element: null and null match; null against a scalar is a wrong value (score 0); against an absent value
        or a container, the null is missed or spurious and the other side is walked as one-sided."""
        if expected is None and predicted is None:
            self._null_field(EXACT, None, None, path, depth, required, ORIGIN_KEY, out)
            return
        value, category = (predicted, SPURIOUS) if expected is None else (expected, MISSED)
        if self.is_absent(value) or type(value) in _CONTAINERS:
            null_side = MISSED if expected is None else SPURIOUS
            self._null_field(
                null_side,
                None if expected is None else ABSENT,
                ABSENT if expected is None else None,
                path,
                depth,
                required,
                ORIGIN_NULL,
                out,
            )
            self._side(value, items, path, depth, required, category, ORIGIN_NULL, out)
            return
        self._emit_compared(
            path, 0.0, False, None, expected, predicted, json_type(expected), False, depth, required, out
        )

    def _structure_mismatch(
        self,
        expected: Any,
        predicted: Any,
        node: SchemaNode | None,
        path: str,
        depth: int,
        required: bool,
        out: list[FieldResult],
    ) -> None:
        # Gold leaves stay expected (missed) so recall denominators do not depend on the
        # prediction's shape; predicted leaves are spurious and carry the type error.
        self._side(expected, node, path, depth, required, MISSED, ORIGIN_STRUCTURE, out)
        start = len(out)
        self._side(predicted, node, path, depth, required, SPURIOUS, ORIGIN_STRUCTURE, out)
        expected_type = json_type(expected)
        for i in range(start, len(out)):
            out[i] = out[i]._replace(expected_type=expected_type, type_ok=False)

    def _side_element(
        self,
        value: Any,
        node: SchemaNode | None,
        path: str,
        depth: int,
        required: bool,
        category: str,
        origin: str,
        out: list[FieldResult],
    ) -> None:
        """One array element on one side only. A null element is an element (``[null]`` is a present array, as
        in the Jaccard of a plain array), so it is missed or spurious even where a lone null is absent."""
        if value is None:
            expected, predicted = (None, ABSENT) if category == MISSED else (ABSENT, None)
            self._null_field(category, expected, predicted, path, depth, required, origin, out)
            return
        self._side(value, node, path, depth, required, category, origin, out)

    def _null_field(
        self,
        category: str,
        expected: Any,
        predicted: Any,
        path: str,
        depth: int,
        required: bool,
        origin: str,
        out: list[FieldResult],
    ) -> None:
        """A field for a null array element: matched (both null), missed or spurious (the other side ``ABSENT``)."""
        shown_expected = None if expected is ABSENT else expected
        shown_predicted = None if predicted is ABSENT else predicted
        score, equal = (1.0, True) if category == EXACT else (0.0, False)
        out.append(
            _new_field(
                (
                    path or "$",
                    category,
                    score,
                    shown_expected,
                    shown_predicted,
                    None if expected is ABSENT else "null",
                    None if predicted is ABSENT else "null",
                    True if category == EXACT else None,
                    equal,
                    depth,
                    required,
                    origin,
                    None,
                    None,
                    None,
                )
            )
        )

    def _side(
        self,
        value: Any,
        node: SchemaNode | None,
        path: str,
        depth: int,
        required: bool,
        category: str,
        origin: str,
        out: list[FieldResult],
    ) -> None:
        """Emit every leaf of a subtree that exists on one side only."""
        if self.is_absent(value):
            return
        kind = type(value)
        rule = node.rule if node is not None else None
        if rule is not None:
            if rule.skip:
                return
            if rule.transforms and kind is not dict:
                try:
                    if self.is_absent(rule.transform(value)):
                        return
                except Exception:  # noqa: BLE001 - a failing transform leaves the value as it is
                    pass
        whole = rule is not None and rule.whole  # one field, as when both sides have it
        if kind is dict and not whole:
            child_depth = depth + 1 if path else 0
            keys = node.required if node is not None else frozenset()
            for key, child_value in value.items():
                child = node.properties.get(key) if node is not None else None
                self._side(child_value, child, _join(path, key), child_depth, key in keys, category, origin, out)
            return
        # an empty array has no elements to be fields: it is one field, as a plain array of scalars is
        if kind is list and value and not whole and (not _scalars_only(value) or _elementwise(node)):
            items = node.items if node is not None else None
            for index, element in enumerate(value):
                self._side_element(element, items, _element(path, index), depth, required, category, origin, out)
            return
        value_type = json_type(value)
        if category == MISSED:
            out.append(
                _new_field(
                    (
                        path or "$",
                        MISSED,
                        0.0,
                        value,
                        None,
                        value_type,
                        None,
                        None,
                        False,
                        depth,
                        required,
                        origin,
                        None,
                        None,
                        None,
                    )
                )
            )
            return
        type_ok = None
        if node is not None and node.types:
            type_ok = declared_type_ok(node.types, value, self.options)
        out.append(
            _new_field(
                (
                    path or "$",
                    SPURIOUS,
                    0.0,
                    None,
                    value,
                    None,
                    value_type,
                    type_ok,
                    False,
                    depth,
                    required,
                    origin,
                    None,
                    None,
                    None,
                )
            )
        )
