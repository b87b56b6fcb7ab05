"""The gains of ANLS*'s list assignment for lists of objects of scalars, as matrices instead of pair by pair.

A list assignment scores every gold x predicted pair of elements; for line items that is most of ANLS*'s cost
when each leaf similarity is a Python call. Here each key gets one edit-distance matrix (rapidfuzz's ``cdist``,
in C: the distance python-Levenshtein calls) and numpy turns the distances into similarities and each cell's
ANLS*. Every float is :func:`.anls_walk._flat_cell`'s: ``distance / longest`` is an int over an int, divided once
and correctly rounded in Python and in numpy alike, ``1 - x`` too, and a cell's similarities add up in its gold
element's own key order (gold elements are grouped by key order). Anything unusual (a NaN, a key that is not
text) gets None back and takes the pair-by-pair path.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from .anls import THRESHOLD

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

Texts = dict[Any, tuple[Any, str]]
"""Each key's value and text (:func:`.anls_walk._texts`)."""

MIN_CELLS = 64
"""Fewer cells than this are faster pair by pair (measured: about even at 8 x 8, matrices 2.7x faster at 20 x 20):
the matrices cost a fixed few dozen numpy and rapidfuzz calls, about as much as 30 cells scored in Python."""


def gains(rows: list[Texts | None], columns: list[Texts | None]) -> npt.NDArray[np.float64] | None:
    """Each cell's ANLS*, nudged up by one ulp where the closest gold equals the element (the assignment's gains,
    bit for bit :func:`.anls_walk._assign`'s); None when any element is not a plain object of scalars."""
    plain: tuple[list[Texts], list[Texts]] = ([], [])
    for texts, checked in zip((rows, columns), plain):
        for element in texts:
            if element is None:
                return None
            for key, (value, _) in element.items():
                if type(key) is not str or (type(value) is float and value != value):
                    return None
            checked.append(element)
    gold, found = plain
    import numpy as np

    orders: dict[tuple[str, ...], list[int]] = {}
    for r, row in enumerate(gold):
        orders.setdefault(tuple(row), []).append(r)
    if len(orders) == 1:
        return _group(next(iter(orders)), gold, found)
    gain = np.empty((len(gold), len(found)))
    for keys, members in orders.items():
        gain[members] = _group(keys, [gold[r] for r in members], found)
    return gain


def _group(keys: tuple[str, ...], rows: list[Texts], columns: list[Texts]) -> npt.NDArray[np.float64]:
    """The gains of gold elements that share one key order."""
    import numpy as np
    from rapidfuzz.distance.Levenshtein import distance
    from rapidfuzz.process import cdist

    known = set(keys)
    extras = [sum(1 for key in column if key not in known) for column in columns]
    width = len(columns)
    if keys:
        distances, gold_lengths, found_lengths, absent = [], [], [], []
        for k, key in enumerate(keys):
            texts = [row[key][1] for row in rows]
            found = [column[key][1] if key in column else "" for column in columns]
            distances.append(cdist(texts, found, scorer=distance))
            gold_lengths.append([len(text) for text in texts])
            found_lengths.append([len(text) for text in found])
            if not all(key in column for column in columns):
                absent.append(k)
        longest = np.maximum(np.array(gold_lengths)[:, :, None], np.array(found_lengths)[:, None, :])
        np.maximum(longest, 1, out=longest)  # 0 only for two empty texts, whose distance is 0: 1 - 0 / 1 is 1.0
        similarities = 1.0 - np.stack(distances) / longest
        similarities[similarities < THRESHOLD] = 0.0
        for k in absent:  # a key the element left out earns nothing
            similarities[k][:, [keys[k] not in column for column in columns]] = 0.0  # a boolean mask of columns
        totals = similarities[0]
        for part in similarities[1:]:  # in the gold's key order, as the pair-by-pair sum adds them
            totals = totals + part
    else:
        totals = np.zeros((len(rows), width))
    if any(extras):
        lengths = len(keys) + np.array(extras)
        gain = np.where(lengths > 0, totals / np.maximum(lengths, 1), 1.0)
    else:
        gain = totals / len(keys) if keys else np.ones((len(rows), width))
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
        by_values.setdefault(tuple(row[key][0] for key in keys), []).append(r)
    for c, column in enumerate(columns):
        if extras[c]:
            continue
        for r in by_values.get(tuple(column[key][0] if key in column else "" for key in keys), ()):
            gain[r, c] = math.nextafter(gain[r, c], math.inf)
