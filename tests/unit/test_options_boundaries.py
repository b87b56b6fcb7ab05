"""Scoring and statistics options: the documented defaults, and every validation at its exact boundary, accepted and
refused (the cases a mutation run of scoring/options.py found unguarded)."""

from __future__ import annotations

import math

import pytest

from pytest_extractbench.scoring.options import EqsWeights, ScoringOptions, StatsOptions


def test_the_defaults_are_the_specs() -> None:
    # EQS = 0.15 validity + 0.50 F1 (partial) + 0.20 type accuracy + 0.15 (1 - hallucination)
    weights = EqsWeights()
    assert (weights.validity, weights.f1_partial, weights.type_accuracy, weights.no_hallucination) == (
        0.15,
        0.50,
        0.20,
        0.15,
    )
    # exact >= 0.95, partial >= 0.5, lenient >= 0.3; composite 0.5 token F1 + 0.3 Levenshtein
    # + 0.2 containment; numbers equal within 1e-6
    options = ScoringOptions()
    assert (options.exact_threshold, options.partial_threshold, options.lenient_threshold) == (0.95, 0.5, 0.3)
    assert options.composite_weights == (0.5, 0.3, 0.2)
    assert options.float_epsilon == 1e-6
    assert options.semantic_threshold == 0.85
    # 10,000 resamples, 95% intervals, tests at alpha 0.05; the gap rule at 0.15 EQS
    stats = StatsOptions()
    assert (stats.resamples, stats.confidence, stats.seed, stats.alpha, stats.gap_threshold) == (
        10_000,
        0.95,
        0,
        0.05,
        0.15,
    )


def test_eqs_weights_may_be_zero_not_negative_and_must_sum_to_one() -> None:
    EqsWeights(validity=0.0, f1_partial=0.65, type_accuracy=0.20, no_hallucination=0.15)
    EqsWeights(validity=1.0, f1_partial=0.0, type_accuracy=0.0, no_hallucination=0.0)
    with pytest.raises(ValueError):  # sums to 1, one weight negative
        EqsWeights(validity=-0.1, f1_partial=0.75, type_accuracy=0.20, no_hallucination=0.15)
    for total_off in (0.1, -0.1, 1e-6):  # non-negative, sum 1.1, 0.9, 1.000001
        with pytest.raises(ValueError):
            EqsWeights(validity=0.15 + total_off, f1_partial=0.50, type_accuracy=0.20, no_hallucination=0.15)


def test_stats_options_boundaries() -> None:
    StatsOptions(resamples=100)
    with pytest.raises(ValueError):
        StatsOptions(resamples=99)
    for value in (0.5, 1e-9, 1 - 1e-9):
        StatsOptions(confidence=value, alpha=value)
    for bad in (0.0, 1.0, -0.5, 1.5):
        with pytest.raises(ValueError):
            StatsOptions(confidence=bad)
        with pytest.raises(ValueError):
            StatsOptions(alpha=bad)
    StatsOptions(gap_threshold=0.0)
    with pytest.raises(ValueError):
        StatsOptions(gap_threshold=-0.01)


def test_thresholds_may_touch_each_other_and_the_ends_of_zero_to_one() -> None:
    ScoringOptions(lenient_threshold=0.0, partial_threshold=0.0, exact_threshold=0.0)
    ScoringOptions(lenient_threshold=1.0, partial_threshold=1.0, exact_threshold=1.0)
    ScoringOptions(lenient_threshold=0.5, partial_threshold=0.5, exact_threshold=0.5)
    for lenient, partial, exact in ((-0.1, 0.5, 0.95), (0.3, 0.5, 1.01), (0.6, 0.5, 0.95), (0.3, 0.96, 0.95)):
        with pytest.raises(ValueError):
            ScoringOptions(lenient_threshold=lenient, partial_threshold=partial, exact_threshold=exact)


def test_composite_weights_are_three_summing_to_one() -> None:
    ScoringOptions(composite_weights=(1.0, 0.0, 0.0))
    for weights in ((0.5, 0.5), (0.5, 0.3, 0.1, 0.1), (0.5, 0.3, 0.3)):
        with pytest.raises(ValueError):
            ScoringOptions(composite_weights=weights)


def test_epsilon_exact_within_and_semantic_threshold_boundaries() -> None:
    ScoringOptions(float_epsilon=0.0)
    with pytest.raises(ValueError):
        ScoringOptions(float_epsilon=-1e-9)
    for within in (None, 0.0, 0.5, 2.0):
        ScoringOptions(exact_within=within)
    for within in (-0.1, math.inf, math.nan):
        with pytest.raises(ValueError):
            ScoringOptions(exact_within=within)
    for threshold in (0.0, 1.0):
        ScoringOptions(semantic_threshold=threshold)
    for threshold in (-0.01, 1.01):
        with pytest.raises(ValueError):
            ScoringOptions(semantic_threshold=threshold)


def test_from_dict_of_a_partial_dict_keeps_the_other_defaults() -> None:
    assert ScoringOptions.from_dict({}) == ScoringOptions()
    assert ScoringOptions.from_dict({"statistics": {"alpha": 0.01}}).statistics == StatsOptions(alpha=0.01)
    assert ScoringOptions.from_dict({"eqs_weights": {"validity": 0.25, "no_hallucination": 0.05}}).eqs_weights == (
        EqsWeights(validity=0.25, no_hallucination=0.05)
    )


def test_list_similarity_is_off_or_in_zero_to_one_open_at_zero() -> None:
    for threshold in (None, 1e-9, 0.5, 1.0):
        ScoringOptions(list_similarity=threshold)
    for threshold in (0.0, -0.5, 1.000001, math.nan):
        with pytest.raises(ValueError, match="list_similarity"):
            ScoringOptions(list_similarity=threshold)


SWITCHES = (
    "case_sensitive",
    "normalize_whitespace",
    "null_equals_absent",
    "empty_equals_absent",
    "strict_types",
    "array_order_matters",
    "validate_formats",
    "anls_star",
)


@pytest.mark.parametrize("name", SWITCHES)
def test_an_on_off_option_takes_a_bool_or_0_or_1_and_nothing_else(name: str) -> None:
    # 0 and 1 from Python become False and True (the compiled scoring core takes only bools), recorded as such
    for given, read in ((0, False), (1, True), (False, False), (True, True)):
        options = ScoringOptions(**{name: given})
        assert getattr(options, name) is read
        assert ScoringOptions.from_dict(options.to_dict()) == options
    for wrong in (2, -1, "no", "false", None, 1.0):
        with pytest.raises(ValueError, match=f"{name} must be true or false, got {wrong!r}"):
            ScoringOptions(**{name: wrong})
