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

MIN_CELLS = 16
"""Fewer cells than this are faster pair by pair (measured on line items, with the keys in one ``cdist`` call: even
at about 3 x 4, the matrices 1.3x faster at 4 x 4 and 2x at 6 x 6): a matrix costs a rapidfuzz call and a few numpy
calls, a cell pair by pair about 3.5 µs of Python."""


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
    numpy = _libraries()[0]
    known = set(keys)
    extras = [len(column.keys() - known) for column in columns]
    lacking = [c for c, column in enumerate(columns) if not known <= column.keys()]
    if not keys:
        totals: npt.NDArray[np.float64] = numpy.zeros((len(rows), len(columns)))
    elif len(rows) * len(columns) * len(keys) * len(keys) <= AT_ONCE:
        totals = _totals_at_once(keys, rows, columns, lacking)
    else:
        totals = _totals_by_key(keys, rows, columns, lacking)
    gain: npt.NDArray[np.float64]
    if any(extras):
        lengths = len(keys) + numpy.array(extras)
        gain = numpy.where(lengths > 0, totals / numpy.maximum(lengths, 1), 1.0)
    else:
        gain = totals / len(keys) if keys else numpy.ones((len(rows), len(columns)))
    _nudge_equal(keys, rows, columns, extras, gain)
    return gain


AT_ONCE = 1024
"""Up to this many similarities of every key against every key (rows x columns x keys x keys), one ``cdist`` call
scores all of them and each key's block is read off its diagonal: the pairs of different keys it also scores cost
less than a call a key does on line items; past it, a call a key."""


def _totals_by_key(
    keys: tuple[str, ...], rows: list[Texts], columns: list[Texts], lacking: list[int]
) -> npt.NDArray[np.float64]:
    """Each cell's sum of leaf similarities, one ``cdist`` call a key, added in the gold's key order."""
    numpy, cdist, similarity = _libraries()
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
    assert totals is not None  # keys is not empty
    return totals


def _totals_at_once(
    keys: tuple[str, ...], rows: list[Texts], columns: list[Texts], lacking: list[int]
) -> npt.NDArray[np.float64]:
    """:func:`_totals_by_key`'s sums from one ``cdist`` call: every row's texts (key by key) against every column's,
    so ``[r, k, c, k]`` is key ``k``'s similarity of row ``r`` and column ``c``, the same number its own call gives
    (each cell is its two texts' similarity alone); the keys' blocks are then added in the same order."""
    numpy, cdist, similarity = _libraries()
    width = len(keys)
    texts = [column.get(key, _LEFT_OUT)[1] for column in columns for key in keys]
    every = cdist(
        [row[key][1] for row in rows for key in keys],
        texts,
        scorer=similarity,
        score_cutoff=THRESHOLD,
        dtype=numpy.float64,
    )
    if lacking:  # a key the element left out earns nothing
        every[:, [c * width + k for c in lacking for k, key in enumerate(keys) if key not in columns[c]]] = 0.0
    blocks = every.reshape(len(rows), width, len(columns), width)
    totals: npt.NDArray[np.float64] = blocks[:, 0, :, 0].copy()
    for k in range(1, width):  # in the gold's key order, as the pair-by-pair sum adds them
        totals += blocks[:, k, :, k]
    return totals


def _nudge_equal(
    keys: tuple[str, ...], rows: list[Texts], columns: list[Texts], extras: list[int], gain: npt.NDArray[np.float64]
) -> None:
    """Between equally good pairs one whose closest gold equals the element wins: its gain goes up one ulp. Equal is
    Python's ``==`` key by key (``1 == 1.0 == True``), a key left out equal to an empty gold text (what a null
    accepts), so a tuple of values per element finds the equal cells by hash (few: identical ones paired first)."""
    by_values: dict[tuple[Any, ...], list[int]] = {}
    for r, row in enumerate(rows):
        by_values.setdefault(tuple([row[key][0] for key in keys]), []).append(r)
    # equal values are equal in the first key too (and hash alike): most elements stop at that look-up
    first = keys[0] if keys else None
    firsts = {values[0] for values in by_values} if keys else set()
    for c, column in enumerate(columns):
        if extras[c] or (first is not None and column.get(first, _LEFT_OUT)[0] not in firsts):
            continue
        for r in by_values.get(tuple([column.get(key, _LEFT_OUT)[0] for key in keys]), ()):
            gain[r, c] = math.nextafter(gain[r, c], math.inf)
