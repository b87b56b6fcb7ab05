"""ANLS*'s list assignment scored as matrices (scoring/anls_cells.py) and pair by pair with the leaf similarity
inlined (anls_walk._flat_row): both give the pair-by-pair cell's numbers bit for bit, and a whole ANLS* through
either path equals the comparison tree's."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

from pytest_extractbench.scoring import anls, anls_cells
from pytest_extractbench.scoring.anls_walk import _flat_cell, _flat_row, _texts, anls_star_by_key

# scalars that are == across types (1, 1.0, True; 0, -0.0, False), empty and unicode texts, texts the lengths
# alone put under the threshold and texts one edit apart
_leaves = st.one_of(
    st.booleans(),
    st.integers(-2, 2),
    st.sampled_from([0.5, 1.0, -0.0, 0.0, 1e16, float("inf")]),
    st.sampled_from(["", "a", "A", "ab", "1", "true", "abc d", "abcd", "abxy", "sku-1234", "SKU-1243", "ß", "日本"]),
    st.text(max_size=8),
    st.text(alphabet="ab", min_size=2, max_size=9),  # near texts: similarities such as 2/3, 0.6, 0.875 that a
)  # sum in another key order rounds differently
_objects = st.dictionaries(st.sampled_from("abcde"), _leaves, max_size=5)  # keys in every order, some left out


@st.composite
def _near(draw: st.DrawFn, gold: dict[str, Any]) -> dict[str, Any]:
    """``gold`` with keys left out (an empty text's absence is equal to it), values edited, keys invented."""
    kept = {k: draw(st.sampled_from([v, v, draw(_leaves)])) for k, v in gold.items() if draw(st.integers(0, 3))}
    return {**kept, **draw(st.dictionaries(st.sampled_from("xy"), _leaves, max_size=1))}


@st.composite
def _rows_and_columns(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    rows = draw(st.lists(_objects, min_size=1, max_size=5))
    columns = [draw(_near(row)) for row in rows] + draw(st.lists(_objects, max_size=2))
    return rows, draw(st.permutations(columns))


@contextmanager
def _matrices_from(cells: int) -> Iterator[None]:
    saved = anls_cells.MIN_CELLS
    anls_cells.MIN_CELLS = cells
    try:
        yield
    finally:
        anls_cells.MIN_CELLS = saved


def _pair_by_pair(rows: list[dict[str, Any]], columns: list[dict[str, Any]]) -> list[list[float]]:
    """The assignment's gains cell by cell through :func:`_flat_cell`, the reference the faster paths must equal."""
    gains = []
    for gold in rows:
        row = []
        for predicted in columns:
            total, length, equal = _flat_cell(gold, _texts(gold), predicted, _texts(predicted))  # type: ignore[arg-type]
            score = total / length if length > 0 else 1.0
            row.append(math.nextafter(score, math.inf) if equal else score)
        gains.append(row)
    return gains


@given(_rows_and_columns())
# 6/7 + 5/7 + 4/7 in this order rounds to another float than in the reverse order
@example(([{"a": "abcdefg", "b": "abcdefg", "c": "abcdefg"}], [{"a": "abcdef", "b": "abcdex", "c": "abcd"}]))
@example(([{"a": "", "b": 1}], [{"b": 1.0}, {"b": True, "x": 2}]))  # equal closest golds: a left-out key, 1 == 1.0
def test_matrix_gains_are_the_pair_by_pair_gains_bit_for_bit(case: tuple[list[Any], list[Any]]) -> None:
    rows, columns = case
    gain = anls_cells.gains([_texts(x) for x in rows], [_texts(x) for x in columns])
    assert gain is not None
    assert repr(gain.tolist()) == repr(_pair_by_pair(rows, columns))  # repr: every bit of every float


@st.composite
def _row(draw: st.DrawFn) -> tuple[dict[str, Any], list[Any]]:
    gold = draw(_objects)
    others = st.one_of(_objects, st.none(), st.lists(_leaves, max_size=2))  # not objects of scalars: the tree
    return gold, draw(st.lists(st.one_of(_near(gold), others), min_size=1, max_size=5))


@given(_row())
@example(({"a": "abcdefg", "b": "abcdefg", "c": "abcdefg"}, [{"a": "abcdef", "b": "abcdex", "c": "abcd"}]))
@example(({"a": "", "b": 1}, [{"b": 1.0}, {"b": True, "x": 2}, {"a": "", "b": 1}]))
def test_a_row_with_its_leaf_similarity_inlined_is_the_cell_by_cell_row(case: tuple[Any, list[Any]]) -> None:
    gold, predicted = case
    texts = [_texts(x) for x in predicted]
    row = _flat_row(gold, _texts(gold), predicted, list(range(len(predicted))), texts)  # type: ignore[arg-type]
    expected = [
        _flat_cell(gold, _texts(gold), x, found) if found is not None else _reference_cell(gold, x)  # type: ignore[arg-type]
        for x, found in zip(predicted, texts)
    ]
    assert repr(row) == repr(expected)


def _reference_cell(gold: Any, predicted: Any) -> tuple[float, int, bool]:
    node = anls._compare(gold, predicted)
    return node.total, node.length, node.equal


def test_anything_but_plain_objects_of_scalars_is_left_to_the_pair_by_pair_path() -> None:
    plain = _texts({"a": "x"})
    for odd in ({"a": float("nan")}, {1: "x"}):  # NaN is not == itself; a key that is not text
        assert anls_cells.gains([plain, _texts(odd)], [plain]) is None
        assert anls_cells.gains([plain], [_texts(odd)]) is None
    assert anls_cells.gains([plain, None], [plain]) is None  # an element that is not an object of scalars


@st.composite
def _long_line_items(draw: st.DrawFn) -> tuple[Any, Any]:
    """Line items long enough for matrices at the real cut-off: elements edited, dropped, invented, reordered."""
    gold = draw(st.lists(_objects, min_size=1, max_size=12))
    edits = st.one_of(_leaves, st.just(math.nan))  # an element with a NaN has no texts: compared in full
    predicted = [
        {k: draw(st.sampled_from([v, draw(edits)])) for k, v in element.items() if draw(st.integers(0, 5))}
        for element in gold
        if draw(st.integers(0, 6))
    ]
    predicted = draw(st.permutations(predicted + draw(st.lists(_objects, max_size=3))))
    return {"items": gold, "n": draw(_leaves)}, {"items": predicted, "n": draw(_leaves)}


@given(_long_line_items(), st.sampled_from([1, anls_cells.MIN_CELLS]))
def test_anls_star_through_matrices_equals_the_tree(case: tuple[Any, Any], cells: int) -> None:
    gold, predicted = case
    tree = []
    for first in (True, False):  # with identical elements paired first and without
        anls.PAIR_IDENTICAL_FIRST = first
        try:
            tree.append(repr(anls.anls_star_by_key(gold, predicted)))
            with _matrices_from(cells):
                assert repr(anls_star_by_key(gold, predicted)) == tree[-1]
            with _matrices_from(10**9):  # never matrices: the inlined rows
                assert repr(anls_star_by_key(gold, predicted)) == tree[-1]
        finally:
            anls.PAIR_IDENTICAL_FIRST = True


def test_a_long_list_takes_the_matrices_and_scores_as_the_tree() -> None:
    gold = [{"sku": f"SKU-{n:04d}", "name": f"item {n}", "quantity": n % 7, "price": n * 1.25} for n in range(12)]
    predicted = [{**item, "name": item["name"].upper() + "x"} for item in reversed(gold)]
    called = []
    real = anls_cells.gains

    def spy(*args: Any) -> Any:
        called.append(True)
        return real(*args)

    anls_cells.gains = spy  # type: ignore[assignment]
    try:
        one_pass = anls_star_by_key({"items": gold}, {"items": predicted})
    finally:
        anls_cells.gains = real  # type: ignore[assignment]
    assert called  # 12 x 12 cells: past the cut-off
    assert repr(one_pass) == repr(anls.anls_star_by_key({"items": gold}, {"items": predicted}))


def test_rapidfuzz_similarity_matrices_are_the_leaf_similarity_bit_for_bit() -> None:
    """The matrices' one borrowed piece of arithmetic, over every pair of texts up to five letters of a two-letter
    alphabet (every length ratio and distance, the threshold's 0.5 exactly included) and generated unicode."""
    from rapidfuzz.distance.Levenshtein import normalized_similarity
    from rapidfuzz.process import cdist

    texts = ["".join(letters) for n in range(6) for letters in itertools.product("ab", repeat=n)]
    matrix = cdist(texts, texts, scorer=normalized_similarity, score_cutoff=anls.THRESHOLD, dtype="float64")
    assert repr(matrix.tolist()) == repr([[anls.text_similarity(a, b) for b in texts] for a in texts])


@given(st.lists(st.text(max_size=10), min_size=1, max_size=4), st.lists(st.text(max_size=10), min_size=1, max_size=4))
def test_rapidfuzz_similarities_of_any_texts_are_the_leaf_similarity(rows: list[str], columns: list[str]) -> None:
    from rapidfuzz.distance.Levenshtein import normalized_similarity
    from rapidfuzz.process import cdist

    matrix = cdist(rows, columns, scorer=normalized_similarity, score_cutoff=anls.THRESHOLD, dtype="float64")
    assert repr(matrix.tolist()) == repr([[anls.text_similarity(a, b) for b in columns] for a in rows])
