"""Schema complexity features and bins: simple, medium, complex.

Conventions: a *field* is a declared property at any level; a *path* is a
flattened leaf (array elements count once, written ``items[].sku``).
``max_nesting_depth`` counts object levels, so a flat schema has depth 1 and
``contact.email`` lives at depth 2 (a schema is "simple" with < 5 fields and depth <= 1).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..scoring.schema import SchemaNode, compile_schema

BINS = ("simple", "medium", "complex")
# Piecewise-linear maps onto [0, 1] whose knees sit on the bin edges (simple: < 5 fields, depth <= 1):
# 5 fields / depth 2 -> 0.33 (medium starts), 15 fields / depth 3 -> 0.67 (complex starts).
_FIELD_KNEES = ((0, 5, 15, 30), (0.0, 0.33, 0.67, 1.0))
_DEPTH_KNEES = ((1, 2, 3, 4), (0.0, 0.33, 0.67, 1.0))


class _Totals:
    """What one schema location contributes, counted the way an instance is laid out (per path)."""

    __slots__ = ("arrays", "depth", "enums", "fields", "formats", "nested", "paths", "required", "types")

    def __init__(self) -> None:
        self.fields = self.required = self.enums = self.formats = self.depth = self.paths = 0
        self.arrays = self.nested = False
        self.types: frozenset[str] = frozenset()


_EMPTY = _Totals()
_PATH_CAP = 10**9  # path counts of shared definitions multiply; a cap keeps them finite floats


def _totals(node: SchemaNode, memo: dict[int, _Totals], active: set[int]) -> _Totals:
    """Memoized per node, so a definition shared by many properties is walked once (linear time).

    A walk that follows every path is exponential on schemas that reuse definitions at several
    levels (one JSONSchemaBench schema never finished); a recursive reference contributes nothing
    below the point where it recurs.
    """
    key = id(node)
    if key in memo:
        return memo[key]
    if key in active:
        return _EMPTY
    active.add(key)
    out = _Totals()
    types: set[str] = set()
    for name, child in node.properties.items():
        out.fields += 1
        out.required += name in node.required
        types.update(child.declared_types or {"any"})
        out.enums += "enum" in child.annotations or "const" in child.annotations
        out.formats += "format" in child.annotations
        target = child
        if child.items is not None:
            out.arrays = True
            target = child.items
        below = _totals(target, memo, active) if target.properties else _EMPTY
        if target.properties:
            out.nested = True
            out.fields += below.fields
            out.required += below.required
            out.enums += below.enums
            out.formats += below.formats
            out.depth = max(out.depth, below.depth)
            out.arrays |= below.arrays
            types.update(below.types)
        out.paths += _paths(child, memo, active)
    out.depth += 1 if node.properties else 0
    out.types = frozenset(types)
    out.paths = min(out.paths, _PATH_CAP)
    out.fields = min(out.fields, _PATH_CAP)
    active.discard(key)
    memo[key] = out
    return out


def _paths(child: SchemaNode, memo: dict[int, _Totals], active: set[int]) -> int:
    """Flattened leaf paths under one property (``iter_leaf_paths`` semantics, counted not listed)."""
    if child.properties:
        return _totals(child, memo, active).paths if id(child) not in active else 0
    if child.items is not None and child.items.properties:
        return _totals(child.items, memo, active).paths if id(child.items) not in active else 0
    return 1


def complexity_features(schema: Any) -> dict[str, Any]:
    """The complexity features of one schema (fields, depth, arrays, enums, formats, ...), plus
    ``complexity_score`` in [0, 1] and ``complexity_bin``."""
    root = compile_schema(schema)
    totals = _totals(root, {}, set())
    features: dict[str, Any] = {
        "total_fields": totals.fields,
        "required_fields": totals.required,
        "optional_fields": totals.fields - totals.required,
        "max_nesting_depth": totals.depth,
        "has_arrays": totals.arrays,
        "has_nested_objects": totals.nested,
        "total_possible_paths": totals.paths,
        "field_types_diversity": len(totals.types),
        "enum_fields_count": totals.enums,
        "format_constrained_fields": totals.formats,
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
