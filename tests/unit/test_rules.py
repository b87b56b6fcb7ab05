"""x-eval-* rules: every comparator, transform, alignment and post-processor, and config errors with paths.

Expected numbers are worked out by hand in the comments.
"""

from __future__ import annotations

import json

import pytest

from pytest_extractbench import ScoringOptions, score_sample
from pytest_extractbench.scoring import (
    ERROR,
    EvalSchemaError,
    EvalSchemaWarning,
    FieldWalker,
    compile_rules,
    parse_eval_schema,
    register_comparator,
    register_post_processor,
    register_transform,
)
from pytest_extractbench.scoring.comparators import COMPARATORS
from pytest_extractbench.scoring.postprocess import POST_PROCESSORS
from pytest_extractbench.scoring.transforms import TRANSFORMS


def obj(**properties) -> dict:
    return {"type": "object", "properties": properties}


def fields(output, gold, schema, **options) -> dict:
    score = score_sample(json.dumps(output), gold, schema, options=ScoringOptions(**options))
    return {f.path: f for f in score.fields}


# -- comparators -----------------------------------------------------------------------------


def test_exact_is_case_and_type_sensitive() -> None:
    schema = obj(code={"type": "string", "x-eval-compare": "exact"}, n={"type": "number", "x-eval-compare": "exact"})
    got = fields({"code": "ab-1", "n": 2.0}, {"code": "AB-1", "n": 2}, schema)
    # default comparison would casefold "ab-1" == "AB-1"; exact does not
    assert (got["code"].category, got["code"].score, got["code"].comparator) == ("incorrect", 0.0, "exact")
    assert got["n"].category == "exact" and got["n"].equal  # 2 and 2.0 are the same JSON number
    assert fields({"code": 1}, {"code": "1"}, obj(code={"x-eval-compare": "exact"}))["code"].score == 0.0


def test_numeric_absolute_and_relative_tolerance() -> None:
    schema = obj(
        t={"type": "number", "x-eval-compare": {"numeric": {"tolerance": {"abs": 0.5}}}},
        p={"type": "number", "x-eval-compare": {"numeric": {"tolerance": {"rel": 0.01}}}},
        q={"type": "number", "x-eval-compare": "numeric"},
    )
    # |300.4 - 300| = 0.4 <= 0.5 -> match; |101 - 100| = 1 <= 0.01 * 100 -> match; 7.001 vs 7 without tolerance -> 0
    got = fields({"t": 300.4, "p": 101, "q": 7.001}, {"t": 300, "p": 100, "q": 7}, schema)
    assert [got[k].score for k in "tpq"] == [1.0, 1.0, 0.0]
    # |300.6 - 300| = 0.6 > 0.5; |102 - 100| = 2 > 1
    got = fields({"t": 300.6, "p": 102, "q": "7"}, {"t": 300, "p": 100, "q": 7}, schema)
    assert [got[k].score for k in "tpq"] == [0.0, 0.0, 1.0]
    assert got["q"].type_ok is False  # "7" reads as 7, but a string is still the wrong type


def test_oneof_flat_list_and_synonym_groups() -> None:
    flat = obj(m={"type": "string", "x-eval-compare": {"oneof": {"values": ["PVD", "Sputtering"]}}})
    assert fields({"m": "sputtering"}, {"m": "PVD"}, flat)["m"].score == 1.0
    assert fields({"m": "CVD"}, {"m": "PVD"}, flat)["m"].score == 0.0
    groups = obj(
        c={"type": "string", "x-eval-compare": {"oneof": {"values": [["NYC", "New York"], ["LA", "Los Angeles"]]}}}
    )
    assert fields({"c": "new york"}, {"c": "NYC"}, groups)["c"].category == "exact"
    assert fields({"c": "LA"}, {"c": "NYC"}, groups)["c"].score == 0.0


def test_partial_is_the_default_composite() -> None:
    with_rule = obj(s={"type": "string", "x-eval-compare": "partial"})
    without = obj(s={"type": "string"})
    a = fields({"s": "San Francisco"}, {"s": "San Francisco, CA"}, with_rule)["s"]
    b = fields({"s": "San Francisco"}, {"s": "San Francisco, CA"}, without)["s"]
    assert a.score == pytest.approx(b.score) and a.similarity == b.similarity and a.comparator == "partial"


def test_custom_comparator_from_python_and_its_errors() -> None:
    def date_only(expected, predicted, params, options):
        return expected[:10] == predicted[:10]

    def broken(expected, predicted, params, options):
        raise RuntimeError("boom")

    def out_of_range(expected, predicted, params, options):
        return 1.5

    register_comparator("test_date", date_only, overwrite=True)
    register_comparator("test_broken", broken, overwrite=True)
    register_comparator("test_range", out_of_range, overwrite=True)
    try:
        schema = obj(
            d={"x-eval-compare": "test_date"},
            b={"x-eval-compare": "test_broken"},
            r={"x-eval-compare": "test_range"},
            s={"type": "string"},
        )
        score = score_sample(
            json.dumps({"d": "2024-01-02T10:00", "b": "x", "r": "y", "s": "same"}),
            {"d": "2024-01-02", "b": "z", "r": "w", "s": "same"},
            schema,
        )
        got = {f.path: f for f in score.fields}
        assert got["d"].category == "exact"
        assert got["b"].category == ERROR and "RuntimeError: boom" in got["b"].error
        assert got["r"].category == ERROR and "outside [0, 1]" in got["r"].error
        # error fields are in no metric: 2 exact fields out of 2 counted
        assert score.counts.expected == 2 and score.f1["strict"] == 1.0
        assert not score.exact_match  # two values could not be judged
    finally:
        for name in ("test_date", "test_broken", "test_range"):
            COMPARATORS.remove(name)


def test_builtins_cannot_be_replaced_and_names_must_be_unique() -> None:
    with pytest.raises(ValueError, match="built in"):
        register_comparator("exact", lambda *a: 1.0, overwrite=True)
    register_comparator("test_once", lambda *a: 1.0)
    try:
        with pytest.raises(ValueError, match="already registered"):
            register_comparator("test_once", lambda *a: 0.0)
    finally:
        COMPARATORS.remove("test_once")


def test_identical_values_match_whatever_the_comparator() -> None:
    register_comparator("test_never", lambda *a: 0.0, overwrite=True)
    try:
        got = fields({"a": "x"}, {"a": "x"}, obj(a={"x-eval-compare": "test_never"}))
        assert got["a"].category == "exact" and got["a"].comparator == "test_never"
    finally:
        COMPARATORS.remove("test_never")


# -- transforms -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("chain", "gold", "output", "exact"),
    [
        (["lowercase"], "ABC", "abc", True),
        (["strip"], "abc", "  abc ", True),
        (["normalize_whitespace"], "a b c", "a   b\nc", True),
        (["sort_tokens"], "Smith John", "John Smith", True),
        ([{"round_digits": {"digits": 1}}], 3.14159, 3.1, True),
        ([{"round_digits": {"digits": 1}}], 3.14159, 3.2, False),
        ([], "Smith John", "John Smith", False),
    ],
)
def test_each_builtin_transform(chain, gold, output, exact) -> None:
    # case_sensitive + no whitespace normalization, so only the transform can make the values equal
    schema = obj(v={"x-eval-compare": "exact", "x-eval-transform": chain})
    got = fields({"v": output}, {"v": gold}, schema, case_sensitive=True, normalize_whitespace=False)["v"]
    assert (got.category == "exact") is exact
    assert got.predicted == output and got.expected == gold  # results keep the values as they were


def test_transform_chain_runs_left_to_right_and_on_scalar_array_elements() -> None:
    register_transform(
        "test_initial", lambda value, params: value[:1] if isinstance(value, str) else value, overwrite=True
    )
    try:
        # strip first, then take the first letter: " Xavier" -> "X"; the other order would give " "
        schema = obj(
            v={"x-eval-compare": "exact", "x-eval-transform": ["strip", "test_initial"]},
            tags={"type": "array", "items": {"type": "string"}, "x-eval-transform": ["lowercase"]},
        )
        got = fields(
            {"v": " Xavier", "tags": ["A", "b"]}, {"v": "Xenia", "tags": ["a", "B"]}, schema, case_sensitive=True
        )
        assert got["v"].category == "exact"
        assert got["tags"].score == 1.0  # Jaccard of {a, b} and {a, b}
    finally:
        TRANSFORMS.remove("test_initial")


def test_a_transform_that_empties_a_value_makes_it_absent() -> None:
    register_transform("test_na", lambda v, p: None if v == "N/A" else v, overwrite=True)
    try:
        schema = obj(v={"type": "string", "x-eval-transform": ["test_na"]}, w={"type": "string"})
        score = score_sample(json.dumps({"v": "N/A", "w": "x"}), {"w": "x"}, schema)
        assert [f.path for f in score.fields] == ["w"] and score.hallucination_rate == 0.0
    finally:
        TRANSFORMS.remove("test_na")


# -- skip -------------------------------------------------------------------------------------------


def test_skip_drops_the_field_from_every_metric_even_when_identical() -> None:
    schema = obj(
        id={"type": "string", "x-eval-skip": True},
        name={"type": "string"},
        meta={"type": "object", "x-eval-skip": True, "properties": {"a": {"type": "string"}}},
    )
    gold = {"id": "1", "name": "Ann", "meta": {"a": "x"}}
    for output in (gold, {"id": "2", "name": "Ann"}, {"name": "Ann", "meta": {"a": "y", "b": 1}}, {"name": "Ann"}):
        for fast in (True, False):
            walker = FieldWalker(ScoringOptions())
            walker.fast_paths = fast
            paths = [f.path for f in walker.walk(gold, output, compile_rules(schema).root)]
            assert paths == ["name"], (output, fast)


# -- alignment ----------------------------------------------------------------------------------------

ITEM = {"type": "object", "properties": {"sku": {"type": "string"}, "qty": {"type": "integer"}}}


def items_schema(align) -> dict:
    return obj(items={"type": "array", "items": ITEM, "x-eval-align": align})


GOLD = {"items": [{"sku": "A", "qty": 1}, {"sku": "B", "qty": 2}, {"sku": "C", "qty": 3}]}
SHUFFLED = {"items": [{"sku": "C", "qty": 3}, {"sku": "A", "qty": 1}, {"sku": "B", "qty": 5}]}


def test_ordered_alignment_penalizes_a_reordering() -> None:
    score = score_sample(json.dumps(SHUFFLED), GOLD, items_schema("ordered"))
    # pairs (A,C) (B,A) (C,B): only nothing matches except nothing -> all 6 fields incorrect
    assert sum(f.category == "exact" for f in score.fields) == 0


@pytest.mark.parametrize(
    "align", [{"match_by": "key_field", "key": "sku"}, {"key_field": {"key": ["sku"]}}, "hungarian"]
)
def test_key_field_and_hungarian_undo_a_reordering(align) -> None:
    score = score_sample(json.dumps(SHUFFLED), GOLD, items_schema(align))
    got = {f.path: f.category for f in score.fields}
    # A-A, B-B, C-C: 5 exact fields, B's qty 5 vs 2 -> 1 - 3/2 < 0 -> incorrect
    assert got == {
        "items[0].sku": "exact",
        "items[0].qty": "exact",
        "items[1].sku": "exact",
        "items[1].qty": "incorrect",
        "items[2].sku": "exact",
        "items[2].qty": "exact",
    }


def test_key_field_unmatched_elements_are_missed_and_spurious() -> None:
    output = {"items": [{"sku": "B", "qty": 2}, {"sku": "Z", "qty": 9}]}
    score = score_sample(json.dumps(output), GOLD, items_schema({"match_by": "key_field", "key": "sku"}))
    got = {f.path: f.category for f in score.fields}
    # B pairs with B; A and C are missed (2 fields each); Z is spurious, numbered after the gold (index 3)
    assert got == {
        "items[1].sku": "exact",
        "items[1].qty": "exact",
        "items[0].sku": "missed",
        "items[0].qty": "missed",
        "items[2].sku": "missed",
        "items[2].qty": "missed",
        "items[3].sku": "spurious",
        "items[3].qty": "spurious",
    }
    assert {f.origin for f in score.fields if f.category == "spurious"} == {"extra_element"}


def test_hungarian_maximizes_total_similarity_not_first_fit() -> None:
    gold = {"items": [{"sku": "A1", "qty": 1}, {"sku": "A1", "qty": 2}]}
    output = {"items": [{"sku": "A1", "qty": 2}, {"sku": "A2", "qty": 1}]}
    score = score_sample(json.dumps(output), gold, items_schema("hungarian"))
    got = {f.path: (f.category, f.predicted) for f in score.fields}
    # gold[1] is identical to output[0] and pairs first; gold[0] gets output[1]: sku A1 vs A2 is a partial string
    assert got["items[1].qty"] == ("exact", 2) and got["items[0].qty"] == ("exact", 1)
    assert got["items[0].sku"][1] == "A2"


def test_hungarian_on_scalar_arrays_scores_each_element() -> None:
    schema = obj(tags={"type": "array", "items": {"type": "string"}, "x-eval-align": "hungarian"})
    score = score_sample(json.dumps({"tags": ["delta", "alpah", "beta"]}), {"tags": ["alpha", "beta", "gamma"]}, schema)
    got = {f.path: (f.category, f.predicted) for f in score.fields}
    assert got["tags[1]"] == ("exact", "beta") and got["tags[0]"][1] == "alpah" and got["tags[2]"][1] == "delta"


def test_hungarian_falls_back_above_the_size_limit() -> None:
    gold = {"items": [{"sku": "alpha", "qty": 1}, {"sku": "bravo", "qty": 2}, {"sku": "same", "qty": 3}]}
    output = {"items": [{"sku": "same", "qty": 3}, {"sku": "bravo!", "qty": 2}, {"sku": "alpha!", "qty": 1}]}
    full = score_sample(json.dumps(output), gold, items_schema("hungarian"))
    limited = score_sample(json.dumps(output), gold, items_schema({"match_by": "hungarian", "max_cells": 3}))
    pred = {s: {f.path: f.predicted for f in score.fields} for s, score in (("full", full), ("limited", limited))}
    # both pair the identical element first; the 2 x 2 rest is over the limit of 3 cells -> in order
    assert pred["full"]["items[2].sku"] == pred["limited"]["items[2].sku"] == "same"
    assert pred["full"]["items[0].sku"] == "alpha!" and pred["limited"]["items[0].sku"] == "bravo!"


def test_min_similarity_leaves_dissimilar_pairs_unmatched() -> None:
    gold = {"items": [{"sku": "A", "qty": 1}]}
    output = {"items": [{"sku": "zzz", "qty": 9}]}
    paired = score_sample(json.dumps(output), gold, items_schema("hungarian"))
    split = score_sample(json.dumps(output), gold, items_schema({"match_by": "hungarian", "min_similarity": 0.5}))
    assert paired.counts.incorrect == 2 and split.counts.missed == 2 and split.counts.spurious == 2


# -- post-processors -------------------------------------------------------------------------------------

NULLABLE = obj(a={"type": ["string", "null"]}, b={"type": ["string", "null"]}, c={"type": ["string", "null"]})


def test_nulls_as_values_turns_null_omissions_and_hallucinations_into_wrong_values() -> None:
    gold = {"a": "x", "b": None, "c": None}
    output = {"a": None, "b": "y", "c": None}
    default = score_sample(json.dumps(output), gold, NULLABLE)
    assert {f.path: f.category for f in default.fields} == {"a": "missed", "b": "spurious"}
    valued = score_sample(
        json.dumps(output), gold, NULLABLE, options=ScoringOptions(post_processors=("nulls_as_values",))
    )
    got = {f.path: f for f in valued.fields}
    assert {p: f.category for p, f in got.items()} == {"a": "incorrect", "b": "incorrect"}
    assert got["a"].predicted_type == "null" and got["b"].expected_type == "null"
    assert valued.hallucination_rate == 0.0 and valued.omission_rate == 0.0


def test_nulls_as_absent_undoes_null_as_value_scoring() -> None:
    gold = {"a": "x", "b": None, "c": None}
    output = {"a": None, "b": "y", "c": None}
    as_value = ScoringOptions(null_equals_absent=False)
    raw = score_sample(json.dumps(output), gold, NULLABLE, options=as_value)
    assert {f.path: f.category for f in raw.fields} == {"a": "incorrect", "b": "incorrect", "c": "exact"}
    fixed = score_sample(
        json.dumps(output), gold, NULLABLE, options=as_value.replace(post_processors=("nulls_as_absent",))
    )
    default = score_sample(json.dumps(output), gold, NULLABLE)
    assert [(f.path, f.category) for f in fixed.fields] == [(f.path, f.category) for f in default.fields]


def test_propagate_errors_excludes_every_field_of_a_failing_comparator() -> None:
    def flaky(expected, predicted, params, options):
        if predicted == "bad":
            raise ValueError("cannot judge")
        return 0.0

    register_comparator("test_flaky", flaky, overwrite=True)
    try:
        schema = obj(a={"x-eval-compare": "test_flaky"}, b={"x-eval-compare": "test_flaky"}, c={"type": "string"})
        output, gold = {"a": "bad", "b": "y", "c": "z"}, {"a": "x", "b": "x", "c": "z"}
        plain = score_sample(json.dumps(output), gold, schema)
        assert [f.category for f in plain.fields] == [ERROR, "incorrect", "exact"]
        spread = score_sample(
            json.dumps(output), gold, schema, options=ScoringOptions(post_processors=("propagate_errors",))
        )
        assert [f.category for f in spread.fields] == [ERROR, ERROR, "exact"]
        assert spread.f1["strict"] == 1.0
    finally:
        COMPARATORS.remove("test_flaky")


def test_custom_post_processor() -> None:
    register_post_processor("test_drop_b", lambda fields, options: [f for f in fields if f.path != "b"], overwrite=True)
    try:
        score = score_sample(
            '{"a": "x", "b": "q"}', {"a": "x", "b": "y"}, None, options=ScoringOptions(post_processors=("test_drop_b",))
        )
        assert score.exact_match and [f.path for f in score.fields] == ["a"]
    finally:
        POST_PROCESSORS.remove("test_drop_b")


# -- configuration errors -----------------------------------------------------------------------------------


def test_config_errors_name_their_schema_path() -> None:
    schema = {
        "type": "object",
        "$defs": {"qty": {"type": "integer", "x-eval-compare": "nmeric"}},
        "properties": {
            "items": {"type": "array", "items": {"type": "object", "properties": {"qty": {"$ref": "#/$defs/qty"}}}},
            "name": {
                "type": "boolean",
                "x-eval-compare": {"numeric": {}},
                "x-eval-transform": ["strip", "strp"],
                "x-eval-skip": "yes",
                "x-eval-align": "hungarian",
                "x-eval-colour": 1,
            },
            "tags": {"type": "array", "x-eval-align": {"match_by": "key_field"}},
            "n": {"type": "number", "x-eval-compare": {"numeric": {"tolerance": {"rel": -1}}}},
        },
    }
    messages = [str(e) for e in compile_rules(schema).errors]
    assert (
        "$.properties.items.items.properties.qty.x-eval-compare: unknown comparator 'nmeric' (did you mean "
        "'numeric'?); known: exact, numeric, oneof, partial, semantic" in messages
    )
    expected_fragments = [
        "$.properties.name.x-eval-compare: comparator 'numeric' compares number/string values, but the field is "
        "declared boolean",
        "$.properties.name.x-eval-transform: [1]: unknown transform 'strp' (did you mean 'strip'?)",
        "$.properties.name.x-eval-skip: expected true or false, got 'yes'",
        "$.properties.name.x-eval-align: array alignment on a field declared boolean",
        "$.properties.tags.x-eval-align: key_field: key_field needs 'key'",
        "$.properties.n.x-eval-compare: numeric: tolerance 'rel' must be a non-negative number, got -1",
    ]
    for fragment in expected_fragments:
        assert any(m.startswith(fragment) for m in messages), (fragment, messages)
    # an unknown x-eval-* key is ignored with a warning, as struct-extract-eval ignores it
    assert [str(w) for w in compile_rules(schema).warnings] == [
        "$.properties.name.x-eval-colour: unknown key ignored; known: x-eval-compare, x-eval-transform, "
        "x-eval-skip, x-eval-align"
    ]
    with pytest.raises(EvalSchemaError) as raised:
        parse_eval_schema(schema)
    assert len(raised.value.errors) == len(messages) == 7
    with pytest.raises(EvalSchemaError):
        score_sample("{}", {}, schema)
    # the plugin scores anyway, with the defaults of the broken keys (the composite, not "numeric")
    lenient = score_sample('{"name": "Ann"}', {"name": "Ann Lee"}, schema, rule_errors="ignore")
    assert [(f.category, f.comparator) for f in lenient.fields] == [("partial", None)]


def test_rules_registered_after_first_use_are_picked_up() -> None:
    schema = obj(v={"x-eval-compare": "test_late"})
    assert compile_rules(schema).errors
    register_comparator("test_late", lambda *a: 1.0, overwrite=True)
    try:
        assert not compile_rules(schema).errors
    finally:
        COMPARATORS.remove("test_late")


# -- what eval schemas written for struct-extract-eval mean here ------------------------------------------


ADDRESS = {
    "type": "object",
    "x-eval-compare": "exact",
    "properties": {"city": {"type": "string"}, "zip": {"type": "string"}},
}


def test_a_comparator_on_an_object_compares_the_whole_value() -> None:
    schema = obj(addr=ADDRESS)
    # one field, not addr.city (equal) + addr.zip (composite 0.24): exact says the objects differ
    got = fields({"addr": {"city": "Paris", "zip": "75002"}}, {"addr": {"city": "Paris", "zip": "75001"}}, schema)
    assert list(got) == ["addr"]
    assert (got["addr"].category, got["addr"].score, got["addr"].comparator) == ("incorrect", 0.0, "exact")
    assert got["addr"].expected == {"city": "Paris", "zip": "75001"}
    got = fields({"addr": {"zip": "75001", "city": "Paris"}}, {"addr": {"city": "Paris", "zip": "75001"}}, schema)
    assert [(p, f.category) for p, f in got.items()] == [("addr", "exact")]  # key order is no difference
    # exact is type-strict inside too (Python's 1 == True is not JSON's)
    got = fields({"addr": {"city": 1}}, {"addr": {"city": True}}, schema)
    assert got["addr"].score == 0.0
    # missing: still one field (recall counts on the gold, whatever the output does)
    got = fields({}, {"addr": {"city": "Paris", "zip": "75001"}}, schema)
    assert [(p, f.category) for p, f in got.items()] == [("addr", "missed")]
    got = fields({"addr": {"city": "Paris"}}, {}, schema)
    assert [(p, f.category) for p, f in got.items()] == [("addr", "spurious")]


def test_a_comparator_on_an_array_of_objects_or_a_mixed_type_field_compares_the_whole_value() -> None:
    line = {"type": "object", "properties": {"sku": {"type": "string"}, "qty": {"type": "number"}}}
    schema = obj(
        lines={"type": "array", "items": line, "x-eval-compare": "exact"},
        x={"type": ["string", "object"], "x-eval-compare": "exact"},
    )
    gold = {"lines": [{"sku": "A", "qty": 1}], "x": "n/a"}
    got = fields({"lines": [{"sku": "A", "qty": 1}, {"sku": "B", "qty": 2}], "x": {"v": 1}}, gold, schema)
    # before: lines[0].* exact, lines[1].* spurious; x missed + x.v spurious (a structure mismatch)
    assert [(p, f.category) for p, f in got.items()] == [("lines", "incorrect"), ("x", "incorrect")]
    got = fields(
        {"lines": [{"sku": "A", "qty": 1.0}], "x": {"v": 1}}, {"lines": [{"sku": "A", "qty": 1}], "x": {"v": 1}}, schema
    )
    assert [(p, f.category) for p, f in got.items()] == [("lines", "exact"), ("x", "exact")]


def test_partial_on_an_object_keeps_the_default_field_by_field_walk() -> None:
    schema = obj(
        addr={
            "type": "object",
            "x-eval-compare": "partial",
            "properties": {"city": {"type": "string"}, "zip": {"type": "string"}},
        }
    )
    got = fields({"addr": {"city": "Paris", "zip": "75002"}}, {"addr": {"city": "Paris", "zip": "75001"}}, schema)
    assert list(got) == ["addr.city", "addr.zip"]


def test_rules_on_items_of_a_scalar_array_score_each_element_in_order() -> None:
    exact = obj(tags={"type": "array", "items": {"type": "string", "x-eval-compare": "exact"}})
    got = fields({"tags": ["a", "C", "b", "x"]}, {"tags": ["a", "c", "b"]}, exact)
    # in order: a=a, "C" vs "c" under exact, b=b, x is extra (not one Jaccard field "tags")
    assert [(p, f.category) for p, f in got.items()] == [
        ("tags[0]", "exact"),
        ("tags[1]", "incorrect"),
        ("tags[2]", "exact"),
        ("tags[3]", "spurious"),
    ]
    assert [(p, f.category) for p, f in fields({}, {"tags": ["a", "b"]}, exact).items()] == [
        ("tags[0]", "missed"),
        ("tags[1]", "missed"),
    ]
    lower = obj(
        tags={
            "type": "array",
            "items": {"type": "string", "x-eval-compare": "exact", "x-eval-transform": ["lowercase"]},
        }
    )
    assert [f.category for f in fields({"tags": ["A", "b"]}, {"tags": ["a", "B"]}, lower).values()] == ["exact"] * 2
    skip = obj(tags={"type": "array", "items": {"type": "string", "x-eval-skip": True}}, n={"type": "number"})
    assert list(fields({"tags": ["z"], "n": 1}, {"tags": ["a", "b"], "n": 1}, skip)) == ["n"]
    # a comparator on the array itself still judges it whole
    whole = obj(
        tags={"type": "array", "x-eval-compare": "exact", "items": {"type": "string", "x-eval-compare": "exact"}}
    )
    assert [(p, f.category) for p, f in fields({"tags": ["b", "a"]}, {"tags": ["a", "b"]}, whole).items()] == [
        ("tags", "incorrect")
    ]


def test_numbers_are_equal_within_an_absolute_epsilon() -> None:
    # relative 1e-6 would call these equal (1/123456789 < 1e-6); absolute 1e-6 does not
    numeric = obj(n={"type": "number", "x-eval-compare": "numeric"})
    assert fields({"n": 123456790}, {"n": 123456789}, numeric)["n"].score == 0.0
    assert fields({"n": 0.30000000000000004}, {"n": 0.3}, numeric)["n"].score == 1.0  # float noise: 5.6e-17
    assert fields({"n": 0.30000000000000004}, {"n": 0.3}, numeric, float_epsilon=0.0)["n"].score == 0.0
    default = fields({"n": 123456790}, {"n": 123456789}, obj(n={"type": "number"}))["n"]
    assert not default.equal and default.score == pytest.approx(1 - 1 / 123456789)


@pytest.mark.parametrize(
    ("tolerance", "gold", "output", "score"),
    [
        ({"abs": 0.5, "rel": 0.001}, 100, 100.4, 0.0),  # abs holds (0.4), rel does not (0.004): both must
        ({"abs": 0.5, "rel": 0.01}, 100, 100.4, 1.0),
        ({"abs": 0.1, "rel": 0.01}, 100, 100.4, 0.0),  # rel holds, abs does not
        ({"rel": 0.1}, 0, 0.05, 1.0),  # gold 0: |diff| / 1 <= rel
        ({"rel": 0.1}, 0, 0.2, 0.0),
        ({"rel": 0.1}, 3, 3.3, 1.0),  # 0.2999.../3 <= 0.1 (0.1 * 3 would be 0.30000000000000004)
        ({"rel": 0.01}, -200, -202, 1.0),
    ],
)
def test_numeric_tolerances_combine_as_in_struct_extract_eval(tolerance, gold, output, score) -> None:
    schema = obj(t={"type": "number", "x-eval-compare": {"numeric": {"tolerance": tolerance}}})
    assert fields({"t": output}, {"t": gold}, schema)["t"].score == score


def test_numeric_combine_any_accepts_either_tolerance() -> None:
    schema = obj(
        t={"type": "number", "x-eval-compare": {"numeric": {"tolerance": {"abs": 0.5, "rel": 0.001}, "combine": "any"}}}
    )
    assert fields({"t": 100.4}, {"t": 100}, schema)["t"].score == 1.0  # abs holds
    assert fields({"t": 100.6}, {"t": 100}, schema)["t"].score == 0.0  # neither: 0.6 > 0.5, 0.006 > 0.001
    bad = obj(t={"type": "number", "x-eval-compare": {"numeric": {"combine": "some"}}})
    assert [str(e) for e in compile_rules(bad).errors] == [
        "$.properties.t.x-eval-compare: numeric: 'combine' must be 'all' or 'any', got 'some'"
    ]


def test_numeric_on_a_string_field_reads_the_numbers() -> None:
    schema = obj(v={"type": "string", "x-eval-compare": {"numeric": {"tolerance": {"abs": 0.01}}}})
    assert not compile_rules(schema).errors
    assert fields({"v": "12.5"}, {"v": "12.50"}, schema)["v"].score == 1.0
    assert fields({"v": "12.6"}, {"v": "12.50"}, schema)["v"].score == 0.0
    assert fields({"v": "n/a"}, {"v": "12.50"}, schema)["v"].score == 0.0


def test_key_field_keys_are_type_aware() -> None:
    schema = obj(
        flags={
            "type": "array",
            "x-eval-align": {"match_by": "key_field", "key": "flag"},
            "items": obj(flag={"type": "boolean"}, v={"type": "number"}),
        }
    )
    got = fields({"flags": [{"flag": "TRUE", "v": 1}]}, {"flags": [{"flag": True, "v": 1}]}, schema)
    # true and "TRUE" are different keys: the gold element is missed, the output's is spurious
    assert [(p, f.category) for p, f in got.items()] == [
        ("flags[0].flag", "missed"),
        ("flags[0].v", "missed"),
        ("flags[1].flag", "spurious"),
        ("flags[1].v", "spurious"),
    ]
    # 1 and 1.0 are the same JSON number: they pair
    by_id = obj(
        rows={
            "type": "array",
            "x-eval-align": {"match_by": "key_field", "key": "id"},
            "items": obj(id={"type": "number"}, v={"type": "string"}),
        }
    )
    got = fields(
        {"rows": [{"id": 2.0, "v": "b"}, {"id": 1.0, "v": "a"}]},
        {"rows": [{"id": 1, "v": "a"}, {"id": 2, "v": "b"}]},
        by_id,
    )
    assert {f.category for f in got.values()} == {"exact"} and len(got) == 4


def test_min_similarity_at_the_threshold_does_not_depend_on_element_order() -> None:
    # two fields per element, one equal and one not: similarity exactly 0.5 = min_similarity -> kept,
    # whether the pair sits on the diagonal (where the order bonus is added) or not
    schema = obj(
        xs={
            "type": "array",
            "x-eval-align": {"hungarian": {"min_similarity": 0.5}},
            "items": obj(
                a={"type": "string", "x-eval-compare": "exact"}, b={"type": "string", "x-eval-compare": "exact"}
            ),
        }
    )
    gold = {"xs": [{"a": "p", "b": "q"}, {"a": "r", "b": "s"}]}
    on_diagonal = fields({"xs": [{"a": "p", "b": "X"}, {"a": "r", "b": "Y"}]}, gold, schema)
    off_diagonal = fields({"xs": [{"a": "r", "b": "Y"}, {"a": "p", "b": "X"}]}, gold, schema)
    expected = [("xs[0].a", "exact"), ("xs[0].b", "incorrect"), ("xs[1].a", "exact"), ("xs[1].b", "incorrect")]
    assert [(p, f.category) for p, f in on_diagonal.items()] == expected
    assert [(p, f.category) for p, f in off_diagonal.items()] == expected


def test_their_alignment_spellings() -> None:
    def tags(align) -> dict:
        return obj(
            tags={"type": "array", "x-eval-align": align, "items": {"type": "string", "x-eval-compare": "exact"}}
        )

    gold, output = {"tags": ["x", "y"]}, {"tags": ["y", "x"]}
    assert [f.category for f in fields(output, gold, tags({"ordered": True})).values()] == ["incorrect"] * 2
    assert [f.category for f in fields(output, gold, tags({"ordered": False, "match_by": "hungarian"})).values()] == [
        "exact"
    ] * 2
    ruleset = compile_rules(tags({"ordered": True, "match_by": "hungarian"}))  # ordered wins, as there
    assert ruleset.root.properties["tags"].rule.align == "ordered" and not ruleset.errors
    assert [str(w) for w in ruleset.warnings] == [
        "$.properties.tags.x-eval-align: ['match_by'] ignored: 'ordered': true aligns in order"
    ]
    assert [str(e) for e in compile_rules(tags({"ordered": False})).errors] == [
        "$.properties.tags.x-eval-align: 'ordered': false needs 'match_by' (key_field or hungarian)"
    ]
    assert [str(e) for e in compile_rules(tags({"ordered": "yes"})).errors] == [
        "$.properties.tags.x-eval-align: 'ordered' must be true or false, got 'yes'"
    ]


@pytest.mark.parametrize(
    ("to", "gold", "output", "exact"),
    [
        ("float", "12", 12, True),  # 12.0 == 12.0
        ("int", 12, 12.7, True),  # int(12.7) is 12
        ("int", "12.5", 12, False),  # "12.5" is no int: it stays a string
        ("str", 7, "7", True),
        ("bool", "TRUE", True, True),
        ("bool", " 0 ", False, True),
        ("bool", "yes", True, False),  # not a boolean token: stays "yes"
    ],
)
def test_type_convert_transform(to, gold, output, exact) -> None:
    schema = obj(v={"x-eval-compare": "exact", "x-eval-transform": [{"type_convert": {"to": to}}]})
    assert fields({"v": output}, {"v": gold}, schema)["v"].equal is exact
    assert [str(e) for e in compile_rules(obj(v={"x-eval-transform": [{"type_convert": {"to": "date"}}]})).errors] == [
        "$.properties.v.x-eval-transform: [0] type_convert: needs {'to': one of float, int, str, bool}, "
        "got {'to': 'date'}"
    ]


def test_unknown_keys_and_parameters_warn_with_their_path_and_the_rule_still_applies() -> None:
    schema = obj(
        t={
            "type": "number",
            "x-eval-note": "checked",
            "x-eval-compare": {"numeric": {"tolerance": {"abs": 1, "pct": 2}, "unit": "K"}},
        },
        s={
            "type": "string",
            "x-eval-compare": {"exact": {"strict": True}},
            "x-eval-transform": [{"strip": {"chars": "x"}}],
        },
    )
    ruleset = compile_rules(schema)
    assert not ruleset.errors
    assert sorted(str(w) for w in ruleset.warnings) == [
        "$.properties.s.x-eval-compare: exact: unknown parameter(s) ['strict'] ignored; it takes none",
        "$.properties.s.x-eval-transform: [0] strip: unknown parameter(s) ['chars'] ignored; it takes none",
        "$.properties.t.x-eval-compare: numeric: unknown parameter(s) ['unit'] ignored; known: combine, tolerance",
        "$.properties.t.x-eval-compare: numeric: unknown tolerance key(s) ['pct'] ignored; known: abs, rel",
        "$.properties.t.x-eval-note: unknown key ignored; known: x-eval-compare, x-eval-transform, x-eval-skip, "
        "x-eval-align",
    ]
    with pytest.warns(EvalSchemaWarning) as record:
        parse_eval_schema(schema)
    assert sorted(str(w.message) for w in record) == sorted(str(w) for w in ruleset.warnings)
    assert {w.filename for w in record} == {__file__}  # pointing at the caller
    with pytest.warns(EvalSchemaWarning):
        score = score_sample('{"t": 301, "s": " a"}', {"t": 300, "s": "a"}, schema)
    # the rules apply: |301 - 300| <= abs 1; strip and exact
    assert [(f.path, f.category, f.comparator) for f in score.fields] == [
        ("t", "exact", "numeric"),
        ("s", "exact", "exact"),
    ]


def test_transforms_on_objects_or_arrays_of_objects_are_reported_and_the_field_scored_as_without_them() -> None:
    # struct-extract-eval lets both through and they do nothing there: here they are errors naming the path
    item = {"type": "object", "properties": {"a": {"type": "string"}}}
    schema = {
        "type": "object",
        "properties": {
            "o": {**item, "x-eval-transform": ["sort_tokens"]},
            "t": {"type": "array", "items": item, "x-eval-transform": ["sort_tokens"]},
            "s": {"type": "array", "items": {"type": "string"}, "x-eval-transform": ["sort_tokens"]},
        },
    }
    assert [str(e) for e in compile_rules(schema).errors] == [
        "$.properties.o.x-eval-transform: transforms apply to scalar fields and arrays of scalars, not to objects",
        "$.properties.t.x-eval-transform: transforms apply to scalar fields and arrays of scalars, not to arrays of "
        "objects (put them on the objects' fields)",
    ]
    ann = "John Smith"
    scored = score_sample(
        json.dumps({"o": {"a": ann}, "t": [{"a": ann}], "s": [ann]}),
        {"o": {"a": "Smith John"}, "t": [{"a": "Smith John"}], "s": ["Smith John"]},
        schema,
        rule_errors="ignore",
    )
    # the array of scalars has its tokens sorted; the objects' fields are compared as without the transform
    assert [(f.path, f.category) for f in scored.fields] == [("o.a", "partial"), ("t[0].a", "partial"), ("s", "exact")]
