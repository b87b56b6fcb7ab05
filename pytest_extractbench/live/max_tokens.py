"""The default output budget: how many completion tokens an answer to one JSON Schema may need.

Why: with a fixed limit (2048) a small model that loops under the grammar burns the whole limit on
every such sample, and a CPU run then takes many times as long as the answers need. A schema bounds
what a valid answer holds, so the budget is a generous estimate of a pretty-printed instance's tokens
(every property present, free-text strings long, arrays with several items), clamped to a range.
"""

from __future__ import annotations

import json
import math
from typing import Any

__all__ = ["MAX_BUDGET", "MIN_BUDGET", "estimate_tokens", "max_tokens_for_schema"]

MIN_BUDGET = 256  # a small schema still leaves room for a few long strings
MAX_BUDGET = 2048  # the former fixed default: a huge schema asks no more than before
SAFETY = 1.5  # answers are rarely two thirds of the estimate; loops are cut at 1.5x it

_CHARS_PER_TOKEN = 3.0  # conservative for JSON keys and values in BPE vocabularies
_FREE_STRING = 32  # a string without maxLength, enum or format: a name, an address, a phrase
_FORMAT_STRING = {"date": 6, "date-time": 12, "time": 6, "email": 12, "uri": 24, "uuid": 24, "ipv4": 8}
_NUMBER = 6
_SCALAR = 2  # true, false, null
_ARRAY_ITEMS = 4  # items assumed when the schema sets no maxItems
_ARRAY_ITEMS_CAP = 20
_LINE = 2  # per property/item: indentation, quotes, colon and comma of pretty-printed JSON
_OPEN_SCHEMA = 64  # {} or an object that only says additionalProperties
_MAX_DEPTH = 12  # recursive $refs stop here


def _text_tokens(text: str) -> int:
    return math.ceil(len(text) / _CHARS_PER_TOKEN)


def _resolve(root: Any, ref: str) -> Any:
    """A local JSON pointer ("#/$defs/x"); anything else is treated as an open schema."""
    if not ref.startswith("#"):
        return {}
    node = root
    for part in ref[1:].split("/")[1:] if ref != "#" else ():
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return {}
    return node


def estimate_tokens(schema: Any, root: Any = None, depth: int = 0) -> int:
    """Tokens of a large valid instance of `schema` printed with indentation (an estimate, not a bound)."""
    root = schema if root is None else root
    if depth > _MAX_DEPTH or not isinstance(schema, dict):
        return _OPEN_SCHEMA if schema is True or schema == {} else _SCALAR
    if "$ref" in schema:
        return estimate_tokens(_resolve(root, str(schema["$ref"])), root, depth + 1)
    if "const" in schema:
        return _text_tokens(json.dumps(schema["const"], ensure_ascii=False)) + 1
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return max(_text_tokens(json.dumps(v, ensure_ascii=False)) for v in schema["enum"]) + 1
    options = [s for key in ("anyOf", "oneOf") for s in schema.get(key) or () if isinstance(s, dict)]
    if options:
        return max(estimate_tokens(s, root, depth + 1) for s in options)
    if isinstance(schema.get("allOf"), list) and schema["allOf"]:
        merged = {k: v for k, v in schema.items() if k != "allOf"}
        return max(estimate_tokens(s, root, depth + 1) for s in [merged, *schema["allOf"]] if isinstance(s, dict))
    kind = schema.get("type")
    if isinstance(kind, list):
        return max((estimate_tokens({**schema, "type": k}, root, depth) for k in kind), default=_SCALAR)
    if kind == "object" or (kind is None and "properties" in schema):
        properties = schema.get("properties") or {}
        if not isinstance(properties, dict) or not properties:
            return _OPEN_SCHEMA
        return 2 + sum(
            _text_tokens(json.dumps(name)) + _LINE + estimate_tokens(sub, root, depth + 1)
            for name, sub in properties.items()
        )
    if kind == "array" or (kind is None and "items" in schema):
        items = schema.get("items", {})
        most, least = schema.get("maxItems"), schema.get("minItems")
        count = most if isinstance(most, int) else max(_ARRAY_ITEMS, least if isinstance(least, int) else 0)
        count = min(count, _ARRAY_ITEMS_CAP)
        return 2 + count * (_LINE + estimate_tokens(items, root, depth + 1))
    if kind == "string":
        if isinstance(schema.get("maxLength"), int):
            return min(_text_tokens("x" * schema["maxLength"]), 4 * _FREE_STRING) + 2
        return _FORMAT_STRING.get(str(schema.get("format")), _FREE_STRING)
    if kind in ("integer", "number"):
        return _NUMBER
    if kind in ("boolean", "null"):
        return _SCALAR
    return _OPEN_SCHEMA


def max_tokens_for_schema(schema: Any) -> int:
    """The default completion budget of one request for `schema`: SAFETY x the estimate, clamped."""
    if isinstance(schema, str):
        try:
            schema = json.loads(schema)
        except ValueError:
            return MAX_BUDGET
    return max(MIN_BUDGET, min(MAX_BUDGET, math.ceil(SAFETY * estimate_tokens(schema))))
