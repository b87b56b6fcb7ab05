"""Coercion between JSON types, booleans in array comparators, failed batch comparators, metric directions and
the t-test path, each by hand.

These are the paths a second, independent mutation run found unguarded: a flipped constant or a negated
condition in any of them changes a number users read, so each case pins the value a user would see.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import pytest

from pytest_extractbench.analysis import catalog
from pytest_extractbench.analysis.stats import Interval, significance_report
from pytest_extractbench.analysis.stats import TestResult as PairedTest
from pytest_extractbench.gating.regression import IMPROVED, REGRESSED, verdict
from pytest_extractbench.report.summary import grade, tiers
from pytest_extractbench.scoring import ScoringOptions, score_sample
from pytest_extractbench.scoring.comparators import COMPARATORS, compare_oneof, compare_partial, register_comparator
from pytest_extractbench.scoring.compare import compare_scalars, jaccard, types_agree
from pytest_extractbench.scoring.result import ERROR, EXACT, INCORRECT

OPTIONS = ScoringOptions()
NULL_IS_VALUE = ScoringOptions(null_equals_absent=False)
LENIENT_TYPES = ScoringOptions(strict_types=False)
SAME_TEXT = (1.0, 1.0, 1.0)

# -- every coercion pair the scorer accepts, both directions ---------------------------------------------------

# (expected, predicted, score, equal): the prediction is coerced to the gold's type before comparing
COERCIONS = [
    # string gold, other predictions: spelled as text ("35" for 35.0, "true" for true)
    ("35", 35, 1.0, True),
    ("35", 35.0, 1.0, True),
    ("35.5", 35.5, 1.0, True),
    ("true", True, 1.0, True),
    ("TRUE", True, 1.0, True),  # casefolded like any string
    ("false", False, 1.0, True),
    ("true", False, 0.06, False),  # "true" vs "false": Levenshtein 1 - 4/5, weighted 0.3
    # boolean gold, string predictions read as booleans; numbers are never booleans
    (True, "true", 1.0, True),
    (True, " Yes ", 1.0, True),
    (False, "no", 1.0, True),
    (False, "false", 1.0, True),
    (True, "false", 0.0, False),
    (False, "true", 0.0, False),
    (True, "maybe", 0.0, False),
    (True, 1, 0.0, False),
    (False, 0, 0.0, False),
    (True, None, 0.0, False),
    # number gold, numeric strings read as numbers; booleans are never numbers
    (35, "35", 1.0, True),
    (35, " 35.0 ", 1.0, True),
    (1234, "1,234", 1.0, True),
    (35.0, 35, 1.0, True),
    (35, 35.0, 1.0, True),
    (1, True, 0.0, False),
    (0, False, 0.0, False),
    (35, "thirty-five", 0.0, False),
    (35, "inf", 0.0, False),
    (35, "nan", 0.0, False),
]


@pytest.mark.parametrize(("expected", "predicted", "score", "equal"), COERCIONS)
def test_each_coercion_pair_scores_as_written(expected: object, predicted: object, score: float, equal: bool) -> None:
    result = compare_scalars(expected, predicted, OPTIONS)
    assert (result.score, result.equal) == (pytest.approx(score), equal)


def test_a_string_gold_against_a_number_keeps_the_text_similarities() -> None:
    assert compare_scalars("35", 35.0, OPTIONS) == (1.0, True, SAME_TEXT)
    # "36" vs "35": token F1 0, Levenshtein 1 - 1/2, no containment; composite 0.5*0 + 0.3*0.5 + 0.2*0
    result = compare_scalars("35", 36, OPTIONS)
    assert result.equal is False
    assert result.similarity == (0.0, 0.5, 0.0)
    assert result.score == pytest.approx(0.15)


def test_a_number_close_to_the_gold_gets_its_relative_similarity_after_coercion() -> None:
    # "90" read as 90 against 100: 1 - 10/100
    assert compare_scalars(100, "90", OPTIONS) == pytest.approx((0.9, False, None))


@pytest.mark.parametrize(("predicted", "score"), [(None, 1.0), ("null", 0.0), (0, 0.0), (False, 0.0), ("", 0.0)])
def test_null_as_a_value_matches_only_null(predicted: object, score: float) -> None:
    assert compare_scalars(None, predicted, NULL_IS_VALUE) == (score, score == 1.0, None)


# (expected JSON type, prediction, agrees when types are strict, agrees when they are lenient)
TYPE_AGREEMENT = [
    ("string", "x", True, True),
    ("string", 35, False, True),
    ("string", True, False, True),
    ("string", None, False, False),
    ("number", 35, True, True),
    ("number", "35", False, True),
    ("number", "thirty", False, False),
    ("number", True, False, False),
    ("boolean", True, True, True),
    ("boolean", "yes", False, True),
    ("boolean", "maybe", False, False),
    ("boolean", 1, False, False),
    ("integer", 35, True, True),
]


@pytest.mark.parametrize(("expected_type", "predicted", "strict", "lenient"), TYPE_AGREEMENT)
def test_type_agreement_of_each_pair(expected_type: str, predicted: object, strict: bool, lenient: bool) -> None:
    from pytest_extractbench.scoring.schema import json_type

    # json_type folds integer into number: an integer gold is a number gold
    folded = json_type(35) if expected_type == "integer" else expected_type
    assert types_agree(folded, predicted, OPTIONS) is strict
    assert types_agree(folded, predicted, LENIENT_TYPES) is lenient


def test_a_numeric_string_for_a_number_field_is_exact_but_a_type_error_in_a_sample() -> None:
    schema = {"type": "object"}  # no declared type: the gold's type is the expected one, and the output is valid
    strict = score_sample({"age": "35"}, {"age": 35}, schema, options=OPTIONS)
    (field,) = strict.fields
    assert (field.category, field.equal, field.type_ok) == (EXACT, True, False)
    assert strict.type_accuracy == 0.0
    lenient = score_sample({"age": "35"}, {"age": 35}, schema, options=LENIENT_TYPES)
    assert lenient.fields[0].type_ok is True
    assert lenient.type_accuracy == 1.0


# -- booleans keep their identity in every array comparator ----------------------------------------------------


@pytest.mark.parametrize(
    ("expected", "predicted", "score", "equal"),
    [
        ([True], [False], 0.0, False),
        ([True], [True], 1.0, True),
        ([True], [1], 0.0, False),
        ([False], [0], 0.0, False),
        ([True], ["true"], 1.0, True),  # read as the boolean it spells, as a scalar field would be
        ([True], ["1"], 0.0, False),
        ([True, False], [False, True], 1.0, False),  # same set, but order matters by default
        ([True, 1], [True], 0.5, False),  # two distinct keys, one shared
        ([1.0, 2], [1, 2.0], 1.0, True),  # 1.0 and 1 are one number
    ],
)
def test_booleans_are_their_own_elements_in_a_scalar_array(
    expected: list, predicted: list, score: float, equal: bool
) -> None:
    assert jaccard(expected, predicted, OPTIONS) == (score, equal, None)
    assert compare_partial(expected, predicted, {}, OPTIONS) == (score, equal, None)


@pytest.mark.parametrize(
    ("expected", "predicted", "values", "score"),
    [
        (True, False, [True, False], 1.0),  # a flat list accepts any listed value...
        (True, 1, [True, False], 0.0),  # ...but 1 is not true
        (True, False, [[True, "yes"], [False, "no"]], 0.0),  # groups: true and false are in different ones
        (True, "yes", [[True, "yes"], [False, "no"]], 1.0),
        (1, True, [[1, "one"]], 0.0),
    ],
)
def test_booleans_are_their_own_values_in_oneof(
    expected: object, predicted: object, values: list, score: float
) -> None:
    result = compare_oneof(expected, predicted, {"values": values}, OPTIONS)
    assert result.score == score
    assert result.equal is False


# -- a failed batch comparator never counts as a match -----------------------------------------------------------


def _down(items: list, options: ScoringOptions) -> list:
    raise ConnectionError("judge server down")


def _short(items: list, options: ScoringOptions) -> list:
    return [1.0] * (len(items) - 1)


@pytest.fixture
def failing_judges() -> Iterator[None]:
    """Two batch comparators that fail, registered for one test only: the registry is process-wide."""
    register_comparator("test-down-judge", _down, batch=True, overwrite=True)
    register_comparator("test-short-judge", _short, batch=True, overwrite=True)
    yield
    COMPARATORS.remove("test-down-judge")
    COMPARATORS.remove("test-short-judge")


@pytest.mark.usefixtures("failing_judges")
@pytest.mark.parametrize(
    ("comparator", "reason"),
    [
        ("test-down-judge", "ConnectionError: judge server down"),
        ("test-short-judge", "returned 1 results for 2 fields"),
    ],
)
def test_every_field_of_a_failed_batch_is_an_error_never_equal(comparator: str, reason: str) -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "string", "x-eval-compare": comparator},
            "b": {"type": "string", "x-eval-compare": comparator},
            "c": {"type": "string"},
        },
    }
    score = score_sample({"a": "x", "b": "y", "c": "same"}, {"a": "X1", "b": "Y1", "c": "same"}, schema)
    by_path = {f.path: f for f in score.fields}
    for path in ("a", "b"):
        field = by_path[path]
        assert field.category == ERROR
        assert field.equal is False
        assert field.score == 0.0
        assert reason in field.error
    assert by_path["c"].category == EXACT
    assert score.exact_match is False
    # error fields are outside every metric: only "c" is counted
    assert score.counts.exact == 1
    assert score.counts.incorrect == 0


def test_a_working_batch_comparator_decides_equal_from_its_score() -> None:
    register_comparator("test-half-judge", lambda items, options: [0.5] * len(items), batch=True, overwrite=True)
    schema = {"type": "object", "properties": {"a": {"type": "string", "x-eval-compare": "test-half-judge"}}}
    try:
        (field,) = score_sample({"a": "x"}, {"a": "completely different"}, schema).fields
    finally:
        COMPARATORS.remove("test-half-judge")
    assert (field.score, field.equal) == (0.5, False)
    assert field.category not in (EXACT, ERROR, INCORRECT)


# -- the direction of every catalog metric -----------------------------------------------------------------------

# Written by hand: a new metric cannot ship without a line here saying which way is better.
LOWER_IS_BETTER = {
    "hallucination_rate",
    "field_omission_rate",
    "zero_score_rate",
    "latency_p50_ms",
    "latency_p95_ms",
    "latency_p99_ms",
    "time_to_first_token_p95_ms",
    "server_prompt_p95_ms",
    "server_generation_p95_ms",
    "network_queue_p95_ms",
    "client_wait_p95_ms",
    "attempt_latency_p95_ms",
    "attempt_timeout_rate",
}
HIGHER_IS_BETTER = {
    "extraction_quality_score",
    "schema_validity_rate",
    "json_valid_rate",
    "field_f1_partial",
    "field_f1_strict",
    "field_f1_lenient",
    "anls_star",
    "field_precision_partial",
    "field_recall_partial",
    "field_precision_strict",
    "field_recall_strict",
    "field_precision_lenient",
    "field_recall_lenient",
    "exact_match_rate",
    "exact_match_rate_valid",
    "type_accuracy",
    "perfect_sample_rate",
    "semantic_similarity",
    "judge_score",
    "throughput_rps",
    "success_rate",
    "pass_at_k",
    "pass_hat_k",
}


def test_every_catalog_metric_has_a_hand_written_direction() -> None:
    names = {metric.name for metric in catalog.metrics()}
    assert names == LOWER_IS_BETTER | HIGHER_IS_BETTER, "add the new metric's direction to this test"
    assert not LOWER_IS_BETTER & HIGHER_IS_BETTER
    for name in names:
        assert catalog.lower_is_better(name) is (name in LOWER_IS_BETTER), name


_GRADES = ["F", "C", "B", "A", "A+"]


@pytest.mark.parametrize("name", sorted(LOWER_IS_BETTER | HIGHER_IS_BETTER))
def test_a_rise_is_improvement_exactly_when_higher_is_better(name: str) -> None:
    higher = catalog.get(name).higher_is_better
    rise, fall = verdict(0.10, (0.01, -0.01), higher), verdict(-0.10, (0.01, -0.01), higher)
    if name in LOWER_IS_BETTER:  # omission 0.10 -> 0.20 is a regression, never an improvement
        assert (rise, fall) == (REGRESSED, IMPROVED)
    else:
        assert (rise, fall) == (IMPROVED, REGRESSED)


@pytest.mark.parametrize("name", sorted(n for n in LOWER_IS_BETTER | HIGHER_IS_BETTER if tiers(n)))
def test_the_better_value_never_gets_the_worse_grade(name: str) -> None:
    low, mid, high = tiers(name)
    values = sorted({low, mid, high, 2 * low - mid, 2 * high - mid})
    grades = [_GRADES.index(grade(name, v)) for v in values]
    if name in LOWER_IS_BETTER:
        grades.reverse()
    assert grades == sorted(grades), name
    assert grades[0] < grades[-1], name


# -- the t-test path of a significance report ------------------------------------------------------------------


def test_the_t_test_flags_and_means_by_hand() -> None:
    a, b = [1.0, 2.0, 3.0, 4.0], [0.0, 0.0, 0.0, 1.0]
    # differences 1, 2, 3, 3: mean 2.25, sample sd sqrt(2.75 / 3), t = mean / (sd / 2)
    t = 2.25 / (math.sqrt(2.75 / 3) / 2)
    from scipy.stats import t as student

    p = 2 * student.sf(t, df=3)
    assert 0.01 < p < 0.05
    report = significance_report(
        a,
        b,
        difference=Interval(2.25, 1.0, 3.0, 0.95, "percentile", 1000, 4),
        test=PairedTest(t, p),
        alpha=0.05,
        test_name="paired ttest",
    )
    assert report["mean_a"] == 2.5
    assert report["mean_b"] == 0.25
    assert report["n"] == 4
    assert report["t_test"]["t_statistic"] == pytest.approx(t)
    assert report["t_test"]["p_value"] == pytest.approx(p)
    assert report["t_test"]["significant_at_0.05"] is True
    assert report["t_test"]["significant_at_0.01"] is False
    assert report["significantly_different"] is True
    assert report["test"] == "paired ttest"
    assert report["permutation_test"] is None
    strict = significance_report(
        a,
        b,
        difference=Interval(2.25, 1.0, 3.0, 0.95, "percentile", 1000, 4),
        test=PairedTest(t, p),
        alpha=0.01,
        test_name="paired ttest",
    )
    assert strict["significantly_different"] is False


def test_identical_samples_give_no_t_test_significance() -> None:
    a = [0.5, 0.7, 0.9]
    report = significance_report(
        a,
        a,
        difference=Interval(0.0, 0.0, 0.0, 0.95, "percentile", 1000, 3),
        test=PairedTest(0.0, 1.0),
        alpha=0.05,
        test_name="paired ttest",
    )
    assert report["t_test"] == {
        "t_statistic": 0.0,
        "p_value": 1.0,
        "significant_at_0.05": False,
        "significant_at_0.01": False,
        "note": "all differences are zero",
    }
    assert report["mean_a"] == report["mean_b"] == pytest.approx(0.7)
    assert report["significantly_different"] is False
