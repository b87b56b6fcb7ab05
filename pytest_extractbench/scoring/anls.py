"""ANLS*: the average normalized Levenshtein similarity, generalized to whole JSON answers (Peer et al., 2024,
"ANLS* - A Universal Document Processing Metric for Generative Large Language Models").

One number for a gold object and a prediction, with no schema and no per-field options: the document-AI
literature reports it, so a run can be compared with published figures. Written from the paper's definition and
checked against the reference package ``anls-star`` (tests/unit/test_anls_star.py). The score is a ratio
``sum of leaf similarities / pairwise length``, where both sides recurse over the gold's structure:

- **leaf** (text, number, bool): both sides as text, lower-cased, whitespace collapsed; the similarity is
  ``1 - Levenshtein distance / longer length``, and 0 below :data:`THRESHOLD` (two empty strings score 1). A
  leaf against a list, an object or null scores 0. Length ``max(1, size of the prediction)``.
- **null** in the gold: a prediction of null, ``""``, ``[]`` or ``{}`` scores 1, anything else 0; length as a leaf.
- **list**: gold and predicted elements are paired by the assignment that maximizes the sum of the pairs' own
  ANLS* (``scipy.optimize.linear_sum_assignment``; among equal pairs an element equal to the gold wins, and
  identical elements pair before it where no pairing can beat them). Where equally good pairings differ in length
  the definition leaves the choice open: the reference package's solver may take another (the tests and
  benchmarks/bench_anls.py count these cases). Past :data:`MAX_CELLS` cells identical elements pair first and the
  rest by the assignment, or in order when they are past it too, which bounds a hostile output's cost. The pairs' sums and lengths add up; an unpaired element on either side adds its size to the length and nothing to the sum,
  so missed and invented elements both cost. A list against anything else scores 0 with length
  ``max(size of gold, size of prediction)``.
- **object**: keys of both sides; a missing key reads as null. A key only the prediction has scores 0 and counts
  its size (at least 1), even with an empty value. Against a non-object: as for lists.
- **tuple** in the gold (Python API only: JSON has none): alternatives; the one whose own ANLS* is highest counts
  (on a tie the one whose closest gold equals the prediction, else the first).

*Size* counts leaves: a leaf or null is 1, a list or object the sum of its values' sizes (so ``[]`` is 0), a tuple
its largest alternative. An empty pairwise length scores 1. A gold list of strings against a predicted string is
read as a tuple of alternatives at the top level only (the classic ANLS of VQA datasets, as the package does).

Per field: the ANLS* of each object key's value, named by index-free path (``items[].sku``), averaged over its
occurrences in list elements that were paired; a key only the prediction has with an empty value is left out.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from functools import partial
from typing import Any, NamedTuple

from rapidfuzz.distance.Levenshtein import distance as _distance  # python-Levenshtein's, without its Python wrapper

from . import budget

THRESHOLD = 0.5
"""Leaf similarities below this count as 0 (the paper's and classic ANLS's value)."""

_LIST = "[]"  # the path part of a list's elements


class AnlsStar(NamedTuple):
    """ANLS* of one prediction: the score, the gold arranged closest to the prediction, and per-key scores."""

    score: float
    closest: Any  # alternatives chosen, list elements in the prediction's order, unpaired gold elements last
    fields: dict[str, float]  # index-free key path -> mean ANLS* of that key's value


class _Node(NamedTuple):
    """One comparison, its details left to build: a list's pairs and an alternative's choice hold every candidate
    pair's node, and only the chosen ones are ever turned into a closest gold and per-key scores."""

    total: float  # sum of leaf similarities
    length: int  # pairwise length
    equal: bool  # the closest gold equals the prediction (Python's ==, as the reference package compares)
    kind: int
    gold: Any
    predicted: Any
    parts: Any = None  # objects: [(key, node or None for an invented key, kept in the closest gold)]; lists: pairs


_LEAF, _NULL, _MISMATCH, _SAME, _OBJECT, _ARRAY, _CHOICE = range(7)


def anls_star(gold: Any, predicted: Any) -> float:
    """ANLS* of ``predicted`` against ``gold`` in [0, 1] (see the module docstring)."""
    node = _compare(_as_alternatives(gold, predicted), predicted)
    return _ratio(node.total, node.length)


def anls_star_details(gold: Any, predicted: Any) -> AnlsStar:
    """ANLS* with the closest gold and the per-key scores."""
    node = _compare(_as_alternatives(gold, predicted), predicted)
    keys: list[tuple[str, float]] = []
    _keys(node, "", keys)
    return AnlsStar(_ratio(node.total, node.length), _closest(node), key_means(keys))


def anls_star_by_key(gold: Any, predicted: Any) -> tuple[float, dict[str, float]]:
    """ANLS* and the per-key scores, without the closest gold (what a scored sample keeps)."""
    node = _compare(_as_alternatives(gold, predicted), predicted)
    keys: list[tuple[str, float]] = []
    _keys(node, "", keys)
    return _ratio(node.total, node.length), key_means(keys)


def key_occurrences(gold: Any, predicted: Any) -> list[tuple[str, float]]:
    """Every per-key score as (key path, value), one per occurrence, in the reference package's order."""
    keys: list[tuple[str, float]] = []
    _keys(_compare(_as_alternatives(gold, predicted), predicted), "", keys)
    return keys


def key_means(occurrences: Iterable[tuple[str, float]]) -> dict[str, float]:
    """Mean score per key path (``a.b``, ``items[].sku``)."""
    sums: dict[str, list[float]] = {}
    for path, value in occurrences:
        entry = sums.get(path)
        if entry is None:
            sums[path] = [value, 1]
        else:
            entry[0] += value
            entry[1] += 1
    return {path: total / count for path, (total, count) in sums.items()}


_PATHS: dict[tuple[str, Any], str] = {}


def _join(path: str, key: Any) -> str:
    """``path.key`` (``key`` at the root), kept for the next sample with the same keys."""
    joined = _PATHS.get((path, key))
    if joined is None:
        joined = f"{path}.{key}" if path else str(key)
        if type(key) is str:  # 1, 1.0 and True are one dict key: only text keys are kept
            if len(_PATHS) > 50_000:
                _PATHS.clear()
            _PATHS[(path, key)] = joined
    return joined


def _as_alternatives(gold: Any, predicted: Any) -> Any:
    if isinstance(predicted, str) and isinstance(gold, list) and gold and all(isinstance(x, str) for x in gold):
        return tuple(gold)
    return gold


def _ratio(total: float, length: int) -> float:
    return total / length if length > 0 else 1.0


def _is_empty(value: Any) -> bool:
    """What a null in the gold accepts: null, ``""``, ``[]``, ``{}``."""
    return value is None or (type(value) in (str, list, dict) and not value)


def size(value: Any) -> int:
    """How many leaves ``value`` counts for in a pairwise length."""
    if isinstance(value, (dict, list)):
        count = 0
        for v in value.values() if isinstance(value, dict) else value:
            kind = type(v)
            # a leaf counts 1 without a call (most values of a record are leaves)
            count += 1 if kind is str or kind is int or kind is float or kind is bool or v is None else size(v)
        return count
    if isinstance(value, tuple):
        if not value:
            raise ValueError("a tuple of alternatives needs at least one alternative")
        return max(size(v) for v in value)
    return 1


_TEXT_CACHE: dict[str, str] = {}


def _text(value: Any) -> str:
    """Lower-cased, whitespace collapsed; short texts are kept (a list's elements meet every other element)."""
    kind = type(value)
    if kind is not str or len(value) > 256:
        if kind is int or kind is float:  # Python writes numbers in lower case, without spaces
            return str(value)
        if kind is bool:
            return "true" if value else "false"
        return " ".join(str(value).lower().split())
    found = _TEXT_CACHE.get(value)
    if found is None:
        if len(_TEXT_CACHE) > 50_000:
            _TEXT_CACHE.clear()
        found = _TEXT_CACHE[value] = " ".join(value.lower().split())
    return found


def leaf_similarity(gold: Any, predicted: Any) -> float:
    """Normalized Levenshtein similarity of two leaves as text, 0 below :data:`THRESHOLD`."""
    return text_similarity(_text(gold), _text(predicted))


def text_similarity(a: str, b: str) -> float:
    """:func:`leaf_similarity` of two leaves' texts (:func:`_text`)."""
    if a == b:
        return 1.0
    first, second = len(a), len(b)
    longest = first if first > second else second
    # the distance is at least the difference in length: when that alone puts the similarity under the
    # threshold, so does the distance (the same division, by the same length, of a larger number)
    if 1 - abs(first - second) / longest < THRESHOLD:
        return 0.0
    similarity = 1 - _distance(a, b) / longest
    return 0.0 if similarity < THRESHOLD else similarity


def _identical(a: Any, b: Any) -> bool:
    """Equal as JSON, type for type (Python has 1 == 1.0 == True and 0.0 == -0.0, which print differently); the
    caller has checked ``a == b``."""
    kind = type(a)
    if kind is not type(b):
        return False
    if kind is str or kind is int or kind is bool or a is None:
        return True
    if kind is float:
        return str(a) == str(b)
    if kind is dict:
        return all(_identical(value, b[key]) for key, value in a.items())
    if kind is list:
        return all(_identical(x, y) for x, y in zip(a, b))
    return False


_SCALARS = frozenset({str, int, float, bool})
PAIR_IDENTICAL_FIRST = True
"""Identical list elements pair before the assignment (tests turn it off to see which scores hang on a tie)."""


def _compare(gold: Any, predicted: Any) -> _Node:
    if type(gold) in _SCALARS and type(predicted) in _SCALARS:  # the common case first
        return _Node(leaf_similarity(gold, predicted), 1, gold == predicted, _LEAF, gold, predicted)
    if isinstance(gold, tuple):
        return _alternatives(gold, predicted)
    if isinstance(predicted, tuple):  # predictions hold lists; a tuple from Python code is read as one
        predicted = list(predicted)
    if gold is None:
        length = max(1, size(predicted))
        if _is_empty(predicted):
            return _Node(1.0, length, True, _NULL, None, predicted)
        return _Node(0.0, length, False, _MISMATCH, None, predicted)
    if type(gold) in (dict, list) and gold == predicted and _identical(gold, predicted):  # == first: C speed
        count = size(gold)
        return _Node(float(count), count, True, _SAME, gold, predicted)
    if isinstance(gold, dict):
        if not isinstance(predicted, dict):
            return _Node(0.0, max(size(gold), size(predicted)), False, _MISMATCH, gold, predicted)
        return _objects(gold, predicted)
    if isinstance(gold, list):
        if not isinstance(predicted, list):
            return _Node(0.0, max(size(gold), size(predicted)), False, _MISMATCH, gold, predicted)
        return _lists(gold, predicted)
    length = max(1, size(predicted))
    if predicted is None or isinstance(predicted, (dict, list)):
        return _Node(0.0, length, False, _MISMATCH, gold, predicted)
    return _Node(leaf_similarity(gold, predicted), length, gold == predicted, _LEAF, gold, predicted)


def _alternatives(gold: tuple[Any, ...], predicted: Any) -> _Node:
    if not gold:
        raise ValueError("a tuple of alternatives needs at least one alternative")
    best, best_key = None, None
    for option in gold:
        node = _compare(option, predicted)
        key = (_ratio(node.total, node.length), node.equal)
        if best_key is None or key > best_key:
            best, best_key = node, key
    assert best is not None
    return _Node(best.total, best.length, best.equal, _CHOICE, gold, predicted, best)


def _objects(gold: dict[Any, Any], predicted: dict[Any, Any]) -> _Node:
    total, length = 0.0, 0
    equal = True
    parts: list[tuple[Any, _Node | None, bool]] = []
    for key, expected in gold.items():
        if key in predicted:
            node = _compare(expected, predicted[key])
            kept, equal = True, equal and node.equal
        else:
            node = _compare(expected, None)
            # a key left out stays out of the closest gold when its gold is empty too (a null left out is right)
            kept = not _is_empty(_closest(node))
            equal = equal and not kept
        total += node.total
        length += node.length
        parts.append((key, node, kept))
    for key, value in predicted.items():
        if key in gold:
            continue
        # an invented key: nothing earned, its size counted (an empty value still counts 1)
        equal = False
        length += max(1, size(value))
        if not _is_empty(value):
            parts.append((key, None, True))
    return _Node(total, length, equal, _OBJECT, gold, predicted, parts)


MAX_CELLS = 250_000
"""Above this many differing gold x predicted elements (500 x 500) the rest pair in order, not by an assignment
whose matrix would outlast a sample's time budget (the Hungarian alignment's fallback, at a larger size)."""


def _element_key(value: Any) -> Any:
    """A hashable key equal for identical scalars (type for type), None for anything else."""
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return (kind, value)
    if kind is float and value == value:  # NaN equals nothing, itself included
        return (kind, repr(value))
    return None


def identical_first(
    gold: list[Any],
    predicted: list[Any],
    gain: Callable[[Any, Any], float],
    best: Callable[[list[int], list[int]], float] | None = None,
) -> tuple[list[tuple[int, int]], list[int], list[int]]:
    """The pairs of identical elements, in gold order, and the gold and predicted indices left for the assignment.

    An element identical to a gold one pairs with it first when no assignment can do better (:func:`_beatable`);
    else the assignment pairs every element, unless the full matrix is past :data:`MAX_CELLS`. ``gain`` scores a
    pair as the assignment does; ``best`` (gold indices, predicted indices), when given, is the largest ``gain``
    of a block of pairs, 0.0 at least, computed faster than pair by pair. Scalars are found by hash, objects and
    lists by a scan while the list is small enough."""
    if not PAIR_IDENTICAL_FIRST:
        return [], list(range(len(gold))), list(range(len(predicted)))
    pairs: list[tuple[int, int]] = []
    rest_gold: list[int] = []
    by_key: dict[Any, list[int]] = {}
    others: list[int] = []
    for j, value in enumerate(predicted):
        key = None if type(value) is dict else _element_key(value)  # records (most elements) have no key: no call
        if key is None:
            others.append(j)
        else:
            by_key.setdefault(key, []).append(j)
    scan = len(gold) * len(others) <= MAX_CELLS
    taken: set[int] = set()
    for i, expected in enumerate(gold):
        key = None if type(expected) is dict else _element_key(expected)
        if key is not None:
            found = by_key.get(key)
            if found:
                j = found.pop(0)
                pairs.append((i, j))
                taken.add(j)
                continue
        elif scan and not isinstance(expected, tuple):
            for position, j in enumerate(others):
                value = predicted[j]
                if expected == value and _identical(expected, value):
                    pairs.append((i, j))
                    taken.add(j)
                    del others[position]
                    break
            else:
                rest_gold.append(i)
            continue
        rest_gold.append(i)
    rest_predicted = [j for j in range(len(predicted)) if j not in taken]
    if not rest_gold or not rest_predicted or len(gold) * len(predicted) > MAX_CELLS:
        return pairs, rest_gold, rest_predicted
    if best is None:
        best = partial(_best_pair, gold, predicted, gain)
    if _beatable([i for i, _ in pairs], [j for _, j in pairs], rest_gold, rest_predicted, best):
        return [], list(range(len(gold))), list(range(len(predicted)))
    return pairs, rest_gold, rest_predicted


_TOP = math.nextafter(1.0, math.inf)  # an identical pair's gain, the highest a pair has


def _beatable(
    same_gold: list[int],
    same_predicted: list[int],
    rest_gold: list[int],
    rest_predicted: list[int],
    best: Callable[[list[int], list[int]], float],
) -> bool:
    """Whether an assignment of every element could beat the identical pairs plus an assignment of the rest.

    An assignment that pairs ``a`` identical gold elements with rest predicted ones (each gaining at most ``c1``) and
    ``b`` rest gold elements with identical predicted ones (at most ``c2``) keeps at most ``k - max(a, b)`` pairs
    among the ``k`` identical elements, each worth at most ``_TOP``, and its rest pairs are worth at most the rest's
    own assignment: with ``c1 + c2 <= _TOP`` it gains no more than the identical pairs do. Past that it can: the
    threshold lets gold "aaaaaaabbb" and prediction "bbbaaaaaaa" each be near "aaaaaaaaaa" (0.7) and not each other.
    ``best`` gives ``c1`` and ``c2`` (the largest gain of a block of indices); a float sum grows with either term,
    so ``c1 + c2`` past ``_TOP`` is ``c1`` plus some single gain past it."""
    c1 = best(same_gold, rest_predicted)
    if c1 == 0.0:
        return False
    return c1 + best(rest_gold, same_predicted) > _TOP


def _best_pair(
    gold: list[Any], predicted: list[Any], gain: Callable[[Any, Any], float], rows: list[int], columns: list[int]
) -> float:
    """The largest ``gain`` of a gold element of ``rows`` and a predicted element of ``columns``, pair by pair (at
    least 0.0)."""
    found = 0.0
    for i in rows:
        budget.check()
        expected = gold[i]
        for j in columns:
            found = max(found, gain(expected, predicted[j]))
    return found


def _lists(gold: list[Any], predicted: list[Any]) -> _Node:
    if not gold or not predicted:
        return _Node(0.0, size(gold) + size(predicted), not gold and not predicted, _ARRAY, gold, predicted, ())
    identical, rest_gold, rest_predicted = identical_first(gold, predicted, _gain)
    pairs = [(i, j, _compare(gold[i], predicted[j])) for i, j in identical]
    if rest_gold and rest_predicted and len(rest_gold) * len(rest_predicted) > MAX_CELLS:
        for i, j in zip(rest_gold, rest_predicted):
            budget.check()
            pairs.append((i, j, _compare(gold[i], predicted[j])))
    elif rest_gold and rest_predicted:
        # numpy and scipy (0.9 s to import) load with the first assignment, not with the scoring package
        from scipy.optimize import linear_sum_assignment

        nodes: list[list[_Node | None]] = []
        gain: list[list[float]] = []
        for i in rest_gold:
            budget.check()
            expected = gold[i]
            row: list[_Node | None] = []
            gains: list[float] = []
            flat = type(expected) is dict
            for j in rest_predicted:
                value = predicted[j]
                scored = _flat_score(expected, value) if flat and type(value) is dict else None
                if scored is None:
                    node = _compare(expected, value)
                    scored = (node.total, node.length, node.equal)
                    row.append(node)
                else:
                    row.append(None)  # built only if the assignment picks it
                gains.append(assignment_gain(*scored))
            nodes.append(row)
            gain.append(gains)
        rows, columns = linear_sum_assignment(gain, maximize=True)
        for r, c in zip(rows.tolist(), columns.tolist()):
            i, j = rest_gold[r], rest_predicted[c]
            chosen = nodes[r][c]
            pairs.append((i, j, chosen if chosen is not None else _compare(gold[i], predicted[j])))
    pairs.sort(key=lambda pair: pair[0])
    total, length = 0.0, 0
    equal = len(gold) == len(predicted)
    for _, _, node in pairs:
        total += node.total
        length += node.length
        equal = equal and node.equal
    paired_gold = {i for i, _, _ in pairs}
    paired_predicted = {j for _, j, _ in pairs}
    length += sum(size(x) for i, x in enumerate(gold) if i not in paired_gold)
    length += sum(size(x) for j, x in enumerate(predicted) if j not in paired_predicted)
    return _Node(total, length, equal, _ARRAY, gold, predicted, pairs)


def assignment_gain(total: float, length: int, equal: bool) -> float:
    """What the assignment gains by pairing two elements: their ANLS*, one ulp more when equal (between equally good
    pairs, one whose closest gold equals the element wins)."""
    score = _ratio(total, length)
    return math.nextafter(score, math.inf) if equal else score


def _gain(expected: Any, value: Any) -> float:
    node = _compare(expected, value)
    return assignment_gain(node.total, node.length, node.equal)


def _flat_score(gold: dict[Any, Any], predicted: dict[Any, Any]) -> tuple[float, int, bool] | None:
    """``(total, length, equal)`` of :func:`_compare` on two objects of scalars, without building their nodes (an
    assignment scores every gold x predicted pair of list elements and keeps few); None for any other pair."""
    for value in gold.values():
        if type(value) not in _SCALARS:
            return None
    for value in predicted.values():
        if type(value) not in _SCALARS:
            return None
    if gold == predicted and _identical(gold, predicted):
        return float(len(gold)), len(gold), True
    total, length = 0.0, 0
    equal = True
    for key, expected in gold.items():
        if key in predicted:
            value = predicted[key]
            total += leaf_similarity(expected, value)
            equal = equal and expected == value
        else:  # against null: nothing earned; kept in the closest gold unless empty itself
            total += 0.0
            equal = equal and _is_empty(expected)
        length += 1
    for key in predicted:
        if key not in gold:
            equal = False
            length += 1  # an invented scalar's size
    return total, length, equal


def _closest(node: _Node) -> Any:
    """The gold as close to the prediction as its alternatives and list orders allow."""
    kind = node.kind
    if kind == _CHOICE:
        return _closest(node.parts)
    if kind == _NULL:
        return node.predicted
    if kind == _OBJECT:
        return {key: None if child is None else _closest(child) for key, child, kept in node.parts if kept}
    if kind == _ARRAY:
        pairs = sorted(node.parts, key=lambda pair: pair[1])
        paired = {i for i, _, _ in pairs}
        return [_closest(child) for _, _, child in pairs] + [x for i, x in enumerate(node.gold) if i not in paired]
    return node.gold  # leaves, mismatches, identical subtrees


def _keys(node: _Node, path: str, out: list[tuple[str, float]]) -> None:
    """Append the per-key scores under ``node`` in the reference package's order (a key's children, then itself;
    list elements in the prediction's order, paired ones only)."""
    kind = node.kind
    if kind == _CHOICE:
        _keys(node.parts, path, out)
    elif kind == _OBJECT:
        for key, child, _ in node.parts:
            child_path = _join(path, key)
            if child is None:
                out.append((child_path, 0.0))
            else:
                _keys(child, child_path, out)
                out.append((child_path, _ratio(child.total, child.length)))
    elif kind == _ARRAY:
        element = path + _LIST
        for _, _, child in sorted(node.parts, key=lambda pair: pair[1]):
            _keys(child, element, out)
    elif kind == _SAME:
        _same_keys(node.gold, path, out)


def _same_keys(value: Any, path: str, out: list[tuple[str, float]]) -> None:
    if type(value) is dict:
        for key, child in value.items():
            child_path = _join(path, key)
            if type(child) in (dict, list):
                _same_keys(child, child_path, out)
            out.append((child_path, 1.0))
    elif type(value) is list:
        element = path + _LIST
        for child in value:
            if type(child) in (dict, list):
                _same_keys(child, element, out)
