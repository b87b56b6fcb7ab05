"""Turn raw model output into a JSON value, or say why it is not one."""

from __future__ import annotations

import json
import re

import orjson
from typing import Any, NamedTuple

# A fenced block anywhere in the text: ```json ... ``` (the language tag is optional).
_FENCE = re.compile(r"```[ \t]*(?:json|JSON|json5)?[ \t]*\r?\n?(.*?)\r?\n?[ \t]*```", re.DOTALL)

MISSING: Any = type("Missing", (), {"__repr__": lambda self: "<no output>"})()
"""Stands for "the model produced no output at all" (request failed, prediction absent)."""


class ParsedOutput(NamedTuple):
    """A parsed value, or ``error`` saying why there is none."""

    value: Any
    json_valid: bool
    error: str | None = None


def strip_fence(text: str) -> str:
    """The content of the first Markdown code fence, or the text itself when there is none."""
    if "```" not in text:
        return text
    match = _FENCE.search(text)
    return match.group(1) if match else text


def parse_output(raw: Any) -> ParsedOutput:
    """Parse raw model text (a ```json fence is stripped); non-string values are taken as already parsed."""
    if raw is MISSING:
        return ParsedOutput(None, False, "no output")
    if not isinstance(raw, str):
        if isinstance(raw, (bytes, bytearray)):
            raw = raw.decode("utf-8", errors="replace")
        else:
            return ParsedOutput(raw, True)
    text = strip_fence(raw).strip()
    if not text:
        return ParsedOutput(None, False, "empty output")
    try:
        return ParsedOutput(orjson.loads(text), True)  # fast path; strict RFC 8259
    except orjson.JSONDecodeError:
        pass
    try:  # the standard parser explains the error (and accepts NaN/Infinity, as Python writes them)
        return ParsedOutput(json.loads(text), True)
    except json.JSONDecodeError as exc:
        return ParsedOutput(None, False, f"unparseable JSON: {exc.msg} (line {exc.lineno} column {exc.colno})")
    except RecursionError:
        return ParsedOutput(None, False, "unparseable JSON: nested too deeply")
