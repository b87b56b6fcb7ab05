"""The similarity of two flat objects (scalar values, no rules) as the field walk would score them, without the walk.

A Hungarian alignment asks for the similarity of every gold x predicted pair of elements: for objects of
scalars that is most of its time, and most of that time went into field results that were thrown away.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .budget import check as budget_check
from .compare import compare_scalars, normalize_text, words_similarity
from .emit import ABSENT
from .options import ScoringOptions

_SCALARS = frozenset({str, int, float, bool})


def flat_similarity(expected: dict[Any, Any], predicted: dict[Any, Any], options: ScoringOptions) -> float | None:
    """The mean field score of walking two objects whose values are all scalars, where no schema rule applies:
    the same scores as the walk's field results, summed in the same order (gold keys, then keys only the
    prediction has); None for any other pair (the caller walks it)."""
    for value in expected.values():
        if type(value) not in _SCALARS:
            return None
    for value in predicted.values():
        if type(value) not in _SCALARS:
            return None
    budget_check()
    equal = expected == predicted  # the walk's identical-subtree path: equal leaves of one type are exact
    blank_absent = options.empty_equals_absent
    scores: list[float] = []
    for key, value in expected.items():
        other = predicted.get(key, ABSENT)
        kind = type(value)
        missing = blank_absent and kind is str and not value.strip()
        if kind is type(other) and (equal or value == other):
            if not missing:  # an equal leaf
                scores.append(1.0)
        elif other is ABSENT or (blank_absent and type(other) is str and not other.strip()):
            if not missing:  # missed
                scores.append(0.0)
        elif missing:  # spurious
            scores.append(0.0)
        else:
            scores.append(compare_scalars(value, other, options)[0])
    if not equal and not predicted.keys() <= expected.keys():
        for key, value in predicted.items():
            if key not in expected and not (blank_absent and type(value) is str and not value.strip()):
                scores.append(0.0)  # spurious
    return sum(scores) / len(scores) if scores else 1.0


# What a comparison reads from one value of an object of scalars: the value, its type, and for a string its
# normalized form, that form's words and whether it is blank.
_Leaf = tuple[Any, type[Any], str, set[str], bool]


def prepared(value: Any, options: ScoringOptions) -> dict[Any, _Leaf] | None:
    """Each key's :data:`_Leaf` for a non-empty object of scalars (None for anything else): an element of an aligned
    array meets every element of the other side, and its strings are normalized and split once, not once a pair."""
    if type(value) is not dict or not value:
        return None
    found: dict[Any, _Leaf] = {}
    for key, leaf in value.items():
        kind = type(leaf)
        if kind is str:
            text = normalize_text(leaf, options)
            found[key] = (leaf, kind, text, set(text.split()), not leaf.strip())
        elif kind in _SCALARS:
            found[key] = (leaf, kind, "", set(), False)
        else:
            return None
    return found


def prepared_similarity(
    expected: dict[Any, Any],
    gold: dict[Any, _Leaf],
    predicted: dict[Any, Any],
    guess: dict[Any, _Leaf],
    options: ScoringOptions,
) -> float:
    """:func:`flat_similarity` of two objects of scalars from their :func:`prepared` leaves: the same branches, scores
    and summing order, with each pair of unequal strings scored from their normalized forms and words."""
    equal = expected == predicted
    blank_absent = options.empty_equals_absent
    scores: list[float] = []
    for key, (value, kind, text, words, blank) in gold.items():
        missing = blank_absent and blank
        found = guess.get(key)
        if found is None:  # missed
            if not missing:
                scores.append(0.0)
            continue
        other, other_kind, other_text, other_words, other_blank = found
        if kind is other_kind and (equal or value == other):
            if not missing:  # an equal leaf
                scores.append(1.0)
        elif blank_absent and other_blank:
            if not missing:  # missed
                scores.append(0.0)
        elif missing:  # spurious
            scores.append(0.0)
        elif kind is str and other_kind is str:  # compare_scalars' string branch, normalized already
            scores.append(
                1.0 if text == other_text else words_similarity(other_text, other_words, text, words, options)[0]
            )
        else:
            scores.append(compare_scalars(value, other, options)[0])
    if not equal and not predicted.keys() <= expected.keys():
        for key, (_, _, _, _, blank) in guess.items():
            if key not in expected and not (blank_absent and blank):
                scores.append(0.0)  # spurious
    return sum(scores) / len(scores) if scores else 1.0


def similarity_rows(
    expected: Sequence[Any],
    predicted: Sequence[Any],
    options: ScoringOptions,
    similarity: Callable[[Any, Any], float],
    flat: bool,
) -> list[list[float]]:
    """``similarity(e, p)`` for every gold x predicted pair, a row per gold element; where ``flat`` (no rule applies
    inside the elements), pairs of objects of scalars are scored from their :func:`prepared` leaves instead."""
    columns: list[dict[Any, _Leaf] | None] = (
        [prepared(v, options) for v in predicted] if flat else [None] * len(predicted)
    )
    rows: list[list[float]] = []
    for gold in expected:
        leaves = prepared(gold, options) if flat else None
        row: list[float] = []
        for guess, found in zip(predicted, columns):
            if leaves is not None and found is not None:
                budget_check()
                row.append(prepared_similarity(gold, leaves, guess, found, options))
            else:
                row.append(similarity(gold, guess))
        rows.append(row)
    return rows
