"""Walk gold and prediction side by side and judge every leaf field (DESIGN "Metric decisions").

A field is a leaf path: ``name``, ``contact.email``, ``items[2].sku``; an array of
scalars is one field (``tags``) scored by Jaccard similarity, unless it is aligned or its
items carry rules (then each element is a field), and a location whose x-eval-compare names
a comparator other than ``partial`` is one field whatever its value (objects and arrays
compare whole). The number of expected fields depends only on the gold, never on the
prediction, so recall denominators are comparable across models.
"""

from __future__ import annotations

from typing import Any

from .align import AlignContext, _canonical, align_hungarian, align_key_field, align_ordered
from .budget import check as budget_check
from .comparators import ComparatorError, to_comparison
from .compare import Comparison, compare_scalars, jaccard, types_agree
from .emit import (
    _CONTAINERS,
    _IDENTICAL_TEXT,
    _KEY_PATHS,
    _SCALAR_NAMES,
    ABSENT,
    FieldEmitter,
    _element,
    _elementwise,
    _join,
    _scalars_only,
)
from .flat import flat_similarity, similarity_rows
from .result import (
    ERROR,
    EXACT,
    MISSED,
    ORIGIN_EXTRA_ELEMENT,
    ORIGIN_KEY,
    ORIGIN_MISSING_ELEMENT,
    ORIGIN_NULL,
    ORIGIN_UNKNOWN_KEY,
    PENDING,
    SPURIOUS,
    FieldResult,
    _new_field,
)
from .schema import SchemaNode, json_type

_DIAGONAL_ON_IDENTICAL = frozenset({align_ordered, align_key_field, align_hungarian})
_NO_KEYS: frozenset[str] = frozenset()
_NO_PROPERTIES: dict[str, SchemaNode] = {}


def _same_json(a: Any, b: Any) -> bool:
    """Type-strict equality ([1] == [True] in Python, not in JSON)."""
    return _canonical(a) == _canonical(b) is not None


class FieldWalker(FieldEmitter):
    """Produces the :class:`FieldResult` list for one (gold, prediction) pair."""

    # Equal subtrees skip comparison; tests turn this off to prove both walks agree.
    fast_paths = True

    def walk(self, expected: Any, predicted: Any, node: SchemaNode | None) -> list[FieldResult]:
        """All field results, gold order first, then prediction-only fields.

        ``node`` carries the x-eval-* rules when it comes from :func:`~.rules.compile_rules`.
        Fields of batch comparators are judged together once the walk is done.
        """
        out: list[FieldResult] = []
        self._pending = []
        self._pair(expected, predicted, node, "", 0, True, out)
        if self._pending:
            self._resolve_pending(out)
        return out

    # -- seams that schema-driven rules (x-eval-*) extend -----------------------------

    def compare_leaf(
        self, expected: Any, predicted: Any, node: SchemaNode | None, path: str
    ) -> tuple[float, bool, Any] | None:
        """``(score, equal, similarity)`` of two present values (after transforms).

        Raises :class:`ComparatorError` when a rule's comparator fails; returns None for
        a batch comparator, whose verdict comes after the walk.
        """
        rule = node.rule if node is not None else None
        if rule is None or rule.compare is None:
            return compare_scalars(expected, predicted, self.options)
        kind = type(expected)
        if (
            kind is type(predicted)
            and expected == predicted
            and (kind not in _CONTAINERS or _same_json(expected, predicted))
        ):
            return Comparison(1.0, True)  # identical values match whatever the comparator
        if rule.batch:
            return None
        try:
            return to_comparison(rule.compare(expected, predicted, rule.params, self.options))
        except ComparatorError as exc:
            raise ComparatorError(f"comparator {rule.comparator!r} {exc}") from None
        except Exception as exc:  # noqa: BLE001 - a custom comparator's bug is a field status, not a crash
            raise ComparatorError(f"comparator {rule.comparator!r} failed: {type(exc).__name__}: {exc}") from None

    def align(self, expected: list[Any], predicted: list[Any], node: SchemaNode | None, path: str) -> list[Any]:
        """Pairs of element indexes for an array (of objects, or of scalars with x-eval-align)."""
        rule = node.rule if node is not None else None
        if rule is None or rule.aligner is None:
            return align_ordered(expected, predicted, node, self.options)
        items = node.items if node is not None else None

        def similarity(e: Any, p: Any) -> float:
            return self.element_similarity(e, p, items)

        flat = self.fast_paths and (items is None or (items.rule is None and not items.ruled_keys))
        context = AlignContext(
            rule.align_params, similarity, path, lambda es, ps: similarity_rows(es, ps, self.options, similarity, flat)
        )
        return rule.aligner(expected, predicted, node, self.options, context)

    def element_similarity(self, expected: Any, predicted: Any, node: SchemaNode | None) -> float:
        """Mean field score of comparing two array elements with the same rules (for alignment)."""
        if (
            type(expected) is dict
            and type(predicted) is dict
            and expected
            and predicted
            and self.fast_paths
            and (node is None or (node.rule is None and not node.ruled_keys))
        ):
            found = flat_similarity(expected, predicted, self.options)
            if found is not None:
                return found
        pending = len(self._pending)
        fields: list[FieldResult] = []
        self._pair(expected, predicted, node, "", 0, True, fields)
        del self._pending[pending:]  # a trial comparison: nothing of it is judged later
        scores = [f.score for f in fields if f.category != PENDING and f.category != ERROR]
        return sum(scores) / len(scores) if scores else (1.0 if not fields else 0.0)

    # -- the walk ------------------------------------------------------------------------

    def _pair(
        self,
        expected: Any,
        predicted: Any,
        node: SchemaNode | None,
        path: str,
        depth: int,
        required: bool,
        out: list[FieldResult],
    ) -> None:
        budget_check()
        if self.fast_paths and type(expected) is type(predicted) and expected == predicted:
            self._identical(expected, predicted, node, path, depth, required, out)
            return
        self._pair_general(expected, predicted, node, path, depth, required, out)

    def _pair_general(
        self,
        expected: Any,
        predicted: Any,
        node: SchemaNode | None,
        path: str,
        depth: int,
        required: bool,
        out: list[FieldResult],
    ) -> None:
        rule = node.rule if node is not None else None
        if rule is not None:
            if rule.skip:
                return
            if rule.transforms:
                self._pair_transformed(rule, expected, predicted, node, path, depth, required, out)
                return
        if self._one_sided(expected, predicted, expected, predicted, node, path, depth, required, out):
            return
        exp_kind, pred_kind = type(expected), type(predicted)
        if rule is not None and rule.whole and (exp_kind in _CONTAINERS or pred_kind in _CONTAINERS):
            self._leaf(expected, predicted, node, path, depth, required, out)  # the comparator judges it whole
        elif exp_kind is dict and pred_kind is dict:
            self._objects(expected, predicted, node, path, depth, out)
        elif exp_kind is list and pred_kind is list:
            self._arrays(expected, predicted, node, path, depth, required, out)
        elif exp_kind in _CONTAINERS or pred_kind in _CONTAINERS:
            self._structure_mismatch(expected, predicted, node, path, depth, required, out)
        else:
            self._leaf(expected, predicted, node, path, depth, required, out)

    def _one_sided(
        self,
        expected: Any,
        predicted: Any,
        shown_expected: Any,
        shown_predicted: Any,
        node: SchemaNode | None,
        path: str,
        depth: int,
        required: bool,
        out: list[FieldResult],
    ) -> bool:
        """Emit a value present on one side only (as shown); True when at least one side is absent."""
        if self.is_absent(expected):
            if not self.is_absent(predicted):
                origin = ORIGIN_NULL if expected is None else ORIGIN_KEY
                self._side(shown_predicted, node, path, depth, required, SPURIOUS, origin, out)
            return True
        if self.is_absent(predicted):
            origin = ORIGIN_NULL if predicted is None else ORIGIN_KEY
            self._side(shown_expected, node, path, depth, required, MISSED, origin, out)
            return True
        return False

    def _pair_transformed(
        self,
        rule: Any,
        expected: Any,
        predicted: Any,
        node: SchemaNode | None,
        path: str,
        depth: int,
        required: bool,
        out: list[FieldResult],
    ) -> None:
        """Compare after the x-eval-transform chain; fields keep the values as they were."""
        try:
            t_exp = expected if expected is ABSENT else rule.transform(expected)
            t_pred = predicted if predicted is ABSENT else rule.transform(predicted)
        except Exception as exc:  # noqa: BLE001 - a custom transform's bug is a field status, not a crash
            if not self.is_absent(expected) and not self.is_absent(predicted):
                self._error(
                    path,
                    expected,
                    predicted,
                    depth,
                    required,
                    rule.comparator,
                    f"transform failed: {type(exc).__name__}: {exc}",
                    out,
                )
                return
            t_exp, t_pred = expected, predicted
        if self._one_sided(t_exp, t_pred, expected, predicted, node, path, depth, required, out):
            return
        exp_kind, pred_kind = type(t_exp), type(t_pred)
        if rule.whole and (exp_kind in _CONTAINERS or pred_kind in _CONTAINERS):
            self._leaf(t_exp, t_pred, node, path, depth, required, out, expected, predicted)
        elif exp_kind is list and pred_kind is list:
            # a transform that yields null for an element says it has no value: it stays absent
            self._arrays(t_exp, t_pred, node, path, depth, required, out, null_elements=False)
        elif exp_kind in _CONTAINERS or pred_kind in _CONTAINERS:
            if exp_kind is dict and pred_kind is dict:
                self._objects(expected, predicted, node, path, depth, out)
            else:
                self._structure_mismatch(expected, predicted, node, path, depth, required, out)
        else:
            self._leaf(t_exp, t_pred, node, path, depth, required, out, expected, predicted)

    def _identical(
        self,
        expected: Any,
        predicted: Any,
        node: SchemaNode | None,
        path: str,
        depth: int,
        required: bool,
        out: list[FieldResult],
    ) -> None:
        """Emit the fields of two equal subtrees (most of any real run) without comparing them again.

        Python's ``==`` treats ``True`` and ``1`` as equal, so every leaf still checks that both
        sides have the same type and hands anything else to the general walk. No comparator or
        transform can make a value differ from itself, so schema rules need not be consulted.
        """
        kind = type(expected)
        if node is not None and node.rule is not None:
            rule = node.rule
            if rule.skip:
                return
            if rule.whole and kind in _CONTAINERS:  # judged whole by the comparator
                self._pair_general(expected, predicted, node, path, depth, required, out)
                return
            # Scalars under a rule take the general walk: transforms may make a value absent and
            # the comparator's name is recorded. Aligned arrays let their aligner pair elements.
            if (
                kind is list
                and expected
                and rule.aligner in _DIAGONAL_ON_IDENTICAL
                and not rule.transforms
                and _same_json(expected, predicted)
            ):
                # every built-in aligner pairs identical arrays element by element: skip it
                self._identical_elements(expected, predicted, node, path, depth, required, out)
                return
            if kind is not dict and (kind is not list or rule.aligner is not None or _scalars_only(expected)):
                self._pair_general(expected, predicted, node, path, depth, required, out)
                return
        if kind is not type(predicted):
            self._pair_general(expected, predicted, node, path, depth, required, out)
        elif kind is dict:
            self._objects(expected, predicted, node, path, depth, out, equal=True)
        elif kind is list and not _scalars_only(expected):
            self._identical_elements(expected, predicted, node, path, depth, required, out)
        elif kind in _SCALAR_NAMES:  # str, int, float, bool
            if kind is str and self._empty_absent and not expected.strip():
                return
            name = _SCALAR_NAMES[kind]
            out.append(
                _new_field(
                    (
                        path or "$",
                        EXACT,
                        1.0,
                        expected,
                        predicted,
                        name,
                        name,
                        True,
                        True,
                        depth,
                        required,
                        ORIGIN_KEY,
                        _IDENTICAL_TEXT if kind is str else None,
                        None,
                        None,
                    )
                )
            )
        else:  # null, scalar lists, empty lists: rare enough for the general walk
            self._pair_general(expected, predicted, node, path, depth, required, out)

    def _identical_elements(
        self,
        expected: list[Any],
        predicted: list[Any],
        node: SchemaNode | None,
        path: str,
        depth: int,
        required: bool,
        out: list[FieldResult],
    ) -> None:
        rule = node.rule if node is not None else None
        # a null element is an element and matches, unless an array-level transform ran (see _pair_transformed)
        null_element = self._null_absent and not (rule is not None and rule.transforms)
        items = node.items if node is not None else None
        for index, (exp_item, pred_item) in enumerate(zip(expected, predicted)):
            if exp_item is None and null_element:
                self._null_field(EXACT, None, None, _element(path, index), depth, required, ORIGIN_KEY, out)
            else:
                self._identical(exp_item, pred_item, items, _element(path, index), depth, required, out)

    def _objects(
        self,
        expected: dict[Any, Any],
        predicted: dict[Any, Any],
        node: SchemaNode | None,
        path: str,
        depth: int,
        out: list[FieldResult],
        equal: bool = False,
    ) -> None:
        """Gold keys in gold order, then the keys only the prediction has (``equal``: the objects are known
        to be equal, as ``==`` on dicts says, which also counts a NaN equal to itself).

        Equal scalar leaves without a rule are emitted here, inline: most fields of any run are,
        and this saves them two calls (:meth:`_pair`, :meth:`_identical`) that would emit the same.
        """
        child_depth = depth + 1 if path else 0
        if node is None:
            required, properties, ruled = _NO_KEYS, _NO_PROPERTIES, _NO_KEYS
        else:
            required, properties, ruled = node.required, node.properties, node.ruled_keys
        pair = self._pair
        inline = self.fast_paths
        keep_blank = not self._empty_absent
        append = out.append
        paths = _KEY_PATHS
        for key, value in expected.items():
            other = predicted.get(key, ABSENT)
            child_path = paths.get((path, key)) or _join(path, key)
            kind = type(value)
            if (
                inline
                and kind is type(other)
                and kind in _SCALAR_NAMES
                and (equal or value == other)
                and key not in ruled
            ):
                if kind is not str or keep_blank or value.strip():  # a blank string is absent unless kept
                    name = _SCALAR_NAMES[kind]
                    text = _IDENTICAL_TEXT if kind is str else None
                    append(
                        _new_field(
                            (
                                child_path or "$",
                                EXACT,
                                1.0,
                                value,
                                other,
                                name,
                                name,
                                True,
                                True,
                                child_depth,
                                key in required,
                                ORIGIN_KEY,
                                text,
                                None,
                                None,
                            )
                        )
                    )
            elif inline and kind in _SCALAR_NAMES and key not in ruled:
                other_kind = type(other)
                if other_kind in _SCALAR_NAMES:  # two scalars, no rule: straight to the comparison
                    budget_check()
                    if keep_blank or ((kind is not str or value.strip()) and (other_kind is not str or other.strip())):
                        self._scalars(value, other, child_path, child_depth, key in required, out)
                    else:  # a blank string is absent
                        child = properties.get(key)
                        self._one_sided(
                            value, other, value, other, child, child_path, child_depth, key in required, out
                        )
                elif other is ABSENT:  # a missed key
                    budget_check()
                    if not self.is_absent(value):
                        self._side(
                            value,
                            properties.get(key),
                            child_path,
                            child_depth,
                            key in required,
                            MISSED,
                            ORIGIN_KEY,
                            out,
                        )
                else:
                    pair(value, other, properties.get(key), child_path, child_depth, key in required, out)
            elif inline and kind is dict and type(other) is dict and value and other and key not in ruled:
                budget_check()  # two objects, no rule: what _pair and _pair_general would decide
                self._objects(value, other, properties.get(key), child_path, child_depth, out, equal or value == other)
            else:
                pair(value, other, properties.get(key), child_path, child_depth, key in required, out)
        if equal or predicted.keys() <= expected.keys():
            return
        for key, value in predicted.items():
            if key in expected:
                continue
            child = node.properties.get(key) if node is not None else None
            if self.is_absent(value):
                continue
            origin = ORIGIN_UNKNOWN_KEY if child is None and node is not None and node.properties else ORIGIN_KEY
            self._side(value, child, _join(path, key), child_depth, key in required, SPURIOUS, origin, out)

    def _arrays(
        self,
        expected: list[Any],
        predicted: list[Any],
        node: SchemaNode | None,
        path: str,
        depth: int,
        required: bool,
        out: list[FieldResult],
        null_elements: bool = True,
    ) -> None:
        # two empty arrays (where empty is a value) have no elements to be fields: one field, as plain arrays are
        if (
            (not _elementwise(node) or not (expected or predicted))
            and _scalars_only(expected)
            and _scalars_only(predicted)
        ):
            comparison = jaccard(expected, predicted, self.options)
            self._emit_compared(
                path, comparison.score, comparison.equal, None, expected, predicted, "array", True, depth, required, out
            )
            return
        items = node.items if node is not None else None
        unmatched_predictions = 0
        null_element = self._null_absent and null_elements
        side = self._side_element if null_elements else self._side
        objects = self.fast_paths and (items is None or items.rule is None)  # elements as _objects takes them
        for gold_index, pred_index in self.align(expected, predicted, node, path):
            if gold_index is not None and pred_index is not None:
                gold, guess = expected[gold_index], predicted[pred_index]
                if null_element and (gold is None or guess is None):
                    self._null_element(gold, guess, items, _element(path, gold_index), depth, required, out)
                elif objects and type(gold) is dict and type(guess) is dict and gold and guess:
                    budget_check()
                    self._objects(gold, guess, items, _element(path, gold_index), depth, out, gold == guess)
                else:
                    self._pair(gold, guess, items, _element(path, gold_index), depth, required, out)
            elif gold_index is not None:
                side(
                    expected[gold_index],
                    items,
                    _element(path, gold_index),
                    depth,
                    required,
                    MISSED,
                    ORIGIN_MISSING_ELEMENT,
                    out,
                )
            elif pred_index is not None:
                index = len(expected) + unmatched_predictions
                unmatched_predictions += 1
                side(
                    predicted[pred_index],
                    items,
                    _element(path, index),
                    depth,
                    required,
                    SPURIOUS,
                    ORIGIN_EXTRA_ELEMENT,
                    out,
                )

    def _leaf(
        self,
        expected: Any,
        predicted: Any,
        node: SchemaNode | None,
        path: str,
        depth: int,
        required: bool,
        out: list[FieldResult],
        shown_expected: Any = ABSENT,
        shown_predicted: Any = ABSENT,
    ) -> None:
        """Compare two present values; ``shown_*`` are the values before transforms, kept in the result."""
        if shown_expected is ABSENT:
            shown_expected, shown_predicted = expected, predicted
        rule = node.rule if node is not None else None
        comparator = rule.comparator if rule is not None else None
        expected_type = json_type(shown_expected)
        type_ok = type(shown_expected) is type(shown_predicted) or types_agree(
            expected_type, shown_predicted, self.options
        )
        try:
            result = self.compare_leaf(expected, predicted, node, path)
        except ComparatorError as exc:
            self._error(path, shown_expected, shown_predicted, depth, required, comparator, str(exc), out)
            return
        if result is None:
            self._pending.append((len(out), rule, expected, predicted))
            out.append(
                FieldResult(
                    path or "$",
                    PENDING,
                    0.0,
                    shown_expected,
                    shown_predicted,
                    expected_type,
                    json_type(shown_predicted),
                    type_ok,
                    False,
                    depth,
                    required,
                    ORIGIN_KEY,
                    None,
                    comparator,
                )
            )
            return
        score, equal, similarity = result
        if comparator is not None and similarity is None and type(expected) is str and type(predicted) is str:
            similarity = self._text_similarity(expected, predicted)
        self._emit_compared(
            path,
            score,
            equal,
            similarity,
            shown_expected,
            shown_predicted,
            expected_type,
            type_ok,
            depth,
            required,
            out,
            comparator,
        )
