"""The one reader of user JSON and JSONL files (datasets, predictions, baselines, journals), with limits.

Hostile or broken files must give a clear message, never a crash or a hang: every reader here
enforces the same explicit limits and raises (or yields) :class:`JsonInputError`, which names the
line and column and, when the value could be parsed, the JSON path of the fault.

- encoding: UTF-8; a UTF-8 byte-order mark is dropped, UTF-16/32 files and invalid bytes are errors;
- line size: a JSONL line longer than :data:`MAX_LINE_BYTES` is skipped unread (never echoed);
- nesting: deeper than :data:`MAX_DEPTH` levels is refused (the scorers and validators recurse);
- numbers: integers longer than Python's 4,300-digit limit are refused; non-finite numbers
  (``NaN``, ``Infinity``, ``1e400``) are found by :func:`find_nonfinite` for callers that reject them.
"""

from __future__ import annotations

import codecs
import json
import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from . import userfiles
from .errors import ExtractbenchError

MAX_DEPTH = 128
"""Deepest nesting accepted in an input file (the Python validators use ~5 stack frames a level)."""
MAX_LINE_BYTES = 64 * 1024 * 1024
"""Longest JSONL line read (a 2 MB document with its schema and gold fits many times over)."""
MAX_FILE_BYTES = 1024 * 1024 * 1024
"""Largest whole-file JSON document read into memory."""
NONFINITE = "a number that is not finite (NaN, Infinity, or beyond ±1.8e308 such as 1e400); JSON numbers must be finite"
CLIP = 120
"""Characters of untrusted text (an id guessed from a broken line) quoted in a message."""

_BOMS = {
    b"\xff\xfe\x00\x00": "UTF-32",
    b"\x00\x00\xfe\xff": "UTF-32",
    b"\xff\xfe": "UTF-16",
    b"\xfe\xff": "UTF-16",
}
_UTF8_BOM = b"\xef\xbb\xbf"
_LONG_INT = re.compile(r"\d{19}")
# The same test on bytes without the regex, which tries every position (86 us on a 1.5 KB dataset row, 5.6 us
# this way; the reports read every samples.jsonl line through it): each ASCII digit becomes "0", any other
# byte a space, then a run of 19 zeros is looked for, both in C.
_DIGITS_ONLY = bytes(0x30 if 0x30 <= byte <= 0x39 else 0x20 for byte in range(256))
_LONG_RUN = b"0" * 19


def has_long_int(text: str | bytes | bytearray) -> bool:
    """True when ``text`` holds 19 digits in a row (an integer orjson would not read exactly may be among them)."""
    if isinstance(text, (bytes, bytearray)):
        return _LONG_RUN in text.translate(_DIGITS_ONLY)
    return _LONG_INT.search(text) is not None


_ID = re.compile(rb'"id"\s*:\s*(?:"((?:[^"\\]|\\.){1,200})"|(-?\d{1,40}))')


class JsonInputError(ExtractbenchError, ValueError):
    """Why a JSON text (a file, a JSONL line, a JSON string in a row) cannot be used."""

    def __init__(
        self,
        message: str,
        *,
        line: int | None = None,
        column: int | None = None,
        path: str | None = None,
        sample_id: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column
        self.path = path  # "$.expected.total", when the value was parsed
        self.sample_id = sample_id  # the row's "id", when it can be told
        self.truncated = False  # a JSONL line that stops before its JSON does (a write cut short), see cut_short()

    def __str__(self) -> str:
        where = f" (column {self.column})" if self.column else ""
        at = f"{self.path}: " if self.path and self.path != "$" else ""
        return f"{at}{self.message}{where}"


def clip(text: str, limit: int = CLIP) -> str:
    """At most ``limit`` characters of ``text`` (an ellipsis marks the cut)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def loads(text: str | bytes, *, max_depth: int = MAX_DEPTH, allow_nonfinite: bool = True) -> Any:
    """Parse one JSON text within the limits, or raise :class:`JsonInputError`.

    orjson parses the common case fast (it is strict RFC 8259: no NaN, 64-bit integers); what it
    refuses goes to the standard parser, which accepts NaN/Infinity and big integers (up to 4,300
    digits) and explains syntax errors with a line and column.
    """
    # orjson reads integers past 64 bits as floats (digits lost): such texts go to the standard parser.
    try:
        value = _loads_std(text) if has_long_int(text) else orjson.loads(text)
    except orjson.JSONDecodeError:
        value = _loads_std(text)
    _check(value, text, max_depth, allow_nonfinite)
    return value


def _loads_std(text: str | bytes) -> Any:
    if isinstance(text, (bytes, bytearray)):
        raw = bytes(text)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise _encoding_error(raw, exc) from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise JsonInputError(f"not valid JSON: {exc.msg}", line=exc.lineno, column=exc.colno) from None
    except RecursionError:
        raise JsonInputError(f"nested too deeply (more than {MAX_DEPTH} levels)") from None
    except ValueError as exc:  # int('9' * 5000): "Exceeds the limit (4300 digits) for integer string conversion"
        raise JsonInputError(f"a number is too large to read ({clip(str(exc), 200)})") from None


def _check(value: Any, text: str | bytes, max_depth: int, allow_nonfinite: bool) -> None:
    # Depth > max_depth needs at least max_depth opening brackets: a C-level count skips the walk
    # for ordinary rows.
    if isinstance(text, (bytes, bytearray)):
        brackets = text.count(b"[") + text.count(b"{")
    else:
        brackets = text.count("[") + text.count("{")
    if brackets > max_depth:
        path = too_deep(value, max_depth)
        if path is not None:
            raise JsonInputError(f"nested too deeply (more than {max_depth} levels)", path=path)
    if not allow_nonfinite:
        path = find_nonfinite(value)
        if path is not None:
            raise JsonInputError(NONFINITE, path=path)


def _walk(value: Any) -> Iterator[tuple[Any, tuple[Any, ...]]]:
    """Every node with its path, iteratively (no recursion on hostile nesting)."""
    stack: list[tuple[Any, tuple[Any, ...]]] = [(value, ())]
    while stack:
        node, path = stack.pop()
        yield node, path
        if type(node) is dict:
            stack.extend((child, (*path, key)) for key, child in reversed(node.items()))
        elif type(node) is list:
            stack.extend((child, (*path, i)) for i, child in reversed(list(enumerate(node))))


def format_path(parts: tuple[Any, ...]) -> str:
    """``("expected", "items", 2)`` -> ``$.expected.items[2]`` (keys clipped)."""
    return "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{clip(str(p), 60)}" for p in parts)


def too_deep(value: Any, max_depth: int = MAX_DEPTH) -> str | None:
    """The path where ``value`` first nests deeper than ``max_depth`` containers, or None."""
    if type(value) not in (dict, list) or _depth_within(value, max_depth):
        return None
    stack: list[tuple[Any, tuple[Any, ...]]] = [(value, ())]
    while stack:
        node, path = stack.pop()
        if len(path) >= max_depth:
            # the first levels say where; the rest is the same bracket over and over
            return format_path(path[:8]) + ("…" if len(path) > 8 else "")
        items = node.items() if type(node) is dict else enumerate(node)
        stack.extend((child, (*path, key)) for key, child in items if type(child) in (dict, list))
    return None


def _depth_within(value: dict[Any, Any] | list[Any], max_depth: int) -> bool:
    """True when ``value`` nests at most ``max_depth`` containers deep: the check every dataset row and
    output pays, so it counts levels instead of building the path of every container (found only on failure)."""
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        children = node.values() if type(node) is dict else node
        for child in children:
            if type(child) is dict or type(child) is list:
                if depth >= max_depth:
                    return False
                stack.append((child, depth + 1))
    return True


def _all_finite(value: Any) -> bool:
    """True when no number in ``value`` is NaN or infinite: the fast answer for the usual row (no paths built)."""
    isfinite = math.isfinite
    stack = [value]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is dict:
            stack.extend(node.values())
        elif kind is list:
            stack.extend(node)
        elif kind is float and not isfinite(node):
            return False
    return True


def find_nonfinite(value: Any) -> str | None:
    """The path of the first NaN or infinite number in ``value`` (``1e400`` reads as infinity), or None."""
    if _all_finite(value):
        return None
    for node, path in _walk(value):
        if type(node) is float and not math.isfinite(node):
            return format_path(path)
    return None


# -- files ------------------------------------------------------------------------------------


def _encoding_error(data: bytes, exc: UnicodeDecodeError) -> JsonInputError:
    start = exc.start
    line = data.count(b"\n", 0, start) + 1
    column = start - (data.rfind(b"\n", 0, start) + 1) + 1
    return JsonInputError(
        f"not UTF-8: byte 0x{data[start]:02x} cannot be decoded; save the file as UTF-8", line=line, column=column
    )


def _bom_error(head: bytes) -> JsonInputError | None:
    for bom, name in _BOMS.items():
        if head.startswith(bom):
            return JsonInputError(f"the file is {name} (byte-order mark); save it as UTF-8", line=1)
    return None


def load_file(path: Path, *, max_depth: int = MAX_DEPTH, allow_nonfinite: bool = True) -> Any:
    """A whole JSON file (a UTF-8 byte-order mark is dropped); raises :class:`JsonInputError` or ``OSError``."""
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise JsonInputError(f"the file is {size:,} bytes; at most {MAX_FILE_BYTES:,} are read")
    data = userfiles.read_bytes(path, MAX_FILE_BYTES)  # a device or FIFO reports no size: refused, not read
    error = _bom_error(data[:4])
    if error is not None:
        raise error
    if data.startswith(_UTF8_BOM):
        data = data[len(_UTF8_BOM) :]
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _encoding_error(data, exc) from None
    return loads(data, max_depth=max_depth, allow_nonfinite=allow_nonfinite)


def guess_id(line: bytes) -> str | None:
    """The ``"id"`` of a JSONL row that could not be parsed, when it is plainly there (for messages only)."""
    match = _ID.search(line[:4096])
    if match is None:
        return None
    raw = match.group(1) if match.group(1) is not None else match.group(2)
    return clip(raw.decode("utf-8", errors="replace"))


def iter_jsonl(
    path: Path,
    *,
    max_depth: int = MAX_DEPTH,
    allow_nonfinite: bool = True,
    max_line_bytes: int | None = None,
    utf16: bool = False,
) -> Iterator[tuple[int, Any]]:
    """``(line number, value or JsonInputError)`` for every non-blank line of a JSONL file.

    A bad line never stops the file: it is yielded as an error and reading goes on. A line longer
    than ``max_line_bytes`` is skipped in chunks, so a huge line costs no memory. ``utf16``: a file
    with a UTF-16 or UTF-32 byte-order mark is read in that encoding (a file the run itself wrote, such
    as the journal, that an editor saved again), instead of being one error.
    """
    for number, value, _ in iter_jsonl_spans(
        path, max_depth=max_depth, allow_nonfinite=allow_nonfinite, max_line_bytes=max_line_bytes, utf16=utf16
    ):
        yield number, value


def iter_jsonl_spans(
    path: Path,
    *,
    max_depth: int = MAX_DEPTH,
    allow_nonfinite: bool = True,
    max_line_bytes: int | None = None,
    utf16: bool = False,
) -> Iterator[tuple[int, Any, tuple[int, bytes] | None]]:
    """:func:`iter_jsonl` with where each value's line is: ``(byte offset in the file, the line's bytes)``, so a
    reader can keep the offset and read the line again later (None for a file read as UTF-16/32, whose offsets
    are not the lines' bytes)."""
    max_line_bytes = max_line_bytes or MAX_LINE_BYTES
    with userfiles.open_regular(path) as handle:
        head = handle.peek(4)[:4] if hasattr(handle, "peek") else b""
        error = _bom_error(head)
        lines: Iterator[tuple[int | None, bytes | JsonInputError | None]] = _lines(handle, max_line_bytes)
        if error is not None:
            if not utf16:
                yield 1, error, None
                return
            encoding = "utf-32" if "UTF-32" in error.message else "utf-16"
            lines = ((None, line) for line in _transcoded(handle, encoding, max_line_bytes))
        for number, (start, line) in enumerate(lines, start=1):
            if isinstance(line, JsonInputError):
                line.line = number
                yield number, line, None
                return
            span = (start, line) if start is not None and line is not None else None
            if number == 1 and line is not None and line.startswith(_UTF8_BOM):
                line = line[len(_UTF8_BOM) :]
            if line is None:
                message = f"line longer than {max_line_bytes:,} bytes; skipped unread"
                yield number, JsonInputError(message, line=number), None
                continue
            if not line.strip():
                continue
            try:
                line.decode("utf-8")
            except UnicodeDecodeError as exc:
                error = _encoding_error(line, exc)
                error.line, error.sample_id, error.truncated = number, guess_id(line), cut_short(line)
                yield number, error, None
                continue
            try:
                value = loads(line, max_depth=max_depth, allow_nonfinite=allow_nonfinite)
            except JsonInputError as exc:
                exc.line, exc.sample_id = number, guess_id(line)
                exc.truncated = exc.message.startswith("not valid JSON") and cut_short(line)
                yield number, exc, None
                continue
            yield number, value, span


# What may follow the last whole token of a JSON text cut short: part of a literal or a number, part of an escape.
_PARTIAL_TOKEN = re.compile(r"t(r(u)?)?|f(a(l(s)?)?)?|n(u(l)?)?|-?(0|[1-9]\d*)?(\.\d*)?([eE][+-]?\d*)?")
_PARTIAL_ESCAPE = re.compile(r"\\?u[0-9a-fA-F]{0,4}|\\")  # the scanner points at the "u" or the backslash
OVER_LIMITS = ("line longer than", "nested too deeply", "a number is too large")
"""How the messages of a text refused for its size, not its form, begin (:func:`over_limits`)."""


def over_limits(error: JsonInputError) -> bool:
    """Whether ``error`` refuses a text for its size (line length, nesting, digits), not for being malformed."""
    return error.message.startswith(OVER_LIMITS)


def cut_short(line: bytes) -> bool:
    """Whether ``line`` is the start of a JSON text that stops early (a write cut by a kill or a full disk),
    as opposed to a text that is malformed where it stands; a whole JSON text is not cut short."""
    data = line.rstrip(b"\r\n")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.end != len(data) or exc.reason != "unexpected end of data":
            return False  # an undecodable byte inside the line, not a character cut at its end
        try:
            text = data[: exc.start].decode("utf-8")
        except UnicodeDecodeError:
            return False
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        if exc.msg.startswith("Unterminated string"):
            return True  # a string that never closes: a JSONL line holds no raw newline
        rest = text[exc.pos :]
        pattern = _PARTIAL_ESCAPE if exc.msg.startswith("Invalid \\u") else _PARTIAL_TOKEN
        return pattern.fullmatch(rest) is not None
    except (RecursionError, ValueError):
        return False
    return False


def _transcoded(handle: BinaryIO, encoding: str, limit: int) -> Iterator[bytes | JsonInputError | None]:
    """The lines of a UTF-16/32 file (its byte-order mark tells the byte order) as UTF-8 bytes; None for one
    longer than ``limit`` (read whole: such files are rare and small); an error, then nothing, where the bytes
    stop being that encoding."""
    reader = codecs.getreader(encoding)(handle, "strict")
    while True:
        try:
            text = reader.readline(limit + 1, keepends=True)
        except UnicodeDecodeError:
            yield JsonInputError(f"not {encoding.upper()}: the bytes after this line cannot be decoded")
            return
        if not text:
            return
        data = text.encode("utf-8", "surrogatepass")
        yield None if len(data) > limit else data


def _lines(handle: BinaryIO, limit: int) -> Iterator[tuple[int, bytes | None]]:
    """``(offset, line)`` for each of the file's lines (None for one longer than ``limit``, whose bytes are
    skipped)."""
    position = 0
    while True:
        start = position
        line = handle.readline(limit + 1)
        if not line:
            return
        position += len(line)
        if len(line) > limit and not line.endswith(b"\n"):
            while True:  # drain the rest of the long line
                rest = handle.readline(1024 * 1024)
                position += len(rest)
                if not rest or rest.endswith(b"\n"):
                    break
            yield start, None
            continue
        yield start, line
