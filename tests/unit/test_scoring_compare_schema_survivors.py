"""Leaf comparison (``compare``) and the compiled schema with its validators (``schema``), case by case: the values a
user would see if one of their comparisons, constants or defaults were different. Every expected value is
worked out by hand, the arithmetic in a comment."""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

import pytest

from pytest_extractbench.scoring import schema as schema_module
from pytest_extractbench.scoring.compare import (
    ElementPair,
    compare_scalars,
    jaccard,
    list_element_pairs,
    scalar_key,
    similarity_paired_elements,
    types_agree,
)
from pytest_extractbench.scoring.options import ScoringOptions
from pytest_extractbench.scoring.schema import (
    SchemaNode,
    check_schema,
    compile_schema,
    get_validator,
    json_type,
    regex_search,
    unusable_schema,
    validation_errors,
)

OPTIONS = ScoringOptions()

# --- compare.py ---


def test_a_float_keeps_its_fraction_in_an_array_and_an_integral_float_is_its_int() -> None:
    assert scalar_key(2.5, OPTIONS) == 2.5 and type(scalar_key(2.5, OPTIONS)) is float
    assert scalar_key(2.0, OPTIONS) == 2 and type(scalar_key(2.0, OPTIONS)) is int
    # {2.5} against {2}: nothing shared of a union of 2 -> 0; {2.0} against {2}: the same number -> 1
    assert tuple(jaccard([2.5], [2], OPTIONS)) == (0.0, False, None)
    assert tuple(jaccard([2.0], [2], OPTIONS)) == (1.0, True, None)


def test_numbers_and_null_in_an_array_are_not_the_texts_that_spell_them() -> None:
    # 2.5 against "2.5" and null against "None" (case kept, so "None" stays "None"): 0 shared of a union of 2
    assert tuple(jaccard([2.5], ["2.5"], OPTIONS)) == (0.0, False, None)
    assert tuple(jaccard([None], ["None"], ScoringOptions(case_sensitive=True))) == (0.0, False, None)
    assert scalar_key(None, OPTIONS) is None


def test_a_value_that_is_no_json_scalar_is_keyed_by_its_repr() -> None:
    assert scalar_key([1, 2], OPTIONS) == "[1, 2]"
    assert scalar_key({"a": 1}, OPTIONS) == "{'a': 1}"
    # arrays of arrays: [1] and [2] are different elements, [1] and [1] the same: 0/2 and 1/1
    assert tuple(jaccard([[1]], [[2]], OPTIONS)) == (0.0, False, None)
    assert tuple(jaccard([[1]], [[1]], OPTIONS)) == (1.0, True, None)


def test_unpaired_elements_are_listed_with_nothing_on_the_other_side() -> None:
    pairs = list_element_pairs(["a", "zzzz"], ["a", "qqqq"], ScoringOptions(list_similarity=0.8))
    # "zzzz" and "qqqq" share no character (similarity 0 < 0.8): one missed, one spurious, neither with a similarity
    assert [tuple(p) for p in pairs] == [
        ("exact", "a", "a", 1.0),
        ("missed", "zzzz", None, None),
        ("spurious", None, "qqqq", None),
    ]
    assert ElementPair("missed").predicted is None and ElementPair("missed").similarity is None


def test_arrays_holding_objects_are_not_listed_element_by_element() -> None:
    similar = ScoringOptions(list_similarity=0.5)
    assert similarity_paired_elements([{"a": 1}], [{"a": 2}], "incorrect", similar) is None
    assert similarity_paired_elements(["x"], [["x"]], "incorrect", similar) is None


def test_a_text_that_reads_as_infinity_is_no_number() -> None:
    # "inf" parses as a float but is not finite: no number, so it neither matches a gold 0 nor passes for a number
    assert tuple(compare_scalars(0, "inf", OPTIONS)) == (0.0, False, None)
    assert tuple(compare_scalars(0, "-Infinity", OPTIONS)) == (0.0, False, None)
    assert types_agree("number", "inf", ScoringOptions(strict_types=False)) is False
    assert types_agree("number", "12", ScoringOptions(strict_types=False)) is True


def test_a_gold_of_a_type_json_does_not_have_is_equal_to_what_it_compares_equal_with() -> None:
    # a Decimal (as a reader of a database or a spreadsheet may give) is no str, bool, int or float: it scores 1 when
    # it compares equal with the prediction (Decimal("2") == 2) and 0 otherwise
    assert tuple(compare_scalars(Decimal("2"), 2, OPTIONS)) == (1.0, True, None)
    assert tuple(compare_scalars(Decimal("2"), 3, OPTIONS)) == (0.0, False, None)
    # a null gold (null a value of its own) against a text: different
    assert tuple(compare_scalars(None, "x", OPTIONS)) == (0.0, False, None)


# --- schema.py ---


def test_a_schema_node_names_its_types_and_properties_and_finds_a_child() -> None:
    node = compile_schema({"type": ["object", "null"], "properties": {"b": {"type": "integer"}, "a": True}})
    assert repr(node) == "SchemaNode(types=['null', 'object'], properties=['a', 'b'])"
    child = node.child("b")
    assert child is not None and child.declared_types == {"integer"} and child.types == {"number"}
    assert node.child("c") is None


def test_a_boolean_subschema_is_an_unconstrained_node() -> None:
    node = compile_schema({"type": "object", "properties": {"a": True, "b": False}, "items": True})
    for key in ("a", "b"):
        child = node.child(key)
        assert isinstance(child, SchemaNode) and (child.types, child.properties, child.items) == (frozenset(), {}, None)


def test_a_property_declared_by_two_branches_merges_what_both_say() -> None:
    schema = {
        "allOf": [
            {"type": "object", "properties": {"a": {"type": "string"}}, "items": {"type": "string"}},
            {"properties": {"a": {"maxLength": 5, "x-eval-compare": "exact"}}, "items": {"minLength": 1}},
        ]
    }
    node = compile_schema(schema)
    a = node.child("a")
    assert a is not None and a.types == {"string"}
    assert a.annotations == {"maxLength": 5, "x-eval-compare": "exact"}
    assert node.items is not None and node.items.types == {"string"} and node.items.annotations == {"minLength": 1}


def test_schemas_are_compiled_once_and_the_cache_is_emptied_when_it_reaches_4096(
    emptied_cache: Callable[[dict[Any, Any]], None],
) -> None:
    emptied_cache(schema_module._compiled)
    schemas = [{"type": "object", "title": str(i)} for i in range(4097)]
    first = compile_schema(schemas[0])
    assert compile_schema(schemas[0]) is first  # compiled once per schema object
    for schema in schemas[1:4096]:
        compile_schema(schema)
    assert len(schema_module._compiled) == 4096
    # the 4097th finds 4096 entries and empties the cache first
    compile_schema(schemas[4096])
    assert list(schema_module._compiled) == [id(schemas[4096])]


def test_a_value_of_no_json_type_is_named_by_its_python_type() -> None:
    assert json_type(Decimal("1")) == "Decimal"
    assert json_type((1, 2)) == "tuple"


def test_a_regex_that_does_not_match_answers_false() -> None:
    assert regex_search("^a", "ba") is False
    assert regex_search("a", "ba") is True


def test_pattern_properties_in_the_reference_validator_check_only_matching_keys_of_objects() -> None:
    validator = get_validator({"patternProperties": {"^a": {"type": "string"}}})
    assert list(validator.iter_errors(5)) == []  # not an object: nothing to check
    errors = list(validator.iter_errors({"ab": 1, "b": 1}))  # only "ab" matches ^a
    assert [(e.json_path, e.message) for e in errors] == [("$.ab", "1 is not of type 'string'")]


@pytest.mark.parametrize(
    ("schema", "instance", "message"),
    [
        (
            {"patternProperties": {"^a": {}}, "additionalProperties": False},
            {"a1": 0, "b": 1},
            "'b' does not match any of the regexes: '^a'",
        ),
        (
            {"patternProperties": {"^a": {}}, "additionalProperties": False},
            {"c": 0, "b": 1},
            "'b', 'c' do not match any of the regexes: '^a'",
        ),
        (
            {"properties": {"a": {}}, "additionalProperties": False},
            {"a": 0, "b": 1},
            "Additional properties are not allowed ('b' was unexpected)",
        ),
        (
            {"properties": {"a": {}}, "additionalProperties": False},
            {"c": 0, "b": 1},
            "Additional properties are not allowed ('b', 'c' were unexpected)",
        ),
    ],
)
def test_the_reference_validator_words_extra_keys_as_jsonschema_does(
    schema: dict, instance: dict, message: str
) -> None:
    assert [e.message for e in get_validator(schema).iter_errors(instance)] == [message]


def test_a_schema_of_a_draft_the_fast_validator_does_not_know_is_checked_by_the_reference() -> None:
    draft3 = {"$schema": "http://json-schema.org/draft-03/schema#", "type": "object"}
    assert validation_errors("x", draft3) == ["$: 'x' is not of type 'object'"]
    assert validation_errors({}, draft3) == []


def test_a_schema_that_is_neither_an_object_nor_a_boolean_is_refused() -> None:
    assert check_schema(5) == ["a schema must be an object, got number"]
    assert check_schema([{}]) == ["a schema must be an object, got array"]


@pytest.mark.parametrize("name", ["_patterns", "_validators"])
def test_the_regex_and_validator_caches_are_emptied_when_they_reach_4096(
    name: str, emptied_cache: Callable[[dict[Any, Any]], None]
) -> None:
    cache = getattr(schema_module, name)
    emptied_cache(cache)
    schemas = [{"type": "string", "pattern": f"^a{i}$"} for i in range(4097)]
    for schema in schemas[:4096]:
        if name == "_patterns":
            regex_search(schema["pattern"], "x")
        else:
            validation_errors("x", schema)
    assert len(cache) == 4096
    # the 4097th finds 4096 entries and empties the cache first
    if name == "_patterns":
        assert regex_search(schemas[4096]["pattern"], "a4096") is True
        assert list(cache) == ["^a4096$"]
    else:
        assert validation_errors("a4096", schemas[4096]) == []
        assert list(cache) == [(id(schemas[4096]), True)]


def test_why_a_well_formed_schema_cannot_be_applied() -> None:
    assert unusable_schema({"type": "string", "pattern": "("}) == [
        'a regular expression in it cannot be used: "(" is not a "regex"'
    ]
    outside = "a $ref points outside the schema (remote and file references are not fetched): "
    remote = unusable_schema({"$ref": "http://example.com/s.json"})
    assert len(remote) == 1 and remote[0].startswith(outside + "Resource 'http://example.com/s.json' is not present")
    # a relative file: only "not present in a registry" says it (nothing was refused by our retriever)
    assert unusable_schema({"$ref": "other.json"}) == [
        outside
        + "Resource 'other.json' is not present in a registry and retrieving it failed: No base URI is available"
    ]
    unresolved = "a $ref does not resolve inside the schema: "
    assert unusable_schema({"$ref": "#/$defs/missing"}) == [unresolved + "Pointer '/$defs/missing' does not exist"]
    assert unusable_schema({"$ref": "#foo"}) == [unresolved + "Anchor 'foo' does not exist"]
    # what jsonschema-rs does not support for another reason is left to the reference validator
    assert unusable_schema({"$schema": "http://json-schema.org/draft-03/schema#", "type": "object"}) == []
    assert unusable_schema({"type": "object"}) == []
    assert unusable_schema(True) == []


def test_a_message_is_clipped_to_300_characters_with_an_ellipsis() -> None:
    assert schema_module._clip("a" * 300) == "a" * 300  # exactly the limit: kept whole
    assert schema_module._clip("a" * 301) == "a" * 299 + "…"  # 299 characters and the ellipsis: 300
    # jsonschema-rs's message for a long const is clipped the same way: "$: " and 300 characters
    (error,) = validation_errors("x", {"const": "y" * 400})
    assert len(error) == 3 + 300 and error.startswith('$: "yyy') and error.endswith("y…")


def test_what_stops_the_reference_validator_is_reported_as_one_error() -> None:
    draft3 = "http://json-schema.org/draft-03/schema#"
    nested: list[object] = []
    for _ in range(3000):  # far past Python's recursion limit of 1000
        nested = [nested]
    assert validation_errors(nested, {"$schema": draft3, "items": {"$ref": "#"}}) == [
        "$: output is nested too deeply to validate"
    ]
    assert validation_errors("x", {"type": "string", "pattern": "("}) == [
        '$: pattern \'(\' is not a valid regular expression: "(" is not a "regex"'
    ]
    assert validation_errors("x", {"type": 5}) == [
        "$: schema could not be applied: TypeError: 'int' object is not iterable"
    ]


def test_the_cache_of_error_paths_is_emptied_when_it_reaches_4096(
    emptied_cache: Callable[[dict[Any, Any]], None],
) -> None:
    emptied_cache(schema_module._rs_paths)
    for i in range(4096):
        assert schema_module._rs_path(["items", i]) == f"$.items[{i}]"
    assert len(schema_module._rs_paths) == 4096
    # the 4097th finds 4096 entries and empties the cache first
    assert schema_module._rs_path(["items", 4096, "qty"]) == "$.items[4096].qty"
    assert list(schema_module._rs_paths) == [("items", 4096, "qty")]


def test_a_reference_that_does_not_resolve_adds_nothing_to_its_node() -> None:
    # the $ref is left out; what the node says itself stays
    node = compile_schema({"properties": {"a": {"$ref": "#/$defs/missing", "type": "string", "minLength": 1}}})
    a = node.child("a")
    assert a is not None and (a.types, a.properties, a.items) == ({"string"}, {}, None)
    assert a.annotations == {"minLength": 1}
