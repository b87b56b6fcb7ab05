"""Machine-readable outputs in the run directory (metrics.json and samples.jsonl) and the one way every output
file is written: atomically, through a temporary file beside it that never outlives a failure.

A full disk (ENOSPC), a quota, a read-only remount: any ``OSError`` while a file is written becomes one
:class:`OutputWriteError` naming the file and the reason; the temporary file is removed and the previous
file, if any, stays whole.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import secrets
import sys
from collections.abc import Iterable, Iterator
from itertools import islice
from pathlib import Path
from typing import IO, Any

import numpy as np
import orjson

from .errors import ExtractbenchError

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


def plain_sharing(data: Any) -> Any:
    """:func:`plain`, but a dict or list that is plain already (str keys; every value plain, and the same object
    after conversion) is returned as it is, not copied: a large run's metrics hold a dict per invalid sample, and
    a copy of them all stood beside the originals from the aggregation to the end of the reports (~40 MB at
    100,000 samples). The result shares those parts with ``data``: for a caller that changes neither."""
    if type(data) is dict:
        out = {str(k): plain_sharing(v) for k, v in data.items()}
        same = all(type(k) is str and out[k] is v for k, v in data.items())
        return data if same else out
    if type(data) is list:
        items = [plain_sharing(v) for v in data]
        return data if all(a is b for a, b in zip(items, data)) else items
    return _plain(data)


def dumps(data: Any, *, indent: int | None = None) -> str:
    """Strict JSON text (no NaN, no numpy types)."""
    return json.dumps(_plain(data), indent=indent, ensure_ascii=False, allow_nan=False)


class OutputWriteError(ExtractbenchError):
    """A file could not be written; the message names it and says why, in one line."""

    def __init__(self, path: Path, reason: str) -> None:
        super().__init__(f"{path}: not written: {reason}")
        self.path = path
        self.reason = reason


def os_reason(exc: OSError) -> str:
    """``No space left on device`` rather than ``[Errno 28] No space left on device: '/tmp/x/.samples...tmp'``."""
    return os.strerror(exc.errno) if exc.errno else str(exc)


@contextlib.contextmanager
def atomic(path: Path, mode: str = "wb", **open_args: Any) -> Iterator[IO[Any]]:
    """A handle on a temporary file beside ``path`` that replaces ``path`` once the block ends; on any failure the
    temporary file is removed and an ``OSError`` becomes :class:`OutputWriteError`."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, mode.replace("w", "x"), **open_args) as handle:
            yield handle
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        if isinstance(exc, OSError):
            raise OutputWriteError(path, os_reason(exc)) from None
        raise


def write_text(path: Path, text: str, *, newline: str | None = None) -> None:
    """``text`` in UTF-8, atomically."""
    with atomic(path, "w", encoding="utf-8", newline=newline) as handle:
        handle.write(text)


def write_json(path: Path, data: Any) -> None:
    """Write atomically, so a reader never sees half a file: the text :func:`dumps` makes with ``indent=2``, and a
    newline. Streamed, a few thousand pieces at a time: ``json.dumps`` with an indent joins a list of all the
    encoder's pieces, a string of ~50 bytes per number or key (metrics.json at 30,000 samples: 47 MB at once)."""
    encoder = json.JSONEncoder(ensure_ascii=False, allow_nan=False, indent=2)
    with atomic(path, "w", encoding="utf-8") as handle:
        try:
            pieces = encoder.iterencode(_plain(data))
            while batch := list(islice(pieces, _JSON_BATCH)):
                handle.write("".join(batch))
        except ValueError as exc:  # an integer past Python's 4,300-digit conversion limit
            raise OutputWriteError(path, f"a value cannot be written as JSON ({exc})") from None
        handle.write("\n")


_JSON_BATCH = 4096  # pieces joined per write


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
    """One JSON document per line, written atomically. A row that cannot be written as JSON (an integer past
    Python's 4,300-digit limit) fails the file, naming the row's sample id and the value's path."""
    with atomic(path) as handle:
        for number, row in enumerate(rows, start=1):
            try:
                line = jsonl_line(row)
            except ValueError as exc:
                raise OutputWriteError(path, unwritable(row, number, exc)) from None
            handle.write(line)


def unwritable(row: Any, number: int, exc: ValueError) -> str:
    """Which value of ``row`` (line ``number``) cannot be written, and why."""
    from .jsonio import _walk, format_path

    digits = sys.get_int_max_str_digits() if hasattr(sys, "get_int_max_str_digits") else 4300
    where = next(
        (
            format_path(parts)
            for value, parts in _walk(plain(row))
            if type(value) is int and value.bit_length() * 0.30103 > digits - 1
        ),
        None,
    )
    sample = row.get("sample_id") if isinstance(row, dict) else None
    who = f"sample {sample!r}" if isinstance(sample, str) else f"line {number}"
    if where is None:
        return f"{who}: a value cannot be written as JSON ({exc})"
    return f"{who}: the value at {where} cannot be written as JSON: an integer longer than {digits:,} digits"
