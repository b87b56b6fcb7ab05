"""Turn raw model output into a JSON value, or say why it is not one."""

from __future__ import annotations

import json
import re
from typing import Any, NamedTuple

import orjson

from ..core.jsonio import MAX_DEPTH, too_deep

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
            return _bounded(raw)
    text = strip_fence(raw).strip()
    if not text:
        return ParsedOutput(None, False, "empty output")
    try:
        return _bounded(orjson.loads(text), text)  # fast path; strict RFC 8259
    except orjson.JSONDecodeError:
        pass
    except RecursionError:
        return _TOO_DEEP
    try:  # the standard parser explains the error (and accepts NaN/Infinity, as Python writes them)
        return _bounded(json.loads(text), text)
    except json.JSONDecodeError as exc:
        return ParsedOutput(None, False, f"unparseable JSON: {exc.msg} (line {exc.lineno} column {exc.colno})")
    except RecursionError:
        return _TOO_DEEP
    except ValueError as exc:  # an integer over 4,300 digits
        return ParsedOutput(None, False, f"unparseable JSON: {str(exc)[:200]}")


# Validators and the field walk recurse once or more per level: deeper output is refused up front
# (with the input files' limit), instead of failing somewhere inside scoring.
_TOO_DEEP = ParsedOutput(None, False, f"unparseable JSON: nested too deeply (more than {MAX_DEPTH} levels)")


def _bounded(value: Any, text: str | None = None) -> ParsedOutput:
    # deeper than MAX_DEPTH needs more than MAX_DEPTH brackets: a C-level count spares the walk
    if text is not None and text.count("{") + text.count("[") <= MAX_DEPTH:
        return ParsedOutput(value, True)
    if type(value) in (dict, list) and too_deep(value, MAX_DEPTH) is not None:
        return _TOO_DEEP
    return ParsedOutput(value, True)
