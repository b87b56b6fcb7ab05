"""ANLS* where the mutation run found no test looking: identical elements against a better assignment, long texts,
the closest gold of alternatives and nulls, the per-key scores of identical subtrees, which of two equally good
elements a gold element keeps, and the bounds past which a list pairs in order. Every value is worked out by hand
in the comments."""

from __future__ import annotations

import warnings
from decimal import Decimal
from typing import Any

import pytest

from pytest_extractbench.scoring import anls_star, anls_star_details
from pytest_extractbench.scoring.anls_walk import anls_star_by_key

TEN_A = "aaaaaaaaaa"


@pytest.mark.parametrize(
    ("gold", "predicted", "fields"),
    [
        ([TEN_A, "aaaaaaabbb"], [TEN_A, "bbbaaaaaaa"], {}),
        ([{"v": TEN_A}, {"v": "aaaaaaabbb"}], [{"v": TEN_A}, {"v": "bbbaaaaaaa"}], {"[].v": 0.7}),
    ],
)
def test_an_identical_element_yields_to_two_pairs_the_threshold_favours(
    gold: Any, predicted: Any, fields: dict[str, float]
) -> None:
    # identical first: 1 for the identical pair, and "aaaaaaabbb" vs "bbbaaaaaaa" is 6 edits of 10 -> 0.4, under the
    # threshold -> 0: (1 + 0) / 2 = 0.5. Crossed: "aaaaaaabbb" vs ten a's and ten a's vs "bbbaaaaaaa" are 3 edits of
    # 10 each -> 0.7 + 0.7: 1.4 / 2 = 0.7, the larger sum the assignment is defined by
    assert anls_star(gold, predicted) == pytest.approx(0.7)
    assert anls_star_by_key(gold, predicted) == (pytest.approx(0.7), pytest.approx(fields))
    assert anls_star_details(gold, predicted).closest == [gold[1], gold[0]]  # in the prediction's order


def test_long_texts_are_folded_like_short_ones_not_read_as_booleans() -> None:
    # past 256 characters a text skips the cache of folded texts: 300 a's against 300 b's is 300 edits of 300 -> 0
    assert anls_star("a" * 300, "b" * 300) == 0.0
    assert anls_star("A" * 300, "a" * 300) == 1.0  # case folded away


def test_the_text_none_is_not_a_null() -> None:
    # a text against a null prediction is a mismatch, 0 of 1, even when the text reads "None"
    assert anls_star({"a": "None"}, {"a": None}) == 0.0
    assert anls_star({"a": "None", "b": "x"}, {"a": None, "b": "x"}) == 0.5


def test_the_closest_gold_of_alternatives_and_of_nulls() -> None:
    # the alternative that scores best is the closest gold, at the top and under a key
    assert anls_star_details(("a", "b"), "b").closest == "b"
    assert anls_star_details({"x": ("a", "bc")}, {"x": "bd"}).closest == {"x": "bc"}
    # a null matched by "" reads as the prediction's ""; a null against "x" stays null
    assert anls_star_details({"a": None}, {"a": ""}).closest == {"a": ""}
    assert anls_star_details({"a": None}, {"a": "x"}).closest == {"a": None}


def test_identical_subtrees_score_every_key_below_them() -> None:
    gold = {"a": {"b": "x"}, "items": [{"sku": "A"}, "loose", [{"deep": 1}]]}
    # every key of an identical answer scores 1, nested objects' and list elements' keys included
    expected = {"a.b": 1.0, "a": 1.0, "items[].sku": 1.0, "items[][].deep": 1.0, "items": 1.0}
    assert anls_star_details(gold, {**gold}).fields == expected
    assert anls_star_by_key(gold, {**gold}) == (1.0, expected)


@pytest.mark.parametrize(
    ("gold", "predicted"),
    [
        # {"a": ""} scores as well as the identical element (a null accepts ""): 1, and equal
        ([{"a": None}], [{"a": ""}, {"a": None}]),
        ([[None]], [[""], [None]]),
        ([{"a": 1.5, "b": None}], [{"a": 1.5, "b": ""}, {"a": 1.5, "b": None}]),
        # identical whatever the order of the keys
        ([{"a": None, "b": "x"}], [{"a": "", "b": "x"}, {"b": "x", "a": None}]),
    ],
)
def test_of_two_equally_good_elements_the_identical_one_pairs(gold: Any, predicted: Any) -> None:
    found = anls_star_details(gold, predicted)
    # the identical element pairs (n of n leaves), the other is invented, as many leaves again: n / 2n
    assert found.closest == gold  # not the element with "" where the null was
    assert found.score == 0.5


@pytest.mark.slow  # lists of 125,000 to 250,001 elements
def test_past_500_x_500_cells_the_elements_left_pair_in_order() -> None:
    # one gold text against 250,000 predicted ones, the bound itself: the assignment finds "B" (1 of 1); the other
    # 249,999 are invented, 1 each
    at_bound = ["x"] * 249_999 + ["B"]
    assert anls_star(["b"], at_bound) == 1 / 250_000
    # one more is past the bound: "b" pairs with the first, "x" (0); nothing is earned
    assert anls_star(["b"], ["x", *at_bound]) == 0.0


@pytest.mark.slow  # lists of 125,000 to 250,001 elements
def test_numbers_pair_with_an_identical_number_however_long_the_list() -> None:
    # found by value, not by a scan: both gold numbers pair with an identical one (2), the other 249,999 predicted
    # numbers are invented (1 each): 2 / 250,001
    predicted = [980.0] + [1.25] * 250_000
    assert anls_star([1.25, 980.0], predicted) == 2 / 250_001


@pytest.mark.slow  # lists of 125,000 to 250,001 elements
def test_past_the_scans_bound_objects_are_not_looked_for_and_pair_in_order() -> None:
    # 2 gold objects x 125,001 predicted ones is past 250,000 cells: no scan for identical objects, and the pairing
    # in order puts "a" against "b" and "b" against "a" (0 each): nothing earned
    predicted = [{"v": "b"}, {"v": "a"}] + [{"v": "c"}] * 124_999
    assert anls_star([{"v": "a"}, {"v": "b"}], predicted) == 0.0


@pytest.mark.slow  # lists of 125,000 to 250,001 elements
def test_an_object_paired_as_identical_is_not_paired_again() -> None:
    # {"v": "ab"} is found identical (1); 2 x 125,001 cells is past the bound, so the identical pair stays and the
    # rest is assigned: {"v": "ac"} against the texts only (0 of 1 each). Length: the two pairs (1 + 1) and the
    # 124,999 texts left (1 each): 1 / 125,001. Were {"v": "ab"} still free, "ac" vs "ab" (0.5) would pair with it
    predicted = [{"v": "ab"}] + ["x"] * 125_000
    assert anls_star([{"v": "ab"}, {"v": "ac"}], predicted) == 1 / 125_001


def test_objects_without_keys_against_ones_with_keys_raise_no_numpy_warning() -> None:
    # gold: five {} and {"a": "x"}; predicted: five {"a": "x"} and {}. The identical pairs cross (the rest's {} is
    # as good against the identical {}), so the assignment takes all 6 x 6, as matrices: {"a": "x"} with one
    # {"a": "x"} (1 of 1), {} with {} (0 of 0), four {} with an invented "a" (0 of 1 each): 1 / 5, and "a" scores
    # 1, 0, 0, 0, 0 -> 0.2
    gold: list[Any] = [{} for _ in range(5)] + [{"a": "x"}]
    predicted: list[Any] = [{"a": "x"} for _ in range(5)] + [{}]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a division by a length of 0, even masked afterwards, warns
        assert anls_star_by_key(gold, predicted) == (0.2, {"[].a": 0.2})


@pytest.mark.slow  # 250,000 predicted objects
def test_at_the_scans_bound_an_identical_object_is_still_looked_for() -> None:
    # 1 gold object x 250,000 predicted ones is the bound itself: the scan finds the identical last one, which the
    # gold keeps over the 249,999 with "" (each as good: a null accepts ""); 1 of 1 + 249,999 invented
    predicted: list[Any] = [{"a": ""}] * 249_999 + [{"a": None}]
    found = anls_star_details([{"a": None}], predicted)
    assert found.closest == [{"a": None}]
    assert found.score == 1 / 250_000


@pytest.mark.slow  # 125,002 predicted texts
def test_past_the_bound_pair_scores_still_add_in_gold_order() -> None:
    # 3 x 125,002 cells: "same" pairs as identical (1), and the 2 x 125,001 left are past the bound too, so they pair
    # in order: "abcde" with "abcxy" (2 edits of 5 -> 0.6), "fghij" with "fghiz" (0.8). In gold order the sum is
    # (0.6 + 0.8) + 1.0 = 2.4; the identical pair's 1.0 first would give 2.4000000000000004. The one pass adds the
    # same way, bit for bit
    predicted = ["abcxy", "fghiz", "same"] + ["-"] * 124_999
    gold = ["abcde", "fghij", "same"]
    assert anls_star(gold, predicted) == (0.6 + 0.8 + 1.0) / 125_002
    assert anls_star_by_key(gold, predicted)[0] == (0.6 + 0.8 + 1.0) / 125_002


# Of two alternatives that score the same, the one whose closest gold equals the prediction counts (else the first):
# each case's second alternative is equal, its first scores as well without being equal, so the equality of every
# kind of node decides which closest gold comes back.
NAN = float("nan")


@pytest.mark.parametrize(
    ("first", "second", "predicted", "score", "closest"),
    [
        # a null matched by "" is equal; "X" against "x" scores 1 but is not: both 2 of 2; the null reads as ""
        ({"a": "", "b": "X"}, {"a": None, "b": "x"}, {"a": "", "b": "x"}, 1.0, {"a": "", "b": "x"}),
        # b: True against 1 scores 0 ("true" vs "1") but is equal (True == 1); a null against "q" is a mismatch
        # (0, not equal): both 1 of 2
        ({"a": None, "b": 1}, {"a": "q", "b": True}, {"a": "q", "b": 1}, 0.5, {"a": "q", "b": True}),
        # a list against a text is a mismatch (0 of 1, not equal)
        ({"a": ["q"], "b": 1}, {"a": "q", "b": True}, {"a": "q", "b": 1}, 0.5, {"a": "q", "b": True}),
        # a list against an empty list: 0 of 1, not equal; a null accepts [] (1 of 1, equal) and reads as it
        ({"a": ["q"], "b": 1}, {"a": None, "b": True}, {"a": [], "b": 1}, 0.5, {"a": [], "b": True}),
        # lists: ["x"] finds "x" and leaves True invented (1 of 2): one element short is not equal; [1, "x"] pairs 1
        # with True (0, equal) and "x" with "x": 1 of 2, equal
        (["x"], [1, "x"], [True, "x"], 0.5, [1, "x"]),
        # "y" against True (0, not equal) makes a list of the same length unequal
        (["y", "x"], [1, "x"], [True, "x"], 0.5, [1, "x"]),
        # a number JSON does not have: Decimal("1.0") == 1 but "1.0" vs "1" is 2 edits of 3 -> 0; 2 against 1 is
        # not equal either: both 1 of 2
        ({"a": "q", "b": 2}, {"a": "q", "b": Decimal("1.0")}, {"a": "q", "b": 1}, 0.5, {"a": "q", "b": Decimal("1.0")}),
        # the list holding this very NaN is identical (1 of 1, equal); "NaN" reads as "nan" (1) but is not NaN
        (["NaN"], [NAN], [NAN], 1.0, [NAN]),
    ],
)
def test_of_alternatives_that_score_the_same_the_equal_one_counts(
    first: Any, second: Any, predicted: Any, score: float, closest: Any
) -> None:
    found = anls_star_details((first, second), predicted)
    assert found.score == score
    assert repr(found.closest) == repr(closest)  # repr: NaN equals nothing


def test_values_of_types_json_does_not_have_are_compared_as_text_even_when_equal() -> None:
    # Decimal("1.0") == Decimal("1.00"), but their texts "1.0" and "1.00" are 1 edit of 4 apart -> 0.75
    assert anls_star({"a": Decimal("1.0")}, {"a": Decimal("1.00")}) == 0.75
    assert anls_star([{"a": Decimal("1.0")}], [{"a": Decimal("1.00")}]) == 0.75


def test_an_invented_empty_value_still_counts_one() -> None:
    # "b" right (1 of 1); "c" invented: nothing earned, its size 0 counted as 1: 1 / 2
    assert anls_star({"b": "x"}, {"b": "x", "c": []}) == 0.5
    assert anls_star({"b": "x"}, {"b": "x", "c": {}}) == 0.5


@pytest.mark.slow  # 125,000 predicted texts
def test_at_the_bound_identical_elements_still_yield_to_a_better_assignment() -> None:
    # 2 x 125,000 cells, the bound itself: the crossed pairs of the first test (0.7 + 0.7) beat the identical pair
    # (1 + 0), so the assignment takes every element; the 124,998 "-" are invented, 1 each: 1.4 / 125,000
    predicted = [TEN_A, "bbbaaaaaaa"] + ["-"] * 124_998
    assert anls_star([TEN_A, "aaaaaaabbb"], predicted) == (0.7 + 0.7) / 125_000
