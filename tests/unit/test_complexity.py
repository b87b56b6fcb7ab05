"""Schema complexity features and bins."""

from __future__ import annotations

import pytest

from pytest_extractbench.dataset.complexity import complexity_bin, complexity_features

FLAT = {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}, "required": ["a"]}
NESTED = {
    "type": "object",
    "$defs": {"addr": {"type": "object", "properties": {"city": {"type": "string"}, "zip": {"type": "string"}}}},
    "properties": {
        "name": {"type": "string"},
        "status": {"enum": ["a", "b"]},
        "when": {"type": "string", "format": "date"},
        "home": {"$ref": "#/$defs/addr"},
        "lines": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"sku": {"type": "string"}, "where": {"$ref": "#/$defs/addr"}},
                "required": ["sku"],
            },
        },
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["name", "lines"],
}


def test_flat_schema_is_simple() -> None:
    features = complexity_features(FLAT)
    assert features == {
        "total_fields": 2,
        "required_fields": 1,
        "optional_fields": 1,
        "max_nesting_depth": 1,
        "has_arrays": False,
        "has_nested_objects": False,
        "total_possible_paths": 2,
        "field_types_diversity": 2,
        "enum_fields_count": 0,
        "format_constrained_fields": 0,
        "complexity_score": pytest.approx(0.132),
        "complexity_bin": "simple",
    }


def test_refs_arrays_enums_and_formats_are_counted() -> None:
    features = complexity_features(NESTED)
    # name, status, when, home(city, zip), lines(sku, where(city, zip)), tags
    assert features["total_fields"] == 6 + 2 + 2 + 2
    assert features["required_fields"] == 3
    assert features["max_nesting_depth"] == 3  # lines[].where.city
    assert features["has_arrays"] and features["has_nested_objects"]
    # name status when home.city home.zip lines[].sku lines[].where.city lines[].where.zip tags
    assert features["total_possible_paths"] == 9
    assert features["enum_fields_count"] == 1 and features["format_constrained_fields"] == 1
    assert features["complexity_bin"] == "complex"  # depth 3


@pytest.mark.parametrize(
    ("score", "name"),
    [(0.0, "simple"), (0.3299, "simple"), (0.33, "medium"), (0.6699, "medium"), (0.67, "complex"), (1.0, "complex")],
)
def test_bin_edges(score: float, name: str) -> None:
    assert complexity_bin(score) == name


def test_shared_definitions_are_counted_per_path_in_linear_time() -> None:
    # d0 -> (a, b) -> d1 -> (a, b) -> ... -> d20 {x}: 2**20 leaf paths; a walk that follows every
    # path would take millions of steps, the memoized walk visits each definition once.
    levels = 20
    defs = {
        f"d{i}": {
            "type": "object",
            "properties": {"a": {"$ref": f"#/$defs/d{i + 1}"}, "b": {"$ref": f"#/$defs/d{i + 1}"}},
            "required": ["a"],
        }
        for i in range(levels)
    }
    defs[f"d{levels}"] = {"type": "object", "properties": {"x": {"type": "string", "format": "email"}}}
    features = complexity_features({"$defs": defs, "$ref": "#/$defs/d0"})
    fields, required, formats = 1, 0, 1  # d20
    for _ in range(levels):
        fields, required, formats = 2 + 2 * fields, 1 + 2 * required, 2 * formats
    assert features["total_possible_paths"] == 2**levels
    assert (features["total_fields"], features["required_fields"]) == (fields, required)
    assert features["format_constrained_fields"] == formats == 2**levels
    assert features["max_nesting_depth"] == levels + 1 and features["complexity_bin"] == "complex"
