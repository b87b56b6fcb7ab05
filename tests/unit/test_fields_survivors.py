"""The field walk where a mutation run of scoring/fields.py found no test looking: the similarity an alignment asks of
two elements (nested ones, a scalar against an object, elements under a whole comparator, an array with no items
schema), a registered aligner asked even for identical arrays, a NaN that ``==`` on an object counts equal to itself,
and a null element of an array whose values are not what its schema declares. Every value is worked out by hand in the
comments."""

from __future__ import annotations

import json
import math
from typing import Any

from pytest_extractbench import ScoringOptions, score_sample
from pytest_extractbench.scoring import FieldWalker, register_aligner, register_comparator
from pytest_extractbench.scoring.align import ALIGNERS
from pytest_extractbench.scoring.comparators import COMPARATORS
from pytest_extractbench.scoring.rules import compile_rules


def obj(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


def walk(output: Any, gold: Any, schema: Any = None, **options: Any) -> list[tuple[str, str, float, int]]:
    score = score_sample(json.dumps(output), gold, schema, options=ScoringOptions(**options))
    return [(f.path, f.category, round(f.score, 3), f.depth) for f in score.fields]


def hungarian(floor: float, **array: Any) -> dict[str, Any]:
    return obj(t={"type": "array", "x-eval-align": {"match_by": "hungarian", "min_similarity": floor}, **array})


def test_nested_elements_of_an_array_without_items_schema_are_walked_for_their_similarity() -> None:
    # the elements hold an object, so the flat similarity cannot score them and the walk does: a.b "x" = "x"
    # scores 1, c "y" vs "z" 0, a similarity of (1 + 0) / 2 = 0.5, at the 0.5 floor: paired
    got = walk({"t": [{"a": {"b": "x"}, "c": "z"}]}, {"t": [{"a": {"b": "x"}, "c": "y"}]}, hungarian(0.5))
    assert got == [("t[0].a.b", "exact", 1.0, 2), ("t[0].c", "incorrect", 0.0, 1)]


def test_a_scalar_against_an_object_in_an_aligned_array_is_never_similar() -> None:
    # "x" against {"a": "x"} is a structure mismatch, no field scores: similarity 0, under the 0.5 floor, so each
    # side stays unmatched (the prediction numbered after the one gold element)
    assert walk({"t": [{"a": "x"}]}, {"t": ["x"]}, hungarian(0.5)) == [
        ("t[0]", "missed", 0.0, 0),
        ("t[1].a", "spurious", 0.0, 1),
    ]
    assert walk({"t": ["x"]}, {"t": [{"a": "x"}]}, hungarian(0.5)) == [
        ("t[0].a", "missed", 0.0, 1),
        ("t[1]", "spurious", 0.0, 0),
    ]


def test_elements_under_a_whole_comparator_are_as_similar_as_the_comparator_says() -> None:
    # exact judges each element whole: {"a": "x", "b": "y"} against {"a": "x", "b": "z"} is 0, under the 0.4 floor,
    # although key by key the two would be (1 + 0) / 2 = 0.5 similar and pair
    schema = hungarian(0.4, items={"type": "object", "x-eval-compare": "exact"})
    assert walk({"t": [{"a": "x", "b": "z"}]}, {"t": [{"a": "x", "b": "y"}]}, schema) == [
        ("t[0]", "missed", 0.0, 0),
        ("t[1]", "spurious", 0.0, 0),
    ]


def test_a_registered_aligner_pairs_even_identical_arrays() -> None:
    # only the built-in aligners are known to pair identical arrays element by element; one that pairs the first
    # gold element with the last prediction is asked: "x" meets "y" and "y" meets "x", two wrong values
    def reverse(expected: Any, predicted: Any, node: Any, options: Any, context: Any = None) -> list[Any]:
        return [(i, len(predicted) - 1 - i) for i in range(len(expected))]

    register_aligner("test-reverse-identical", reverse)
    try:
        schema = obj(t={"type": "array", "items": obj(a={"type": "string"}), "x-eval-align": "test-reverse-identical"})
        gold = {"t": [{"a": "x"}, {"a": "y"}]}
        assert walk(gold, gold, schema) == [("t[0].a", "incorrect", 0.0, 1), ("t[1].a", "incorrect", 0.0, 1)]
    finally:
        ALIGNERS.remove("test-reverse-identical")


def test_a_nan_that_an_object_holds_on_both_sides_is_exact_as_the_objects_equality_says() -> None:
    # math.nan is one object: {"x": nan} == {"x": nan} holds in Python (identity first), so the identical walk emits
    # its leaves exact without comparing them; compared on its own, nan == nan is false and would score 0
    gold = {"x": math.nan, "y": {"z": math.nan}}
    fields = FieldWalker(ScoringOptions()).walk(gold, {"x": math.nan, "y": {"z": math.nan}}, None)
    assert [(f.path, f.category, f.score) for f in fields] == [("x", "exact", 1.0), ("y.z", "exact", 1.0)]


def test_a_null_element_after_an_array_transform_stays_absent_when_the_values_are_objects() -> None:
    # the schema declares strings, the data holds a null and an object: the lowercase transform passes an array
    # with an object in it unchanged, and a null element after an array transform has no value, so only t[1].a is
    # a field (the general walk gives the same)
    schema = obj(t={"type": "array", "items": {"type": "string"}, "x-eval-transform": ["lowercase"]})
    gold = {"t": [None, {"a": "x"}]}
    assert walk(gold, gold, schema) == [("t[1].a", "exact", 1.0, 1)]


def test_a_nan_shared_by_two_inner_objects_is_exact_though_the_outer_objects_differ() -> None:
    # the outer objects differ (w: 1 against 2, a wrong number, 0), but their "y" objects are == in Python (the same
    # NaN object on both sides), so y.z is emitted exact as in the test above
    fields = FieldWalker(ScoringOptions()).walk({"y": {"z": math.nan}, "w": 1}, {"y": {"z": math.nan}, "w": 2}, None)
    assert [(f.path, f.category, f.score) for f in fields] == [("y.z", "exact", 1.0), ("w", "incorrect", 0.0)]


REQUIRED_A = {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}, "required": ["a"]}


def test_unequal_scalars_keep_whether_their_key_is_required() -> None:
    score = score_sample(json.dumps({"a": "y", "b": "y"}), {"a": "x", "b": "x"}, REQUIRED_A)
    assert [(f.path, f.category, f.required) for f in score.fields] == [
        ("a", "incorrect", True),
        ("b", "incorrect", False),
    ]


def test_a_blank_prediction_for_a_text_keeps_whether_its_key_is_required() -> None:
    # a blank string is absent: the gold's text is missed, and required as its key is
    score = score_sample(json.dumps({"a": "  ", "b": "  "}), {"a": "x", "b": "x"}, REQUIRED_A)
    assert [(f.path, f.category, f.required) for f in score.fields] == [("a", "missed", True), ("b", "missed", False)]


RULED = obj(t={"type": "array", "items": {"type": "string", "x-eval-compare": "exact"}})


def test_an_empty_array_against_elements_that_are_fields_leaves_each_element_one_sided() -> None:
    # with empty arrays kept as values, ["a"] against [] is not one Jaccard field: the elements are fields of their
    # own (their items carry a rule), so the gold's "a" is missed and the prediction's "b" spurious
    assert walk({"t": []}, {"t": ["a"]}, RULED, empty_equals_absent=False) == [("t[0]", "missed", 0.0, 0)]
    assert walk({"t": ["b"]}, {"t": []}, RULED, empty_equals_absent=False) == [("t[0]", "spurious", 0.0, 0)]


def test_object_elements_under_a_whole_comparator_are_one_field_each() -> None:
    # exact judges an element whole: {"a": "x", "b": "y"} against {"a": "x", "b": "z"} is one wrong element, not
    # an exact a and a wrong b
    schema = obj(t={"type": "array", "items": {"type": "object", "x-eval-compare": "exact"}})
    assert walk({"t": [{"a": "x", "b": "z"}]}, {"t": [{"a": "x", "b": "y"}]}, schema) == [("t[0]", "incorrect", 0.0, 0)]


def test_an_element_of_another_kind_than_its_partner_is_a_structure_mismatch() -> None:
    # ordered pairing: the gold's "x" meets the prediction's {"a": "x"} (and the other way round); neither is walked
    # as an object of the other: the scalar is missed or spurious, the object's leaf on its own side
    assert walk({"t": [{"a": "x"}]}, {"t": ["x"]}) == [("t[0]", "missed", 0.0, 0), ("t[0].a", "spurious", 0.0, 1)]
    assert walk({"t": ["x"]}, {"t": [{"a": "x"}]}) == [("t[0].a", "missed", 0.0, 1), ("t[0]", "spurious", 0.0, 0)]


def test_a_ruled_number_of_the_other_python_type_is_still_of_the_right_type() -> None:
    # 2 (int) against 2.0 (float): two Python types, one JSON type, number
    schema = obj(n={"type": "number", "x-eval-compare": "exact"})
    [field] = score_sample(json.dumps({"n": 2.0}), {"n": 2}, schema).fields
    assert (field.category, field.type_ok, field.expected_type, field.predicted_type) == (
        "exact",
        True,
        "number",
        "number",
    )


def test_a_comparator_without_similarities_gets_the_text_similarities_of_its_strings() -> None:
    # exact tells "ABC" from "abc" (wrong), and gives no similarities: the field carries the three string
    # similarities of the normalized texts, which are equal ("abc" both): 1.0 each
    schema = obj(a={"type": "string", "x-eval-compare": "exact"})
    [field] = score_sample(json.dumps({"a": "ABC"}), {"a": "abc"}, schema).fields
    assert (field.category, field.score, field.similarity) == ("incorrect", 0.0, (1.0, 1.0, 1.0))


def test_a_failed_batch_comparator_leaves_no_similarity_on_its_error_field() -> None:
    def failing(items: Any, options: Any) -> Any:
        raise RuntimeError("down")

    register_comparator("test_batch_down_similarity", failing, batch=True, overwrite=True)
    try:
        [field] = score_sample(
            json.dumps("y"), "x", {"type": "string", "x-eval-compare": "test_batch_down_similarity"}
        ).fields
        assert (field.category, field.similarity, field.type_ok) == ("error", None, None)
    finally:
        COMPARATORS.remove("test_batch_down_similarity")


def test_a_nan_shared_inside_an_object_under_a_partial_rule_is_exact_too() -> None:
    # partial names the default walk: the rule does not make the identical object take the comparing walk, so its
    # NaN leaf, equal by identity in the objects' ==, is exact as without the rule
    schema = compile_rules(obj(o={"type": "object", "x-eval-compare": "partial"})).root
    fields = FieldWalker(ScoringOptions()).walk({"o": {"x": math.nan}}, {"o": {"x": math.nan}}, schema)
    assert [(f.path, f.category, f.score) for f in fields] == [("o.x", "exact", 1.0)]
