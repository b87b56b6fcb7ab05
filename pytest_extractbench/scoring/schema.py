"""A compiled, walkable view of a JSON Schema, and cached jsonschema validators.

Scoring needs to know, at every path of the gold/prediction trees, which
properties are required, what type the schema declares and what the array items
look like. ``compile_schema`` resolves ``$ref`` (through ``referencing``, the
library jsonschema itself uses) and folds ``allOf``/``anyOf``/``oneOf`` into one
node per location, once per schema object.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import jsonschema
import jsonschema_rs
import orjson
from referencing import Registry, Resource
from referencing.exceptions import Unresolvable
from referencing.jsonschema import DRAFT202012

from ..core.errors import ExtractbenchError

if TYPE_CHECKING:
    from .rules import FieldRule

# JSON Schema type names folded the way scoring compares values:
# "integer" is a number: 3 and 3.0 are the same value to whoever reads the JSON.
_FOLD = {"integer": "number"}

_CACHE_LIMIT = 4096
_MERGE_BUDGET = 50_000


class SchemaNode:
    """What the schema says about one location of the instance."""

    __slots__ = ("declared_types", "types", "properties", "items", "required", "annotations", "rule", "ruled_keys")

    def __init__(self) -> None:
        self.declared_types: frozenset[str] = frozenset()
        # declared types with "integer" folded into "number"; empty = unconstrained
        self.types: frozenset[str] = frozenset()
        self.properties: dict[str, SchemaNode] = {}
        self.items: SchemaNode | None = None
        self.required: frozenset[str] = frozenset()
        # The raw keywords of this location (x-eval-*, enum, format, ...), merged.
        self.annotations: dict[str, Any] = {}
        # The parsed x-eval-* rule of this location (rules.compile_rules sets it; None = defaults),
        # and the property names whose node carries one (the walker's fast path checks this set).
        self.rule: FieldRule | None = None
        self.ruled_keys: frozenset[str] = frozenset()

    def child(self, key: str) -> SchemaNode | None:
        """The node of property ``key``, or None when the schema does not declare it."""
        return self.properties.get(key)

    def __repr__(self) -> str:
        return f"SchemaNode(types={sorted(self.declared_types)}, properties={sorted(self.properties)})"


class _Compiler:
    def __init__(self, root: dict[str, Any]) -> None:
        resource = Resource.from_contents(root, default_specification=DRAFT202012)
        self._resolver = Registry().with_resource("", resource).resolver()
        self._memo: dict[int, SchemaNode] = {}
        self._active: set[int] = set()
        # (node, branch) merges already made: branches that share definitions at several levels
        # (anyOf of mutually recursive $refs) would otherwise be merged again on every path.
        self._merged: dict[tuple[int, int], SchemaNode] = {}
        # Merging anyOf branches of mutually recursive definitions is exponential in the worst case:
        # past this many merge steps, further branches are left out (the walkable view gets coarser).
        self._budget = _MERGE_BUDGET

    def compile(self, schema: Any) -> SchemaNode:
        if not isinstance(schema, dict):
            return SchemaNode()  # boolean schemas and junk: unconstrained
        key = id(schema)
        if key in self._memo:  # recursion through $ref lands here: a cycle, not a loop
            return self._memo[key]
        node = SchemaNode()
        self._memo[key] = node
        self._merge_into(node, schema)
        return node

    def _merge_into(self, node: SchemaNode, schema: Any) -> None:
        if not isinstance(schema, dict) or id(schema) in self._active or self._budget <= 0:
            return
        self._budget -= 1
        self._active.add(id(schema))
        try:
            ref = schema.get("$ref")
            if isinstance(ref, str):
                target = self._lookup(ref)
                if target is not None:
                    self._merge_into(node, target)
            self._merge_keywords(node, schema)
            for keyword in ("allOf", "anyOf", "oneOf"):
                branches = schema.get(keyword)
                if isinstance(branches, list):
                    for branch in branches:
                        self._merge_into(node, branch)
        finally:
            self._active.discard(id(schema))

    def _merge_copy(self, existing: SchemaNode, sub: Any) -> SchemaNode:
        key = (id(existing), id(sub))
        merged = self._merged.get(key)
        if merged is None:
            merged = self._merged[key] = _copy(existing)
            self._merge_into(merged, sub)
        return merged

    def _lookup(self, ref: str) -> Any:
        try:
            return self._resolver.lookup(ref).contents
        except (Unresolvable, Exception):  # noqa: BLE001 - a bad $ref must not break scoring
            return None

    def _merge_keywords(self, node: SchemaNode, schema: dict[str, Any]) -> None:
        declared = schema.get("type")
        if isinstance(declared, str):
            declared = [declared]
        if isinstance(declared, list):
            names = frozenset(t for t in declared if isinstance(t, str))
            node.declared_types |= names
            node.types |= frozenset(_FOLD.get(t, t) for t in names)
        if "const" in schema or "enum" in schema:
            values = [schema["const"]] if "const" in schema else schema.get("enum") or []
            if isinstance(values, list):
                node.types |= frozenset(json_type(v) for v in values)
        properties = schema.get("properties")
        if isinstance(properties, dict):
            for name, sub in properties.items():
                compiled = self.compile(sub)
                existing = node.properties.get(name)
                if existing is None or existing is compiled:
                    node.properties[name] = compiled
                else:  # the same property declared by two branches: merge a copy
                    node.properties[name] = self._merge_copy(existing, sub)
        required = schema.get("required")
        if isinstance(required, list):
            node.required |= frozenset(r for r in required if isinstance(r, str))
        items = schema.get("items")
        if isinstance(items, dict):
            if node.items is None:
                node.items = self.compile(items)
            else:
                node.items = self._merge_copy(node.items, items)
        for keyword, value in schema.items():
            if keyword not in _STRUCTURAL:
                node.annotations.setdefault(keyword, value)


_STRUCTURAL = frozenset(
    {"type", "properties", "required", "items", "$ref", "allOf", "anyOf", "oneOf", "$defs", "definitions"}
)


def _copy(node: SchemaNode) -> SchemaNode:
    twin = SchemaNode()
    twin.declared_types = node.declared_types
    twin.types = node.types
    twin.properties = dict(node.properties)
    twin.items = node.items
    twin.required = node.required
    twin.annotations = dict(node.annotations)
    return twin


_compiled: dict[int, tuple[Any, SchemaNode]] = {}


def compile_schema(schema: Any) -> SchemaNode:
    """The walkable view of ``schema``, compiled once per schema object."""
    entry = _compiled.get(id(schema))
    if entry is not None and entry[0] is schema:
        return entry[1]
    node = _Compiler(schema).compile(schema) if isinstance(schema, dict) else SchemaNode()
    if len(_compiled) >= _CACHE_LIMIT:
        _compiled.clear()
    _compiled[id(schema)] = (schema, node)
    return node


def json_type(value: Any) -> str:
    """The JSON type name of a Python value, with integers folded into "number"."""
    kind = type(value)
    if kind is str:
        return "string"
    if kind is bool:
        return "boolean"
    if kind is int or kind is float:
        return "number"
    if kind is dict:
        return "object"
    if kind is list:
        return "array"
    if value is None:
        return "null"
    return kind.__name__


# -- validation ---------------------------------------------------------------------
#
# jsonschema-rs decides whether an output is valid: it is ~20x faster and checks
# every format (jsonschema skips "uri" & co. unless optional extras are installed;
# on JSONSchemaBench's MaskBench instances the two only disagree there, and
# jsonschema-rs is the one that is right). jsonschema, the reference
# implementation, explains invalid outputs and meta-validates schemas; a schema
# that jsonschema-rs cannot compile is handled by jsonschema alone.

# (schema, jsonschema-rs validator or None, jsonschema validator, whether the schema may hold a regex), by the
# schema's id and whether formats are checked
_validators: dict[tuple[int, bool], tuple[Any, Any, Any, bool]] = {}

MAX_ERRORS = 50
MAX_MESSAGE = 300

# $ref is resolved inside the schema only: no http(s):// or file:// fetches, ever (a hostile schema
# must not read local files or stall an offline run on a host that never answers).
_LOCAL_ONLY = Registry()


def _refuse(uri: str) -> Any:
    raise LookupError(f"{uri}: only references inside the schema are resolved (nothing is fetched)")


# -- regular expressions through jsonschema-rs's engine -----------------------------------------
#
# Python's re backtracks without limit: "^(a+)+$" against 41 characters never returns. The
# reference validator's regex keywords are routed through jsonschema-rs's engine instead (linear
# time, or backtracking with a step limit for backreferences), so explaining an error is bounded.

_patterns: dict[str, Any] = {}
_BACKTRACK = "Error executing regex"


class PatternError(ExtractbenchError, ValueError):
    """A schema regex that cannot be compiled or run within the engine's limits."""


def _rs_pattern(pattern: str) -> Any:
    validator = _patterns.get(pattern)
    if validator is None:
        try:
            validator = jsonschema_rs.validator_for({"pattern": pattern})
        except Exception as exc:  # noqa: BLE001 - jsonschema-rs says "... is not a "regex""
            raise PatternError(
                f"pattern {_clip(repr(pattern))} is not a valid regular expression: {_clip(str(exc).splitlines()[0])}"
            ) from None
        if len(_patterns) >= _CACHE_LIMIT:
            _patterns.clear()
        _patterns[pattern] = validator
    return validator


def check_pattern(pattern: str) -> None:
    """Raise :class:`PatternError` unless the bounded engine accepts ``pattern`` (a user's regex, checked when read)."""
    _rs_pattern(pattern)


def regex_search(pattern: str, text: str) -> bool:
    """``re.search(pattern, text)`` with a bound on the work; :class:`PatternError` when it gives up."""
    validator = _rs_pattern(pattern)
    if validator.is_valid(text):
        return True
    for error in validator.iter_errors(text):
        if _BACKTRACK in error.message:
            raise PatternError(
                f"pattern {_clip(repr(pattern))} could not be checked: the regular expression "
                "needs too much backtracking"
            )
    return False


def _pattern(validator: Any, patrn: str, instance: Any, schema: Any) -> Any:
    if validator.is_type(instance, "string") and not regex_search(patrn, instance):
        yield jsonschema.ValidationError(f"{instance!r} does not match {patrn!r}")


def _pattern_properties(validator: Any, patterns: Any, instance: Any, schema: Any) -> Any:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if regex_search(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional(instance: Any, schema: Any) -> list[Any]:
    properties = schema.get("properties", {})
    patterns = list(schema.get("patternProperties", {}))
    return [key for key in instance if key not in properties and not any(regex_search(p, key) for p in patterns)]


def _additional_properties(validator: Any, extra_schema: Any, instance: Any, schema: Any) -> Any:
    if not validator.is_type(instance, "object"):
        return
    extras = _additional(instance, schema)
    if validator.is_type(extra_schema, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], extra_schema, path=extra)
    elif not extra_schema and extras:  # jsonschema's own words
        if "patternProperties" in schema:
            verb = "does" if len(extras) == 1 else "do"
            joined = ", ".join(repr(each) for each in sorted(extras))
            patterns = ", ".join(repr(each) for each in sorted(schema["patternProperties"]))
            yield jsonschema.ValidationError(f"{joined} {verb} not match any of the regexes: {patterns}")
        else:
            verb = "was" if len(extras) == 1 else "were"
            listed = ", ".join(repr(extra) for extra in sorted(extras, key=str))
            yield jsonschema.ValidationError(f"Additional properties are not allowed ({listed} {verb} unexpected)")


_BOUNDED = {
    "pattern": _pattern,
    "patternProperties": _pattern_properties,
    "additionalProperties": _additional_properties,
}
_bounded_classes: dict[Any, Any] = {}


def _bounded(cls: Any) -> Any:
    """``cls`` with its regex keywords run by the bounded engine."""
    bounded = _bounded_classes.get(cls)
    if bounded is None:
        bounded = _bounded_classes[cls] = jsonschema.validators.extend(
            cls, {k: v for k, v in _BOUNDED.items() if k in cls.VALIDATORS}
        )
    return bounded


def _validators_for(schema: Any, validate_formats: bool) -> tuple[Any, Any]:
    """(jsonschema-rs validator or None, jsonschema validator) for ``schema``, cached."""
    _, fast, reference, _ = _validator_entry(schema, validate_formats)
    return fast, reference


def _validator_entry(schema: Any, validate_formats: bool) -> tuple[Any, Any, Any, bool]:
    """``schema``'s entry in the validators' cache, made at its first use."""
    key = (id(schema), validate_formats)
    entry = _validators.get(key)
    if entry is not None and entry[0] is schema:
        return entry
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    reference = _bounded(cls)(
        schema, format_checker=cls.FORMAT_CHECKER if validate_formats else None, registry=_LOCAL_ONLY
    )
    try:
        fast = jsonschema_rs.validator_for(schema, validate_formats=validate_formats, retriever=_refuse)
    except Exception:  # noqa: BLE001 - drafts or keywords it does not know: the reference takes over
        fast = None
    if len(_validators) >= _CACHE_LIMIT:
        _validators.clear()
    entry = _validators[key] = (schema, fast, reference, _may_hold_patterns(schema))
    return entry


def get_validator(schema: Any, *, validate_formats: bool = True) -> Any:
    """The reference (jsonschema) validator for ``schema``: draft from ``$schema``, else 2020-12."""
    return _validators_for(schema, validate_formats)[1]


def check_schema(schema: Any) -> list[str]:
    """Why ``schema`` is not a valid JSON Schema (empty when it is): jsonschema-rs decides, jsonschema explains.

    Meta-validating with jsonschema takes ~15 ms a schema (minutes for 10,000 rows); jsonschema-rs
    takes microseconds. On JSONSchemaBench's 8,425 schemas they disagree on 8: 3 draft-04 schemas
    with duplicate enum items that only jsonschema rejects (accepted here: harmless for extraction)
    and 5 that only jsonschema-rs rejects (accepted here: jsonschema finds no error to report).
    """
    if not isinstance(schema, (dict, bool)):
        return [f"a schema must be an object, got {json_type(schema)}"]
    if isinstance(schema, dict):
        try:
            if jsonschema_rs.meta.is_valid(schema):
                return unusable_schema(schema)
        except Exception:  # noqa: BLE001 - a draft or keyword it does not know: the reference decides
            pass
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    errors = sorted(cls(cls.META_SCHEMA).iter_errors(schema), key=lambda e: (e.json_path, e.message))
    return [_describe(e) for e in errors[:MAX_ERRORS]] or unusable_schema(schema)


def unusable_schema(schema: Any) -> list[str]:
    """Why a well-formed ``schema`` still cannot be applied: a ``$ref`` that does not resolve inside it
    (remote and file references are never fetched), or a regular expression the engine rejects.
    These are faults of the schema, so they are reported against it, not against the gold."""
    if not isinstance(schema, dict):
        return []
    try:
        jsonschema_rs.validator_for(schema, retriever=_refuse)
        return []
    except Exception as exc:  # noqa: BLE001 - its ValidationError/ValueError carry the reason
        reason = _clip(str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__)
    if "regex" in reason:
        return [f"a regular expression in it cannot be used: {reason}"]
    if "only references inside the schema" in reason or "not present in a registry" in reason:
        return [f"a $ref points outside the schema (remote and file references are not fetched): {reason}"]
    if any(word in reason for word in ("Pointer", "reference", "Reference", "resolve", "anchor", "Anchor")):
        return [f"a $ref does not resolve inside the schema: {reason}"]
    return []  # something else jsonschema-rs does not support: the reference validator takes over


def validation_errors(instance: Any, schema: Any, *, validate_formats: bool = True) -> list[str]:
    """Every reason ``instance`` violates ``schema`` as ``"$.path: message"`` (empty when valid)."""
    try:
        fast, reference = _validators_for(schema, validate_formats)
        if fast is not None:
            try:
                # jsonschema-rs decides and lists (25,000 errors of 10,000 outputs in a quarter second, where
                # the Python listing took most of the scoring time of invalid outputs); listing a valid
                # instance's errors costs what is_valid does, so no verdict is asked first
                found = []
                for error in fast.iter_errors(instance):
                    message = error.message
                    found.append(
                        (_rs_path(error.instance_path), message if len(message) <= MAX_MESSAGE else _clip(message))
                    )
                found.sort()
                if not any(message.startswith("Error executing regex") for _, message in found):
                    return [f"{path}: {message}" for path, message in found[:MAX_ERRORS]]
                # a pattern it gave up on: the reference's bounded engine says which and why
            except Exception:  # noqa: BLE001 - e.g. integers beyond 64 bits: ask the reference
                pass
        errors = [_describe(e) for e in sorted(reference.iter_errors(instance), key=lambda e: (e.json_path, e.message))]
    except RecursionError:
        return ["$: output is nested too deeply to validate"]
    except PatternError as exc:
        return [f"$: {exc}"]
    except Exception as exc:  # noqa: BLE001 - a broken schema (bad regex, ...) is reported, not raised
        return [f"$: schema could not be applied: {type(exc).__name__}: {_clip(str(exc))}"]
    return errors[:MAX_ERRORS]


def validity(instance: Any, schema: Any, *, validate_formats: bool = True) -> bool | None:
    """Whether ``instance`` conforms to ``schema`` from jsonschema-rs's verdict alone (about a microsecond, where
    listing an invalid output's errors costs tens): True exactly when :func:`validation_errors` lists nothing, False
    when it lists something. None when only the listing can tell: no jsonschema-rs validator for the schema, a
    schema with regular expressions (jsonschema-rs may give up on one, and the reference validator then decides),
    or a verdict that raised."""
    try:
        _, fast, _, patterned = _validator_entry(schema, validate_formats)
        if fast is None or patterned:
            return None
        return bool(fast.is_valid(instance))
    except Exception:  # noqa: BLE001 - RecursionError, integers it cannot take, a broken schema: the listing says
        return None


def _may_hold_patterns(schema: Any) -> bool:
    """Whether ``schema`` may hold a ``pattern`` or ``patternProperties`` keyword (any key or text starting with
    "pattern" counts: a needless listing is only slower)."""
    try:
        return b'"pattern' in orjson.dumps(schema)
    except (TypeError, orjson.JSONEncodeError):  # keys or values JSON has not: leave it to the listing
        return True


_rs_paths: dict[tuple[str | int, ...], str] = {}


def _rs_path(parts: Any) -> str:
    """``$.items[2].qty`` from jsonschema-rs's path parts (the same few paths recur in every sample)."""
    key = tuple(parts)
    path = _rs_paths.get(key)
    if path is None:
        path = "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in parts)
        if len(_rs_paths) >= _CACHE_LIMIT:
            _rs_paths.clear()
        _rs_paths[key] = path
    return path


def _describe(error: Any) -> str:
    return f"{error.json_path}: {_clip(error.message)}"


def _clip(text: str) -> str:
    return text if len(text) <= MAX_MESSAGE else text[: MAX_MESSAGE - 1] + "…"
