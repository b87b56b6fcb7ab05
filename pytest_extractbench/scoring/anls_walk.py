"""ANLS* and its per-key scores in one pass over gold and prediction, without building a comparison tree.

:func:`.anls.anls_star_by_key` builds a node for every comparison and walks that tree again for the per-key
scores; for a typical record that cost more than the whole field walk. Here one recursion returns
``(total, length, equal)`` and lists the per-key occurrences as it goes. A list's candidate pairs are scored
without occurrences, and only the pairs its assignment keeps are walked for theirs. The arithmetic, the order of
every addition and the assignment's input are the tree's, so every float is the same; tuples of alternatives
(Python callers only) and values of types JSON does not have take the tree instead.
"""

from __future__ import annotations

import math
from functools import cache
from typing import Any

from rapidfuzz.distance.Levenshtein import distance as _distance

from ..core.errors import ExtractbenchError
from . import anls, anls_cells, budget
from .anls import (
    _LIST,
    _PATHS,
    _SCALARS,
    _TEXT_CACHE,
    THRESHOLD,
    _identical,
    _is_empty,
    _join,
    _ratio,
    _same_keys,
    _text,
    key_means,
    leaf_similarity,
    size,
    text_similarity,
)

_JSON = frozenset({str, int, float, bool, type(None), dict, list})
_MISSING = object()


class _Tree(ExtractbenchError):
    """A value this pass leaves to the tree: a tuple of alternatives, or a type JSON does not have (never leaves the
    module)."""


def anls_star_by_key(gold: Any, predicted: Any) -> tuple[float, dict[str, float]]:
    """ANLS* and the per-key scores, exactly as :func:`.anls.anls_star_by_key` gives them."""
    if isinstance(predicted, str) and isinstance(gold, list):  # perhaps read as alternatives: the tree's case
        return anls.anls_star_by_key(gold, predicted)
    occurrences: list[tuple[str, float]] = []
    try:
        total, length, _ = _measure(gold, predicted, "", occurrences)
    except (_Tree, RecursionError):  # the tree recurses as deep: it raises the same, or gives the answer
        return anls.anls_star_by_key(gold, predicted)
    return _ratio(total, length), key_means(occurrences)


def _measure(gold: Any, predicted: Any, path: str, out: list[tuple[str, float]] | None) -> tuple[float, int, bool]:
    """``(total, length, equal)`` of :func:`.anls._compare`; with ``out``, its per-key occurrences appended in
    :func:`.anls._keys`'s order."""
    kind, other = type(gold), type(predicted)
    if kind in _SCALARS and other in _SCALARS:
        return leaf_similarity(gold, predicted), 1, gold == predicted
    if kind not in _JSON or other not in _JSON:
        raise _Tree
    if gold is None:
        length = max(1, size(predicted))
        return (1.0, length, True) if _is_empty(predicted) else (0.0, length, False)
    if kind is dict or kind is list:
        if gold == predicted and _identical(gold, predicted):
            count = size(gold)
            if out is not None:
                _same_keys(gold, path, out)
            return float(count), count, True
        if kind is not other:
            return 0.0, max(size(gold), size(predicted)), False
        if kind is dict:
            return _objects(gold, predicted, path, out)
        return _lists(gold, predicted, path, out)
    return 0.0, max(1, size(predicted)), False  # a scalar against null, a list or an object


def _objects(
    gold: dict[Any, Any], predicted: dict[Any, Any], path: str, out: list[tuple[str, float]] | None
) -> tuple[float, int, bool]:
    total, length = 0.0, 0
    equal = True
    known, paths = _TEXT_CACHE, _PATHS
    for key, expected in gold.items():
        value = predicted.get(key, _MISSING)
        kind = type(expected)
        if kind in _SCALARS and type(value) in _SCALARS:  # most keys: the leaf inline
            if kind is type(value) and kind is not float and expected == value:
                # equal texts, floats aside (0.0 == -0.0 prints otherwise)
                similarity = 1.0
            else:  # leaf_similarity, a kept text looked up inline (_text's cache)
                text = known.get(expected) if kind is str else None
                other = known.get(value) if type(value) is str else None
                similarity = text_similarity(
                    text if text is not None else _text(expected), other if other is not None else _text(value)
                )
                equal = equal and expected == value
            total += similarity
            length += 1
            if out is not None:  # its ratio: similarity / 1; the path as _join keeps it
                out.append((paths.get((path, key)) or _join(path, key), similarity))
            continue
        child_path = path if out is None else _join(path, key)
        if value is _MISSING:
            scored = _measure(expected, None, child_path, out)
            # a key left out stays out of the closest gold when its gold is empty (the tree's "kept")
            equal = equal and _is_empty(expected)
        else:
            scored = _measure(expected, value, child_path, out)
            equal = equal and scored[2]
        total += scored[0]
        length += scored[1]
        if out is not None:
            out.append((child_path, _ratio(scored[0], scored[1])))
    for key, value in predicted.items():
        if key in gold:
            continue
        equal = False
        length += max(1, size(value))
        if out is not None and not _is_empty(value):
            out.append((_join(path, key), 0.0))
    return total, length, equal


_Pair = tuple[int, int, tuple[float, int, bool], list[tuple[str, float]] | None]


def _lists(
    gold: list[Any], predicted: list[Any], path: str, out: list[tuple[str, float]] | None
) -> tuple[float, int, bool]:
    if not gold or not predicted:
        return 0.0, size(gold) + size(predicted), not gold and not predicted
    element = path + _LIST if out is not None else path

    def pair(i: int, j: int) -> _Pair:
        found: list[tuple[str, float]] | None = None if out is None else []
        return i, j, _measure(gold[i], predicted[j], element, found), found

    def same(i: int, j: int) -> _Pair:
        """An identical pair (found so by identical_first): what _measure's identical case gives, not checked again."""
        count = size(gold[i])
        found: list[tuple[str, float]] | None = None if out is None else []
        if found is not None:
            _same_keys(gold[i], element, found)
        return i, j, (float(count), count, True), found

    texts = _Texts(gold, predicted)
    identical, rest_gold, rest_predicted = anls.identical_first(gold, predicted, _gain, texts.best)
    pairs = [same(i, j) for i, j in identical]
    if len(rest_gold) == 1 == len(rest_predicted):  # one pair left: no assignment to make
        pairs.append(pair(rest_gold[0], rest_predicted[0]))
    elif rest_gold and rest_predicted and len(rest_gold) * len(rest_predicted) > anls.MAX_CELLS:
        for i, j in zip(rest_gold, rest_predicted):
            budget.check()
            pairs.append(pair(i, j))
    elif rest_gold and rest_predicted:
        _assign(texts, rest_gold, rest_predicted, pairs, element if out is not None else None)
    pairs.sort(key=_first)
    total, length = 0.0, 0
    equal = len(gold) == len(predicted)
    for _, _, scored, _ in pairs:
        total += scored[0]
        length += scored[1]
        equal = equal and scored[2]
    if len(pairs) < len(gold):  # each pair takes one element a side: with as many pairs, none is left
        paired_gold = {i for i, _, _, _ in pairs}
        length += sum(size(x) for i, x in enumerate(gold) if i not in paired_gold)
    if len(pairs) < len(predicted):
        paired_predicted = {j for _, j, _, _ in pairs}
        length += sum(size(x) for j, x in enumerate(predicted) if j not in paired_predicted)
    if out is not None:
        for _, _, _, occurrences in sorted(pairs, key=_second):
            out.extend(occurrences or ())
    return total, length, equal


class _Texts:
    """A list's elements on both sides with each one's texts (:func:`_texts`), made once when first asked for: an
    element meets every element of the other side, in the identical pairs' check and in the assignment."""

    __slots__ = ("gold", "predicted", "_gold", "_predicted")

    def __init__(self, gold: list[Any], predicted: list[Any]) -> None:
        self.gold, self.predicted = gold, predicted
        self._gold: dict[int, Texts | None] = {}
        self._predicted: dict[int, Texts | None] = {}

    def of_gold(self, indices: list[int]) -> list[Texts | None]:
        return self._of(self.gold, self._gold, indices)

    def of_predicted(self, indices: list[int]) -> list[Texts | None]:
        return self._of(self.predicted, self._predicted, indices)

    @staticmethod
    def _of(values: list[Any], known: dict[int, Texts | None], indices: list[int]) -> list[Texts | None]:
        found = []
        for index in indices:
            if index in known:
                texts = known[index]
            else:
                texts = known[index] = _texts(values[index])
            found.append(texts)
        return found

    def best(self, rows: list[int], columns: list[int]) -> float:
        """The largest gain of a gold element of ``rows`` and a predicted one of ``columns`` (at least 0.0): the
        same gains the assignment computes (:func:`_gains`), so :func:`.anls._best_pair`'s number."""
        if not rows or not columns:
            return 0.0
        gain, scores = _gains(self, rows, columns)
        if scores is None:  # a matrix: its largest float is the largest of its cells
            return max(0.0, float(gain.max()))
        found = 0.0
        for gains in gain:
            for value in gains:
                found = max(found, value)
        return found


def _gains(texts: _Texts, rest_gold: list[int], rest_predicted: list[int]) -> tuple[Any, list[Any] | None]:
    """The assignment's gains of each gold element of ``rest_gold`` against each predicted element of
    ``rest_predicted``: :func:`.anls.assignment_gain` of each pair's ``(total, length, equal)``, as a matrix when
    it is large enough and every element an object of scalars (then the second item is None), else row by row
    with each pair's ``(total, length, equal)`` kept too."""
    gold, predicted = texts.gold, texts.predicted
    column_texts = texts.of_predicted(rest_predicted)
    row_texts = texts.of_gold(rest_gold)
    if len(rest_gold) * len(rest_predicted) >= anls_cells.MIN_CELLS:  # large enough to pay for matrices
        matrix = anls_cells.gains(row_texts, column_texts)
        if matrix is not None:
            budget.check()
            return matrix, None
    scores: list[list[tuple[float, int, bool]]] = []
    gain: list[list[float]] = []
    for i, found in zip(rest_gold, row_texts):
        budget.check()
        expected = gold[i]
        if found is not None:
            row = _flat_row(expected, found, predicted, rest_predicted, column_texts)
        else:
            row = [_measure(expected, predicted[j], "", None) for j in rest_predicted]
        gains: list[float] = []
        for total, length, equal in row:
            score = total / length if length > 0 else 1.0  # _ratio's
            # between equally good pairs, one whose closest gold equals the element wins
            gains.append(math.nextafter(score, math.inf) if equal else score)
        scores.append(row)
        gain.append(gains)
    return gain, scores


def _assign(
    texts: _Texts,
    rest_gold: list[int],
    rest_predicted: list[int],
    pairs: list[_Pair],
    element: str | None,
) -> None:
    """The tree's assignment of the elements left: the same gains, so the same pairs (with ``element``, the path of
    the elements, each kept pair lists its occurrences)."""
    linear_sum_assignment = _solver()
    gold, predicted = texts.gold, texts.predicted
    gain, scores = _gains(texts, rest_gold, rest_predicted)
    row_texts, column_texts = texts.of_gold(rest_gold), texts.of_predicted(rest_predicted)
    rows, columns = linear_sum_assignment(gain, maximize=True)
    for r, c in zip(rows.tolist(), columns.tolist()):
        i, j = rest_gold[r], rest_predicted[c]
        if element is None and scores is not None:
            pairs.append((i, j, scores[r][c], None))
            continue
        occurrences: list[tuple[str, float]] | None = None if element is None else []
        expected, found = row_texts[r], column_texts[c]
        if expected is not None and found is not None:
            scored = _flat_cell(gold[i], expected, predicted[j], found, element or "", occurrences)
        else:
            scored = _measure(gold[i], predicted[j], element or "", occurrences)
        pairs.append((i, j, scored, occurrences))


@cache
def _solver() -> Any:
    """scipy's assignment: numpy and scipy (0.9 s to import) load with the first one, not with the scoring package
    (an import statement run per list costs more than a small list's assignment takes)."""
    from scipy.optimize import linear_sum_assignment

    return linear_sum_assignment


Texts = dict[Any, tuple[Any, str]]


def _texts(value: Any) -> Texts | None:
    """Each key's value and text, for an object of scalars with text keys and no NaN (None for anything else: the
    full comparison's, where a NaN that is not equal to itself and the key 1 that is the key True are its own)."""
    if type(value) is not dict:
        return None
    found: dict[Any, tuple[Any, str]] = {}
    known = _TEXT_CACHE
    for key, leaf in value.items():
        if type(key) is not str:
            return None
        kind = type(leaf)
        if kind is str:  # most leaves: their text is kept already (_text's cache, looked up inline)
            text = known.get(leaf)
            found[key] = (leaf, text if text is not None else _text(leaf))
        elif kind is int or (kind is float and leaf == leaf):  # _text's, inline: Python writes numbers in lower case
            found[key] = (leaf, str(leaf))
        elif kind is bool:
            found[key] = (leaf, "true" if leaf else "false")
        else:
            return None
    return found


def _flat_row(
    gold: dict[Any, Any],
    gold_texts: dict[Any, tuple[Any, str]],
    predicted: list[Any],
    columns: list[int],
    column_texts: list[dict[Any, tuple[Any, str]] | None],
) -> list[tuple[float, int, bool]]:
    """:func:`_flat_cell` of one gold object of scalars against each element left, its leaf similarity inlined (the
    assignment's inner loop: most of ANLS*'s time). Adding a similarity of 0 leaves a non-negative total as it
    was, so those additions are skipped."""
    leaves = [(key, value, text, len(text)) for key, (value, text) in gold_texts.items()]
    count = len(leaves)
    row: list[tuple[float, int, bool]] = []
    for j, texts in zip(columns, column_texts):
        value = predicted[j]
        if texts is None:
            row.append(_measure(gold, value, "", None))
            continue
        if gold == value and _identical(gold, value):
            row.append((float(count), count, True))
            continue
        total = 0.0
        equal = True
        matched = 0
        for key, expected, text, first in leaves:
            found = texts.get(key)
            if found is None:  # against null: nothing earned; kept in the closest gold unless empty itself
                equal = equal and _is_empty(expected)
                continue
            matched += 1
            equal = equal and expected == found[0]
            other = found[1]
            if text == other:
                total += 1.0
                continue
            second = len(other)
            longest = first if first > second else second
            if 1 - abs(first - second) / longest < THRESHOLD:  # text_similarity's cut by lengths
                continue
            similarity = 1 - _distance(text, other) / longest
            if similarity >= THRESHOLD:
                total += similarity
        invented = len(texts) - matched  # each an invented scalar's size
        row.append((total, count + invented, equal and not invented))
    return row


def _flat_cell(
    gold: dict[Any, Any],
    gold_texts: dict[Any, tuple[Any, str]],
    predicted: dict[Any, Any],
    texts: dict[Any, tuple[Any, str]],
    path: str = "",
    out: list[tuple[str, float]] | None = None,
) -> tuple[float, int, bool]:
    """:func:`_measure` of two objects of scalars, from their texts (:func:`.anls._flat_score` without them)."""
    if gold == predicted and _identical(gold, predicted):
        if out is not None:
            _same_keys(gold, path, out)
        return float(len(gold)), len(gold), True
    total, length = 0.0, 0
    equal = True
    for key, (expected, text) in gold_texts.items():
        found = texts.get(key)
        if found is not None:
            similarity = text_similarity(text, found[1])
            total += similarity
            equal = equal and expected == found[0]
        else:  # against null: nothing earned; kept in the closest gold unless empty itself
            similarity = 0.0
            total += 0.0
            equal = equal and _is_empty(expected)
        length += 1
        if out is not None:
            out.append((_join(path, key), similarity))
    for key, value in predicted.items():
        if key not in gold:
            equal = False
            length += 1  # an invented scalar's size
            if out is not None and not _is_empty(value):
                out.append((_join(path, key), 0.0))
    return total, length, equal


def _gain(expected: Any, value: Any) -> float:
    """:func:`.anls._gain` from this pass's numbers."""
    return anls.assignment_gain(*_measure(expected, value, "", None))


def _first(pair: _Pair) -> int:
    return pair[0]


def _second(pair: _Pair) -> int:
    return pair[1]
