"""Arrays of scalars matched by similarity (``list_similarity``): partial credit for near elements, by hand, and
what it never changes (equality, exactness, lists whose elements are all equal or all far)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_extractbench import ScoringOptions
from pytest_extractbench.scoring import jaccard
from pytest_extractbench.scoring.compare import ElementPair, list_element_pairs, similarity_paired_elements

SIMILAR = ScoringOptions(list_similarity=0.8)
CEILING = math.nextafter(SIMILAR.exact_threshold, 0.0)  # near elements earn credit up to just below exactness


def test_a_comma_costs_one_character_not_the_element() -> None:
    gold, output = ["Newgistics, Inc.", "Acme Holdings LLC"], ["Newgistics Inc.", "ACME HOLDINGS LLC"]
    assert jaccard(gold, output, ScoringOptions()).score == pytest.approx(1 / 3)
    # "newgistics, inc." -> "newgistics inc.": one deletion in 16 characters; the pair takes one slot of the union
    assert jaccard(gold, output, SIMILAR).score == pytest.approx(min((1 + 15 / 16) / 2, CEILING))
    # the same pair beside one far element: below the ceiling, the credit shows whole
    far = jaccard([*gold, "Zeta"], [*output, "Omega"], SIMILAR).score
    assert far == pytest.approx((1 + 15 / 16) / 4)


def test_order_does_not_matter_and_each_element_pairs_once() -> None:
    gold = ["Bluefield Robotics Inc.", "Quartz Medical GmbH"]
    output = ["Quartz Medical GmbH.", "Bluefield Robotics, Inc."]
    blue = 1 - 1 / 24  # "bluefield robotics, inc." has one more character
    quartz = 1 - 1 / 20
    assert jaccard(gold, output, SIMILAR).score == pytest.approx(min((blue + quartz) / 2, CEILING))
    # one predicted element cannot stand for two gold ones: the second gold element stays unmatched
    single = jaccard(gold, ["Bluefield Robotics, Inc."], SIMILAR).score
    assert single == pytest.approx(blue / 2)


def test_a_suffix_spelled_out_is_below_a_high_threshold_and_above_a_low_one() -> None:
    gold, output = ["Brightstar Corp."], ["Brightstar Corporation"]
    similarity = 1 - 7 / 22  # "corp." -> "corporation": one substitution, six insertions
    assert jaccard(gold, output, SIMILAR).score == 0.0
    assert jaccard(gold, output, ScoringOptions(list_similarity=0.6)).score == pytest.approx(similarity)


def test_near_elements_never_make_a_list_exact() -> None:
    options = ScoringOptions(list_similarity=0.5)
    near = jaccard(["Newgistics, Inc."], ["Newgistics Inc."], options)
    assert near.equal is False and near.score == pytest.approx(15 / 16)
    # 19 equal elements and a near one: plain Jaccard 19/21 is below exactness; the near pair would lift it to
    # (19 + 15/16) / 20 = 0.997, which is held just below the threshold
    shared = [f"party {k}" for k in range(19)]
    lifted = jaccard([*shared, "Newgistics, Inc."], [*shared, "Newgistics Inc."], options)
    assert lifted.equal is False and lifted.score == math.nextafter(options.exact_threshold, 0.0)


WORDS = st.lists(
    st.sampled_from(
        ["Acme Inc.", "Acme, Inc.", "Acme Inc", "Beta LLC", "Beta L.L.C.", "Gamma", "gamma", "Delta GmbH", "Delta"]
    ),
    max_size=6,
)


@given(WORDS, WORDS, st.floats(0.05, 1.0))
def test_similarity_only_adds_credit_and_never_changes_equality(
    gold: list[str], output: list[str], threshold: float
) -> None:
    plain = jaccard(gold, output, ScoringOptions())
    similar = jaccard(gold, output, ScoringOptions(list_similarity=threshold))
    assert similar.equal == plain.equal
    assert plain.score <= similar.score <= 1.0
    exact = ScoringOptions().exact_threshold
    assert (similar.score >= exact) == (plain.score >= exact)


# --- which elements the score is made of: the field diff shows them ---


def test_each_element_is_paired_exactly_by_similarity_missed_or_spurious() -> None:
    gold = ["Newgistics, Inc.", "Acme Holdings LLC", "Zeta", "acme holdings llc"]
    output = ["Omega", "Newgistics Inc.", "ACME HOLDINGS LLC"]
    assert list_element_pairs(gold, output, SIMILAR) == [
        # one deletion in 16 characters: 15/16, above 0.8
        ElementPair("similar", "Newgistics, Inc.", "Newgistics Inc.", 15 / 16),
        # equal once normalized; the repeated gold element (same normalized form) is listed once, as the set counts it
        ElementPair("exact", "Acme Holdings LLC", "ACME HOLDINGS LLC", 1.0),
        # "zeta" vs "omega": 3 edits of 5, 0.4 < 0.8: no pair
        ElementPair("missed", "Zeta"),
        ElementPair("spurious", None, "Omega"),
    ]
    # without the option nothing pairs by similarity
    assert [p.kind for p in list_element_pairs(gold, output, ScoringOptions())] == [
        "missed",
        "exact",
        "missed",
        "spurious",
        "spurious",
    ]


def test_the_terminal_field_diff_lists_the_elements_escaped() -> None:
    from pytest_extractbench import SampleRecord, score_sample
    from pytest_extractbench.report.terminal import failure_text

    gold = {"tags": ["Newgistics, Inc.", "Zeta"]}
    output = {"tags": ["Newgistics Inc.", "Om\x1b[31mega"]}
    record = SampleRecord(
        model="m", sample_id="s", score=score_sample(output, gold, None, options=SIMILAR), passed=False
    )
    text = failure_text(record)
    lines = text.splitlines()
    similar = next(line for line in lines if "similar" in line)
    assert '"Newgistics, Inc."' in similar and '"Newgistics Inc."' in similar and similar.endswith("0.94")
    assert any(line.split()[:2] == ["missed", '"Zeta"'] for line in lines)
    spurious = next(line for line in lines if "spurious" in line)
    assert "\x1b" not in text and "Om" in spurious  # the escape character never reaches the terminal
    # without the option the list field shows as one row, as before
    plain = SampleRecord(model="m", sample_id="s", score=score_sample(output, gold, None), passed=False)
    assert "similar" not in failure_text(plain) and "spurious" not in failure_text(plain)


def test_similarity_pairing_stops_above_2500_cells_and_keeps_a_pair_exactly_at_the_threshold() -> None:
    # "item-007" -> "item-007x": one insertion in 9 characters, similarity 1 - 1/9, each gold element's best pair
    gold = [f"item-{i:03d}" for i in range(61)]
    near = [f"{g}x" for g in gold]
    at_threshold = ScoringOptions(list_similarity=1 - 1 / 9)
    # 50 x 50 = 2,500 cells: paired; 50 pairs of 8/9 over a union of 100 - 50 slots
    assert jaccard(gold[:50], near[:50], at_threshold).score == pytest.approx(8 / 9)
    # 41 x 61 = 2,501 cells: plain Jaccard, nothing shared
    assert jaccard(gold[:41], near, at_threshold).score == 0.0


def test_elements_of_different_types_pair_by_their_scalar_score() -> None:
    # 100 vs 96: number similarity 1 - 4/100 = 0.96; "abc" vs "abd": 1 - 1/3 < 0.8; a number against a string
    # scores 0. The best assignment pairs 100-96 and abc-abd; only the first is kept: 0.96 / (4 - 1)
    assert jaccard([100, "abc"], [96, "abd"], SIMILAR).score == pytest.approx(0.32)


def test_a_missed_element_before_a_similar_one_keeps_the_pairing_in_gold_order() -> None:
    assert list_element_pairs(["alpha", "bravo"], ["bravx"], SIMILAR) == [
        ElementPair("missed", "alpha"),
        ElementPair("similar", "bravo", "bravx", pytest.approx(0.8)),
    ]
    # a list against a string has no elements to list
    assert similarity_paired_elements(["a"], "a", "incorrect", SIMILAR) is None
    assert similarity_paired_elements("a", ["a"], "incorrect", SIMILAR) is None
