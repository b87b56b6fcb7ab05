"""Eval-schema helpers: infer from gold, resolve $ref/allOf, annotate defaults, validate gold."""

from __future__ import annotations

import pytest

from pytest_extractbench.scoring import annotate_defaults, infer_schema, resolve_schema, validate_gold

GOLD = [
    {"method": "sputtering", "temperature": 300, "lab_id": "A1", "layers": [{"name": "Ti", "nm": 5}]},
    {"method": "evaporation", "temperature": 450.5, "lab_id": None, "tags": ["x"]},
]


def test_infer_schema_merges_types_and_marks_fields_every_instance_has_as_required() -> None:
    assert infer_schema(GOLD) == {
        "type": "object",
        "properties": {
            "method": {"type": "string"},
            "temperature": {"type": "number"},  # 300 and 450.5
            "lab_id": {"type": ["null", "string"]},
            "layers": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"name": {"type": "string"}, "nm": {"type": "integer"}},
                    "required": ["name", "nm"],
                },
            },
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["method", "temperature", "lab_id"],
    }
    assert infer_schema([[]]) == {"type": "array", "items": {}}
    with pytest.raises(ValueError):
        infer_schema([])


def test_resolve_schema_follows_refs_and_folds_combinators_keeping_x_eval_keys() -> None:
    schema = {
        "$defs": {
            "layer": {
                "type": "object",
                "properties": {"nm": {"type": "integer", "x-eval-compare": "numeric"}},
                "required": ["nm"],
            }
        },
        "type": "object",
        "properties": {
            "layers": {"type": "array", "items": {"$ref": "#/$defs/layer"}, "x-eval-align": "hungarian"},
            "name": {"allOf": [{"type": "string"}, {"x-eval-transform": ["strip"]}]},
            "size": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
            "kind": {"enum": ["a", "b"]},
        },
    }
    assert resolve_schema(schema) == {
        "type": "object",
        "properties": {
            "layers": {
                "type": "array",
                "x-eval-align": "hungarian",
                "items": {
                    "type": "object",
                    "properties": {"nm": {"type": "integer", "x-eval-compare": "numeric"}},
                    "required": ["nm"],
                },
            },
            "name": {"type": "string", "x-eval-transform": ["strip"]},
            "size": {"type": ["null", "integer"]},
            "kind": {"type": "string"},
        },
    }
    recursive = {"$defs": {"n": {"type": "object", "properties": {"next": {"$ref": "#/$defs/n"}}}}, "$ref": "#/$defs/n"}
    # scoring reads a recursive schema as far as its first recursion: so does the resolved form
    assert resolve_schema(recursive) == {"type": "object", "properties": {"next": {}}}


def test_annotate_defaults_writes_the_default_comparator_and_keeps_user_keys() -> None:
    schema = infer_schema(GOLD)
    schema["properties"]["method"]["x-eval-compare"] = "exact"
    annotated = annotate_defaults(schema)
    props = annotated["properties"]
    assert props["method"]["x-eval-compare"] == "exact"
    assert props["temperature"]["x-eval-compare"] == "partial" and props["tags"]["x-eval-compare"] == "partial"
    assert "x-eval-compare" not in props["layers"] and "x-eval-compare" not in annotated
    assert props["layers"]["items"]["properties"]["nm"]["x-eval-compare"] == "partial"
    assert "x-eval-compare" not in schema["properties"]["temperature"]  # the input is not changed


def test_validate_gold_reports_extra_fields_type_errors_and_config_errors() -> None:
    schema = infer_schema(GOLD[:1])
    schema["properties"]["method"]["x-eval-compare"] = "nope"
    problems = validate_gold(
        [GOLD[0], {"method": 1, "temperature": 2.5, "lab_id": "B", "layers": [{"nm": "5"}], "extra": True}],
        schema,
        missing=True,
    )
    found = {(p.index, p.path, p.kind) for p in problems}
    assert found == {
        (-1, "$.properties.method.x-eval-compare", "config_error"),
        (1, "$.method", "type_error"),
        (1, "$.temperature", "type_error"),  # 2.5 is not an integer
        (1, "$.layers[0].nm", "type_error"),
        (1, "$.extra", "extra_field"),
        (1, "$.layers[0].name", "missing_field"),
    }
    assert all(p.severity == "warning" for p in problems if p.kind == "missing_field")
    assert "gold[1] $.extra: field 'extra' is not declared by the eval schema" in [str(p) for p in problems]


def test_validate_gold_lists_ignored_x_eval_keys_as_warnings() -> None:
    schema = infer_schema(GOLD[:1])
    schema["properties"]["method"]["x-eval-reviewer"] = "ann"
    problems = validate_gold(GOLD[:1], schema)
    assert [(p.path, p.kind, p.severity) for p in problems] == [
        ("$.properties.method.x-eval-reviewer", "config_error", "warning")
    ]
