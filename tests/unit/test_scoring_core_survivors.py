"""Field and sample results (``result``), the comparators (``comparators``) and the x-eval-* rules (``rules``), case by
case: the values a user would see if one of their comparisons, constants or defaults were different (``compare`` and
``schema`` in test_scoring_compare_schema_survivors.py). Every expected value is
worked out by hand, the arithmetic in a comment."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from pytest_extractbench.scoring import registry, result, rules
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
from pytest_extractbench.scoring.result import FieldCounts, FieldResult, SampleScore, credit_maps
from pytest_extractbench.scoring.rules import EvalSchemaError, FieldRule, RuleError, compile_rules

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


def test_the_weights_cache_is_emptied_when_it_reaches_256_entries(
    emptied_cache: Callable[[dict[Any, Any]], None],
) -> None:
    # 300 distinct weights, all kept alive (distinct ids): entries 1..256 fill it, the 257th finds 256 and empties
    # it first, so it ends with entries 257..300: 300 - 256 = 44
    emptied_cache(result._weights)
    many = [EqsWeights(0.25, 0.25, 0.25 + i * 1e-12, 0.25 - i * 1e-12) for i in range(300)]
    for weights in many:
        result._eqs_weights(ScoringOptions(eqs_weights=weights))
    assert len(result._weights) == 44
    assert result._eqs_weights(ScoringOptions(eqs_weights=many[-1])) == (0.25, 0.25, 0.25 + 299e-12, 0.25 - 299e-12)


def test_the_weights_are_made_once_per_weights_object() -> None:
    options = ScoringOptions(eqs_weights=EqsWeights(0.4, 0.3, 0.2, 0.1))
    first = result._eqs_weights(options)
    assert first == (0.4, 0.3, 0.2, 0.1)
    assert result._eqs_weights(options) is first  # the cached tuple, not one made again


def test_a_sample_record_carries_its_extra_scores_and_reading_it_back_restores_them() -> None:
    score = SampleScore(
        sample_id="s1",
        json_valid=True,
        schema_valid=True,
        parse_error=None,
        validation_errors=(),
        fields=[],
        options=OPTIONS,
    )
    assert "extras" not in score.as_dict()  # none measured: no key
    score.extras["semantic"] = 0.75
    data = score.as_dict()
    assert data["extras"] == {"semantic": 0.75}
    assert SampleScore.from_dict(data, OPTIONS).extras == {"semantic": 0.75}


def test_a_sample_score_shows_its_id_validity_eqs_f1_and_field_count() -> None:
    # one exact field, nothing else: P = R = F1 = 1, type accuracy 1, no hallucination, so EQS is
    # 0.15 + 0.50 + 0.20 + 0.15 = 1.000
    field = FieldResult("a", "exact", 1.0, "x", "x", "string", "string", True, True)
    score = SampleScore(
        sample_id="s1",
        json_valid=True,
        schema_valid=True,
        parse_error=None,
        validation_errors=(),
        fields=[field],
        options=OPTIONS,
    )
    assert repr(score) == "SampleScore('s1', valid=True, eqs=1.000, f1_partial=1.000, fields=1)"


# --- comparators.py ---


def _spec_of(name: str) -> ComparatorSpec:
    found: ComparatorSpec = COMPARATORS.get(name)
    return found


def test_a_spec_made_from_a_function_alone_is_a_per_field_comparator_of_any_type_without_checks() -> None:
    spec = ComparatorSpec(compare_exact)
    assert tuple(spec) == (compare_exact, False, None, None)
    assert spec.batch is False and spec.check_params is None and spec.types is None
    assert tuple(to_comparison(spec.fn(2, 2.0, {}, OPTIONS))) == (1.0, True, None)  # it holds the function given


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
        register_comparator(name, spec.fn, overwrite=True)
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


# --- rules.py ---


def _obj(**properties: object) -> dict[str, object]:
    return {"type": "object", "properties": properties}


def _problems(schema: object) -> tuple[tuple[str, ...], tuple[str, ...]]:
    ruleset = compile_rules(schema)
    return tuple(str(e) for e in ruleset.errors), tuple(str(w) for w in ruleset.warnings)


def test_a_fresh_rule_says_nothing_beyond_the_defaults() -> None:
    rule = FieldRule()
    assert (rule.skip, rule.comparator, rule.compare, rule.whole, rule.batch) == (False, None, None, False, False)
    assert rule.batch is False and rule.align is None and rule.aligner is None
    assert (rule.params, rule.transforms, rule.align_params) == ({}, (), {})
    assert repr(rule) == "FieldRule()"


def test_a_rule_without_transforms_hands_every_value_on_as_it_is() -> None:
    rule = FieldRule()
    values: list[object] = [["a", "b"], "Text", 3, {"k": "v"}, None]
    for value in values:
        assert rule.transform(value) is value  # the value itself, not a copy


def test_a_rule_shows_what_it_sets() -> None:
    schema = _obj(
        a={
            "type": "array",
            "items": {"type": "string"},
            "x-eval-skip": True,
            "x-eval-compare": "exact",
            "x-eval-transform": ["strip", "lowercase"],
            "x-eval-align": "hungarian",
        }
    )
    rule = compile_rules(schema).root.child("a").rule  # type: ignore[union-attr]
    assert repr(rule) == "FieldRule(skip=True, compare=exact, transforms=2, align=hungarian)"


def test_an_eval_schema_error_lists_every_problem_under_one_heading() -> None:
    error = EvalSchemaError([RuleError("$.a", "bad"), RuleError("$.b", "worse")])
    assert str(error) == "invalid x-eval configuration:\n  $.a: bad\n  $.b: worse"
    assert error.errors == [("$.a", "bad"), ("$.b", "worse")]


def test_specs_that_are_neither_a_name_nor_a_one_key_object_are_reported() -> None:
    spec = "expected a name or a one-key object {name: parameters}, got "
    assert _problems(_obj(n={"x-eval-compare": ["exact"]})) == (
        ("$.properties.n.x-eval-compare: " + spec + "['exact']",),
        (),
    )
    assert _problems(_obj(n={"x-eval-compare": {"exact": {}, "numeric": {}}})) == (
        ("$.properties.n.x-eval-compare: " + spec + "{'exact': {}, 'numeric': {}}",),
        (),
    )
    assert _problems(_obj(n={"x-eval-compare": 5})) == (("$.properties.n.x-eval-compare: " + spec + "5",), ())
    assert _problems(_obj(n={"x-eval-transform": 5})) == (
        ("$.properties.n.x-eval-transform: expected a list of transforms, got 5",),
        (),
    )
    assert _problems(_obj(n={"x-eval-transform": ["strip", 5]})) == (
        ("$.properties.n.x-eval-transform: [1]: " + spec + "5",),
        (),
    )
    assert _problems(_obj(n={"type": "array", "x-eval-align": 5})) == (
        ("$.properties.n.x-eval-align: " + spec + "5",),
        (),
    )
    assert _problems(_obj(n={"type": "array", "x-eval-align": {"match_by": 5}})) == (
        ("$.properties.n.x-eval-align: 'match_by' must be a name, got 5",),
        (),
    )
    errors, _ = _problems(_obj(n={"type": "array", "x-eval-align": "hungrian"}))
    assert len(errors) == 1 and errors[0].startswith(
        "$.properties.n.x-eval-align: unknown array alignment 'hungrian' (did you mean 'hungarian'?); known: "
    )


def test_a_key_with_a_wrong_parameter_is_left_out_and_its_defaults_apply() -> None:
    ruleset = compile_rules(_obj(n={"type": "number", "x-eval-compare": {"numeric": {"tolerance": {"abs": -1}}}}))
    assert len(ruleset.errors) == 1
    rule = ruleset.root.child("n").rule  # type: ignore[union-attr]
    assert rule is not None and (rule.comparator, rule.compare, rule.params) == (None, None, {})


def test_transforms_may_sit_on_a_field_that_may_also_be_a_text() -> None:
    # only a field declared nothing but an object (or an array of nothing but objects) refuses transforms; an object
    # or a text, an array of objects or a text, an array of objects or texts: the transforms apply to the texts
    either = {"type": ["object", "string"], "x-eval-transform": "strip"}
    array_or_text = {"type": ["array", "string"], "items": {"type": "object"}, "x-eval-transform": "strip"}
    mixed_items = {"type": "array", "items": {"type": ["object", "string"]}, "x-eval-transform": "strip"}
    assert _problems(_obj(a=either, b=array_or_text, c=mixed_items)) == ((), ())
    only_objects = {"type": "array", "items": {"type": "object"}, "x-eval-transform": "strip"}
    assert _problems(_obj(d=only_objects, e={"type": "object", "x-eval-transform": "strip"})) == (
        (
            "$.properties.d.x-eval-transform: transforms apply to scalar fields and arrays of scalars, not to arrays "
            "of objects (put them on the objects' fields)",
            "$.properties.e.x-eval-transform: transforms apply to scalar fields and arrays of scalars, not to objects",
        ),
        (),
    )


def test_a_null_allowed_beside_objects_does_not_let_transforms_through() -> None:
    # a null passes every transform, so an object-or-null (or an array of them) has nothing a transform could change:
    # refused like the same field without null; a field of nulls only is no object and is let be
    nullable = {"type": ["object", "null"], "x-eval-transform": "strip"}
    nullable_array = {"type": ["array", "null"], "items": {"type": "object"}, "x-eval-transform": "strip"}
    nullable_items = {"type": "array", "items": {"type": ["object", "null"]}, "x-eval-transform": "strip"}
    nulls = {"type": "null", "x-eval-transform": "strip"}
    objects = "transforms apply to scalar fields and arrays of scalars, not to objects"
    arrays = (
        "transforms apply to scalar fields and arrays of scalars, not to arrays of objects "
        "(put them on the objects' fields)"
    )
    assert _problems(_obj(a=nullable, b=nullable_array, c=nullable_items, d=nulls)) == (
        (
            f"$.properties.a.x-eval-transform: {objects}",
            f"$.properties.b.x-eval-transform: {arrays}",
            f"$.properties.c.x-eval-transform: {arrays}",
        ),
        (),
    )


def test_keywords_that_are_not_x_eval_make_no_rule_and_no_warning() -> None:
    ruleset = compile_rules(_obj(a={"type": "string", "description": "a name", "format": "email", "title": "A"}))
    assert (ruleset.errors, ruleset.warnings) == ((), ())
    assert ruleset.root.child("a").rule is None  # type: ignore[union-attr]


def test_a_recursive_schema_gets_one_rule_per_location_and_reports_a_shared_problem_once() -> None:
    tree = {
        "$defs": {
            "node": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "x-eval-compare": "nonesuch"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/node"}},
                },
            }
        },
        "type": "object",
        "properties": {"left": {"$ref": "#/$defs/node"}, "right": {"$ref": "#/$defs/node"}},
    }
    errors, _ = _problems(tree)
    # the node is shared by left, right and every child: its one bad key is reported once, at the first path
    assert len(errors) == 1 and errors[0].startswith("$.properties.left.properties.name.x-eval-compare: unknown")


def test_rules_are_parsed_once_per_schema_object_and_again_for_another_object_at_a_reused_id() -> None:
    schema = _obj(a={"type": "string", "x-eval-compare": "exact"})
    first = compile_rules(schema)
    assert compile_rules(schema) is first  # cached: not parsed again for every sample
    # an entry left by another schema whose id this one now has (the other is gone): parsed afresh, not taken
    other = _obj(b={"type": "string"})
    stale = compile_rules(other)
    rules._rulesets[id(schema)] = (other, registry.generation(), stale)
    try:
        found = compile_rules(schema)
        assert found is not stale and set(found.root.properties) == {"a"}
    finally:
        rules._rulesets.pop(id(schema), None)


def test_the_rules_cache_is_emptied_when_it_reaches_4096_schemas(
    emptied_cache: Callable[[dict[Any, Any]], None],
) -> None:
    # 4096 schemas (kept alive: distinct ids) fill it; the 4097th finds 4096 entries and empties it first
    emptied_cache(rules._rulesets)
    schemas = [{"type": "object", "title": str(i)} for i in range(4097)]
    for schema in schemas[:4096]:
        compile_rules(schema)
    assert len(rules._rulesets) == 4096
    compile_rules(schemas[4096])
    assert list(rules._rulesets) == [id(schemas[4096])]
