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
  ANLS* (``scipy.optimize.linear_sum_assignment``; among equal pairs an element equal to the gold wins). The pairs'
  sums and lengths add up; an unpaired element on either side adds its size to the length and nothing to the sum,
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
from typing import Any, Iterable, NamedTuple

import numpy as np
from Levenshtein import distance as _distance
from scipy.optimize import linear_sum_assignment

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
    total: float  # sum of leaf similarities
    length: int  # pairwise length
    closest: Any
    keys: tuple[tuple[tuple[str, ...], float], ...]  # (key path parts, ANLS* of that key), in the package's order


def anls_star(gold: Any, predicted: Any) -> float:
    """ANLS* of ``predicted`` against ``gold`` in [0, 1] (see the module docstring)."""
    return anls_star_details(gold, predicted).score


def anls_star_details(gold: Any, predicted: Any) -> AnlsStar:
    """ANLS* with the closest gold and the per-key scores."""
    node = _compare(_as_alternatives(gold, predicted), predicted, ())
    return AnlsStar(_ratio(node.total, node.length), node.closest, key_means(node.keys))


def key_occurrences(gold: Any, predicted: Any) -> tuple[tuple[tuple[str, ...], float], ...]:
    """Every per-key score as (path parts, value), one per occurrence; list levels are the part ``"[]"``."""
    return _compare(_as_alternatives(gold, predicted), predicted, ()).keys


def key_means(occurrences: Iterable[tuple[tuple[str, ...], float]]) -> dict[str, float]:
    """Mean score per key path, paths written ``a.b``, ``items[].sku``."""
    sums: dict[str, list[float]] = {}
    for parts, value in occurrences:
        entry = sums.setdefault(path_name(parts), [0.0, 0])
        entry[0] += value
        entry[1] += 1
    return {path: total / count for path, (total, count) in sums.items()}


def path_name(parts: tuple[str, ...]) -> str:
    """``("items", "[]", "sku")`` -> ``items[].sku``."""
    out = ""
    for part in parts:
        out = out + part if part == _LIST else (f"{out}.{part}" if out else part)
    return out


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
    if isinstance(value, dict):
        return sum(size(v) for v in value.values())
    if isinstance(value, list):
        return sum(size(v) for v in value)
    if isinstance(value, tuple):
        if not value:
            raise ValueError("a tuple of alternatives needs at least one alternative")
        return max(size(v) for v in value)
    return 1


def _text(value: Any) -> str:
    return " ".join(str(value).lower().split())


def leaf_similarity(gold: Any, predicted: Any) -> float:
    """Normalized Levenshtein similarity of two leaves as text, 0 below :data:`THRESHOLD`."""
    a, b = _text(gold), _text(predicted)
    longest = max(len(a), len(b))
    similarity = 1 - (_distance(a, b) / longest if longest else 0.0)
    return 0.0 if similarity < THRESHOLD else similarity


def _compare(gold: Any, predicted: Any, path: tuple[str, ...]) -> _Node:
    if isinstance(gold, tuple):
        return _alternatives(gold, predicted, path)
    if isinstance(predicted, tuple):  # predictions hold lists; a tuple from Python code is read as one
        predicted = list(predicted)
    if gold is None:
        length = max(1, size(predicted))
        return _Node(1.0, length, predicted, ()) if _is_empty(predicted) else _Node(0.0, length, None, ())
    if isinstance(gold, dict):
        if not isinstance(predicted, dict):
            return _Node(0.0, max(size(gold), size(predicted)), gold, ())
        return _objects(gold, predicted, path)
    if isinstance(gold, list):
        if not isinstance(predicted, list):
            return _Node(0.0, max(size(gold), size(predicted)), gold, ())
        return _lists(gold, predicted, path)
    length = max(1, size(predicted))
    if predicted is None or isinstance(predicted, (dict, list)):
        return _Node(0.0, length, gold, ())
    return _Node(leaf_similarity(gold, predicted), length, gold, ())


def _alternatives(gold: tuple[Any, ...], predicted: Any, path: tuple[str, ...]) -> _Node:
    if not gold:
        raise ValueError("a tuple of alternatives needs at least one alternative")
    best, best_key = None, None
    for option in gold:
        node = _compare(option, predicted, path)
        key = (_ratio(node.total, node.length), node.closest == predicted)
        if best_key is None or key > best_key:
            best, best_key = node, key
    assert best is not None
    return best


def _objects(gold: dict[Any, Any], predicted: dict[Any, Any], path: tuple[str, ...]) -> _Node:
    total, length = 0.0, 0
    closest: dict[Any, Any] = {}
    keys: list[tuple[tuple[str, ...], float]] = []
    for key in [*gold, *(k for k in predicted if k not in gold)]:
        in_gold, in_predicted = key in gold, key in predicted
        value = predicted.get(key)
        if not in_gold:
            # an invented key: nothing earned, its size counted (an empty value still counts 1)
            length += max(1, size(value))
            if _is_empty(value):
                continue
            keys.append(((*path, str(key)), 0.0))
            closest[key] = None
            continue
        child_path = (*path, str(key))
        node = _compare(gold[key], value, child_path)
        total += node.total
        length += node.length
        if in_predicted or not _is_empty(node.closest):
            closest[key] = node.closest
        keys.extend(node.keys)
        keys.append((child_path, _ratio(node.total, node.length)))
    return _Node(total, length, closest, tuple(keys))


def _lists(gold: list[Any], predicted: list[Any], path: tuple[str, ...]) -> _Node:
    if not gold or not predicted:
        return _Node(0.0, size(gold) + size(predicted), list(gold), ())
    element_path = (*path, _LIST)
    nodes: list[list[_Node]] = []
    gain = np.empty((len(gold), len(predicted)))
    for i, expected in enumerate(gold):
        budget.check()
        row = []
        for j, value in enumerate(predicted):
            node = _compare(expected, value, element_path)
            score = _ratio(node.total, node.length)
            # between equally good pairs, one whose closest gold equals the element wins
            gain[i, j] = math.nextafter(score, math.inf) if node.closest == value else score
            row.append(node)
        nodes.append(row)
    rows, columns = linear_sum_assignment(gain, maximize=True)
    total, length = 0.0, 0
    paired = []
    for i, j in zip(rows.tolist(), columns.tolist()):
        node = nodes[i][j]
        total += node.total
        length += node.length
        paired.append((j, node))
    unpaired_gold = sorted(set(range(len(gold))) - set(rows.tolist()))
    unpaired_predicted = set(range(len(predicted))) - set(columns.tolist())
    length += sum(size(gold[i]) for i in unpaired_gold) + sum(size(predicted[j]) for j in unpaired_predicted)
    paired.sort(key=lambda item: item[0])
    closest = [node.closest for _, node in paired] + [gold[i] for i in unpaired_gold]
    keys = tuple(occurrence for _, node in paired for occurrence in node.keys)
    return _Node(total, length, closest, keys)
