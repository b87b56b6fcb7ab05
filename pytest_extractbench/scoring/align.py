"""Array alignment: which gold element pairs with which predicted element.

An aligner returns pairs ``(gold_index, predicted_index)``; ``None`` on one side
marks an unmatched element (its fields are missed or spurious). Matched pairs come
first, in gold order. Aligners are looked up by name (``x-eval-align``), so
strategies can be added without touching the walker:

- ``ordered`` (default): element i with element i.
- ``key_field`` (``{"match_by": "key_field", "key": "sku"}``, or a list of keys): elements
  with the same key value pair up (first come, first served); the rest pair with an
  identical element on the other side if there is one.
- ``hungarian``: identical elements pair up first (nothing can be more similar: a model that
  copied an element right is not penalized for a reordering elsewhere); the rest get the
  assignment that maximizes their total similarity (``scipy.optimize.linear_sum_assignment``),
  where the similarity of two elements is the mean field score of comparing them recursively
  with the same rules. Among equally good assignments the original order wins. When the
  rest is larger than ``max_cells`` gold x predicted elements (default 2,500, i.e. 50 x 50),
  the quadratic similarity matrix is not built and the rest pairs in order (the safe fallback).
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

import orjson

from .compare import scalar_key
from .options import ScoringOptions
from .registry import Registry, param_problems, unknown_params
from .schema import SchemaNode, json_type

Pair = tuple[int | None, int | None]


class AlignContext(NamedTuple):
    """What an aligner may use besides the two arrays."""

    params: Mapping[str, Any] = {}
    # similarity(expected_element, predicted_element) in [0, 1], with the schema's rules
    similarity: Callable[[Any, Any], float] | None = None
    path: str = ""
    # the same for every pair at once: similarities(expected_elements, predicted_elements)[i][j]
    similarities: Callable[[Sequence[Any], Sequence[Any]], list[list[float]]] | None = None


Aligner = Callable[..., list[Pair]]
ParamCheck = Callable[[Mapping[str, Any]], Sequence[str]]


class AlignerSpec(NamedTuple):
    fn: Aligner
    check_params: ParamCheck | None = None


ALIGNERS: Registry[AlignerSpec] = Registry("array alignment")

DEFAULT_MAX_CELLS = 2500


def align_ordered(
    expected: Sequence[Any],
    predicted: Sequence[Any],
    node: SchemaNode | None,
    options: ScoringOptions,
    context: AlignContext | None = None,
) -> list[Pair]:
    """Element i pairs with element i; the longer side's tail is unmatched."""
    shared = min(len(expected), len(predicted))
    pairs: list[Pair] = [(i, i) for i in range(shared)]
    pairs.extend((i, None) for i in range(shared, len(expected)))
    pairs.extend((None, j) for j in range(shared, len(predicted)))
    return pairs


def _canonical(value: Any) -> bytes | None:
    """A type-strict canonical form (1, 1.0 and true differ), or None when there is none."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except (TypeError, orjson.JSONEncodeError):
        return None


def _finish(pairs: list[Pair], gold_left: list[int], pred_left: list[int]) -> list[Pair]:
    """Matched pairs in gold order, then unmatched gold, then unmatched predictions."""
    pairs.sort()
    pairs.extend((i, None) for i in gold_left)
    pairs.extend((None, j) for j in pred_left)
    return pairs


def _match_by(
    expected: Sequence[Any], predicted: Sequence[Any], gold: list[int], pred: list[int], key: Callable[[Any], Any]
) -> tuple[list[Pair], list[int], list[int]]:
    """Pair elements with equal keys (first come, first served; a None key never pairs); returns
    the pairs and what is left on each side."""
    waiting: dict[Any, deque[int]] = defaultdict(deque)
    pred_left: list[int] = []
    for j in pred:
        found = key(predicted[j])
        if found is None:
            pred_left.append(j)
        else:
            waiting[found].append(j)
    pairs: list[Pair] = []
    gold_left: list[int] = []
    for i in gold:
        found = key(expected[i])
        queue = waiting.get(found) if found is not None else None
        if queue:
            pairs.append((i, queue.popleft()))
        else:
            gold_left.append(i)
    pred_left.extend(j for queue in waiting.values() for j in queue)
    pred_left.sort()
    return pairs, gold_left, pred_left


def _match_identical(
    expected: Sequence[Any], predicted: Sequence[Any], gold: list[int], pred: list[int]
) -> tuple[list[Pair], list[int], list[int]]:
    """Pair identical elements."""
    return _match_by(expected, predicted, gold, pred, _canonical)


def _keys(params: Mapping[str, Any]) -> list[str]:
    key = params["key"]
    return [key] if isinstance(key, str) else list(key)


def _check_key_field(params: Mapping[str, Any]) -> list[str]:
    key = params.get("key")
    problems = []
    if not (isinstance(key, str) and key) and not (
        isinstance(key, list) and key and all(isinstance(k, str) and k for k in key)
    ):
        problems.append(f"key_field needs 'key': a property name or a list of them, got {key!r}")
    return problems + unknown_params(params, {"key"})


def align_key_field(
    expected: Sequence[Any],
    predicted: Sequence[Any],
    node: SchemaNode | None,
    options: ScoringOptions,
    context: AlignContext | None = None,
) -> list[Pair]:
    """Pair elements whose key properties are equal: same JSON type (``true`` never pairs with
    ``"TRUE"``, 1 pairs with 1.0) and same value, strings normalized as the options say."""
    keys = _keys(context.params if context else {})

    def key_of(element: Any) -> tuple[Any, ...] | None:
        if type(element) is not dict:
            return None
        values = []
        for name in keys:
            value = element.get(name)
            if value is None or type(value) in (dict, list):
                return None
            values.append((json_type(value), scalar_key(value, options)))
        return tuple(values)

    pairs, gold_rest, pred_rest = _match_by(
        expected, predicted, list(range(len(expected))), list(range(len(predicted))), key_of
    )
    identical, gold_left, pred_left = _match_identical(expected, predicted, gold_rest, pred_rest)
    return _finish(pairs + identical, gold_left, pred_left)


def _check_hungarian(params: Mapping[str, Any]) -> list[str]:
    problems = []
    cells = params.get("max_cells", DEFAULT_MAX_CELLS)
    if isinstance(cells, bool) or not isinstance(cells, int) or cells < 1:
        problems.append(f"'max_cells' must be a positive integer, got {cells!r}")
    return problems + param_problems(params, {"max_cells", "min_similarity"}, {"min_similarity": 0.0})


# Among assignments of equal total similarity, keep the original order.
_ORDER_BONUS = 1e-9


def align_hungarian(
    expected: Sequence[Any],
    predicted: Sequence[Any],
    node: SchemaNode | None,
    options: ScoringOptions,
    context: AlignContext | None = None,
) -> list[Pair]:
    """Maximum-similarity assignment; pairs below ``min_similarity`` stay unmatched."""
    params = context.params if context else {}
    n, m = len(expected), len(predicted)
    if not n or not m or context is None or context.similarity is None:
        return align_ordered(expected, predicted, node, options)
    if n == m:
        canonical = _canonical(expected)
        if canonical is not None and canonical == _canonical(predicted):
            return [(i, i) for i in range(n)]  # identical arrays: the diagonal is the unique best assignment
    pairs, gold_rest, pred_rest = _match_identical(expected, predicted, list(range(n)), list(range(m)))
    if not gold_rest or not pred_rest:
        return _finish(pairs, gold_rest, pred_rest)
    if len(gold_rest) * len(pred_rest) > params.get("max_cells", DEFAULT_MAX_CELLS):
        shared = min(len(gold_rest), len(pred_rest))
        pairs.extend(zip(gold_rest[:shared], pred_rest[:shared]))
        return _finish(pairs, gold_rest[shared:], pred_rest[shared:])
    # numpy and scipy (0.9 s to import) load with the first assignment, not with the scoring package
    import numpy as np
    from scipy.optimize import linear_sum_assignment

    similarity = context.similarity
    if context.similarities is not None:
        found = context.similarities([expected[i] for i in gold_rest], [predicted[j] for j in pred_rest])
        raw = np.array(found, dtype=float).reshape(len(gold_rest), len(pred_rest))
    else:
        raw = np.empty((len(gold_rest), len(pred_rest)))
        for row, i in enumerate(gold_rest):
            gold = expected[i]
            values = raw[row]
            for col, j in enumerate(pred_rest):
                values[col] = similarity(gold, predicted[j])
    # Which pairs may be kept is decided on the similarities themselves, before the order bonus
    # touches them (0.5 + 1e-9 - 1e-9 is not 0.5): the verdict cannot depend on element order.
    # A pair below the floor is worth nothing to the assignment either.
    usable = raw >= params.get("min_similarity", 0.0)
    matrix = np.where(usable, raw, 0.0)
    diagonal = min(matrix.shape)
    matrix[np.arange(diagonal), np.arange(diagonal)] += _ORDER_BONUS
    rows, cols = linear_sum_assignment(matrix, maximize=True)
    gold_left = set(gold_rest)
    pred_left = set(pred_rest)
    for row, col in zip(rows.tolist(), cols.tolist()):
        if not usable[row, col]:
            continue
        i, j = gold_rest[row], pred_rest[col]
        pairs.append((i, j))
        gold_left.discard(i)
        pred_left.discard(j)
    return _finish(pairs, sorted(gold_left), sorted(pred_left))


def _no_params(params: Mapping[str, Any]) -> list[str]:
    return unknown_params(params, frozenset())


ALIGNERS.add("ordered", AlignerSpec(align_ordered, _no_params), builtin=True)
ALIGNERS.add("key_field", AlignerSpec(align_key_field, _check_key_field), builtin=True)
ALIGNERS.add("hungarian", AlignerSpec(align_hungarian, _check_hungarian), builtin=True)


def register_aligner(
    name: str, aligner: Aligner, *, check_params: ParamCheck | None = None, overwrite: bool = False
) -> None:
    """Make ``aligner(expected, predicted, node, options, context)`` available as ``x-eval-align`` ``name``."""
    ALIGNERS.add(name, AlignerSpec(aligner, check_params), overwrite=overwrite)


def get_aligner(name: str) -> Aligner:
    """The aligner registered under ``name``."""
    try:
        return ALIGNERS.get(name).fn
    except KeyError as exc:
        raise ValueError(exc.args[0]) from None
