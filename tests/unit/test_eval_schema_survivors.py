"""Eval-schema helpers at their edges, each expected problem and annotation worked out by hand: type lists, arrays
of objects without properties, the ``missing`` default, an ignored key's index, untyped nodes, and values that
are not what the node declares."""

from __future__ import annotations

from pytest_extractbench.scoring.eval_schema import annotate_defaults, validate_gold


def test_a_type_list_of_scalars_gets_the_default_comparator() -> None:
    schema = {
        "type": "object",
        "properties": {
            "note": {"type": ["string", "null"]},
            "tags": {"type": ["array", "null"], "items": {"type": "string"}},
            "odd": {"type": "object"},  # an object: no comparator, whatever its (missing) properties
        },
    }
    out = annotate_defaults(schema)
    assert out["properties"]["note"]["x-eval-compare"] == "partial"
    assert out["properties"]["tags"]["x-eval-compare"] == "partial"  # an array of scalars
    assert out["properties"]["tags"]["items"]["x-eval-compare"] == "partial"
    assert "x-eval-compare" not in out["properties"]["odd"]
    assert "x-eval-compare" not in out  # the root object


def test_an_array_of_objects_is_aligned_not_compared_even_without_properties() -> None:
    schema = {"type": "array", "items": {"type": "object"}}
    assert annotate_defaults(schema) == {"type": "array", "items": {"type": "object"}}
    typed = {"type": "array", "items": {"type": ["object", "null"]}}
    assert annotate_defaults(typed) == typed


def test_an_array_without_items_is_compared_as_scalars() -> None:
    assert annotate_defaults({"type": "array"}) == {"type": "array", "x-eval-compare": "partial"}


def test_missing_fields_are_only_warned_about_when_asked() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}}
    assert validate_gold([{"a": "x"}], schema) == []
    (warning,) = validate_gold([{"a": "x"}], schema, missing=True)
    assert (warning.index, warning.path, warning.kind, warning.severity) == (0, "$.b", "missing_field", "warning")


def test_an_ignored_key_is_a_warning_of_no_instance() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string", "x-eval-reviewer": "ann"}}}
    (warning,) = validate_gold([{"a": "x"}], schema)
    assert (warning.index, warning.kind, warning.severity) == (-1, "config_error", "warning")


def test_a_node_without_types_takes_any_value() -> None:
    schema = {"type": "object", "properties": {"a": {}, "b": {}}}
    assert validate_gold([{"a": None, "b": 5}, {"a": [1, "x"], "b": {"k": 1}}], schema) == []


def test_an_object_without_properties_declares_no_field() -> None:
    problems = validate_gold([{"x": 1}], {"type": "object"})
    assert [(p.index, p.path, p.kind) for p in problems] == [(0, "$.x", "extra_field")]


def test_properties_without_a_type_still_declare_the_fields() -> None:
    problems = validate_gold([{"a": "x", "z": 1}], {"properties": {"a": {"type": "string"}}})
    assert [(p.index, p.path, p.kind) for p in problems] == [(0, "$.z", "extra_field")]


def test_items_are_checked_only_in_arrays() -> None:
    schema = {"type": "object", "properties": {"tags": {"type": ["array", "string"], "items": {"type": "integer"}}}}
    # a string where an array of integers or a string is declared: not walked as if it were an array
    assert validate_gold([{"tags": "ab"}], schema) == []
    problems = validate_gold([{"tags": [1, "b"]}], schema)
    assert [(p.path, p.kind) for p in problems] == [("$.tags[1]", "type_error")]
