"""The compiled schema (``compile_schema``) and the validators of ``scoring/schema.py``, case by case: what a user
would see if its merge budget, its error limit, its caches or its bounded regex engine were different. Every
expected value is worked out by hand, the arithmetic in a comment."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pytest_extractbench.scoring import FieldWalker, ScoringOptions
from pytest_extractbench.scoring import schema as schema_module
from pytest_extractbench.scoring.schema import check_schema, compile_schema, get_validator, validation_errors, validity

DRAFT3 = "http://json-schema.org/draft-03/schema#"


def _budget_schema(empty_branches: int) -> dict[str, Any]:
    # One list of the same empty dict: building it is cheap, and each branch is still merged (and counted) once.
    return {"anyOf": [{}] * empty_branches + [{"properties": {"z": {"type": "string"}}}]}


def test_the_merge_step_that_types_a_property_is_the_50000th_and_the_last_allowed() -> None:
    # Steps: the root is merge 1, the K empty branches merges 2..K+1, the last branch merge K+2, and inside it z's
    # subschema (compiled while the branch is merged) merge K+3. With K = 49,997 that is merge 50,000: the last
    # the budget of 50,000 allows, so z is typed.
    z = compile_schema(_budget_schema(49_997)).child("z")
    assert z is not None and z.types == {"string"}


def test_past_50000_merge_steps_a_property_is_declared_but_left_untyped() -> None:
    # K = 49,998: the branch declaring z is merge 50,000 (z gets its node), z's own subschema would be merge 50,001:
    # over the budget, left out, so z is declared with no type.
    node = compile_schema(_budget_schema(49_998))
    z = node.child("z")
    assert z is not None and (z.types, z.annotations) == (frozenset(), {})


def test_a_const_without_a_type_gives_its_value_s_type() -> None:
    node = compile_schema({"properties": {"a": {"const": "x"}, "b": {"const": 3}, "c": {"const": None}}})
    # "x" is a string, 3 a number (integers fold into "number"), None null; nothing is declared
    assert [(k, v.types, v.declared_types) for k, v in node.properties.items()] == [
        ("a", {"string"}, frozenset()),
        ("b", {"number"}, frozenset()),
        ("c", {"null"}, frozenset()),
    ]


def test_a_walk_over_a_schema_compiled_without_rules_compares_with_the_defaults() -> None:
    # compile_schema and FieldWalker are both public: a node that never went through compile_rules has no rule
    node = compile_schema({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}})
    fields = FieldWalker(ScoringOptions()).walk({"a": "abcd", "b": "x"}, {"a": "abcd", "b": "y"}, node)
    # a: the same text, 1.0 exact; b: "x" against "y": no shared word (0.5 * 0), edit distance 1 of 1 (0.3 * 0),
    # neither contains the other (0.2 * 0): 0.0
    assert [(f.path, f.score, f.category) for f in fields] == [("a", 1.0, "exact"), ("b", 0.0, "incorrect")]


def _sixty_wrong_values() -> dict[str, int]:
    # keys k00..k59 sort in their numeric order, so the first 50 listed are k00..k49
    return {f"k{i:02d}": 0 for i in range(60)}


def test_an_output_with_60_errors_lists_the_first_50() -> None:
    fast = validation_errors(_sixty_wrong_values(), {"additionalProperties": {"type": "string"}})
    assert fast == [f'$.k{i:02d}: 0 is not of type "string"' for i in range(50)]
    # a draft-03 schema (jsonschema-rs does not know it): the reference validator's wording, the same limit
    reference = validation_errors(
        _sixty_wrong_values(), {"$schema": DRAFT3, "additionalProperties": {"type": "string"}}
    )
    assert reference == [f"$.k{i:02d}: 0 is not of type 'string'" for i in range(50)]


def test_the_reference_validator_runs_an_ecma_regex_python_s_re_cannot_compile(
    emptied_cache: Callable[[dict[Any, Any]], None],
) -> None:
    # the bounded class is made at a validator class's first use: start from none, so this test makes it
    emptied_cache(schema_module._bounded_classes)
    validator = get_validator({"pattern": "^\\p{L}+$"})  # \p{L}: any letter (Python's re: "bad escape \p")
    assert list(validator.iter_errors("é")) == []
    assert [e.message for e in validator.iter_errors("1")] == ["'1' does not match '^\\\\p{L}+$'"]


def test_a_schema_s_validators_are_made_once_and_an_entry_of_a_dead_schema_is_not_reused() -> None:
    schema = {"type": "string"}
    assert get_validator(schema) is get_validator(schema)
    # another schema that once had this id (it was freed): its entry must not answer for this one
    other = {"type": "number"}
    stale = schema_module._validator_entry(other, True)
    fresh = {"type": "string"}
    schema_module._validators[(id(fresh), True)] = stale
    try:
        assert get_validator(fresh).schema is fresh
        assert validation_errors("x", fresh) == []  # the stale entry would say 'x' is not a number
    finally:
        schema_module._validators.pop((id(fresh), True), None)


def test_formats_are_not_checked_by_the_reference_validator_when_turned_off() -> None:
    draft3 = {"$schema": DRAFT3, "type": "string", "format": "date"}  # draft-03: the reference validator answers
    assert validation_errors("not a date", draft3, validate_formats=False) == []
    assert validation_errors("not a date", draft3) == ["$: 'not a date' is not a 'date'"]


def test_a_schema_jsonschema_rs_accepts_is_not_meta_validated_again_by_jsonschema() -> None:
    # draft-04 with a repeated enum item: jsonschema-rs accepts it (harmless for extraction), jsonschema's meta
    # schema would say "[1, 1] has non-unique elements"
    assert check_schema({"$schema": "http://json-schema.org/draft-04/schema#", "enum": [1, 1]}) == []


def test_errors_are_listed_by_path_then_message_whatever_order_jsonschema_rs_finds_them() -> None:
    # jsonschema-rs reports extra keys in the output's order (b, then a); the listing is sorted by path: a, b
    assert validation_errors({"b": 0, "a": 0}, {"additionalProperties": {"type": "string"}}) == [
        '$.a: 0 is not of type "string"',
        '$.b: 0 is not of type "string"',
    ]
    # two errors at one path: jsonschema-rs finds minLength first; by message "does..." comes before "is..."
    assert validation_errors("bb", {"type": "string", "minLength": 5, "pattern": "^a"}) == [
        '$: "bb" does not match "^a"',
        '$: "bb" is shorter than 5 characters',
    ]


def test_validity_checks_formats_unless_told_not_to() -> None:
    # "not a date" is a string, so only the format can fail it: checked by default, passed when turned off
    dated = {"type": "string", "format": "date"}
    assert validity("not a date", dated) is False
    assert validity("not a date", dated, validate_formats=False) is True
    assert validity("2026-11-28", dated) is True
