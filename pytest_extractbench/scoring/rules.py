"""The x-eval-* keys of a schema, parsed once into one :class:`FieldRule` per schema location.

    "x-eval-compare":   "exact" | {"numeric": {"tolerance": {"rel": 0.01}}} | {"oneof": {"values": [...]}} | ...
    "x-eval-transform": ["strip", "lowercase", {"round_digits": {"digits": 2}}]
    "x-eval-skip":      true
    "x-eval-align":     "hungarian" | {"match_by": "key_field", "key": "sku"} | {"hungarian": {"max_cells": 400}}
                        | {"ordered": true} | {"ordered": false, "match_by": "hungarian"}

Both ``compare`` and ``transform`` entries (and ``align``) take the two shapes of seed
002: a name, or a one-key object ``{name: params}``. Rules are found on the compiled
schema (``$ref``/``allOf``/``anyOf`` already folded in) and every problem is reported
with its path there, e.g. ``$.properties.items.items.properties.qty.x-eval-compare:
unknown comparator 'nmeric' (did you mean 'numeric'?)``. A broken key is left out
(its defaults apply); :func:`parse_eval_schema` raises instead. What struct-extract-eval
tolerates (an unknown ``x-eval-*`` key, an unknown parameter) is a *warning* with its path:
the rest of the rule still applies.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

from ..core.errors import ExtractbenchError
from . import registry
from .align import ALIGNERS, Aligner, AlignerSpec
from .comparators import COMPARATORS, ComparatorSpec
from .schema import SchemaNode, compile_schema
from .transforms import TRANSFORMS

PREFIX = "x-eval-"
KEYS = ("x-eval-compare", "x-eval-transform", "x-eval-skip", "x-eval-align")


class FieldRule:
    """What the x-eval-* keys say about one schema location."""

    __slots__ = (
        "skip",
        "comparator",
        "compare",
        "whole",
        "batch",
        "params",
        "transforms",
        "align",
        "aligner",
        "align_params",
    )

    def __init__(self) -> None:
        self.skip = False
        self.comparator: str | None = None
        self.compare: Callable[..., Any] | None = None
        # The comparator judges objects and arrays whole, as struct-extract-eval does. Not "partial":
        # it names the default, which walks containers field by field.
        self.whole = False
        self.batch = False
        self.params: Mapping[str, Any] = {}
        self.transforms: tuple[tuple[Callable[[Any, Mapping[str, Any]], Any], Mapping[str, Any]], ...] = ()
        self.align: str | None = None
        self.aligner: Aligner | None = None
        self.align_params: Mapping[str, Any] = {}

    def transform(self, value: Any) -> Any:
        """Run the transform chain on a scalar, or on each scalar of an array; objects and nulls pass."""
        if value is None or not self.transforms:
            return value
        kind = type(value)
        if kind is dict:
            return value
        if kind is list:
            if any(type(v) in (dict, list) for v in value):
                return value
            return [self._chain(v) for v in value]
        return self._chain(value)

    def _chain(self, value: Any) -> Any:
        for fn, params in self.transforms:
            if value is None:
                break
            value = fn(value, params)
        return value

    def __repr__(self) -> str:
        parts = [f"skip={self.skip}"] if self.skip else []
        if self.comparator:
            parts.append(f"compare={self.comparator}")
        if self.transforms:
            parts.append(f"transforms={len(self.transforms)}")
        if self.align:
            parts.append(f"align={self.align}")
        return f"FieldRule({', '.join(parts)})"


class RuleError(NamedTuple):
    """A problem with one x-eval-* key: where it is in the schema, and what is wrong."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


class EvalSchemaError(ExtractbenchError, ValueError):
    """An eval schema whose x-eval-* keys are wrong; ``errors`` lists every problem."""

    def __init__(self, errors: Sequence[RuleError]) -> None:
        self.errors = list(errors)
        super().__init__("invalid x-eval configuration:\n" + "\n".join(f"  {e}" for e in self.errors))


class EvalSchemaWarning(ExtractbenchError, UserWarning):
    """Something in an eval schema that is ignored (an unknown x-eval-* key or parameter)."""


class RuleSet(NamedTuple):
    """The compiled schema with its rules attached, every configuration problem, and what is ignored."""

    root: SchemaNode
    errors: tuple[RuleError, ...]
    warnings: tuple[RuleError, ...] = ()


def split_spec(value: Any) -> tuple[str, dict[str, Any]]:
    """``"name"`` or ``{"name": {params}}`` -> ``(name, params)``; raises ``ValueError``."""
    if isinstance(value, str) and value:
        return value, {}
    if isinstance(value, dict) and len(value) == 1:
        ((name, params),) = value.items()
        if params is None:
            params = {}
        if isinstance(params, dict):
            return name, params
        raise ValueError(f"the parameters of {name!r} must be an object, got {params!r}")
    raise ValueError(f"expected a name or a one-key object {{name: parameters}}, got {value!r}")


def _parse_compare(rule: FieldRule, node: SchemaNode, value: Any, errors: list[str]) -> None:
    try:
        name, params = split_spec(value)
    except ValueError as exc:
        errors.append(str(exc))
        return
    if name not in COMPARATORS:
        errors.append(COMPARATORS.unknown(name))
        return
    spec: ComparatorSpec = COMPARATORS.get(name)
    if spec.types is not None and node.types and not node.types & spec.types:
        errors.append(
            f"comparator {name!r} compares {'/'.join(sorted(spec.types))} values, "
            f"but the field is declared {'/'.join(sorted(node.declared_types or node.types))}"
        )
        return
    if _failed(spec.check_params(params) if spec.check_params else (), name, errors):
        return
    rule.comparator, rule.compare, rule.batch, rule.params = name, spec.fn, spec.batch, params
    rule.whole = name != "partial"


def _parse_transforms(rule: FieldRule, node: SchemaNode, value: Any, errors: list[str]) -> None:
    if isinstance(value, (str, dict)):
        value = [value]
    if not isinstance(value, list):
        errors.append(f"expected a list of transforms, got {value!r}")
        return
    kinds = node.types - {"null"}  # a null passes every transform: a nullable object is still only an object
    if kinds and kinds <= {"object"}:
        errors.append("transforms apply to scalar fields and arrays of scalars, not to objects")
        return
    items = node.items
    item_kinds = frozenset() if items is None else items.types - {"null"}
    if kinds and kinds <= {"array"} and item_kinds and item_kinds <= {"object"}:
        errors.append(
            "transforms apply to scalar fields and arrays of scalars, not to arrays of objects "
            "(put them on the objects' fields)"
        )
        return
    chain = []
    for index, entry in enumerate(value):
        try:
            name, params = split_spec(entry)
        except ValueError as exc:
            errors.append(f"[{index}]: {exc}")
            continue
        if name not in TRANSFORMS:
            errors.append(f"[{index}]: {TRANSFORMS.unknown(name)}")
            continue
        spec = TRANSFORMS.get(name)
        if _failed(spec.check_params(params) if spec.check_params else (), f"[{index}] {name}", errors):
            continue
        chain.append((spec.fn, params))
    if len(chain) == len(value):
        rule.transforms = tuple(chain)


def _parse_align(rule: FieldRule, node: SchemaNode, value: Any, errors: list[str]) -> None:
    if isinstance(value, dict) and "ordered" in value:  # struct-extract-eval's spelling
        ordered = value["ordered"]
        if not isinstance(ordered, bool):
            errors.append(f"'ordered' must be true or false, got {ordered!r}")
            return
        if ordered:  # as there, ordered wins over any match_by
            ignored = sorted((k for k in value if k != "ordered"), key=str)
            if ignored:
                errors.append(registry.Note(f"{ignored} ignored: 'ordered': true aligns in order"))
            value = "ordered"
        elif "match_by" not in value:
            errors.append("'ordered': false needs 'match_by' (key_field or hungarian)")
            return
        else:
            value = {k: v for k, v in value.items() if k != "ordered"}
    if isinstance(value, dict) and "match_by" in value:
        params = {k: v for k, v in value.items() if k != "match_by"}
        name = value["match_by"]
        if not isinstance(name, str):
            errors.append(f"'match_by' must be a name, got {name!r}")
            return
    else:
        try:
            name, params = split_spec(value)
        except ValueError as exc:
            errors.append(str(exc))
            return
    if node.types and "array" not in node.types:
        errors.append(f"array alignment on a field declared {'/'.join(sorted(node.declared_types or node.types))}")
        return
    if name not in ALIGNERS:
        errors.append(ALIGNERS.unknown(name))
        return
    spec: AlignerSpec = ALIGNERS.get(name)
    if _failed(spec.check_params(params) if spec.check_params else (), name, errors):
        return
    rule.align, rule.aligner, rule.align_params = name, spec.fn, params


def _failed(problems: Sequence[str], name: str, errors: list[str]) -> bool:
    """Record a check's problems under ``name``; True when one is more than a warning."""
    errors.extend(type(p)(f"{name}: {p}") for p in problems)  # a Note stays a Note
    return any(not isinstance(p, registry.Note) for p in problems)


def parse_rule(node: SchemaNode, path: str = "$") -> tuple[FieldRule | None, list[RuleError]]:
    """The rule of one location (None when it has no x-eval-* key) and the problems of its keys
    (a message that is a :class:`~.registry.Note` is only a warning)."""
    keys = [k for k in node.annotations if isinstance(k, str) and k.startswith(PREFIX)]
    if not keys:
        return None, []
    rule = FieldRule()
    errors: list[RuleError] = []
    for key in keys:
        value = node.annotations[key]
        found: list[str] = []
        if key == "x-eval-skip":
            if isinstance(value, bool):
                rule.skip = value
            else:
                found.append(f"expected true or false, got {value!r}")
        elif key == "x-eval-compare":
            _parse_compare(rule, node, value, found)
        elif key == "x-eval-transform":
            _parse_transforms(rule, node, value, found)
        elif key == "x-eval-align":
            _parse_align(rule, node, value, found)
        else:
            found.append(registry.Note(f"unknown key ignored; known: {', '.join(KEYS)}"))
        errors.extend(RuleError(f"{path}.{key}", message) for message in found)
    return rule, errors


def _attach(node: SchemaNode, path: str, seen: set[int], errors: list[RuleError]) -> None:
    if id(node) in seen:  # shared through $ref (or recursive): one rule per node
        return
    seen.add(id(node))
    node.rule, found = parse_rule(node, path)
    errors.extend(found)
    for name, child in node.properties.items():
        _attach(child, f"{path}.properties.{name}", seen, errors)
    node.ruled_keys = frozenset(name for name, child in node.properties.items() if child.rule is not None)
    if node.items is not None:
        _attach(node.items, f"{path}.items", seen, errors)


_rulesets: dict[int, tuple[Any, int, RuleSet]] = {}
_CACHE_LIMIT = 4096


def compile_rules(schema: Any) -> RuleSet:
    """The compiled schema with a :class:`FieldRule` on every location that has x-eval-* keys (cached)."""
    entry = _rulesets.get(id(schema))
    current = registry.generation()
    if entry is not None and entry[0] is schema and entry[1] == current:
        return entry[2]
    root = compile_schema(schema)
    found: list[RuleError] = []
    _attach(root, "$", set(), found)
    ruleset = RuleSet(
        root,
        tuple(e for e in found if not isinstance(e.message, registry.Note)),
        tuple(e for e in found if isinstance(e.message, registry.Note)),
    )
    if len(_rulesets) >= _CACHE_LIMIT:
        _rulesets.clear()
    _rulesets[id(schema)] = (schema, current, ruleset)
    return ruleset


def warn_ignored(ruleset: RuleSet, stacklevel: int = 3) -> None:
    """One :class:`EvalSchemaWarning` per ignored key or parameter, naming its schema path."""
    for problem in ruleset.warnings:
        warnings.warn(str(problem), EvalSchemaWarning, stacklevel=stacklevel)


def parse_eval_schema(schema: Any) -> SchemaNode:
    """The compiled eval schema; raises :class:`EvalSchemaError` listing every bad x-eval-* key
    and warns (:class:`EvalSchemaWarning`) about every ignored one."""
    ruleset = compile_rules(schema)
    if ruleset.errors:
        raise EvalSchemaError(ruleset.errors)
    warn_ignored(ruleset)
    return ruleset.root
