"""Array alignment: which gold element pairs with which predicted element.

An aligner returns pairs ``(gold_index, predicted_index)``; ``None`` on one side
marks an unmatched element (its fields are missed or spurious). Aligners are
looked up by name, so strategies can be added without touching the walker.
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

from .options import ScoringOptions
from .schema import SchemaNode

Pair = tuple[Optional[int], Optional[int]]
Aligner = Callable[[Sequence[Any], Sequence[Any], "SchemaNode | None", ScoringOptions], list[Pair]]


def align_ordered(
    expected: Sequence[Any], predicted: Sequence[Any], node: SchemaNode | None, options: ScoringOptions
) -> list[Pair]:
    """Element i pairs with element i; the longer side's tail is unmatched."""
    shared = min(len(expected), len(predicted))
    pairs: list[Pair] = [(i, i) for i in range(shared)]
    pairs.extend((i, None) for i in range(shared, len(expected)))
    pairs.extend((None, j) for j in range(shared, len(predicted)))
    return pairs


_ALIGNERS: dict[str, Aligner] = {"ordered": align_ordered}


def register_aligner(name: str, aligner: Aligner, *, overwrite: bool = False) -> None:
    """Make ``aligner`` available under ``name`` (for ``x-eval-align``)."""
    if name in _ALIGNERS and not overwrite:
        raise ValueError(f"an aligner named {name!r} is already registered")
    _ALIGNERS[name] = aligner


def get_aligner(name: str) -> Aligner:
    """The aligner registered under ``name``."""
    try:
        return _ALIGNERS[name]
    except KeyError:
        raise ValueError(f"unknown array alignment {name!r}; known: {sorted(_ALIGNERS)}") from None
