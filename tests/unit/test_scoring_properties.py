"""Invariants of the scoring core, checked with hypothesis on arbitrary JSON."""

from __future__ import annotations

import json
import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_extractbench import ScoringOptions, score_sample

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**12), max_value=10**12),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.text(max_size=20),
)
json_values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.text(min_size=1, max_size=6), children, max_size=4),
    ),
    max_leaves=25,
)
gold_objects = st.dictionaries(st.text(min_size=1, max_size=6), json_values, max_size=6)
option_sets = st.builds(
    ScoringOptions,
    case_sensitive=st.booleans(),
    null_equals_absent=st.booleans(),
    empty_equals_absent=st.booleans(),
    strict_types=st.booleans(),
    array_order_matters=st.booleans(),
)


def all_scores(score) -> list[float]:
    values = [score.eqs, score.type_accuracy, score.hallucination_rate, score.omission_rate]
    for mode in ("strict", "partial", "lenient"):
        values += [score.precision[mode], score.recall[mode], score.f1[mode]]
    values += [f.score for f in score.fields]
    return values


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(gold=gold_objects, options=option_sets)
def test_gold_against_itself_is_perfect(gold: dict, options: ScoringOptions) -> None:
    score = score_sample(json.dumps(gold), gold, options=options)
    assert score.valid
    assert score.exact_match
    for mode in ("strict", "partial", "lenient"):
        assert score.f1[mode] == 1.0
    assert score.type_accuracy == 1.0 and score.hallucination_rate == 0.0
    assert math.isclose(score.eqs, 1.0)
    assert all(f.category == "exact" for f in score.fields)


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(gold=gold_objects, output=st.one_of(json_values, st.text(max_size=60)), options=option_sets)
def test_every_score_is_in_the_unit_interval_and_nothing_raises(gold: dict, output, options: ScoringOptions) -> None:
    score = score_sample(output, gold, options=options)
    for value in all_scores(score):
        assert 0.0 <= value <= 1.0
    # the modes are nested: strict credit <= partial credit <= lenient credit
    assert score.f1["strict"] <= score.f1["partial"] + 1e-12 <= score.f1["lenient"] + 2e-12
    json.dumps(score.as_dict())  # always serializable


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(gold=gold_objects, first=json_values, second=json_values)
def test_expected_field_count_depends_only_on_the_gold(gold: dict, first, second) -> None:
    a = score_sample(first, gold)
    b = score_sample(second, gold)
    assert a.observed.expected == b.observed.expected


def _near(value, rng_choice: int):
    """A variant of ``value`` that shares most of its structure (so equal subtrees are common)."""
    if isinstance(value, dict) and value:
        key = sorted(value)[rng_choice % len(value)]
        return {**value, key: _near(value[key], rng_choice // 2)}
    if isinstance(value, list) and value:
        return value[:-1] if rng_choice % 3 == 0 else value + [value[0]]
    if isinstance(value, bool):
        return int(value)  # True == 1 in Python, but not in JSON
    if isinstance(value, str):
        return value.upper() + "x"
    return value


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(gold=gold_objects, choice=st.integers(0, 1000), options=option_sets)
def test_the_equal_subtree_fast_path_changes_nothing(gold: dict, choice: int, options: ScoringOptions) -> None:
    from pytest_extractbench.scoring import FieldWalker

    predicted = _near(gold, choice)
    fast = FieldWalker(options)
    slow = FieldWalker(options)
    slow.fast_paths = False
    assert fast.walk(gold, predicted, None) == slow.walk(gold, predicted, None)
