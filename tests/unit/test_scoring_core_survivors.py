"""The scoring comparison core (``result``, ``comparators``, ``rules``, ``compare``, ``schema``), case by case: the
values a user would see if one of its comparisons, constants or defaults were different. Every expected value is
worked out by hand, the arithmetic in a comment."""

from __future__ import annotations

import pytest

from pytest_extractbench.scoring import result
from pytest_extractbench.scoring.comparators import (
    COMPARATORS,
    ComparatorSpec,
    compare_exact,
    compare_numeric,
    compare_oneof,
    compare_partial,
    register_comparator,
    to_comparison,
)
from pytest_extractbench.scoring.options import EqsWeights, ScoringOptions
from pytest_extractbench.scoring.result import FieldCounts, FieldResult, credit_maps
from pytest_extractbench.scoring.rules import compile_rules

OPTIONS = ScoringOptions()

# --- result.py ---


def test_a_field_read_back_without_its_optional_values_holds_none_for_each() -> None:
    # what a record leaves out comes back as the defaults: no value, no type, no verdict on types, no comparator,
    # no error (None each, not 0: a missed field's prediction is absent, not the number 0)
    field = FieldResult.from_dict({"path": "a", "category": "missed", "score": 0.0})
    assert tuple(field) == ("a", "missed", 0.0, None, None, None, None, None, False, 0, False, "", None, None, None)
    assert [type(value) for value in field[3:8]] == [type(None)] * 5
    assert field.comparator is None and field.error is None


def test_a_value_equal_to_its_default_but_of_another_type_is_kept_so_it_comes_back_as_it_was() -> None:
    # ``depth`` defaults to the int 0 and ``equal`` to False: a float 0.0 depth and an int 0 for ``equal`` compare
    # equal to them but are other types, so the record keeps them and reading it back gives the same types
    field = FieldResult("a", "exact", 1.0, equal=0, depth=0.0)
    data = field.as_dict()
    assert data == {"path": "a", "category": "exact", "score": 1.0, "equal": 0, "depth": 0.0}
    back = FieldResult.from_dict(data)
    assert (type(back.equal), type(back.depth)) == (int, float)


def test_adding_anything_but_counts_to_counts_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        FieldCounts(exact=1) + 1
    with pytest.raises(TypeError):
        FieldCounts(exact=1) + (1, 2)


def test_each_mode_has_its_own_precision_and_recall() -> None:
    # one exact field, one incorrect field the lenient mode rescues, one spurious one:
    # compared = 1 + 0 + 1 = 2, predicted = 2 + 1 spurious = 3, expected = 2 + 0 missed = 2
    counts = FieldCounts(exact=1, partial=0, partial_lenient=1, incorrect=1, spurious=1)
    precision, recall, f1 = credit_maps(counts, True)
    # strict and partial credit 1 (no partial field): P = 1/3, R = 1/2, F1 = 2 * 1/6 / (5/6) = 0.4
    # lenient credits 1 + 1 = 2: P = 2/3, R = 2/2 = 1, F1 = 2 * 2/3 / (5/3) = 0.8
    assert precision == pytest.approx({"strict": 1 / 3, "partial": 1 / 3, "lenient": 2 / 3})
    assert recall == pytest.approx({"strict": 0.5, "partial": 0.5, "lenient": 1.0})
    assert f1 == pytest.approx({"strict": 0.4, "partial": 0.4, "lenient": 0.8})


def test_weights_made_for_an_object_whose_id_was_reused_are_not_taken_for_another_one() -> None:
    # an entry left by an object that is gone, whose id the new weights now have: the cache must notice it holds
    # another object and read the new weights (0.25 each) instead of the stale values
    weights = EqsWeights(0.25, 0.25, 0.25, 0.25)
    result._weights[id(weights)] = (EqsWeights(), (9.0, 9.0, 9.0, 9.0))
    try:
        assert result._eqs_weights(ScoringOptions(eqs_weights=weights)) == (0.25, 0.25, 0.25, 0.25)
    finally:
        result._weights.pop(id(weights), None)


def test_the_weights_cache_is_emptied_when_it_reaches_256_entries() -> None:
    # 300 distinct weights, all kept alive (distinct ids): entries 1..256 fill it, the 257th finds 256 and empties
    # it first, so it ends with entries 257..300: 300 - 256 = 44
    saved = dict(result._weights)
    result._weights.clear()
    try:
        many = [EqsWeights(0.25, 0.25, 0.25 + i * 1e-12, 0.25 - i * 1e-12) for i in range(300)]
        for weights in many:
            result._eqs_weights(ScoringOptions(eqs_weights=weights))
        assert len(result._weights) == 44
        assert result._eqs_weights(ScoringOptions(eqs_weights=many[-1])) == (0.25, 0.25, 0.25 + 299e-12, 0.25 - 299e-12)
    finally:
        result._weights.clear()
        result._weights.update(saved)


# --- comparators.py ---


def _spec_of(name: str) -> ComparatorSpec:
    found: ComparatorSpec = COMPARATORS.get(name)
    return found


def test_a_spec_made_from_a_function_alone_is_a_per_field_comparator_of_any_type_without_checks() -> None:
    spec = ComparatorSpec(compare_exact)
    assert tuple(spec) == (compare_exact, False, None, None)
    assert spec.batch is False and spec.check_params is None and spec.types is None


def test_a_comparator_registered_without_options_is_stored_without_a_check_or_types() -> None:
    def first_letter(expected: object, predicted: object, params: object, options: object) -> float:
        return float(str(expected)[:1] == str(predicted)[:1])

    register_comparator("h35c-first-letter", first_letter)
    try:
        assert tuple(_spec_of("h35c-first-letter")) == (first_letter, False, None, None)
    finally:
        COMPARATORS.remove("h35c-first-letter")


@pytest.mark.parametrize("name", ["exact", "numeric", "oneof", "partial"])
def test_the_built_in_comparators_cannot_be_replaced_or_removed(name: str) -> None:
    spec = _spec_of(name)
    with pytest.raises(ValueError, match="built in"):
        COMPARATORS.add(name, spec, overwrite=True)
    with pytest.raises(ValueError, match="built in"):
        COMPARATORS.remove(name)
    assert _spec_of(name) is spec


def test_a_returned_bool_or_number_becomes_a_comparison_without_similarities() -> None:
    assert tuple(to_comparison(True)) == (1.0, True, None)
    assert to_comparison(True).similarity is None
    assert tuple(to_comparison(False)) == (0.0, False, None)
    # a number counts as equal from 1.0 on: exactly 1 (int or float) is equal, 0.99 is not
    assert tuple(to_comparison(1)) == (1.0, True, None)
    assert tuple(to_comparison(1.0)) == (1.0, True, None)
    assert tuple(to_comparison(0.99)) == (0.99, False, None)


def test_exact_scores_one_for_the_same_json_number_written_two_ways_and_false_not_none_otherwise() -> None:
    assert tuple(compare_exact(2, 2.0, {}, OPTIONS)) == (1.0, True, None)
    assert tuple(compare_exact([1, {"a": 2}], [1.0, {"a": 2.0}], {}, OPTIONS)) == (1.0, True, None)
    # "1" is a string, 1 a number: different JSON types
    different = compare_exact("1", 1, {}, OPTIONS)
    assert tuple(different) == (0.0, False, None) and different.equal is False


def test_numeric_without_tolerance_accepts_a_difference_of_exactly_float_epsilon() -> None:
    # |1.5 - 1| = 0.5 <= epsilon 0.5 (both exact in binary); 1.75 is 0.75 away
    half = ScoringOptions(float_epsilon=0.5)
    assert tuple(compare_numeric(1, 1.5, {}, half)) == (1.0, True, None)
    assert tuple(compare_numeric(1, 1.75, {}, half)) == (0.0, False, None)
    # a null tolerance is no tolerance
    assert tuple(compare_numeric(1, 1.5, {"tolerance": None}, half)) == (1.0, True, None)


def _rule_problems(compare: object) -> tuple[tuple[str, ...], tuple[str, ...]]:
    ruleset = compile_rules({"type": "object", "properties": {"n": {"type": "number", "x-eval-compare": compare}}})
    return tuple(str(e) for e in ruleset.errors), tuple(str(w) for w in ruleset.warnings)


def test_numeric_tolerance_checks() -> None:
    where = "$.properties.n.x-eval-compare: numeric: "
    # a null tolerance and a zero tolerance are fine (0 is non-negative)
    assert _rule_problems({"numeric": {"tolerance": None}}) == ((), ())
    assert _rule_problems({"numeric": {"tolerance": {"abs": 0, "rel": 0.0}}}) == ((), ())
    assert _rule_problems({"numeric": {"tolerance": 5}}) == (
        (where + "'tolerance' must be an object with 'abs' and/or 'rel'",),
        (),
    )
    assert _rule_problems({"numeric": {"tolerance": {"abs": -0.5}}}) == (
        (where + "tolerance 'abs' must be a non-negative number, got -0.5",),
        (),
    )


def test_oneof_needs_a_non_empty_list_of_values_or_of_synonym_lists() -> None:
    where = "$.properties.n.x-eval-compare: oneof: "
    empty = "'values' must be a non-empty list of accepted values (or of synonym lists)"
    assert _rule_problems({"oneof": {"values": []}}) == ((where + empty,), ())
    assert _rule_problems({"oneof": {"values": "PVD"}}) == ((where + empty,), ())
    assert _rule_problems({"oneof": {}}) == ((where + empty,), ())
    assert _rule_problems({"oneof": {"values": [["NYC"], "LA"]}}) == (
        (where + "'values' must hold either values or synonym lists, not both",),
        (),
    )
    assert _rule_problems({"oneof": {"values": [1, 2]}}) == ((), ())


def test_oneof_matches_a_prediction_equal_to_the_gold_after_normalization_even_if_not_listed() -> None:
    # "PVD" and " pvd " normalize to the same text; neither is among the values, the gold itself is accepted
    assert tuple(compare_oneof("PVD", " pvd ", {"values": ["CVD"]}, OPTIONS)) == (1.0, True, None)


def test_partial_compares_a_list_with_a_scalar_as_two_different_values() -> None:
    # one side an array, the other a text: no Jaccard (which would read the text's characters as elements, "a"
    # and ["a"] both the set {"a"}); the gold array against a text is a plain mismatch, scoring 0
    assert tuple(compare_partial(["a"], "a", {}, OPTIONS)) == (0.0, False, None)
    assert tuple(compare_partial("ab", ["a", "b"], {}, OPTIONS)) == (0.0, False, None)
