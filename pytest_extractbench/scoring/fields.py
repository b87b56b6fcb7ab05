"""Walk gold and prediction side by side and judge every leaf field (DESIGN "Metric decisions").

A field is a leaf path: ``name``, ``contact.email``, ``items[2].sku``; an array of
scalars is one field (``tags``) scored by Jaccard similarity. The number of
expected fields depends only on the gold, never on the prediction, so recall
denominators are comparable across models.
"""

from __future__ import annotations

from typing import Any

from .align import align_ordered
from .compare import compare_scalars, declared_type_ok, jaccard, types_agree
from .options import ScoringOptions
from .result import (
    EXACT,
    INCORRECT,
    MISSED,
    ORIGIN_EXTRA_ELEMENT,
    ORIGIN_KEY,
    ORIGIN_MISSING_ELEMENT,
    ORIGIN_STRUCTURE,
    ORIGIN_UNKNOWN_KEY,
    PARTIAL,
    SPURIOUS,
    FieldResult,
)
from .schema import SchemaNode, json_type

ABSENT: Any = type("Absent", (), {"__repr__": lambda self: "<absent>"})()
"""Marks a key that is not there at all (distinct from an explicit null)."""

_CONTAINERS = (dict, list)
_SCALAR_NAMES = {str: "string", int: "number", float: "number", bool: "boolean"}
_IDENTICAL_TEXT = (1.0, 1.0, 1.0)


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _scalars_only(values: list[Any]) -> bool:
    for value in values:
        if type(value) in _CONTAINERS:
            return False
    return True


class FieldWalker:
    """Produces the :class:`FieldResult` list for one (gold, prediction) pair."""

    # Equal subtrees skip comparison; tests turn this off to prove both walks agree.
    fast_paths = True

    def __init__(self, options: ScoringOptions) -> None:
        self.options = options
        self._null_absent = options.null_equals_absent
        self._empty_absent = options.empty_equals_absent

    def walk(self, expected: Any, predicted: Any, node: SchemaNode | None) -> list[FieldResult]:
        """All field results, gold order first, then prediction-only fields."""
        out: list[FieldResult] = []
        self._pair(expected, predicted, node, "", 0, True, out)
        return out

    # -- seams that schema-driven rules (x-eval-*) extend -----------------------------

    def compare_leaf(self, expected: Any, predicted: Any, node: SchemaNode | None, path: str) -> tuple[float, bool, Any]:
        """``(score, equal, similarity)`` of two present scalar values."""
        return compare_scalars(expected, predicted, self.options)

    def align(self, expected: list[Any], predicted: list[Any], node: SchemaNode | None, path: str) -> list[Any]:
        """Pairs of element indexes for an array that holds objects."""
        return align_ordered(expected, predicted, node, self.options)

    # -- the walk ------------------------------------------------------------------------

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

    def _pair(
        self, expected: Any, predicted: Any, node: SchemaNode | None, path: str, depth: int, required: bool, out: list
    ) -> None:
        if self.fast_paths and type(expected) is type(predicted) and expected == predicted:
            self._identical(expected, predicted, node, path, depth, required, out)
            return
        self._pair_general(expected, predicted, node, path, depth, required, out)

    def _pair_general(
        self, expected: Any, predicted: Any, node: SchemaNode | None, path: str, depth: int, required: bool, out: list
    ) -> None:
        if self.is_absent(expected):
            if not self.is_absent(predicted):
                self._side(predicted, node, path, depth, required, SPURIOUS, ORIGIN_KEY, out)
            return
        if self.is_absent(predicted):
            self._side(expected, node, path, depth, required, MISSED, ORIGIN_KEY, out)
            return
        exp_kind, pred_kind = type(expected), type(predicted)
        if exp_kind is dict and pred_kind is dict:
            self._objects(expected, predicted, node, path, depth, out)
        elif exp_kind is list and pred_kind is list:
            self._arrays(expected, predicted, node, path, depth, required, out)
        elif exp_kind in _CONTAINERS or pred_kind in _CONTAINERS:
            self._structure_mismatch(expected, predicted, node, path, depth, required, out)
        else:
            self._leaf(expected, predicted, node, path, depth, required, out)

    def _identical(
        self, expected: Any, predicted: Any, node: SchemaNode | None, path: str, depth: int, required: bool, out: list
    ) -> None:
        """Emit the fields of two equal subtrees (most of any real run) without comparing them again.

        Python's ``==`` treats ``True`` and ``1`` as equal, so every leaf still checks that both
        sides have the same type and hands anything else to the general walk. No comparator or
        transform can make a value differ from itself, so schema rules need not be consulted.
        """
        kind = type(expected)
        if kind is not type(predicted):
            self._pair_general(expected, predicted, node, path, depth, required, out)
        elif kind is dict:
            child_depth = depth + 1 if path else 0
            properties = node.properties if node is not None else {}
            keys = node.required if node is not None else ()
            empty_absent = self._empty_absent
            append = out.append
            for key, value in expected.items():
                other = predicted[key]
                kind = type(value)
                child_path = f"{path}.{key}" if path else key
                # Scalar leaves inline: one Python call fewer per field on the hottest path.
                if kind is str and kind is type(other):
                    if value.strip() or not empty_absent:
                        append(FieldResult(child_path, EXACT, 1.0, value, other, "string", "string", True, True,
                                           child_depth, key in keys, ORIGIN_KEY, _IDENTICAL_TEXT))
                elif (kind is int or kind is float) and type(other) is kind:
                    append(FieldResult(child_path, EXACT, 1.0, value, other, "number", "number", True, True,
                                       child_depth, key in keys, ORIGIN_KEY, None))
                else:
                    self._identical(value, other, properties.get(key), child_path, child_depth, key in keys, out)
        elif kind is list and not _scalars_only(expected):
            items = node.items if node is not None else None
            for index, (exp_item, pred_item) in enumerate(zip(expected, predicted)):
                self._identical(exp_item, pred_item, items, f"{path}[{index}]", depth, required, out)
        elif kind is str:
            if self._empty_absent and not expected.strip():
                return
            out.append(FieldResult(path or "$", EXACT, 1.0, expected, predicted, "string", "string", True, True,
                                   depth, required, ORIGIN_KEY, _IDENTICAL_TEXT))
        elif kind in _SCALAR_NAMES:
            name = _SCALAR_NAMES[kind]
            out.append(FieldResult(path or "$", EXACT, 1.0, expected, predicted, name, name, True, True, depth,
                                   required, ORIGIN_KEY, None))
        else:  # null, scalar lists, empty lists: rare enough for the general walk
            self._pair_general(expected, predicted, node, path, depth, required, out)

    def _objects(self, expected: dict, predicted: dict, node: SchemaNode | None, path: str, depth: int, out: list) -> None:
        child_depth = depth + 1 if path else 0
        required = node.required if node is not None else frozenset()
        properties = node.properties if node is not None else {}
        pair = self._pair
        for key, value in expected.items():
            pair(value, predicted.get(key, ABSENT), properties.get(key), f"{path}.{key}" if path else key,
                 child_depth, key in required, out)
        for key, value in predicted.items():
            if key in expected:
                continue
            child = node.properties.get(key) if node is not None else None
            if self.is_absent(value):
                continue
            origin = ORIGIN_UNKNOWN_KEY if child is None and node is not None and node.properties else ORIGIN_KEY
            self._side(value, child, _join(path, key), child_depth, key in required, SPURIOUS, origin, out)

    def _arrays(
        self, expected: list, predicted: list, node: SchemaNode | None, path: str, depth: int, required: bool, out: list
    ) -> None:
        if _scalars_only(expected) and _scalars_only(predicted):
            comparison = jaccard(expected, predicted, self.options)
            self._emit_compared(path, comparison.score, comparison.equal, None, expected, predicted, "array", True, depth, required, out)
            return
        items = node.items if node is not None else None
        unmatched_predictions = 0
        for gold_index, pred_index in self.align(expected, predicted, node, path):
            if gold_index is not None and pred_index is not None:
                self._pair(expected[gold_index], predicted[pred_index], items, f"{path}[{gold_index}]", depth, required, out)
            elif gold_index is not None:
                self._side(expected[gold_index], items, f"{path}[{gold_index}]", depth, required, MISSED, ORIGIN_MISSING_ELEMENT, out)
            elif pred_index is not None:
                index = len(expected) + unmatched_predictions
                unmatched_predictions += 1
                self._side(predicted[pred_index], items, f"{path}[{index}]", depth, required, SPURIOUS, ORIGIN_EXTRA_ELEMENT, out)

    def _structure_mismatch(
        self, expected: Any, predicted: Any, node: SchemaNode | None, path: str, depth: int, required: bool, out: list
    ) -> None:
        # Gold leaves stay expected (missed) so recall denominators do not depend on the
        # prediction's shape; predicted leaves are spurious and carry the type error.
        self._side(expected, node, path, depth, required, MISSED, ORIGIN_STRUCTURE, out)
        start = len(out)
        self._side(predicted, node, path, depth, required, SPURIOUS, ORIGIN_STRUCTURE, out)
        expected_type = json_type(expected)
        for i in range(start, len(out)):
            out[i] = out[i]._replace(expected_type=expected_type, type_ok=False)

    def _leaf(self, expected: Any, predicted: Any, node: SchemaNode | None, path: str, depth: int, required: bool, out: list) -> None:
        score, equal, similarity = self.compare_leaf(expected, predicted, node, path)
        expected_type = json_type(expected)
        type_ok = type(expected) is type(predicted) or types_agree(expected_type, predicted, self.options)
        self._emit_compared(path, score, equal, similarity, expected, predicted, expected_type, type_ok, depth, required, out)

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
        out: list,
    ) -> None:
        options = self.options
        if equal or score >= options.exact_threshold:
            category = EXACT
        elif score >= options.partial_threshold:
            category = PARTIAL
        else:
            category = INCORRECT
        out.append(
            FieldResult(
                path or "$", category, score, expected, predicted, expected_type,
                json_type(predicted), type_ok, equal, depth, required, ORIGIN_KEY, similarity,
            )
        )

    def _side(
        self, value: Any, node: SchemaNode | None, path: str, depth: int, required: bool, category: str, origin: str, out: list
    ) -> None:
        """Emit every leaf of a subtree that exists on one side only."""
        if self.is_absent(value):
            return
        kind = type(value)
        if kind is dict:
            child_depth = depth + 1 if path else 0
            keys = node.required if node is not None else frozenset()
            for key, child_value in value.items():
                child = node.properties.get(key) if node is not None else None
                self._side(child_value, child, _join(path, key), child_depth, key in keys, category, origin, out)
            return
        if kind is list and not _scalars_only(value):
            items = node.items if node is not None else None
            for index, element in enumerate(value):
                self._side(element, items, f"{path}[{index}]", depth, required, category, origin, out)
            return
        value_type = json_type(value)
        if category == MISSED:
            out.append(FieldResult(path or "$", MISSED, 0.0, value, None, value_type, None, None, False, depth, required, origin))
            return
        type_ok = None
        if node is not None and node.types:
            type_ok = declared_type_ok(node.types, value, self.options)
        out.append(
            FieldResult(path or "$", SPURIOUS, 0.0, None, value, None, value_type, type_ok, False, depth, required, origin)
        )
