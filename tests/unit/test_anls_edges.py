"""ANLS* at its edges, worked out by hand in the comments: values Python calls equal that JSON writes differently
(1, 1.0 and true; 0.0 and -0.0) are never taken as identical, a tuple of alternatives counts its largest
alternative, and key paths are named by the key's own text whatever was scored before."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_extractbench.scoring import anls_star, anls_star_details
from pytest_extractbench.scoring.anls_walk import anls_star_by_key


@pytest.mark.parametrize(
    ("gold", "predicted", "expected"),
    [
        # 1 == True in Python, but "1" vs "true" is 3 edits of 4 -> 0.25, under the threshold -> 0
        ({"a": 1}, {"a": True}, 0.0),
        # "1" vs "1.0": 2 edits of 3 -> 1/3 -> 0
        ({"a": 1}, {"a": 1.0}, 0.0),
        # "0.0" vs "-0.0": 1 edit of 4 -> 0.75
        ({"a": 0.0}, {"a": -0.0}, 0.75),
        # the same as list elements: the identical pairing keeps 1 with 1 and leaves 2 vs 2.0 to the assignment (0)
        ([{"a": [1, 2]}], [{"a": [1, 2.0]}], 0.5),
        ([1, 2], [1, 2.0], 0.5),
        ([[True]], [[1]], 0.0),
        # records left to the assignment: 0.0 vs -0.0 (0.75) and "x" (1) pair, 1 vs true (0) and "y" (1) pair;
        # the crossed pairs score 0: (1.75 + 1) / 4
        ([{"a": 0.0, "b": "x"}, {"a": 1, "b": "y"}], [{"a": -0.0, "b": "x"}, {"a": True, "b": "y"}], 0.6875),
    ],
)
def test_values_equal_in_python_but_written_differently_are_compared_as_text(
    gold: Any, predicted: Any, expected: float
) -> None:
    assert anls_star(gold, predicted) == pytest.approx(expected)
    assert anls_star_by_key(gold, predicted)[0] == pytest.approx(expected)  # the one pass agrees


def test_unpaired_list_elements_count_their_size_whichever_side_is_longer() -> None:
    # {"a": "x"} pairs as identical (1 of 1); of the two gold records left one pairs with {"a": "q"} (0) and the
    # other counts its size unpaired: 1 + 1 + 2 leaves either way, 1 / 4
    gold = [{"a": "x"}, {"a": "y"}, {"a": "z", "b": "w"}]
    assert anls_star_by_key(gold, [{"a": "x"}, {"a": "q"}])[0] == anls_star(gold, [{"a": "x"}, {"a": "q"}]) == 0.25
    # the other way round: the invented records count theirs
    assert anls_star_by_key([{"a": "x"}], gold)[0] == anls_star([{"a": "x"}], gold) == 0.25


def test_an_unpaired_tuple_of_alternatives_counts_its_largest_alternative() -> None:
    # "b" pairs with "b" (1 of 1); the unpaired alternatives ("a" | three letters) count 3: 1 / (1 + 3)
    assert anls_star([("a", ["x", "y", "z"]), "b"], ["b"]) == 0.25


def test_key_paths_are_the_keys_own_text_even_for_keys_python_calls_equal() -> None:
    # 1 and True are one dict key to Python; the path names what the caller wrote, in that order
    assert anls_star_details({1: "a"}, {1: "a"}).fields == {"1": 1.0}
    assert anls_star_details({True: "a"}, {True: "a"}).fields == {"True": 1.0}
    assert anls_star_details({1: "a"}, {1: "a"}).fields == {"1": 1.0}


def test_the_one_pass_walk_by_hand_nulls_missing_and_invented_keys() -> None:
    assert anls_star_by_key({"a": None}, {"a": ""}) == (1.0, {"a": 1.0})  # a gold null accepts an empty string
    assert anls_star_by_key({"a": None}, {"a": "x"}) == (0.0, {"a": 0.0})
    # a: left out, read as null against a null gold (1 of 1); b: 1 of 1; c: invented, 0 of 1
    assert anls_star_by_key({"a": None, "b": "x"}, {"b": "x", "c": "y"}) == (2 / 3, {"a": 1.0, "b": 1.0, "c": 0.0})
    # an invented empty list still counts 1, and an empty invented value has no per-key score
    assert anls_star_by_key({"b": "x"}, {"b": "x", "c": []}) == (0.5, {"b": 1.0})
    # a text against an object of two leaves: 0 of max(1, 2)
    assert anls_star_by_key({"b": "x", "d": "y"}, {"b": "x", "d": {"e": 1, "f": 2}}) == (1 / 3, {"b": 1.0, "d": 0.0})


def test_an_empty_list_against_a_null_or_a_text_still_counts_one() -> None:
    # a gold null accepts []: 1 of max(1, 0); "x" against "y" earns 0 of 1
    assert anls_star_by_key({"a": None, "b": "x"}, {"a": [], "b": "y"}) == (0.5, {"a": 1.0, "b": 0.0})
    # a text against []: 0 of max(1, 0)
    assert anls_star_by_key({"b": "x", "d": "y"}, {"b": "x", "d": []}) == (0.5, {"b": 1.0, "d": 0.0})
