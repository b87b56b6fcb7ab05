"""The gains of ANLS*'s list assignment for lists of objects of scalars, as matrices instead of pair by pair.

A list assignment scores every gold x predicted pair of elements; for line items that is most of ANLS*'s cost
when each leaf similarity is a Python call. Here each key gets one similarity matrix from rapidfuzz's ``cdist``
(in C; rapidfuzz is python-Levenshtein's engine) and numpy adds them up into each cell's ANLS*. Every float is
:func:`.anls_walk._flat_cell`'s: rapidfuzz's normalized similarity is ``1 - distance / longer length`` divided
once in double precision and 0 under the cut-off, which is :func:`.anls.text_similarity` to the bit
(tests/unit/test_anls_matrices.py checks every pair of short texts), and a cell's similarities add up in its gold
element's own key order (gold elements are grouped by key order). An element that is not an object of scalars
with text keys and no NaN has no texts and gets None back: the pair-by-pair path takes it.
"""

from __future__ import annotations

import math
from functools import cache
from typing import TYPE_CHECKING, Any, cast

from .anls import THRESHOLD

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

Texts = dict[Any, tuple[Any, str]]
"""Each key's value and text (:func:`.anls_walk._texts`)."""

_LEFT_OUT = ("", "")  # a key an element left out: its text is masked; its value equals what "" equals, as null does

MIN_CELLS = 25
"""Fewer cells than this are faster pair by pair (measured on line items: even at about 5 x 5, the matrices 1.3x
faster at 7 x 7 and 3.5x at 20 x 20): a matrix costs a rapidfuzz call a key and a few numpy calls."""


@cache
def _libraries() -> tuple[Any, Any, Any]:
    """numpy, rapidfuzz's ``cdist`` and its Levenshtein scorer, imported with the first matrix (an import statement
    run per call costs more than a small matrix's arithmetic)."""
    import numpy
    from rapidfuzz.distance.Levenshtein import normalized_similarity
    from rapidfuzz.process import cdist

    return numpy, cdist, normalized_similarity


def gains(rows: list[Texts | None], columns: list[Texts | None]) -> npt.NDArray[np.float64] | None:
    """Each cell's ANLS*, nudged up by one ulp where the closest gold equals the element (the assignment's gains,
    bit for bit :func:`.anls_walk._assign`'s); None when any element is not an object of scalars (no texts)."""
    if None in rows or None in columns:
        return None
    gold, found = cast("list[Texts]", rows), cast("list[Texts]", columns)
    numpy = _libraries()[0]
    orders: dict[tuple[str, ...], list[int]] = {}
    for r, row in enumerate(gold):
        orders.setdefault(tuple(row), []).append(r)
    if len(orders) == 1:
        return _group(next(iter(orders)), gold, found)
    gain: npt.NDArray[np.float64] = numpy.empty((len(gold), len(found)))
    for keys, members in orders.items():
        gain[members] = _group(keys, [gold[r] for r in members], found)
    return gain


def _group(keys: tuple[str, ...], rows: list[Texts], columns: list[Texts]) -> npt.NDArray[np.float64]:
    """The gains of gold elements that share one key order."""
    numpy, cdist, similarity = _libraries()
    known = set(keys)
    extras = [len(column.keys() - known) for column in columns]
    lacking = [c for c, column in enumerate(columns) if not known <= column.keys()]
    totals: npt.NDArray[np.float64] | None = None
    for key in keys:
        found = [column.get(key, _LEFT_OUT)[1] for column in columns]
        # 1 - distance / longer length, 0 under the threshold: rapidfuzz's own arithmetic is text_similarity's
        part = cdist(
            [row[key][1] for row in rows], found, scorer=similarity, score_cutoff=THRESHOLD, dtype=numpy.float64
        )
        for c in lacking:
            if key not in columns[c]:  # a key the element left out earns nothing
                part[:, c] = 0.0
        if totals is None:
            totals = part
        else:  # in the gold's key order, as the pair-by-pair sum adds them
            totals += part
    if totals is None:
        totals = numpy.zeros((len(rows), len(columns)))
    gain: npt.NDArray[np.float64]
    if any(extras):
        lengths = len(keys) + numpy.array(extras)
        gain = numpy.where(lengths > 0, totals / numpy.maximum(lengths, 1), 1.0)
    else:
        gain = totals / len(keys) if keys else numpy.ones((len(rows), len(columns)))
    _nudge_equal(keys, rows, columns, extras, gain)
    return gain


def _nudge_equal(
    keys: tuple[str, ...], rows: list[Texts], columns: list[Texts], extras: list[int], gain: npt.NDArray[np.float64]
) -> None:
    """Between equally good pairs one whose closest gold equals the element wins: its gain goes up one ulp. Equal is
    Python's ``==`` key by key (``1 == 1.0 == True``), a key left out equal to an empty gold text (what a null
    accepts), so a tuple of values per element finds the equal cells by hash (few: identical ones paired first)."""
    by_values: dict[tuple[Any, ...], list[int]] = {}
    for r, row in enumerate(rows):
        by_values.setdefault(tuple([row[key][0] for key in keys]), []).append(r)
    for c, column in enumerate(columns):
        if extras[c]:
            continue
        for r in by_values.get(tuple([column.get(key, _LEFT_OUT)[0] for key in keys]), ()):
            gain[r, c] = math.nextafter(gain[r, c], math.inf)
