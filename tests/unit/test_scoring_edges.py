"""Edges of the scoring core that a wrong constant or operator would move, by hand.

Each case is one a mutation run found unguarded (tests/mutation/README.md): the value a user would see if the
comparison or constant were different.
"""

from __future__ import annotations

import pytest

from pytest_extractbench.scoring import ScoringOptions, score_sample
from pytest_extractbench.scoring.compare import compare_scalars, jaccard, number_similarity, types_agree
from pytest_extractbench.scoring.result import INCORRECT, FieldCounts, FieldResult, count_fields, prf

OPTIONS = ScoringOptions()
LENIENT_TYPES = ScoringOptions(strict_types=False)


def test_an_expected_zero_needs_an_exact_zero() -> None:
    assert number_similarity(0.0, 0.0) == 1.0
    assert number_similarity(0.5, 0.0) == 0.0
    assert number_similarity(9.0, 10.0) == pytest.approx(0.9)  # 1 - |9 - 10| / 10


def test_two_empty_arrays_are_the_same_set() -> None:
    assert jaccard([], [], OPTIONS) == (1.0, True, None)
    assert jaccard([], ["a"], OPTIONS) == (0.0, False, None)


@pytest.mark.parametrize("expected", [0, 1, 2.5])
@pytest.mark.parametrize("predicted", ["abc", "", [1], {"n": 1}, None])
def test_a_value_that_is_no_number_scores_zero_against_any_number(expected: float, predicted: object) -> None:
    assert compare_scalars(expected, predicted, OPTIONS) == (0.0, False, None)


@pytest.mark.parametrize(("expected", "predicted"), [("None", None), ("[1]", [1]), ("{'a': 1}", {"a": 1})])
def test_null_and_containers_never_match_a_string_that_spells_them(expected: str, predicted: object) -> None:
    assert compare_scalars(expected, predicted, OPTIONS) == (0.0, False, None)


def test_strings_equal_after_normalization_are_exact_with_full_similarity() -> None:
    assert compare_scalars("Hello   World", " hello world", OPTIONS) == (1.0, True, (1.0, 1.0, 1.0))
    assert compare_scalars("35", 35, OPTIONS) == (1.0, True, (1.0, 1.0, 1.0))  # coerced to text first


@pytest.mark.parametrize(
    ("expected", "predicted", "same"),
    [(True, "yes", True), (False, "No", True), (True, "no", False), (True, "maybe", False)],
)
def test_booleans_read_yes_and_no(expected: bool, predicted: str, same: bool) -> None:
    assert compare_scalars(expected, predicted, OPTIONS) == ((1.0, True, None) if same else (0.0, False, None))


def test_other_values_are_equal_or_not() -> None:
    assert compare_scalars({"a": 1}, {"a": 2}, OPTIONS) == (0.0, False, None)
    assert compare_scalars({"a": 1}, [1], OPTIONS) == (0.0, False, None)


@pytest.mark.parametrize(
    ("expected_type", "predicted", "agrees"),
    [
        ("boolean", "yes", True),
        ("boolean", "maybe", False),
        ("string", 5, True),
        ("string", False, True),
        ("string", None, False),
        ("number", "5.5", True),
        ("number", "five", False),
        ("object", 5, False),
        ("array", "x", False),
    ],
)
def test_lenient_types_accept_only_lossless_coercions(expected_type: str, predicted: object, agrees: bool) -> None:
    assert types_agree(expected_type, predicted, LENIENT_TYPES) is agrees
    assert types_agree(expected_type, predicted, OPTIONS) is False  # strict: the JSON types differ


def test_true_positives_per_mode() -> None:
    counts = FieldCounts(exact=2, partial=1, partial_lenient=3)
    assert (counts.true_positives("strict"), counts.true_positives("partial"), counts.true_positives("lenient")) == (
        2.0,
        2.5,
        5.0,
    )


def test_nothing_expected_but_something_predicted_is_zero_recall() -> None:
    assert prf(0, 3, 0) == (0.0, 0.0, 0.0)
    assert prf(0, 0, 0) == (1.0, 1.0, 1.0)  # nothing expected, nothing predicted: perfect
    assert prf(0, 0, 2) == (0.0, 0.0, 0.0)


def test_the_lenient_threshold_is_inclusive() -> None:
    threshold = OPTIONS.lenient_threshold  # 0.3
    fields = [
        FieldResult("at", INCORRECT, threshold),
        FieldResult("below", INCORRECT, threshold - 0.01),
        FieldResult("zero", INCORRECT, 0.0),
    ]
    assert count_fields(fields, OPTIONS).partial_lenient == 1


def test_invalid_output_earns_no_credit_though_its_fields_are_diagnosed() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}, "n": {"type": "integer"}}}
    gold = {"a": "the quick brown fox", "n": 5, "b": "x"}
    score = score_sample({"a": "the quick brown fox jumps", "n": "5", "b": "x"}, gold, schema)
    assert not score.schema_valid  # "5" is a string
    assert score.observed.exact >= 1 and score.observed.partial == 1  # what the fields were
    assert (score.counts.exact, score.counts.partial, score.counts.partial_lenient, score.counts.type_correct) == (
        0,
        0,
        0,
        0,
    )  # what they earn
    for mode in ("strict", "partial", "lenient"):
        assert (score.precision[mode], score.recall[mode], score.f1[mode]) == (0.0, 0.0, 0.0)


def test_nothing_expected_means_nothing_omitted() -> None:
    assert score_sample({"x": 1}, {}).omission_rate == 0.0
    assert score_sample({}, {"x": 1}).omission_rate == 1.0


def test_failing_fields_are_the_non_exact_ones_in_path_order() -> None:
    score = score_sample({"a": "x", "b": "wrong", "d": 1}, {"a": "x", "b": "y", "c": "z"})
    assert [(f.path, f.category) for f in score.failing_fields()] == [
        ("b", "incorrect"),
        ("c", "missed"),
        ("d", "spurious"),
    ]


def test_field_results_keep_what_differs_from_the_defaults_only() -> None:
    assert FieldResult("a", "exact", 1.0).as_dict() == {"path": "a", "category": "exact", "score": 1.0}
    deep = FieldResult("a", "exact", 1.0, depth=2, required=True)
    assert deep.as_dict() == {"path": "a", "category": "exact", "score": 1.0, "depth": 2, "required": True}
    assert FieldResult.from_dict(deep.as_dict()) == deep
    assert FieldResult("a", "exact", 1.0).depth == 0  # a field built without depth is top level
