"""Machine-readable outputs in the run directory: metrics.json and samples.jsonl."""

from __future__ import annotations

import json
import math
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import orjson

METRICS_FILE = "metrics.json"
SAMPLES_FILE = "samples.jsonl"


def _plain(value: Any) -> Any:
    """JSON has no numpy scalars, paths or NaN: convert them (NaN becomes null)."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted(_plain(v) for v in value)
    return value


def plain(data: Any) -> Any:
    """The JSON data model of ``data``: what a reader of metrics.json gets back (NaN as None, no numpy)."""
    return _plain(data)


def dumps(data: Any, *, indent: int | None = None) -> str:
    """Strict JSON text (no NaN, no numpy types)."""
    return json.dumps(_plain(data), indent=indent, ensure_ascii=False, allow_nan=False)


def write_json(path: Path, data: Any) -> None:
    """Write atomically, so a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(dumps(data, indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)


_ORJSON_OPTIONS = orjson.OPT_SERIALIZE_NUMPY | orjson.OPT_NON_STR_KEYS | orjson.OPT_APPEND_NEWLINE


def jsonl_line(row: Any) -> bytes:
    """One strict JSON line, as :func:`dumps` writes it, in UTF-8. orjson writes NaN as null and numpy scalars
    as numbers natively (10x the recursive conversion); what it refuses (integers beyond 64 bits, lone
    surrogates) goes the slow way."""
    try:
        return orjson.dumps(row, default=_plain_or_fail, option=_ORJSON_OPTIONS)
    except (orjson.JSONEncodeError, TypeError):
        return (dumps(row) + "\n").encode("utf-8", "backslashreplace")  # a lone surrogate becomes an escape


def _plain_or_fail(value: Any) -> Any:
    converted = _plain(value)
    if converted is value:
        raise TypeError(f"not JSON: {type(value).__name__}")
    return converted


def write_jsonl(path: Path, rows: Iterable[Any]) -> None:
    """One JSON document per line, written atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(path.suffix + ".tmp")
    with tmp.open("wb") as handle:
        for row in rows:
            handle.write(jsonl_line(row))
    os.replace(tmp, path)


