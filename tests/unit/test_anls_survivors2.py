"""ANLS* where the mutation run after the speed work (gains from the assignment's own code, matrices from 16 cells)
found no test looking: the check of whether identical elements may pair first (and which elements it finds identical),
a pair of empty values (length 0) the assignment chooses, line items inside list elements the outer assignment only
scores, and the caches past their bound. Every value is worked out by hand in the comments; the one pass
(:mod:`.anls_walk`) and the tree (:mod:`.anls`) are both asked."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_extractbench.scoring import anls
from pytest_extractbench.scoring.anls_walk import anls_star_by_key

TEN_A = "aaaaaaaaaa"


def _both(gold: Any, predicted: Any) -> tuple[float, dict[str, float]]:
    found = anls_star_by_key(gold, predicted)
    assert found == anls.anls_star_by_key(gold, predicted)  # the tree agrees
    return found


def test_identical_elements_yield_when_a_pair_that_reads_the_same_is_not_equal() -> None:
    # paired identical first, "bbbaaaaaaa" and ten a's earn 1 + 1, and "aaaaaaabbb" vs "BBBaaaaaaa" (read
    # "bbbaaaaaaa") 6 edits of 10 -> 0.4, under the threshold -> 0: 2 / 3. The check: an identical gold element
    # against the predicted one left gains at most 1.0 ("bbbaaaaaaa" vs "BBBaaaaaaa": the same text, not equal), the
    # gold one left against an identical prediction 0.7 (3 edits of 10 from ten a's): 1.7 beats an identical pair's
    # gain, so every element is assigned. Best: "bbbaaaaaaa" keeps its twin (1), ten a's take "BBBaaaaaaa" (0.7),
    # "aaaaaaabbb" ten a's (0.7): 2.4 / 3
    gold = ["bbbaaaaaaa", TEN_A, "aaaaaaabbb"]
    predicted = ["bbbaaaaaaa", TEN_A, "BBBaaaaaaa"]
    expected = (1.0 + (1 - 3 / 10) + (1 - 3 / 10)) / 3  # added in gold order, as the pairs are
    assert anls.anls_star(gold, predicted) == expected
    assert _both(gold, predicted) == (expected, {})
    # in the prediction's order: the twin, then the gold elements ten a's and "aaaaaaabbb" swapped
    assert anls.anls_star_details(gold, predicted).closest == ["bbbaaaaaaa", "aaaaaaabbb", TEN_A]


def test_a_pair_of_empty_values_scores_one_and_the_assignment_takes_it() -> None:
    # {"a": []} against {"a": {}}: a list against an object is a mismatch of length max(0, 0) = 0, an empty pairwise
    # length, ratio 1; against "z" 0 of 1. "q" against either 0 of 1. So the assignment crosses the elements: the
    # sum is 0 + 0 of 0 + 1 -> 0, and key "a" scores its ratio 1 (paired in the given order, {"a": []} against "z",
    # no key would score)
    assert _both([{"a": []}, "q"], ["z", {"a": {}}]) == (0.0, {"[].a": 1.0})


def test_caches_emptied_past_their_bound_still_give_each_path_and_text() -> None:
    # 50,002 keys and texts, more than either cache keeps (50,000): both are emptied on the way and refilled. Every
    # key is right (1) but k0: "v0" vs "x0" is 1 edit of 2 -> 0.5: (50,001 + 0.5) / 50,002
    gold = {f"k{n}": f"v{n}" for n in range(50_002)}
    predicted = {**gold, "k0": "x0"}
    score, fields = anls.anls_star_by_key(gold, predicted)
    assert score == (50_001 + 0.5) / 50_002
    assert fields == {**dict.fromkeys(gold, 1.0), "k0": 0.5}
    assert anls.anls_star({"k7": "v7"}, {"k7": "V7"}) == 1.0  # a text folded again after the emptying
    assert anls.anls_star_by_key({"k7": {"k0": "v"}}, {"k7": {"k0": "v"}})[1] == {"k7.k0": 1.0, "k7": 1.0}


def test_an_element_identical_in_another_key_order_still_pairs_first() -> None:
    # the gold's one list holds {"a": null, "b": "x"}; the second prediction holds it with its keys in another order
    # (identical as JSON), the first holds "" where the null was. Both score 2 of 2 and are equal (a null accepts
    # ""), so only the identical pairing keeps the null in the closest gold; the other list, 2 leaves, is invented:
    # 2 / 4
    gold = [[{"a": None, "b": "x"}]]
    predicted = [[{"a": "", "b": "x"}], [{"b": "x", "a": None}]]
    found = anls.anls_star_details(gold, predicted)
    assert found.score == 0.5
    assert found.closest == gold


@pytest.mark.parametrize(
    ("gold", "predicted", "closest"),
    [
        # {"a": null} pairs with its twin, the second prediction. The first, {"a": ""}, is as good for it (a null
        # accepts "": 1 of 1, and equal), so against it the identical element gains exactly what an identical pair
        # does, and "q" against the twin nothing (a text against an object: 0): the sum does not beat the identical
        # pair, which stays. In the prediction's order: "q" (kept against {"a": ""}, a mismatch), then the twin
        ([{"a": None}, "q"], [{"a": ""}, {"a": None}], ["q", {"a": None}]),
        # {"a": ""} pairs with its twin; against "z" it gains nothing (a mismatch), so no assignment can beat the
        # identical pair, however well {"a": null} scores against the twin: the null stays against "z"
        ([{"a": None}, {"a": ""}], [{"a": ""}, "z"], [{"a": ""}, {"a": None}]),
    ],
)
def test_an_identical_pair_stays_where_another_pairing_only_ties_it(gold: Any, predicted: Any, closest: Any) -> None:
    found = anls.anls_star_details(gold, predicted)
    assert found.closest == closest
    # either way one pair earns 1 (of 1) and the other 0 of 1: 1 / 2, key "a" scoring 1
    assert found.score == 0.5
    assert _both(gold, predicted) == (0.5, {"[].a": 1.0})


@pytest.mark.parametrize("n", [2, 4])  # 2 x 2 cells scored pair by pair; 4 x 4, at MIN_CELLS (16), as matrices
def test_line_items_inside_elements_the_assignment_only_scores(n: int) -> None:
    # one gold record with n items {"k": "p"}, {"k": "q"}...; the second prediction has them upper-cased in reverse
    # order: none identical, so its items are assigned crossed, each reading the same (1): n of n -> 1.0. The first
    # prediction has {"k": "p"} alone: identical (1), the other n - 1 gold items unpaired: 1 of n. The outer
    # assignment scores both candidates without per-key scores and keeps the second: n of n, the first's one item
    # invented: n / (n + 1). Every kept item's key scores 1
    letters = "pqrs"[:n]
    gold = [{"items": [{"k": x} for x in letters]}]
    predicted = [{"items": [{"k": "p"}]}, {"items": [{"k": x.upper()} for x in reversed(letters)]}]
    assert _both(gold, predicted) == (n / (n + 1), {"[].items[].k": 1.0, "[].items": 1.0})
