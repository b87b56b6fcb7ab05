"""ANLS*'s list assignment, the faster paths against the ones they replace: the identical pairs' check (whether an
assignment of every element could beat pairing identical elements first) from the assignment's own gains instead of
a full comparison per pair, and a matrix's key similarities from one ``cdist`` call instead of one a key. Each must
give the same floats, so the same pairs and the same ANLS*."""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from pytest_extractbench.scoring import anls, anls_cells, anls_walk
from pytest_extractbench.scoring.anls_walk import _Texts, _texts, anls_star_by_key

# scalars that are == across types (1, 1.0, True), empty texts (what a left-out key equals), near texts
_leaves = st.one_of(
    st.booleans(),
    st.integers(-1, 2),
    st.sampled_from([1.0, -0.0, 0.0, 2.5]),
    st.sampled_from(["", "a", "ab", "abc", "abcd", "abce", "SKU-1234", "sku-1243", "1"]),
    st.text(alphabet="ab", min_size=1, max_size=7),
)
_objects = st.dictionaries(st.sampled_from("abcd"), _leaves, max_size=4)
# elements that are not objects of scalars take the full comparison: lists, nulls, nested objects, NaN
_others = st.one_of(
    st.none(),
    st.lists(_leaves, max_size=2),
    st.dictionaries(st.sampled_from("ab"), st.lists(_leaves, max_size=1), max_size=1),
    st.just({"a": math.nan}),
)


@st.composite
def _lists(draw: st.DrawFn, others: bool = True) -> tuple[list[Any], list[Any]]:
    """A gold list and a prediction that copies some of its elements (identical pairs), edits or drops others and
    invents a few, in any order."""
    element = st.one_of(_objects, _others) if others else _objects
    gold = draw(st.lists(element, min_size=1, max_size=6))
    predicted = [draw(st.sampled_from([x, x, draw(element)])) for x in gold if draw(st.integers(0, 4))]
    predicted += draw(st.lists(element, max_size=2))
    return gold, draw(st.permutations(predicted))


@contextmanager
def _setting(module: Any, name: str, value: Any) -> Iterator[None]:
    saved = getattr(module, name)
    setattr(module, name, value)
    try:
        yield
    finally:
        setattr(module, name, saved)


@given(_lists(), st.sampled_from([1, anls_cells.MIN_CELLS, 10**9]), st.data())
@example(([{"v": "aaaaaaaaaa"}, {"v": "aaaaaaabbb"}], [{"v": "aaaaaaaaaa"}, {"v": "bbbaaaaaaa"}]), 1, None)
def test_the_largest_gain_of_a_block_is_the_pair_by_pair_largest(
    case: tuple[list[Any], list[Any]], cells: int, data: Any
) -> None:
    gold, predicted = case
    if not predicted:
        return
    rows = list(range(len(gold))) if data is None else data.draw(st.lists(st.sampled_from(range(len(gold)))))
    columns = (
        list(range(len(predicted))) if data is None else data.draw(st.lists(st.sampled_from(range(len(predicted)))))
    )
    with _setting(anls_cells, "MIN_CELLS", cells):  # pair by pair, matrices from the smallest block, or never
        fast = _Texts(gold, predicted).best(rows, columns)
    slow = anls._best_pair(gold, predicted, anls_walk._gain, rows, columns)
    assert repr(fast) == repr(slow)


def test_the_largest_gain_by_hand() -> None:
    # "aaaaaaaaaa" against "bbbaaaaaaa": 3 edits of 10 -> 0.7; against itself 1.0 and equal, so one ulp above 1
    gold, predicted = [{"v": "aaaaaaaaaa"}], [{"v": "bbbaaaaaaa"}, {"v": "aaaaaaaaaa"}]
    assert _Texts(gold, predicted).best([0], [0]) == pytest.approx(0.7)
    assert _Texts(gold, predicted).best([0], [0, 1]) == math.nextafter(1.0, math.inf)
    assert _Texts(gold, predicted).best([], [0, 1]) == 0.0  # no pair: nothing gained


@given(_lists())
def test_the_identical_pairs_check_from_block_gains_decides_as_pair_by_pair(case: tuple[list[Any], list[Any]]) -> None:
    gold, predicted = case
    fast = anls.identical_first(gold, predicted, anls_walk._gain, _Texts(gold, predicted).best)
    assert fast == anls.identical_first(gold, predicted, anls_walk._gain)


@given(_lists(others=False), st.sampled_from([1, anls_cells.MIN_CELLS]))
def test_anls_star_with_either_matrix_path_equals_the_tree(case: tuple[list[Any], list[Any]], cells: int) -> None:
    gold, predicted = ({"items": case[0]}, {"items": case[1]})
    tree = repr(anls.anls_star_by_key(gold, predicted))
    with _setting(anls_cells, "MIN_CELLS", cells):
        for at_once in (0, anls_cells.AT_ONCE, 10**9):  # a cdist call a key, the default bound, always one call
            with _setting(anls_cells, "AT_ONCE", at_once):
                assert repr(anls_star_by_key(gold, predicted)) == tree


@st.composite
def _rows_and_columns(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    rows = draw(st.lists(_objects, min_size=1, max_size=5))
    columns = draw(st.lists(st.one_of(st.sampled_from(rows), _objects), min_size=1, max_size=6))
    return rows, columns


@given(_rows_and_columns())
@example(([{"a": "abcd", "b": "xy"}], [{"a": "abce", "b": "xy"}, {"a": "abcd"}]))
@example(([{"a": 1, "b": ""}, {"b": "", "a": 1}], [{"a": 1.0}, {"a": True, "b": ""}, {"a": 2, "b": ""}]))
def test_one_cdist_call_for_every_key_gives_the_call_a_key_matrix_bit_for_bit(
    case: tuple[list[Any], list[Any]],
) -> None:
    rows, columns = [_texts(x) for x in case[0]], [_texts(x) for x in case[1]]
    with _setting(anls_cells, "AT_ONCE", 0):
        by_key = anls_cells.gains(rows, columns)
    with _setting(anls_cells, "AT_ONCE", 10**9):
        at_once = anls_cells.gains(rows, columns)
    assert by_key is not None and at_once is not None
    assert repr(at_once.tolist()) == repr(by_key.tolist())


def test_one_cdist_call_by_hand() -> None:
    rows = [_texts({"a": "abcd", "b": "xy"})]
    columns = [_texts({"a": "abce", "b": "xy"}), _texts({"a": "abcd"}), _texts({"b": "xy", "a": "abcd"})]
    with _setting(anls_cells, "AT_ONCE", 10**9):
        gain = anls_cells.gains(rows, columns)
    assert gain is not None
    # 1: "abcd" vs "abce" 1 edit of 4 -> 0.75, "xy" vs "xy" 1 -> 1.75 / 2 keys = 0.875
    # 2: "a" 1, "b" left out 0 -> 1 / 2 = 0.5, not equal ("xy" is not empty)
    # 3: both keys equal in another order -> 2 / 2 = 1, equal: one ulp above 1
    assert gain.tolist() == [[0.875, 0.5, math.nextafter(1.0, math.inf)]]


def test_equal_elements_are_found_past_the_first_key_look_up() -> None:
    # 1 == 1.0 == True in the first key; the second key decides: "" equals a left-out key, "x" does not
    rows = [_texts({"a": 1, "b": ""}), _texts({"a": 1, "b": "x"})]
    columns = [_texts({"a": 1.0}), _texts({"a": True, "b": "x"}), _texts({"a": 2, "b": ""})]
    gain = anls_cells.gains(rows, columns)
    assert gain is not None
    # each "a": "1" against "1.0", "true" or "2" is 0 (lengths 1 and 3: 1 - 2/3 under 0.5; 1 and 4; 1 edit of 1)
    # row 1 ("b" ""): col 1 "b" left out 0 -> 0 / 2, equal (1 == 1.0, "" is what a left-out key equals): one ulp
    # above 0; col 2 "" vs "x" 0 -> 0, not equal; col 3 "" vs "" 1 -> 1 / 2, not equal (1 != 2)
    # row 2 ("b" "x"): col 1 0, not equal ("x" left out); col 2 "x" 1 -> 1 / 2, equal (1 == True); col 3 0
    assert gain.tolist() == [
        [math.nextafter(0.0, math.inf), 0.0, 0.5],
        [0.0, math.nextafter(0.5, math.inf), 0.0],
    ]
