"""Schema complexity features and bins (spec 2.3, 4.4.4).

Conventions: a *field* is a declared property at any level; a *path* is a
flattened leaf (array elements count once, written ``items[].sku``).
``max_nesting_depth`` counts object levels, so a flat schema has depth 1 and
``contact.email`` lives at depth 2 (spec 4.4.4: "simple: <5 fields, depth <= 1").
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .scoring.schema import SchemaNode, compile_schema, iter_leaf_paths

BINS = ("simple", "medium", "complex")
# Piecewise-linear maps onto [0, 1] whose knees sit on the spec's bin edges:
# 5 fields / depth 2 -> 0.33 (medium starts), 15 fields / depth 3 -> 0.67 (complex starts).
_FIELD_KNEES = ((0, 5, 15, 30), (0.0, 0.33, 0.67, 1.0))
_DEPTH_KNEES = ((1, 2, 3, 4), (0.0, 0.33, 0.67, 1.0))


def _walk(node: SchemaNode, depth: int, stats: dict[str, Any], seen: frozenset[int]) -> None:
    if id(node) in seen:  # recursive schemas: count each definition once
        return
    seen = seen | {id(node)}
    stats["max_nesting_depth"] = max(stats["max_nesting_depth"], depth)
    for name, child in node.properties.items():
        stats["total_fields"] += 1
        stats["required_fields"] += name in node.required
        stats["types"].update(child.declared_types or {"any"})
        if "enum" in child.annotations or "const" in child.annotations:
            stats["enum_fields_count"] += 1
        if "format" in child.annotations:
            stats["format_constrained_fields"] += 1
        target = child
        if child.items is not None:
            stats["has_arrays"] = True
            target = child.items
        if target.properties:
            stats["has_nested_objects"] = True
            _walk(target, depth + 1, stats, seen)


def complexity_features(schema: Any) -> dict[str, Any]:
    """The spec 4.4.4 features of one schema, plus ``complexity_score`` in [0, 1] and ``complexity_bin``."""
    root = compile_schema(schema)
    stats: dict[str, Any] = {
        "total_fields": 0,
        "required_fields": 0,
        "max_nesting_depth": 1 if root.properties else 0,
        "has_arrays": False,
        "has_nested_objects": False,
        "enum_fields_count": 0,
        "format_constrained_fields": 0,
        "types": set(),
    }
    _walk(root, 1, stats, frozenset())
    types = stats.pop("types")
    features = {
        "total_fields": stats["total_fields"],
        "required_fields": stats["required_fields"],
        "optional_fields": stats["total_fields"] - stats["required_fields"],
        "max_nesting_depth": stats["max_nesting_depth"],
        "has_arrays": stats["has_arrays"],
        "has_nested_objects": stats["has_nested_objects"],
        "total_possible_paths": sum(1 for _ in iter_leaf_paths(root)),
        "field_types_diversity": len(types),
        "enum_fields_count": stats["enum_fields_count"],
        "format_constrained_fields": stats["format_constrained_fields"],
    }
    score = complexity_score(features)
    features["complexity_score"] = score
    features["complexity_bin"] = complexity_bin(score)
    return features


def complexity_score(features: dict[str, Any]) -> float:
    """The larger of the field-count and nesting-depth scores, so either makes a schema complex."""
    by_fields = float(np.interp(features["total_possible_paths"], *_FIELD_KNEES))
    by_depth = float(np.interp(features["max_nesting_depth"], *_DEPTH_KNEES))
    return round(max(by_fields, by_depth), 4)


def complexity_bin(score: float) -> str:
    """simple < 0.33 <= medium < 0.67 <= complex."""
    if score < 0.33:
        return "simple"
    if score < 0.67:
        return "medium"
    return "complex"
