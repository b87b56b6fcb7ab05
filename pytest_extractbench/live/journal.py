"""Nothing is lost (DESIGN decision 4): the run's response journal and the cross-run response cache.

The journal is ``responses.jsonl`` in the run directory, one line per response:
``{"format_version", "model", "sample_id", "key", "response"}`` (``core.rundoc.JournalEntry``, which
reads and writes the lines), where ``response`` is ``ModelResponse.as_dict()`` and ``key`` the
request's cache key. Each line is written with one ``os.write`` on an
``O_APPEND`` descriptor the moment the response arrives, so it reaches the kernel at once (a
killed process loses nothing it had received) and xdist workers can share the file: the kernel
appends each write whole at the end of the file. It is fsynced once, at close (cheap; survives a
process crash, and a power loss up to the last close). A reader skips a line cut short; any other
line that is not an entry stops resume and replay with its file and line named.

The cache holds one JSON file per key under ``.extractbench/cache/responses/`` written through a
temp file and an atomic rename, so concurrent writers (workers, parallel CI jobs) never expose a
half-written entry. Only reusable responses are cached or resumed: answers (``error_class`` None)
and truncated answers (deterministic at temperature 0, and the most expensive to redo); transient
failures (timeouts, connection errors, 429, 5xx, bad bodies) and request errors are asked again.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import math
import os
import tempfile
import time
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..core import jsonio, rundoc, textsafe
from ..core.files import os_reason
from ..core.textsafe import clip
from ..dataset.responses import ModelResponse, clean_timings, clean_usage
from ..scoring import MISSING

JOURNAL_FILE = "responses.jsonl"
REUSABLE_ERRORS = (None, "truncated")


def is_reusable(response: ModelResponse) -> bool:
    """An answer worth keeping: a rerun with the same inputs would get the same thing."""
    return response.error_class in REUSABLE_ERRORS and response.content is not MISSING


# What each recorded field may hold; a value of another type (a hand-edited or foreign journal:
# ``usage`` as a list, ``attempts`` as text) is dropped rather than crash resume, replay or metrics.
_FIELD_TYPES: dict[str, tuple[type, ...]] = {
    "error_class": (str,),
    "error": (str,),
    "finish_reason": (str,),
    "latency_s": (int, float),
    "started_at": (int, float),
    "finished_at": (int, float),
    "attempts": (int,),
    "cached": (bool,),
    "tool_calls": (list,),
    "logprobs": (list,),
    "choices": (list,),
    "wait_s": (int, float),
    "first_token_s": (int, float),
    "end_to_end_s": (int, float),
    "attempt_log": (list,),
}


def response_from_dict(data: dict[str, Any]) -> ModelResponse:
    """Inverse of ``ModelResponse.as_dict()``; unknown fields (added by newer clients) and values of
    the wrong type are dropped, odd token counts left out (`clean_usage`)."""
    values: dict[str, Any] = {}
    for name, value in data.items():
        types = _FIELD_TYPES.get(name)
        if name == "content" or (
            types is not None and isinstance(value, types) and (name == "cached" or not isinstance(value, bool))
        ):
            values[name] = value
    for name in ("latency_s", "started_at", "finished_at", "wait_s", "first_token_s", "end_to_end_s"):
        if name in values and not math.isfinite(values[name]):
            del values[name]
    if "attempt_log" in values:
        values["attempt_log"] = clean_attempt_log(values["attempt_log"])
    if values.get("content") is None:
        values["content"] = MISSING
    origin = data.get("origin")
    if isinstance(origin, dict):
        values["origin"] = {
            k: clip(v, ORIGIN_LIMIT) for k, v in origin.items() if k in ORIGIN_FIELDS and isinstance(v, str)
        }
    values["usage"] = clean_usage(data.get("usage"))
    values["timings"] = clean_timings(data.get("timings"))
    return ModelResponse(**values)


def clean_attempt_log(log: list[Any]) -> list[dict[str, Any]] | None:
    """The attempts a stored answer lists, each with a finite start and latency and a textual outcome; entries of
    another shape are dropped (a hand-edited journal must not crash the reliability counts)."""
    out = []
    for entry in log:
        if not isinstance(entry, dict) or not isinstance(entry.get("outcome"), str):
            continue
        start, latency = _duration(entry.get("start_s")), _duration(entry.get("latency_s"))
        if start is None or latency is None:
            continue
        kept = {"outcome": entry["outcome"], "start_s": start, "latency_s": latency}
        wait = _duration(entry.get("slot_wait_s"))
        if wait is not None:
            kept["slot_wait_s"] = wait
        if isinstance(entry.get("error"), str):
            kept["error"] = clip(entry["error"], ORIGIN_LIMIT)
        out.append(kept)
    return out or None


def _duration(value: Any) -> float | None:
    """A finite, non-negative number of seconds as a float, or None for anything else (a bool too)."""
    if type(value) in (int, float) and math.isfinite(value) and value >= 0:
        return float(value)
    return None


ORIGIN_FIELDS = ("source", "by", "where", "at")
ORIGIN_LIMIT = 500  # a URL or a function name; a longer value in a stored answer is cut


def asked(by: str, where: str, finished_at: float | None) -> dict[str, str]:
    """The origin of an answer asked in this run."""
    when = datetime.fromtimestamp(finished_at or time.time(), timezone.utc)
    return {"source": "asked", "by": by, "where": where, "at": when.isoformat(timespec="seconds")}


def reused(response: ModelResponse, source: str) -> ModelResponse:
    """``response`` marked as reused from ``source`` (cache, journal, replay), keeping who gave it and when."""
    response.origin = {**(response.origin or {}), "source": source}
    return response


def _dumps(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)


log = textsafe.get_logger(__name__)


@contextlib.contextmanager
def _locked(fd: int) -> Iterator[None]:
    """An exclusive advisory lock on the journal for one append (or the torn-line check), shared with every
    process of the run (xdist workers), released even when the write fails."""
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)


class Journal:
    """Appends one line per response to ``responses.jsonl`` (shared by xdist workers)."""

    def __init__(self, run_dir: Path) -> None:
        self.path = run_dir / JOURNAL_FILE
        self.error: str | None = None  # why the journal stopped (a full disk), once it has
        run_dir.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self._fd: int | None = fd
        self._end_torn_line(fd)

    def _end_torn_line(self, fd: int) -> None:
        """A journal cut mid-line (a full disk, a kill) gets its line ended, so the next answer is not glued to it.

        Under the journal's lock, as every append is: another process's line being written at this moment
        would otherwise look torn, and a newline put into it would tear it for real."""
        try:
            with _locked(fd):
                size = os.fstat(fd).st_size
                if size:
                    with open(self.path, "rb") as handle:
                        handle.seek(size - 1)
                        torn = handle.read(1) != b"\n"
                    if torn:
                        os.write(fd, b"\n")
        except OSError:
            pass  # the first append says what is wrong

    def append(self, model: str, sample_id: str, key: str, response: ModelResponse) -> None:
        """Write the line now: one write() call, so lines from several processes never interleave."""
        if self._fd is None:
            return
        data = rundoc.journal_line(model, sample_id, key, response.as_dict())
        try:
            with _locked(self._fd):
                written = os.write(self._fd, data)
                while written < len(data):  # only on a full disk or a signal; finish the line
                    written += os.write(self._fd, data[written:])
        except OSError as exc:
            # A full disk: the answer still reaches its item (and samples.jsonl, if there is room at the end);
            # the journal stops here rather than tear lines, and says so once.
            self.error = f"{self.path}: not written: {os_reason(exc)}; later answers are not journaled"
            log.warning("extractbench: %s", self.error)
            self.close()

    def close(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.fsync(self._fd)
            os.close(self._fd)
            self._fd = None


def read_journal(run_dir: Path) -> Iterator[rundoc.JournalEntry]:
    """The journal's entries in order (:func:`..core.rundoc.iter_journal`: a line cut short or past the input
    limits is skipped, any other bad line is a ``RunDocError`` naming the file and line)."""
    return rundoc.iter_journal(run_dir / JOURNAL_FILE)


def latest_responses(run_dir: Path) -> dict[tuple[str, str], tuple[str | None, ModelResponse]]:
    """(model, sample id) -> (key, response): the last reusable response, else the last one."""
    found: dict[tuple[str, str], tuple[str | None, ModelResponse]] = {}
    for entry in read_journal(run_dir):
        pair = (entry["model"], entry["sample_id"])
        response = response_from_dict(entry["response"])
        previous = found.get(pair)
        if previous is None or is_reusable(response) or not is_reusable(previous[1]):
            found[pair] = (entry["key"], response)
    return found


def reusable_by_key(run_dir: Path) -> dict[str, ModelResponse]:
    """Cache key -> reusable response, for ``--extractbench-resume``."""
    return {
        entry["key"]: response
        for entry in read_journal(run_dir)
        if entry["key"] and is_reusable(response := response_from_dict(entry["response"]))
    }


class ResponseCache:
    """Reusable responses by cache key, one small JSON file each."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> ModelResponse | None:
        try:
            data = jsonio.load_file(self._path(key))
        except (OSError, ValueError):
            return None
        response = response_from_dict(data)
        response.cached = True
        return response

    def put(self, key: str, response: ModelResponse) -> None:
        """Store a reusable response (others are ignored); never raises on a full or read-only disk."""
        if not is_reusable(response) or response.cached:
            return
        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".", suffix=".tmp", dir=path.parent)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(_dumps(response.as_dict()))
            os.replace(tmp, path)
        except OSError:
            with contextlib.suppress(OSError, UnboundLocalError):
                os.unlink(tmp)
