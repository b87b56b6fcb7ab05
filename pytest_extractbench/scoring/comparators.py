"""Comparators named by ``x-eval-compare``: built-ins and the registry for custom ones.

A comparator is ``fn(expected, predicted, params, options)`` and returns a score in
[0, 1] (a float, a bool, or a :class:`~.compare.Comparison` when it also knows
whether the values are *equal*); a float counts as equal when it is 1.0. Transforms
have already been applied to both values. A batch comparator is
``fn(items, options)`` with ``items`` a list of ``(expected, predicted, params)``
and returns one result (or exception) per item: it sees every field of a record
that uses it at once (the LLM judge makes one call per record).

Identical values never reach a comparator: they match whatever it would say.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

from ..core.errors import ExtractbenchError
from .compare import Comparison, _as_number, compare_scalars, jaccard, scalar_key
from .options import ScoringOptions
from .registry import Note, Registry, unknown_params
from .schema import json_type

CompareFn = Callable[[Any, Any, Mapping[str, Any], ScoringOptions], Any]
BatchCompareFn = Callable[[Sequence[tuple[Any, Any, Mapping[str, Any], str]], ScoringOptions], Sequence[Any]]
ParamCheck = Callable[[Mapping[str, Any]], Sequence[str]]


class ComparatorSpec(NamedTuple):
    """A registered comparator."""

    fn: Callable[..., Any]
    batch: bool = False
    # why params are wrong (empty when they are fine); run once per schema, not per field
    check_params: ParamCheck | None = None
    # JSON types it can compare (folded: integer is number); None = any
    types: frozenset[str] | None = None


COMPARATORS: Registry[ComparatorSpec] = Registry("comparator")


def register_comparator(
    name: str,
    fn: Callable[..., Any],
    *,
    batch: bool = False,
    check_params: ParamCheck | None = None,
    types: Sequence[str] | None = None,
    overwrite: bool = False,
) -> None:
    """Make ``fn`` usable as ``"x-eval-compare": name`` (or ``{name: params}``)."""
    COMPARATORS.add(
        name, ComparatorSpec(fn, batch, check_params, frozenset(types) if types else None), overwrite=overwrite
    )


class ComparatorError(ExtractbenchError):
    """A comparator raised or returned something that is not a score in [0, 1]."""


def to_comparison(value: Any) -> Comparison:
    """Normalize what a comparator returned; anything but a score in [0, 1] is a :class:`ComparatorError`."""
    if isinstance(value, Comparison):
        score, equal, similarity = value
    elif isinstance(value, bool):
        score, equal, similarity = float(value), value, None
    elif isinstance(value, (int, float)):
        score, equal, similarity = float(value), value >= 1.0, None
    else:
        raise ComparatorError(f"returned {type(value).__name__}, not a score")
    if not isinstance(score, (int, float)) or not math.isfinite(score) or not 0.0 <= score <= 1.0:
        raise ComparatorError(f"returned score {score!r} outside [0, 1]")
    return Comparison(float(score), bool(equal), similarity)


# -- built-ins --------------------------------------------------------------------------------


def _json_equal(a: Any, b: Any) -> bool:
    """Equal as JSON values: same type all the way down (true is not 1), 42 and 42.0 the same number."""
    kind = json_type(a)
    if kind != json_type(b):
        return False
    if kind == "object":
        return a.keys() == b.keys() and all(_json_equal(a[k], b[k]) for k in a)
    if kind == "array":
        return len(a) == len(b) and all(_json_equal(x, y) for x, y in zip(a, b))
    return bool(a == b)


def compare_exact(expected: Any, predicted: Any, params: Mapping[str, Any], options: ScoringOptions) -> Comparison:
    """Same JSON type and same value (42 and 42.0 are the same number; "42" is not); objects and
    arrays compare whole, the same way all the way down."""
    same = _json_equal(expected, predicted)
    return Comparison(1.0 if same else 0.0, same)


_TOLERANCES = frozenset({"abs", "rel"})
_COMBINE = ("all", "any")


def _check_numeric(params: Mapping[str, Any]) -> list[str]:
    tolerance = params.get("tolerance", {})
    problems: list[str] = unknown_params(params, {"tolerance", "combine"})
    if params.get("combine", "all") not in _COMBINE:
        problems.append(f"'combine' must be 'all' or 'any', got {params['combine']!r}")
    if tolerance is None:
        return problems
    if not isinstance(tolerance, Mapping):
        return problems + ["'tolerance' must be an object with 'abs' and/or 'rel'"]
    extra = sorted(set(tolerance) - _TOLERANCES, key=str)
    if extra:
        problems.append(Note(f"unknown tolerance key(s) {extra} ignored; known: abs, rel"))
    for key in _TOLERANCES & set(tolerance):
        value = tolerance[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            problems.append(f"tolerance '{key}' must be a non-negative number, got {value!r}")
    return problems


def compare_numeric(expected: Any, predicted: Any, params: Mapping[str, Any], options: ScoringOptions) -> Comparison:
    """1 when the difference is within every tolerance given, else 0.

    ``abs``: ``|p - e| <= abs``; ``rel``: ``|p - e| / |e| <= rel``, where a gold 0 divides by 1
    (``rel`` then acts as an absolute tolerance). Both given: both must hold, as in
    struct-extract-eval; ``"combine": "any"`` accepts either. No tolerance: equal within the
    absolute ``float_epsilon`` (0 makes it exact). Numeric strings ("1,200", " 12 ") on either
    side are read as their number; whether that is a type error is judged separately.
    """
    e = expected if type(expected) in (int, float) else _as_number(expected)
    p = predicted if type(predicted) in (int, float) else _as_number(predicted)
    if e is None or p is None:
        return Comparison(0.0, False)
    tolerance = params.get("tolerance") or {}
    diff = abs(p - e)
    abs_tol, rel_tol = tolerance.get("abs"), tolerance.get("rel")
    if abs_tol is None and rel_tol is None:
        ok = diff <= options.float_epsilon
    else:
        checks = []
        if abs_tol is not None:
            checks.append(diff <= abs_tol)
        if rel_tol is not None:
            checks.append(diff / (abs(e) or 1.0) <= rel_tol)
        ok = any(checks) if params.get("combine") == "any" else all(checks)
    return Comparison(1.0 if ok else 0.0, ok)


def _check_oneof(params: Mapping[str, Any]) -> list[str]:
    values = params.get("values")
    if not isinstance(values, list) or not values:
        return ["'values' must be a non-empty list of accepted values (or of synonym lists)"]
    if any(isinstance(v, list) for v in values) and not all(isinstance(v, list) for v in values):
        return ["'values' must hold either values or synonym lists, not both"]
    return unknown_params(params, {"values"})


def compare_oneof(expected: Any, predicted: Any, params: Mapping[str, Any], options: ScoringOptions) -> Comparison:
    """1 when the prediction is an accepted synonym of the gold.

    ``values`` is either a flat list (any of them is accepted for this field) or a
    list of synonym groups (``[["NYC", "New York"], ["LA", "Los Angeles"]]``: the
    prediction must share a group with the gold). Strings compare normalized.
    """
    e, p = scalar_key(expected, options), scalar_key(predicted, options)
    values = params["values"]
    if e == p:
        ok = True
    elif isinstance(values[0], list):
        ok = any(e in keys and p in keys for keys in ({scalar_key(v, options) for v in group} for group in values))
    else:
        ok = p in {scalar_key(v, options) for v in values}
    return Comparison(1.0 if ok else 0.0, e == p)


def compare_partial(expected: Any, predicted: Any, params: Mapping[str, Any], options: ScoringOptions) -> Comparison:
    """The default: the composite score for strings, relative difference for numbers, Jaccard for scalar arrays."""
    if type(expected) is list and type(predicted) is list:
        return jaccard(expected, predicted, options)
    return compare_scalars(expected, predicted, options)


def _no_params(params: Mapping[str, Any]) -> list[str]:
    return unknown_params(params, frozenset())


COMPARATORS.add("exact", ComparatorSpec(compare_exact, False, _no_params), builtin=True)
# numeric also takes string fields that hold numbers (struct-extract-eval reads them with float())
COMPARATORS.add(
    "numeric", ComparatorSpec(compare_numeric, False, _check_numeric, frozenset({"number", "string"})), builtin=True
)
COMPARATORS.add("oneof", ComparatorSpec(compare_oneof, False, _check_oneof), builtin=True)
COMPARATORS.add("partial", ComparatorSpec(compare_partial, False, _no_params), builtin=True)

__all__ = [
    "COMPARATORS",
    "ComparatorError",
    "ComparatorSpec",
    "compare_exact",
    "compare_numeric",
    "compare_oneof",
    "compare_partial",
    "register_comparator",
    "to_comparison",
]
