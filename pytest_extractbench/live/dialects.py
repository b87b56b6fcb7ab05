"""Structured output in each server's dialect, and what of a request determines its answer.

``json_schema``: OpenAI/vLLM/llama-server ``response_format``; ``json_object``: llama.cpp's
``{"type": "json_object", "schema": ...}``; ``guided_json``: vLLM's extra body; ``none``: prompt only.
The benchmark's own ``x-eval-*`` schema keywords never reach a model (``model_schema``).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from .options import STRUCTURED_OUTPUT_MODES

__all__ = ["cache_key", "model_schema", "structured_output_fields"]

# Keywords whose values are schemas, or maps/lists of schemas: the walk follows them only, so a
# property *named* "x-eval-..." and data under "enum"/"default"/"examples" stay untouched.
_SUBSCHEMA = (
    "items",
    "additionalProperties",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "additionalItems",
    "unevaluatedItems",
    "unevaluatedProperties",
)
_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")


def model_schema(schema: Any) -> Any:
    """The schema as the model sees it: a copy without the benchmark's ``x-eval-*`` keywords."""
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if isinstance(key, str) and key.startswith("x-eval-"):
            continue
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            value = {name: model_schema(sub) for name, sub in value.items()}
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            value = [model_schema(sub) for sub in value]
        elif key in _SUBSCHEMA:
            value = [model_schema(sub) for sub in value] if isinstance(value, list) else model_schema(value)
        out[key] = value
    return out


def cache_key(
    model: str, messages: Sequence[Mapping[str, Any]], schema: Any, params: Mapping[str, Any], server: str = ""
) -> str:
    """sha256 of the canonical JSON of what determines the answer: model, messages (so the prompt
    templates), schema (without x-eval keys), decoding params (`ClientConfig.decoding_params`) and
    ``server``, the identity hash of who answers (identity.py). Never the API key."""
    payload = {
        "v": 2,  # keys of version 1 did not cover the server: their entries are never reused
        "server": server,
        "model": model,
        "messages": list(messages),
        "schema": model_schema(schema),
        "params": dict(params),
    }
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def structured_output_fields(
    mode: str, schema: Any, *, name: str = "extraction_result", strict: bool = True
) -> dict[str, Any]:
    """The request fields that constrain the output to `schema` in `mode`'s dialect."""
    schema = model_schema(schema)
    if mode == "json_schema":
        json_schema = {"name": name, "schema": schema, "strict": strict}
        return {"response_format": {"type": "json_schema", "json_schema": json_schema}}
    if mode == "json_object":
        return {"response_format": {"type": "json_object", "schema": schema}}
    if mode == "guided_json":
        return {"extra_body": {"guided_json": schema, "structured_outputs": {"json": schema}}}
    if mode == "none":
        return {}
    raise ValueError(f"unknown structured output mode {mode!r}; one of {', '.join(STRUCTURED_OUTPUT_MODES)}")
