"""Leaf comparison: normalization, the composite string score, numbers, booleans.

Every function here is pure and returns similarities in [0, 1].
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

from Levenshtein import distance as levenshtein_distance

from .options import ScoringOptions
from .schema import json_type


class Comparison(NamedTuple):
    """Outcome of comparing one expected value with one predicted value."""

    score: float
    # equal after normalization (and coercion); sample-level exact match also needs the types to agree
    equal: bool
    # token-F1, Levenshtein and containment, for string pairs only
    similarity: tuple[float, float, float] | None = None


_SAME = Comparison(1.0, True)
_SAME_STRING = Comparison(1.0, True, (1.0, 1.0, 1.0))


def normalize_text(text: str, options: ScoringOptions) -> str:
    """Casefold and collapse whitespace as the options say."""
    if not options.case_sensitive:
        text = text.casefold()
    if options.normalize_whitespace:
        text = " ".join(text.split())
    return text


def string_similarity(predicted: str, expected: str, options: ScoringOptions) -> tuple[float, float, float, float]:
    """The composite (0.5 token-F1, 0.3 normalized Levenshtein, 0.2 containment by default) on normalized strings.

    Returns ``(composite, token_f1, levenshtein, containment)``.
    """
    pred_tokens = set(predicted.split())
    exp_tokens = set(expected.split())
    common = len(pred_tokens & exp_tokens)
    token_f1 = 2 * common / (len(pred_tokens) + len(exp_tokens)) if common else 0.0
    longest = max(len(predicted), len(expected))
    lev = 1.0 - levenshtein_distance(predicted, expected) / longest if longest else 0.0
    if expected and expected in predicted:
        containment = 1.0
    elif predicted and predicted in expected:
        containment = len(predicted) / len(expected)
    else:
        containment = 0.0
    w_token, w_lev, w_cont = options.composite_weights
    return w_token * token_f1 + w_lev * lev + w_cont * containment, token_f1, lev, containment


def number_similarity(predicted: float, expected: float) -> float:
    """``max(0, 1 - |p - e| / |e|)``; an expected zero needs an exact zero."""
    if expected == 0:
        return 1.0 if predicted == 0 else 0.0
    return max(0.0, 1.0 - abs(predicted - expected) / abs(expected))


def scalar_key(value: Any, options: ScoringOptions) -> Any:
    """A hashable, normalized form of a scalar, for set comparison of scalar arrays."""
    kind = type(value)
    if kind is str:
        return normalize_text(value, options)
    if kind is bool:
        return "true" if value else "false"
    if kind is float and value.is_integer():
        return int(value)
    if kind is int or kind is float or value is None:
        return value
    return repr(value)


def jaccard(expected: list[Any], predicted: list[Any], options: ScoringOptions) -> Comparison:
    """Arrays of scalars: Jaccard similarity of their normalized element sets."""
    exp_keys = [scalar_key(v, options) for v in expected]
    pred_keys = [scalar_key(v, options) for v in predicted]
    exp_set, pred_set = set(exp_keys), set(pred_keys)
    union = len(exp_set | pred_set)
    score = len(exp_set & pred_set) / union if union else 1.0
    equal = exp_keys == pred_keys if options.array_order_matters else exp_set == pred_set
    return Comparison(score, equal and len(exp_keys) == len(pred_keys))


def _as_number(value: Any) -> float | None:
    if type(value) is str:
        try:
            number = float(value.strip().replace(",", ""))
        except ValueError:
            return None
        return number if math.isfinite(number) else None
    return None


def _as_bool(value: Any) -> bool | None:
    if type(value) is str:
        return {"true": True, "false": False, "yes": True, "no": False}.get(value.strip().lower())
    return None


def _as_text(value: Any) -> str:
    if type(value) is bool:
        return "true" if value else "false"
    if type(value) is float and value.is_integer():
        return str(int(value))
    return str(value)


def compare_scalars(expected: Any, predicted: Any, options: ScoringOptions) -> Comparison:
    """Score two present scalar values.

    Values of different types are compared after coercing the prediction to the
    expected type (``"35"`` vs ``35`` scores 1.0); whether that counts as a type
    error is decided separately by :func:`types_agree`.
    """
    exp_kind, pred_kind = type(expected), type(predicted)
    if exp_kind is pred_kind and expected == predicted:  # the common case: skip normalization
        return _SAME_STRING if exp_kind is str else _SAME
    if exp_kind is str:
        if pred_kind is not str:
            if predicted is None or pred_kind in (dict, list):
                return Comparison(0.0, False)
            predicted = _as_text(predicted)
        exp_norm = normalize_text(expected, options)
        pred_norm = normalize_text(predicted, options)
        if exp_norm == pred_norm:
            return Comparison(1.0, True, (1.0, 1.0, 1.0))
        composite, token_f1, lev, containment = string_similarity(pred_norm, exp_norm, options)
        return Comparison(composite, False, (token_f1, lev, containment))
    if exp_kind is bool:
        value = predicted if pred_kind is bool else _as_bool(predicted)
        same = value is not None and value == expected
        return Comparison(1.0 if same else 0.0, same)
    if exp_kind is int or exp_kind is float:
        if pred_kind is int or pred_kind is float:
            number: float | None = predicted
        else:
            number = _as_number(predicted)
        if number is None:
            return Comparison(0.0, False)
        # equal within an absolute epsilon, as the option says (a relative one would call
        # 123456789 and 123456790 equal)
        tolerance = options.float_epsilon
        if options.exact_within is not None:
            tolerance = max(tolerance, options.exact_within * abs(expected))
        if abs(number - expected) <= tolerance:
            return Comparison(1.0, True)
        return Comparison(number_similarity(number, expected), False)
    if expected is None:  # only reachable when null is a value (null_equals_absent=False)
        same = predicted is None
        return Comparison(1.0 if same else 0.0, same)
    return Comparison(1.0 if expected == predicted else 0.0, expected == predicted)


def types_agree(expected_type: str, predicted: Any, options: ScoringOptions) -> bool:
    """Whether a predicted value has the expected JSON type (lenient mode accepts lossless coercion)."""
    predicted_type = json_type(predicted)
    if predicted_type == expected_type:
        return True
    if options.strict_types:
        return False
    if expected_type == "number":
        return _as_number(predicted) is not None
    if expected_type == "boolean":
        return _as_bool(predicted) is not None
    if expected_type == "string":
        return predicted_type in ("number", "boolean")
    return False


def declared_type_ok(types: frozenset[str], predicted: Any, options: ScoringOptions) -> bool:
    """Whether a predicted value fits one of the schema's declared (folded) types."""
    return any(types_agree(t, predicted, options) for t in types)
