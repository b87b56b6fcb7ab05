"""The field walk at its edges, by hand: depths, identical values under rules, transforms that fail or change a
value's shape, alignment floors (the cases a mutation run of scoring/fields.py found unguarded)."""

from __future__ import annotations

import json

import pytest

from pytest_extractbench import ScoringOptions, score_sample
from pytest_extractbench.scoring import register_comparator, register_transform
from pytest_extractbench.scoring.comparators import COMPARATORS
from pytest_extractbench.scoring.transforms import TRANSFORMS

ITEM = {"type": "object", "properties": {"sku": {"type": "string"}, "qty": {"type": "integer"}}}


def obj(**properties) -> dict:
    return {"type": "object", "properties": properties}


def walk(output, gold, schema=None, **options) -> list[tuple]:
    score = score_sample(json.dumps(output), gold, schema, options=ScoringOptions(**options))
    return [(f.path, f.category, round(f.score, 3), f.depth) for f in score.fields]


def test_depths_of_top_level_fields_and_of_objects_in_a_root_array() -> None:
    assert walk({"a": "x"}, {"a": "x"}) == [("a", "exact", 1.0, 0)]
    # an object inside the root array is one level down, identical or not
    assert walk([{"a": "x"}], [{"a": "x"}]) == [("[0].a", "exact", 1.0, 1)]
    assert walk([{"a": "y"}], [{"a": "x"}]) == [("[0].a", "incorrect", 0.0, 1)]


def test_an_identical_array_matches_whatever_its_whole_comparator_says() -> None:
    register_comparator("test_never_whole", lambda *a: 0.0, overwrite=True)
    try:
        schema = obj(t={"type": "array", "items": {"type": "integer"}, "x-eval-compare": "test_never_whole"})
        assert walk({"t": [1, 2]}, {"t": [1, 2]}, schema) == [("t", "exact", 1.0, 0)]
    finally:
        COMPARATORS.remove("test_never_whole")


@pytest.mark.parametrize(("floor", "paired"), [(0.6, False), (0.4, True)])
def test_element_similarity_is_the_mean_field_score(floor, paired) -> None:
    # sku A = A scores 1, qty 9 vs 1 scores 0: the elements' similarity is (1 + 0) / 2 = 0.5, under a 0.6 floor
    # (the pair stays unmatched: gold missed, prediction spurious) and over a 0.4 one (paired)
    schema = obj(
        items={"type": "array", "items": ITEM, "x-eval-align": {"match_by": "hungarian", "min_similarity": floor}}
    )
    got = walk({"items": [{"sku": "A", "qty": 9}]}, {"items": [{"sku": "A", "qty": 1}]}, schema)
    if paired:
        assert got == [("items[0].sku", "exact", 1.0, 1), ("items[0].qty", "incorrect", 0.0, 1)]
    else:
        assert [(path, category) for path, category, *_ in got] == [
            ("items[0].sku", "missed"),
            ("items[0].qty", "missed"),
            ("items[1].sku", "spurious"),
            ("items[1].qty", "spurious"),
        ]


def test_a_failing_transform_is_an_error_only_when_both_sides_are_there() -> None:
    register_transform("test_boom", lambda value, params: 1 / 0, overwrite=True)
    try:
        schema = obj(v={"type": "string", "x-eval-transform": ["test_boom"]})
        assert walk({"v": "y"}, {"v": "x"}, schema) == [("v", "error", 0.0, 0)]
        assert walk({}, {"v": "x"}, schema) == [("v", "missed", 0.0, 0)]  # nothing to compare: just missed
        assert walk({"v": None}, {"v": "x"}, schema) == [("v", "missed", 0.0, 0)]  # null is absent too
        assert walk({"v": "y"}, {}, schema) == [("v", "spurious", 0.0, 0)]
    finally:
        TRANSFORMS.remove("test_boom")


def test_a_transformed_array_is_compared_as_an_array_and_against_a_scalar_as_a_mismatch() -> None:
    tags = obj(tags={"type": "array", "items": {"type": "string"}, "x-eval-transform": ["lowercase"]})
    # lowercased: Jaccard of {a, b} and {a, c} = 1/3, under the partial threshold
    assert walk({"tags": ["a", "c"]}, {"tags": ["A", "B"]}, tags) == [("tags", "incorrect", 0.333, 0)]
    # an array against a string: the gold's field missed, the prediction spurious
    assert walk({"tags": "a"}, {"tags": ["A"]}, tags) == [("tags", "missed", 0.0, 0), ("tags", "spurious", 0.0, 0)]


def test_identical_empty_strings_are_absent_unless_asked_otherwise() -> None:
    assert walk({"a": "", "b": "x"}, {"a": "", "b": "x"}) == [("b", "exact", 1.0, 0)]
    assert walk({"a": "", "b": "x"}, {"a": "", "b": "x"}, empty_equals_absent=False) == [
        ("a", "exact", 1.0, 0),
        ("b", "exact", 1.0, 0),
    ]


def test_true_is_not_the_number_one_inside_objects_python_calls_equal() -> None:
    # {"n": 1} == {"n": True} in Python: the walk must still see a boolean where a number was expected
    assert walk({"n": True}, {"n": 1}) == [("n", "incorrect", 0.0, 0)]
    assert walk({"x": {"n": True}}, {"x": {"n": 1}}) == [("x.n", "incorrect", 0.0, 1)]


def test_keys_without_a_rule_beside_a_ruled_key_are_walked_plainly() -> None:
    schema = obj(a={"x-eval-compare": "exact"})
    assert walk({"a": "x", "extra": "y"}, {"a": "x", "extra": "y"}, schema) == [
        ("a", "exact", 1.0, 0),
        ("extra", "exact", 1.0, 0),
    ]


def test_identical_numbers_and_scalar_arrays_inside_an_object() -> None:
    assert walk({"n": 5, "f": 2.5}, {"n": 5, "f": 2.5}) == [("n", "exact", 1.0, 0), ("f", "exact", 1.0, 0)]
    # an array of scalars is one field (Jaccard), identical or not
    assert walk({"tags": ["a", "b"]}, {"tags": ["a", "b"]}) == [("tags", "exact", 1.0, 0)]


def test_unmatched_predictions_are_numbered_after_the_gold() -> None:
    schema = obj(items={"type": "array", "items": ITEM, "x-eval-align": {"match_by": "key_field", "key": "sku"}})
    gold = {"items": [{"sku": "A", "qty": 1}, {"sku": "B", "qty": 2}, {"sku": "C", "qty": 3}]}
    output = {"items": [{"sku": "Z", "qty": 9}, {"sku": "Y", "qty": 8}]}
    spurious = [path for path, category, *_ in walk(output, gold, schema) if category == "spurious"]
    # 3 gold elements: the two extra predictions are elements 3 and 4
    assert spurious == ["items[3].sku", "items[3].qty", "items[4].sku", "items[4].qty"]


def test_a_failed_batch_comparator_leaves_an_error_scoring_zero_at_the_root_path() -> None:
    seen = []

    def failing(items, options):
        seen.extend(path for *_, path in items)
        raise RuntimeError("down")

    register_comparator("test_batch_down", failing, batch=True, overwrite=True)
    try:
        assert walk("y", "x", {"type": "string", "x-eval-compare": "test_batch_down"}) == [("$", "error", 0.0, 0)]
        assert seen == ["$"]
    finally:
        COMPARATORS.remove("test_batch_down")


def test_identical_booleans_inside_an_object_stay_booleans() -> None:
    score = score_sample(json.dumps({"b": True}), {"b": True})
    assert [(f.path, f.category, f.expected_type, f.predicted_type) for f in score.fields] == [
        ("b", "exact", "boolean", "boolean")
    ]


def hungarian(item: dict, floor: float) -> dict:
    return obj(
        items={"type": "array", "items": item, "x-eval-align": {"match_by": "hungarian", "min_similarity": floor}}
    )


def test_an_element_pair_without_fields_is_fully_similar() -> None:
    # gold [{}] against [{"x": null}, {"b": "y"}]: {} vs {"x": null} gives no field at all (null is absent), a
    # similarity of 1 >= 0.5, so they pair; {"b": "y"} stays unmatched and is numbered after the gold: items[1]
    item = {"type": "object", "properties": {"b": {"type": "string"}, "x": {"type": "string"}}}
    got = walk({"items": [{"x": None}, {"b": "y"}]}, {"items": [{}]}, hungarian(item, 0.5))
    assert got == [("items[1].b", "spurious", 0.0, 1)]


def test_error_fields_do_not_count_in_element_similarity() -> None:
    def broken(expected, predicted, params, options):
        raise RuntimeError("down")

    register_comparator("test_broken_element", broken, overwrite=True)
    try:
        item = {
            "type": "object",
            "properties": {"c": {"type": "string", "x-eval-compare": "test_broken_element"}, "a": {"type": "string"}},
        }
        # only an error field: similarity 0, under the 0.5 floor: not paired
        got = walk({"items": [{"c": "y"}]}, {"items": [{"c": "x"}]}, hungarian(item, 0.5))
        assert [(p, c) for p, c, *_ in got] == [("items[0].c", "missed"), ("items[1].c", "spurious")]
        # an error field and an exact one: similarity 1 (the mean of the exact field alone), over a 0.75 floor
        got = walk({"items": [{"c": "y", "a": "same"}]}, {"items": [{"c": "x", "a": "same"}]}, hungarian(item, 0.75))
        assert [(p, c) for p, c, *_ in got] == [("items[0].c", "error"), ("items[0].a", "exact")]
    finally:
        COMPARATORS.remove("test_broken_element")


def test_a_whole_comparator_after_a_transform_judges_an_array_against_a_string() -> None:
    schema = obj(t={"x-eval-compare": "exact", "x-eval-transform": ["lowercase"]})
    assert walk({"t": "a"}, {"t": ["A"]}, schema) == [("t", "incorrect", 0.0, 0)]  # one field, not a mismatch


def test_a_transform_that_makes_one_side_an_object_is_a_structure_mismatch() -> None:
    register_transform("test_shape", lambda value, params: {"v": value} if value == "wrap" else [value], overwrite=True)
    try:
        schema = obj(t={"type": "string", "x-eval-transform": ["test_shape"]})
        assert [(p, c) for p, c, *_ in walk({"t": "x"}, {"t": "wrap"}, schema)] == [("t", "missed"), ("t", "spurious")]
    finally:
        TRANSFORMS.remove("test_shape")


def test_identical_aligned_arrays_still_run_their_transforms() -> None:
    # a transform that turns "N/A" into null: in two identical aligned arrays, element 0 is absent on both sides
    register_transform("test_na_element", lambda value, params: None if value == "N/A" else value, overwrite=True)
    try:
        schema = obj(
            tags={
                "type": "array",
                "items": {"type": "string"},
                "x-eval-align": "hungarian",
                "x-eval-transform": ["test_na_element"],
            }
        )
        assert walk({"tags": ["N/A", "x"]}, {"tags": ["N/A", "x"]}, schema) == [("tags[1]", "exact", 1.0, 0)]
    finally:
        TRANSFORMS.remove("test_na_element")


# Arrays whose elements are fields (items with a rule, or an alignment), beside a plain array of scalars that is one
# field scored by Jaccard: an empty array and a null element must count as they do there.
RULED = obj(t={"type": "array", "items": {"type": "string", "x-eval-compare": "exact"}})
ALIGNED = obj(t={"type": "array", "items": {"type": "string"}, "x-eval-align": "hungarian"})
PLAIN = obj(t={"type": "array", "items": {"type": "string"}})


@pytest.mark.parametrize("schema", [RULED, ALIGNED, PLAIN], ids=["ruled", "aligned", "plain"])
def test_an_empty_array_that_is_a_value_is_one_field_whatever_the_items_carry(schema: dict) -> None:
    assert walk({}, {"t": []}, schema, empty_equals_absent=False) == [("t", "missed", 0.0, 0)]
    assert walk({"t": []}, {"t": []}, schema, empty_equals_absent=False) == [("t", "exact", 1.0, 0)]
    assert walk({"t": []}, {}, schema, empty_equals_absent=False) == [("t", "spurious", 0.0, 0)]
    # by default an empty array is absent: no field, as before
    assert walk({}, {"t": []}, schema) == [] and walk({"t": []}, {"t": []}, schema) == []


@pytest.mark.parametrize("schema", [RULED, ALIGNED], ids=["ruled", "aligned"])
def test_a_null_element_is_an_element_where_a_lone_null_is_absent(schema: dict) -> None:
    assert walk({}, {"t": [None]}, schema) == [("t[0]", "missed", 0.0, 0)]
    assert walk({"t": [None]}, {"t": [None]}, schema) == [("t[0]", "exact", 1.0, 0)]
    assert walk({"t": ["a"]}, {"t": ["a", None]}, schema) == [("t[0]", "exact", 1.0, 0), ("t[1]", "missed", 0.0, 0)]
    assert walk({"t": ["a", None]}, {"t": ["a"]}, schema) == [("t[0]", "exact", 1.0, 0), ("t[1]", "spurious", 0.0, 0)]
    assert walk({"t": ["a", "b"]}, {"t": ["a", None]}, schema) == [
        ("t[0]", "exact", 1.0, 0),
        ("t[1]", "incorrect", 0.0, 0),
    ]
    # a lone null is still absent
    assert walk({"t": None}, {"t": None}, schema) == [] and walk({"t": None}, {}, schema) == []


def test_a_null_element_of_an_array_of_objects_is_an_element_too() -> None:
    schema = obj(t={"type": "array", "items": ITEM})
    gold = {"t": [{"sku": "A"}, None]}
    assert walk(gold, gold, schema) == [("t[0].sku", "exact", 1.0, 1), ("t[1]", "exact", 1.0, 0)]
    # the gold's null element against an object: the null is missed, the object's leaves spurious
    assert walk({"t": [{"sku": "A"}, {"sku": "B"}]}, gold, schema) == [
        ("t[0].sku", "exact", 1.0, 1),
        ("t[1]", "missed", 0.0, 0),
        ("t[1].sku", "spurious", 0.0, 1),
    ]


@pytest.mark.parametrize(("output", "gold"), [("b", "a"), (["b"], ["a"]), ([1], [1])])
def test_a_root_value_is_a_required_field(output, gold) -> None:
    # no schema names the root, yet a record without it has nothing: its one field counts as required
    score = score_sample(json.dumps(output), gold)
    assert [(f.path, f.required) for f in score.fields] == [("$", True)]


def test_a_whole_comparator_judges_an_array_against_a_scalar_as_one_field() -> None:
    # a comparator other than partial owns the location: gold array against a predicted string is one incorrect
    # field, not the missed and spurious pair a structure mismatch without a rule gives
    schema = obj(t={"type": "array", "items": {"type": "integer"}, "x-eval-compare": "exact"})
    assert walk({"t": "x"}, {"t": [1, 2]}, schema) == [("t", "incorrect", 0.0, 0)]
    assert walk({"t": [1, 2]}, {"t": "x"}, schema) == [("t", "incorrect", 0.0, 0)]
    assert walk({"t": "x"}, {"t": [1, 2]}) == [("t", "missed", 0.0, 0), ("t", "spurious", 0.0, 0)]


def test_a_whole_comparator_after_a_transform_judges_an_array_against_a_scalar_as_one_field() -> None:
    register_transform("test_same", lambda value, params: value, overwrite=True)
    try:
        schema = obj(
            t={
                "type": "array",
                "items": {"type": "integer"},
                "x-eval-compare": "exact",
                "x-eval-transform": ["test_same"],
            }
        )
        assert walk({"t": "x"}, {"t": [1, 2]}, schema) == [("t", "incorrect", 0.0, 0)]
        assert walk({"t": [1, 2]}, {"t": "x"}, schema) == [("t", "incorrect", 0.0, 0)]
    finally:
        TRANSFORMS.remove("test_same")


def test_objects_where_a_transformed_scalar_was_expected_are_walked_key_by_key() -> None:
    register_transform("test_same", lambda value, params: value, overwrite=True)
    try:
        schema = obj(v={"type": "string", "x-eval-transform": ["test_same"]})
        # two objects after the transform: their keys are fields, as without a rule
        assert walk({"v": {"a": 2}}, {"v": {"a": 1}}, schema) == [("v.a", "incorrect", 0.0, 1)]
        # an object against an array: the gold's fields missed, the prediction spurious
        assert walk({"v": [2]}, {"v": {"a": 1}}, schema) == [("v.a", "missed", 0.0, 1), ("v", "spurious", 0.0, 0)]
    finally:
        TRANSFORMS.remove("test_same")


def test_an_identical_object_where_an_aligned_array_was_expected_is_walked_as_an_object() -> None:
    # the aligner's identical-array shortcut is for arrays: an object there keeps its key paths
    schema = obj(t={"type": "array", "items": ITEM, "x-eval-align": {"match_by": "hungarian"}})
    assert walk({"t": {"sku": "A"}}, {"t": {"sku": "A"}}, schema) == [("t.sku", "exact", 1.0, 1)]


def test_an_identical_root_scalar_is_one_exact_field_with_its_types_and_text_similarity() -> None:
    [text] = score_sample(json.dumps("a"), "a").fields
    assert (text.path, text.category, text.score, text.type_ok, text.equal, text.depth, text.required) == (
        "$",
        "exact",
        1.0,
        True,
        True,
        0,
        True,
    )
    assert (text.expected_type, text.predicted_type, text.similarity, text.comparator, text.error) == (
        "string",
        "string",
        (1.0, 1.0, 1.0),
        None,
        None,
    )
    [number] = score_sample("3", 3).fields
    assert (number.category, number.type_ok, number.equal, number.similarity, number.comparator, number.error) == (
        "exact",
        True,
        True,
        None,
        None,
        None,
    )
    assert not score_sample(json.dumps("  "), "  ").fields  # a blank string is absent on both sides


def test_a_null_element_of_identical_arrays_keeps_its_nulls() -> None:
    gold = [None, {"a": 1}]
    null, number = score_sample(json.dumps(gold), gold).fields
    assert (null.path, null.category, null.expected, null.predicted) == ("[0]", "exact", None, None)
    assert (number.path, number.category, number.depth) == ("[1].a", "exact", 1)


def test_true_is_not_one_inside_arrays_python_calls_equal() -> None:
    # [{"a": 1}, 1] == [{"a": 1}, True] in Python: the identical walk must still judge the differing element
    got = walk([{"a": 1}, True], [{"a": 1}, 1])
    assert got == [("[0].a", "exact", 1.0, 1), ("[1]", "incorrect", 0.0, 0)]


def test_a_blank_string_against_text_is_absent_on_its_side() -> None:
    # blank counts as absent by default: the text on the other side is missed or spurious, never incorrect
    assert walk({"a": "  "}, {"a": "x"}) == [("a", "missed", 0.0, 0)]
    assert walk({"a": "x"}, {"a": "  "}) == [("a", "spurious", 0.0, 0)]


def test_a_required_key_stays_required_when_its_scalar_meets_an_array() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
        "required": ["a"],
    }
    score = score_sample(json.dumps({"a": [1], "b": [1]}), {"a": "x", "b": "y"}, schema)
    assert [(f.path, f.category, f.required) for f in score.fields] == [
        ("a", "missed", True),
        ("a", "spurious", True),
        ("b", "missed", False),
        ("b", "spurious", False),
    ]


def test_a_required_key_only_the_prediction_has_is_spurious_and_required() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
        "required": ["a"],
    }
    score = score_sample(json.dumps({"b": "y", "a": "x"}), {"b": "y"}, schema)
    assert [(f.path, f.category, f.required) for f in score.fields] == [("b", "exact", False), ("a", "spurious", True)]
