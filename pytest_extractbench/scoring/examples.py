"""Example values a schema shows the model, per field: what a model copies when it does not find the answer.

A schema's ``examples`` (and OpenAPI's singular ``example``), its ``default``, and the value after "e.g." or
"for example" in a ``description`` are all text the model reads. A predicted value equal to one of them while
the gold differs is a *copied example*: neither found in the document nor a plain mistake, and worth telling
apart (a receipt schema whose description says "e.g. 25/12/2018" gets that date back for every receipt whose
date the model cannot read).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import Any

from .compare import normalize_text
from .options import ScoringOptions

MAX_DEPTH = 32  # a schema nested deeper (or a $ref cycle) is not walked further
MAX_EXAMPLE_CHARS = 80
# "e.g. 25/12/2018", "(e.g., \"2 years\")", "for example: 9.00"; the value runs to a quote, a comma, a semicolon,
# a closing bracket or a sentence end
_CUE = re.compile(r"\b(?:(?:e\.\s?g\.|eg\.|for example)\s*[:,]?|examples?\s*:)\s*", re.IGNORECASE)
_QUOTED = re.compile(r"[\"'`“‘]([^\"'`”’]{1,%d})[\"'`”’]" % MAX_EXAMPLE_CHARS)
_BARE = re.compile(r"([^,;()\[\]\n]{1,%d}?)(?:\.\s|\.$|[,;()\[\]\n]|$)" % MAX_EXAMPLE_CHARS)


def description_examples(description: str) -> list[str]:
    """The values a description gives after "e.g." or "for example" (quoted, or up to the next comma, bracket
    or sentence end)."""
    found = []
    for cue in _CUE.finditer(description[:4000]):
        rest = description[cue.end() : cue.end() + MAX_EXAMPLE_CHARS + 2]
        match = _QUOTED.match(rest) or _BARE.match(rest)
        if match and match.group(1).strip():
            found.append(match.group(1).strip())
    return found


def _node_examples(node: Mapping[str, Any]) -> Iterator[Any]:
    examples = node.get("examples")
    if isinstance(examples, list):
        yield from examples[:50]
    elif isinstance(examples, Mapping):  # OpenAPI: {"name": {"value": ...}}
        for entry in list(examples.values())[:50]:
            if isinstance(entry, Mapping) and "value" in entry:
                yield entry["value"]
    for key in ("example", "default"):
        if key in node:
            yield node[key]
    description = node.get("description")
    if isinstance(description, str):
        yield from description_examples(description)


def _resolve(ref: Any, root: Mapping[str, Any]) -> Any:
    if not isinstance(ref, str) or not ref.startswith("#/"):
        return None
    node: Any = root
    for part in ref[2:].split("/"):
        if not isinstance(node, Mapping):
            return None
        node = node.get(part.replace("~1", "/").replace("~0", "~"))
    return node


def _walk(node: Any, path: str, root: Mapping[str, Any], depth: int, out: dict[str, list[Any]]) -> None:
    if not isinstance(node, Mapping) or depth > MAX_DEPTH:
        return
    if "$ref" in node:
        _walk(_resolve(node["$ref"], root), path, root, depth + 1, out)
    examples = list(_node_examples(node))
    if examples and path:
        out.setdefault(path, []).extend(examples)
    for keyword in ("anyOf", "oneOf", "allOf"):
        for branch in node.get(keyword) or ():
            _walk(branch, path, root, depth + 1, out)
    properties = node.get("properties")
    if isinstance(properties, Mapping):
        for name, child in properties.items():
            _walk(child, f"{path}.{name}" if path else str(name), root, depth + 1, out)
    items = node.get("items")
    if isinstance(items, Mapping):
        _walk(items, f"{path}[]", root, depth + 1, out)


def example_key(value: Any, options: ScoringOptions) -> str | None:
    """How an example and a predicted value are compared: strings normalized as fields are, numbers and
    booleans by their JSON text; containers and nulls are never examples."""
    if isinstance(value, str):
        text = normalize_text(value, options)
        return text or None
    if isinstance(value, bool) or value is None or isinstance(value, (dict, list)):
        return None if not isinstance(value, bool) else json.dumps(value)
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, (int, float)):
        # "9.00" in a description and 9.0 in the output are the same example
        return normalize_text(str(value), options)
    return None


def _number_text(text: str) -> str | None:
    try:
        number = float(text.replace(",", ""))
    except ValueError:
        return None
    return str(int(number)) if number.is_integer() else str(number)


# Samples usually share their schema object; its canonical text (about 1 ms for a 10 KB schema) is then
# made once, not per sample. Holding the schema keeps its id from being reused, as compile_schema does.
_by_identity: dict[tuple[int, ScoringOptions], tuple[Any, dict[str, frozenset[str]]]] = {}
_IDENTITY_LIMIT = 4096


def schema_examples(schema: Any, options: ScoringOptions) -> dict[str, frozenset[str]]:
    """Every field's example values, by index-free field path (``items[].sku``), as comparison keys."""
    if not isinstance(schema, Mapping):
        return {}
    entry = _by_identity.get((id(schema), options))
    if entry is not None and entry[0] is schema:
        return entry[1]
    examples = _cached(json.dumps(schema, sort_keys=True, default=str), options)
    if len(_by_identity) >= _IDENTITY_LIMIT:
        _by_identity.clear()
    _by_identity[(id(schema), options)] = (schema, examples)
    return examples


@lru_cache(maxsize=256)
def _cached(schema_text: str, options: ScoringOptions) -> dict[str, frozenset[str]]:
    schema = json.loads(schema_text)
    raw: dict[str, list[Any]] = {}
    _walk(schema, "", schema, 0, raw)
    keys: dict[str, frozenset[str]] = {}
    for path, values in raw.items():
        found = set()
        for value in values:
            key = example_key(value, options)
            if key is None:
                continue
            found.add(key)
            number = _number_text(key) if isinstance(value, str) else None
            if number is not None:
                found.add(number)
        if found:
            keys[path] = frozenset(found)
    return keys


__all__ = ["description_examples", "example_key", "schema_examples"]
