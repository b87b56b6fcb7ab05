"""Helpers to build and check an eval schema (infer it from gold, annotate, resolve, validate), all pure.

    gold ──► infer_schema() ─┐
                             ├─► resolved schema ──► annotate_defaults() ──► eval schema (review, edit)
    schema ─► resolve_schema()┘                                                 │
                                                     validate_gold(gold, eval schema) ◄┘

A *resolved* schema holds only ``type``, ``properties``, ``items`` and ``required``
(plus any ``x-eval-*`` keys): no ``$ref``, ``allOf``, ``anyOf``, ``oneOf``.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any, NamedTuple

from .rules import compile_rules
from .schema import SchemaNode, compile_schema, json_type

# json_type folds integers into "number"; schemas want the distinction back.
_SCHEMA_TYPES = ("null", "boolean", "integer", "number", "string", "array", "object")


def _value_type(value: Any) -> str:
    if type(value) is int:
        return "integer"
    return json_type(value)


def _type_value(types: set[str]) -> str | list[str]:
    if {"integer", "number"} <= types:
        types = types - {"integer"}
    ordered = [t for t in _SCHEMA_TYPES if t in types]
    return ordered[0] if len(ordered) == 1 else ordered


def infer_schema(instances: Iterable[Any]) -> dict[str, Any]:
    """A resolved schema that every instance fits: types merged across instances (``integer`` and
    ``number`` make ``number``, a null adds ``"null"``), object properties united, array items merged.
    A property is required when every object at that place has it."""
    state: dict[str, Any] = {}
    count = 0
    for instance in instances:
        _observe(state, instance)
        count += 1
    if not count:
        raise ValueError("infer_schema needs at least one instance")
    return _emit(state)


def _observe(state: dict[str, Any], value: Any) -> None:
    state.setdefault("types", set()).add(_value_type(value))
    if type(value) is dict:
        state["objects"] = state.get("objects", 0) + 1
        properties = state.setdefault("properties", {})
        for key, child in value.items():
            entry = properties.setdefault(key, {"seen": 0, "state": {}})
            entry["seen"] += 1
            _observe(entry["state"], child)
    elif type(value) is list:
        items = state.setdefault("items", {})
        for element in value:
            _observe(items, element)


def _emit(state: dict[str, Any]) -> dict[str, Any]:
    schema: dict[str, Any] = {}
    types = set(state.get("types", ()))
    if types:
        schema["type"] = _type_value(types)
    if "properties" in state:
        schema["properties"] = {key: _emit(entry["state"]) for key, entry in state["properties"].items()}
        required = [key for key, entry in state["properties"].items() if entry["seen"] == state["objects"]]
        if required:
            schema["required"] = required
    if "array" in types:
        schema["items"] = _emit(state["items"]) if state.get("items") else {}
    return schema


def resolve_schema(schema: Any) -> dict[str, Any]:
    """The resolved form of ``schema``: ``$ref`` followed, ``allOf``/``anyOf``/``oneOf`` folded in
    (the way scoring reads them), ``x-eval-*`` keys kept. A recursive schema is cut where it recurses,
    as scoring reads it (``ValueError`` if a cycle remains)."""
    return _resolve(compile_schema(schema), frozenset(), "$")


def _resolve(node: SchemaNode, active: frozenset[int], path: str) -> dict[str, Any]:
    if id(node) in active:
        raise ValueError(f"{path}: the schema is recursive and has no finite resolved form")
    active = active | {id(node)}
    out: dict[str, Any] = {}
    if node.declared_types:
        out["type"] = _type_value(set(node.declared_types))
    elif node.types:  # enum/const only: the types of their values
        out["type"] = _type_value({"number" if t == "number" else t for t in node.types})
    if node.properties:
        out["properties"] = {
            name: _resolve(child, active, f"{path}.properties.{name}") for name, child in node.properties.items()
        }
    if node.required:
        out["required"] = sorted(node.required)
    if node.items is not None:
        out["items"] = _resolve(node.items, active, f"{path}.items")
    for key, value in node.annotations.items():
        if isinstance(key, str) and key.startswith("x-eval-"):
            out[key] = copy.deepcopy(value)
    return out


def annotate_defaults(schema: dict[str, Any]) -> dict[str, Any]:
    """A copy of a resolved schema with the default comparator written out where no x-eval key says
    otherwise: ``"x-eval-compare": "partial"`` on scalar fields and arrays of scalars (arrays of objects
    are aligned in order by default, with no key needed). Scoring with the result gives the same
    scores as without it: a starting point to edit."""
    out = copy.deepcopy(schema)
    _annotate(out)
    return out


def _types_of(schema: dict[str, Any]) -> set[str]:
    declared = schema.get("type")
    if isinstance(declared, str):
        return {declared}
    return {t for t in declared if isinstance(t, str)} if isinstance(declared, list) else set()


def _annotate(schema: Any) -> None:
    if not isinstance(schema, dict):
        return
    for child in (schema.get("properties") or {}).values():
        _annotate(child)
    items = schema.get("items")
    if isinstance(items, dict):
        _annotate(items)
    types = _types_of(schema)
    if "array" in types:
        item_types = _types_of(items) if isinstance(items, dict) else set()
        if not item_types & {"object", "array"} and not (isinstance(items, dict) and items.get("properties")):
            schema.setdefault("x-eval-compare", "partial")
    elif types and not types & {"object"} and not schema.get("properties"):
        schema.setdefault("x-eval-compare", "partial")


class GoldProblem(NamedTuple):
    """Something about one gold instance that the eval schema cannot score as intended."""

    index: int  # type: ignore[assignment]  # which gold instance (the field shadows tuple.index, as named)
    path: str  # JSON path in the instance, e.g. "$.items[2].qty"
    kind: str  # "extra_field" | "type_error" | "missing_field" | "config_error"
    message: str
    severity: str = "error"  # "warning" for missing fields (gold may omit a field)

    def __str__(self) -> str:
        return f"gold[{self.index}] {self.path}: {self.message}"


def validate_gold(gold: Iterable[Any], eval_schema: Any, *, missing: bool = False) -> list[GoldProblem]:
    """Check gold instances against an eval schema: fields the schema does not declare and values of
    the wrong type are errors (they would be scored without the rules meant for them); with
    ``missing=True``, declared fields a gold instance leaves out are warnings. Broken x-eval-* keys
    are reported as ``config_error`` (index -1; ignored ones as warnings)."""
    ruleset = compile_rules(eval_schema)
    problems = [GoldProblem(-1, e.path, "config_error", e.message) for e in ruleset.errors]
    problems.extend(GoldProblem(-1, w.path, "config_error", w.message, "warning") for w in ruleset.warnings)
    for index, instance in enumerate(gold):
        _check(instance, ruleset.root, "$", index, missing, problems)
    return problems


def _check(value: Any, node: SchemaNode, path: str, index: int, missing: bool, problems: list[GoldProblem]) -> None:
    if node.types and value is not None:
        kind = json_type(value)
        if kind not in node.types and not ("integer" in node.declared_types and kind == "number"):
            problems.append(
                GoldProblem(
                    index,
                    path,
                    "type_error",
                    f"{kind} value, but the schema declares {'/'.join(sorted(node.declared_types or node.types))}",
                )
            )
            return
        if (
            "integer" in node.declared_types
            and "number" not in node.declared_types
            and kind == "number"
            and not float(value).is_integer()
        ):
            problems.append(GoldProblem(index, path, "type_error", f"{value!r} is not an integer"))
    if type(value) is dict:
        if not node.properties and node.types and "object" not in node.types:
            return
        for key, child in value.items():
            child_node = node.properties.get(key)
            if child_node is None:
                if node.properties or node.types:
                    problems.append(
                        GoldProblem(
                            index, f"{path}.{key}", "extra_field", f"field {key!r} is not declared by the eval schema"
                        )
                    )
                continue
            _check(child, child_node, f"{path}.{key}", index, missing, problems)
        if missing:
            for key in node.properties:
                if key not in value:
                    problems.append(
                        GoldProblem(
                            index, f"{path}.{key}", "missing_field", f"declared field {key!r} is absent", "warning"
                        )
                    )
    elif type(value) is list and node.items is not None:
        for position, element in enumerate(value):
            _check(element, node.items, f"{path}[{position}]", index, missing, problems)
