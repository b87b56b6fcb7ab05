"""Leaf comparison: normalization, the composite string score, numbers, booleans.

Every function here is pure and returns similarities in [0, 1].
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any, NamedTuple

from Levenshtein import distance as levenshtein_distance

from . import registry
from .options import ScoringOptions
from .result import MISSED, SPURIOUS
from .schema import json_type
from .transforms import TRANSFORMS


class Comparison(NamedTuple):
    """Outcome of comparing one expected value with one predicted value."""

    score: float
    # equal after normalization (and coercion); sample-level exact match also needs the types to agree
    equal: bool
    # token-F1, Levenshtein and containment, for string pairs only
    similarity: tuple[float, float, float] | None = None


_SAME = Comparison(1.0, True)
_SAME_STRING = Comparison(1.0, True, (1.0, 1.0, 1.0))
_DIFFERENT = Comparison(0.0, False)
# ``Comparison(...)`` runs NamedTuple's Python-level ``__new__``; the comparisons of every field build it from a tuple
_new = tuple.__new__


def normalize_text(text: str, options: ScoringOptions) -> str:
    """The options' normalisers (named transforms, in order), then casefold and collapse whitespace as they say."""
    if options.normalisers:
        text = _normalised(text, options.normalisers, registry.generation())
    if not options.case_sensitive:
        text = text.casefold()
    if options.normalize_whitespace:
        text = " ".join(text.split())
    return text


@lru_cache(maxsize=65536)
def _normalised(text: str, names: tuple[str, ...], generation: int) -> str:
    """``text`` through the named transforms with their default parameters (``generation``: the registries'
    version, so a transform registered again is not answered from the cache); a number a transform gives (an
    amount) is written as JSON writes it; a transform that fails leaves the text as it was."""
    value: Any = text
    for name in names:
        try:
            value = TRANSFORMS.get(name).fn(value, {})
        except Exception:  # noqa: BLE001 - a custom transform's bug must not stop the comparison
            continue
    if type(value) is float and value.is_integer():
        value = int(value)
    return value if type(value) is str else str(value)


def _edit_similarity(predicted: str, expected: str) -> float:
    """``1 - Levenshtein distance / the longer length`` (1.0 for two empty strings)."""
    longest = max(len(predicted), len(expected))
    return 1.0 - levenshtein_distance(predicted, expected) / longest if longest else 1.0


def string_similarity(predicted: str, expected: str, options: ScoringOptions) -> tuple[float, float, float, float]:
    """The composite (0.5 token-F1, 0.3 normalized Levenshtein, 0.2 containment by default) on normalized strings.

    Returns ``(composite, token_f1, levenshtein, containment)``.
    """
    return words_similarity(predicted, set(predicted.split()), expected, set(expected.split()), options)


def words_similarity(
    predicted: str, pred_tokens: set[str], expected: str, exp_tokens: set[str], options: ScoringOptions
) -> tuple[float, float, float, float]:
    """:func:`string_similarity` given each string's set of words (made once for a string met many times)."""
    common = len(pred_tokens & exp_tokens)
    token_f1 = 2 * common / (len(pred_tokens) + len(exp_tokens)) if common else 0.0
    lev = _edit_similarity(predicted, expected) if predicted or expected else 0.0
    if expected and expected in predicted:
        containment = 1.0
    elif predicted and predicted in expected:
        containment = len(predicted) / len(expected)
    else:
        containment = 0.0
    w_token, w_lev, w_cont = options.composite_weights
    return w_token * token_f1 + w_lev * lev + w_cont * containment, token_f1, lev, containment


def number_similarity(predicted: Any, expected: Any) -> float:
    """``max(0, 1 - |p - e| / |e|)``; an expected zero needs an exact zero. Two ints are subtracted and divided as
    ints, exactly (typed ``float``, a compiled build would make them C doubles first)."""
    if expected == 0:
        return 1.0 if predicted == 0 else 0.0
    relative: float = abs(predicted - expected) / abs(expected)  # a true division: a float already
    return max(0.0, 1.0 - relative)


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
    """Arrays of scalars: Jaccard similarity of their normalized element sets.

    With ``options.list_similarity`` set, elements left unmatched after the equal ones pair by similarity
    (:func:`similar_pairs`), and each pair adds its score where an equal pair adds 1: ``Newgistics, Inc.``
    against ``Newgistics Inc.`` is then nearly a match instead of a miss. Equality is unchanged, and a score
    raised by near elements stays below ``exact_threshold``, so what is exact (strict F1) is unchanged.
    """
    exp_keys = [scalar_key(v, options) for v in expected]
    pred_keys = [scalar_key(v, options) for v in predicted]
    exp_set, pred_set = set(exp_keys), set(pred_keys)
    shared = len(exp_set & pred_set)
    union = len(exp_set) + len(pred_set) - shared
    score = shared / union if union else 1.0
    if options.list_similarity is not None and shared < len(exp_set) and shared < len(pred_set):
        exp_rest = _first_by_key(expected, exp_keys, exp_set - pred_set)
        pred_rest = _first_by_key(predicted, pred_keys, pred_set - exp_set)
        pairs = similar_pairs(exp_rest, pred_rest, options)
        if pairs:
            # near elements earn partial credit, never exactness: strict F1 stays what equal elements say
            ceiling = score if score >= options.exact_threshold else math.nextafter(options.exact_threshold, 0.0)
            credit = 0.0
            for similarity in pairs:  # sum() spelled out: compiled, sum() of floats is typed float | int
                credit += similarity
            score = min((shared + credit) / (union - len(pairs)), max(score, ceiling))
    equal = exp_keys == pred_keys if options.array_order_matters else exp_set == pred_set
    return Comparison(score, equal and len(exp_keys) == len(pred_keys))


def _first_by_key(values: list[Any], keys: list[Any], wanted: set[Any]) -> list[Any]:
    """One value per normalized key in ``wanted`` (the first), in list order."""
    seen: dict[Any, Any] = {}
    for value, key in zip(values, keys):
        if key in wanted and key not in seen:
            seen[key] = value
    return list(seen.values())


# Above this many gold x predicted cells the similarity pairing is skipped (plain Jaccard), as Hungarian
# alignment of array elements falls back above its default max_cells.
LIST_SIMILARITY_MAX_CELLS = 2500


def _element_similarity(expected: Any, predicted: Any, options: ScoringOptions) -> float:
    """Two strings: normalized Levenshtein similarity of their normalized forms, so a comma or a suffix's dot
    costs a character, not the element (the composite's token F1 would count ``Inc.`` and ``Inc`` as different
    words); other scalars: :func:`compare_scalars`."""
    if type(expected) is str and type(predicted) is str:
        return _edit_similarity(normalize_text(predicted, options), normalize_text(expected, options))
    return compare_scalars(expected, predicted, options).score


def similar_pairs(expected: list[Any], predicted: list[Any], options: ScoringOptions) -> list[float]:
    """Similarities of the pairs of an assignment of ``expected`` to ``predicted`` elements that maximizes total
    similarity (:func:`_element_similarity`), keeping the pairs at least ``options.list_similarity`` similar."""
    return [similarity for _, _, similarity in _similar_assignment(expected, predicted, options)]


def _similar_assignment(
    expected: list[Any], predicted: list[Any], options: ScoringOptions
) -> list[tuple[int, int, float]]:
    threshold = options.list_similarity
    if threshold is None or not expected or not predicted or len(expected) * len(predicted) > LIST_SIMILARITY_MAX_CELLS:
        return []
    from scipy.optimize import linear_sum_assignment  # only runs with the option set

    matrix = [[_element_similarity(e, p, options) for p in predicted] for e in expected]
    rows, cols = linear_sum_assignment(matrix, maximize=True)
    return [(int(r), int(c), matrix[r][c]) for r, c in zip(rows, cols) if matrix[r][c] >= threshold]


class ElementPair(NamedTuple):
    """One element of an array of scalars as :func:`jaccard` saw it: ``exact`` (equal after normalization),
    ``similar`` (paired by similarity, ``--extractbench-list-similarity``), ``missed`` or ``spurious``."""

    kind: str
    expected: Any = None
    predicted: Any = None
    similarity: float | None = None


def list_element_pairs(expected: list[Any], predicted: list[Any], options: ScoringOptions) -> list[ElementPair]:
    """The elements behind an array's Jaccard score, gold order first, then the spurious ones in output order.
    Like the score, it reads the normalized element sets: a repeated element is listed once."""
    exp_keys = [scalar_key(v, options) for v in expected]
    pred_keys = [scalar_key(v, options) for v in predicted]
    exp_set, pred_set = set(exp_keys), set(pred_keys)
    exp_rest = _first_by_key(expected, exp_keys, exp_set - pred_set)
    pred_rest = _first_by_key(predicted, pred_keys, pred_set - exp_set)
    similar = {e: (p, sim) for e, p, sim in _similar_assignment(exp_rest, pred_rest, options)}
    first_predicted: dict[Any, Any] = {}
    for value, key in zip(predicted, pred_keys):
        first_predicted.setdefault(key, value)
    out, seen, rest = [], set(), 0
    paired_predicted = set()
    for value, key in zip(expected, exp_keys):
        if key in seen:
            continue
        seen.add(key)
        if key in pred_set:
            out.append(ElementPair("exact", value, first_predicted[key], 1.0))
        else:
            if rest in similar:
                index, similarity = similar[rest]
                paired_predicted.add(index)
                out.append(ElementPair("similar", value, pred_rest[index], similarity))
            else:
                out.append(ElementPair("missed", value))
            rest += 1
    out.extend(
        ElementPair("spurious", predicted=value)
        for index, value in enumerate(pred_rest)
        if index not in paired_predicted
    )
    return out


def similarity_paired_elements(
    expected: Any, predicted: Any, category: str, options: ScoringOptions | None
) -> list[ElementPair] | None:
    """The elements of an array of scalars whose unequal elements pair by similarity
    (``--extractbench-list-similarity``), as a field diff lists them; None for any other field (the option off,
    a missed or spurious field, arrays holding objects or arrays)."""
    if options is None or options.list_similarity is None or category in (MISSED, SPURIOUS):
        return None
    if not (isinstance(expected, list) and isinstance(predicted, list)):
        return None
    if any(isinstance(v, (dict, list)) for v in (*expected, *predicted)):
        return None
    return list_element_pairs(expected, predicted, options)


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
                return _DIFFERENT
            predicted = _as_text(predicted)
        exp_norm = normalize_text(expected, options)
        pred_norm = normalize_text(predicted, options)
        if exp_norm == pred_norm:
            return _SAME_STRING
        composite, token_f1, lev, containment = words_similarity(
            pred_norm, set(pred_norm.split()), exp_norm, set(exp_norm.split()), options
        )
        return _new(Comparison, (composite, False, (token_f1, lev, containment)))
    if exp_kind is bool:
        value = predicted if pred_kind is bool else _as_bool(predicted)
        same = value is not None and value == expected
        return _SAME if same else _DIFFERENT
    if exp_kind is int or exp_kind is float:
        # int | float, not float: an int stays exact (2**60 + 1 is not 2**60), compiled or not (a compiled
        # float is a C double, and an int given to one is converted); the arithmetic below stays on Any for that
        number: int | float | None = predicted if pred_kind is int or pred_kind is float else _as_number(predicted)
        if number is None:
            return _DIFFERENT
        # equal within an absolute epsilon, as the option says (a relative one would call
        # 123456789 and 123456790 equal)
        tolerance = options.float_epsilon
        if options.exact_within is not None:
            tolerance = max(tolerance, options.exact_within * abs(expected))
        if abs(number - expected) <= tolerance:
            return _SAME
        return _new(Comparison, (number_similarity(number, expected), False, None))
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
