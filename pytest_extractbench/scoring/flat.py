"""The similarity of two flat objects (scalar values, no rules) as the field walk would score them, without the walk.

A Hungarian alignment asks for the similarity of every gold x predicted pair of elements: for objects of
scalars that is most of its time, and most of that time went into field results that were thrown away.
"""

from __future__ import annotations

from typing import Any

from .budget import check as budget_check
from .compare import compare_scalars
from .emit import ABSENT
from .options import ScoringOptions

_SCALARS = frozenset({str, int, float, bool})


def flat_similarity(expected: dict[str, Any], predicted: dict[str, Any], options: ScoringOptions) -> float | None:
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
