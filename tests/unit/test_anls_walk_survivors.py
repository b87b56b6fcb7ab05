"""The one-pass ANLS* walk where the mutation run found no test looking: the `equal` flag of every kind of node
(it only breaks ties in a list's assignment, so each case sets two equally good elements against one gold), an
empty list's length, the order in which pair scores add, lists nested in elements the assignment only scores, and
the bound past which a list pairs in order. Every value is worked out by hand in the comments; the tree
(:func:`.anls.anls_star_by_key`) is asked too, as a second check."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_extractbench.scoring import anls
from pytest_extractbench.scoring.anls_walk import anls_star_by_key


def _both(gold: Any, predicted: Any) -> tuple[float, dict[str, float]]:
    found = anls_star_by_key(gold, predicted)
    assert found == anls.anls_star_by_key(gold, predicted)  # the tree agrees
    return found


# Each case: one gold element against an unequal element (first) and an equal one (second) that score the same
# ratio. Their gains differ by one ulp only, so the gold pairs with the equal one; a mutant that reads either flag
# wrong ties them and the assignment keeps the first column. The two elements differ in size or in which key
# earns, so the other pairing gives another score or other per-key scores.
@pytest.mark.parametrize(
    ("gold", "unequal", "equal", "score", "fields"),
    [
        # a null against "z": 0 of 1, unequal; against []: 1 of 1, equal. 1 against True: "1" vs "true" -> 0, but
        # 1 == True. Both pairs 1 of 2; the equal one pairs and the other counts its 2 leaves unpaired: 1 / 4
        # (the other way: 1 / (2 + 1), [] counting 0 leaves; a 0, b 1)
        ({"a": None, "b": 1}, {"a": "z", "b": 1}, {"a": [], "b": True}, 1 / 4, {"[].a": 1.0, "[].b": 0.0}),
        # a text against []: 0 of max(1, 0), unequal; "x" 1 of 1 and 1 against True 0, equal: 1 / (2 + 1)
        ({"a": "x", "b": 1}, {"a": [], "b": 1}, {"a": "x", "b": True}, 1 / 3, {"[].a": 1.0, "[].b": 0.0}),
        # [1] left out: 0 of 1, and unequal (it is not empty); [1] against [1]: identical, 1 of 1. 1 / (2 + 1)
        ({"a": [1], "b": 1}, {"b": 1}, {"a": [1], "b": True}, 1 / 3, {"[].a": 1.0, "[].b": 0.0}),
        # [1] against []: 0 of 1, unequal: 1 / (2 + 1)
        ({"a": [1], "b": 1}, {"a": [], "b": 1}, {"a": [1], "b": True}, 1 / 3, {"[].a": 1.0, "[].b": 0.0}),
        # [1] against [2]: 0 of 1, unequal; both elements 2 leaves: 1 / 4, told apart by which key earned
        ({"a": [1], "b": 1}, {"a": [2], "b": 1}, {"a": [1], "b": True}, 1 / 4, {"[].a": 1.0, "[].b": 0.0}),
        # [] against ["y"]: 0 of 0 + 1, unequal; [] left out: 0 of 1, equal (an empty gold left out is right).
        # "x" 1 of 1 in both: the equal one pairs, ["y"] and "x" count 2 unpaired: 1 / 4 (the other way 1 / 3)
        ({"a": [], "b": "x"}, {"a": ["y"], "b": "x"}, {"b": "x"}, 1 / 4, {"[].a": 0.0, "[].b": 1.0}),
        # lists: [1] pairs 1 with 1 and leaves 2 unpaired (1 of 2, one element short: unequal); [1, 2.0] pairs 1 with
        # 1 and 2 with 2.0 ("2" vs "2.0" -> 0, but 2 == 2.0): 1 of 2, equal. 1 / (2 + 1) (the other way 1 / 4)
        ([1, 2], [1], [1, 2.0], 1 / 3, {}),
    ],
)
def test_of_two_equally_good_elements_the_gold_pairs_with_the_equal_one(
    gold: Any, unequal: Any, equal: Any, score: float, fields: dict[str, float]
) -> None:
    assert _both([gold], [unequal, equal]) == (score, fields)


def test_a_list_scores_its_pairs_in_gold_order() -> None:
    # "same" pairs as identical before the assignment pairs "abcde" with "abcxy" (2 edits of 5 -> 0.6) and "fghij"
    # with "fghiz" (0.8). Added in gold order: (0.6 + 0.8) + 1.0 = 2.4; the identical pair's 1.0 first gives
    # 2.4000000000000004, another float after the division by 3
    in_order = ((1 - 2 / 5) + (1 - 1 / 5) + 1.0) / 3
    assert in_order != (1.0 + (1 - 2 / 5) + (1 - 1 / 5)) / 3  # the test can tell the orders apart
    assert _both(["abcde", "fghij", "same"], ["abcxy", "fghiz", "same"]) == (in_order, {})


def test_lists_inside_elements_the_assignment_only_scores() -> None:
    # the assignment scores each gold x predicted pair without per-key scores, lists inside them included:
    # k of the first pair: {"v": "a"} identical (1 of 1), {"v": "b"} vs {"v": "c"} (0 of 1): 1 of 2. The first gold
    # against the second prediction and the second against the first: 0 of 2; the second pair 0 of 1. The
    # diagonal wins (0.5 + 0): 1 / (2 + 1). Per key: k[].v scores 1, 0 and 0; k 0.5 and 0
    gold = [{"k": [{"v": "a"}, {"v": "b"}]}, {"k": [{"v": "d"}]}]
    predicted = [{"k": [{"v": "a"}, {"v": "c"}]}, {"k": [{"v": "e"}]}]
    assert _both(gold, predicted) == (1 / 3, {"[].k[].v": 1 / 3, "[].k": 0.25})


def test_lists_of_lists_inside_elements_the_assignment_only_scores() -> None:
    # [["ab"], ["cd"]] against [["CD"], ["AB"]]: each inner list is 1 leaf, "ab" vs "AB" reads the same (1) and
    # "ab" vs "CD" 0, so the inner assignment crosses them: 2 of 2. The outer one pairs it so (against "q" or
    # "z" it is a mismatch, 0) and "z" with "q" (0 of 1): 2 / 3
    assert _both([[["ab"], ["cd"]], "z"], [[["CD"], ["AB"]], "q"]) == (2 / 3, {})


def test_an_empty_gold_list_counts_the_predicted_elements() -> None:
    # a: [] against two texts earns 0 of 0 + 2; b: 1 of 1: 1 / 3
    assert _both({"a": [], "b": "x"}, {"a": ["y", "z"], "b": "x"}) == (1 / 3, {"a": 0.0, "b": 1.0})
    # the other way round: the two gold texts count
    assert _both({"a": ["y", "z"], "b": "x"}, {"a": [], "b": "x"}) == (1 / 3, {"a": 0.0, "b": 1.0})


def test_a_list_of_texts_against_a_text_is_read_as_alternatives() -> None:
    # the tree's reading, which this pass leaves to it: "b" is one of the alternatives "a" | "b" (1 of 1); read as
    # a list against a text it would be a mismatch, 0 of 2
    assert anls_star_by_key(["a", "b"], "b") == (1.0, {})
    assert anls_star_by_key(["a", "b"], "c") == (0.0, {})  # no alternative near "c"


@pytest.mark.slow  # 250,000 predicted texts
def test_at_the_bound_the_one_pass_still_assigns() -> None:
    # 1 x 250,000 cells, the bound itself: the assignment finds "AB" (case folded: 1 of 1) rather than the first
    # element "ac" (1 edit of 2 -> 0.5); the other 249,999 count 1 each unpaired: 1 / 250,000
    predicted = ["ac"] + ["x"] * 249_998 + ["AB"]
    assert anls_star_by_key(["ab"], predicted) == (1 / 250_000, {})


@pytest.mark.slow  # 250,001 predicted texts
def test_past_the_bound_the_one_pass_pairs_in_order() -> None:
    # one cell more: "ab" pairs with the first element, "ac" (0.5), not with "AB"; 250,000 left unpaired:
    # 0.5 / 250,001
    predicted = ["ac"] + ["x"] * 249_999 + ["AB"]
    assert anls_star_by_key(["ab"], predicted) == (0.5 / 250_001, {})
