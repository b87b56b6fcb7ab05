"""A JSONL dataset's rows read again by byte offset, so a run need not hold every sample's text and gold.

At 100,000 samples the text and gold held whole were about 270 MB. A sample read from a JSONL file keeps where
its line is (offset, length) and an 8-byte digest of the line, and reads the line again when its text or gold
is asked for; the last :data:`KEPT` samples read keep theirs (an item asks several times while it is scored).

The digest makes an edited file an error, never a wrong sample: a line that is not what was loaded raises
:class:`DatasetChangedError` naming the file, the line and the sample.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

from ..core.errors import ExtractbenchError

__all__ = ["KEPT", "DatasetChangedError", "RowFile", "digest"]

KEPT = 64
"""Samples whose text and gold stay loaded after they are read (the most recently read ones)."""

_UTF8_BOM = b"\xef\xbb\xbf"


class DatasetChangedError(ExtractbenchError):
    """A dataset file changed while the run was reading it: a sample's line is no longer what was loaded.
    ``source``, ``location``, ``sample_id`` and ``reason`` say where and what, for the run's input problems."""

    def __init__(self, source: str, location: str, sample_id: str, reason: str) -> None:
        super().__init__(
            f"dataset {source}: {location} (sample {sample_id!r}) {reason}; run again on an unchanged file"
        )
        self.source, self.location, self.sample_id, self.reason = source, location, sample_id, reason


def digest(line: bytes) -> bytes:
    """What a line is checked against when it is read again."""
    return hashlib.blake2b(line, digest_size=8).digest()


class RowFile:
    """One JSONL file whose rows are read again by offset (shared by every sample read from it)."""

    __slots__ = ("path",)

    def __init__(self, path: Path) -> None:
        self.path = path

    def read(self, offset: int, length: int, expected: bytes, sample: Any) -> bytes:
        """The line at ``offset`` of ``sample``, checked against its digest (BOM removed, as when it was loaded)."""
        try:
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_BINARY", 0))
            try:
                line = os.pread(fd, length, offset) if hasattr(os, "pread") else _read_at(fd, offset, length)
            finally:
                os.close(fd)
        except OSError as exc:
            raise self._changed(sample, f"cannot be read again: {exc}") from None
        if len(line) != length or digest(line) != expected:
            raise self._changed(sample, "changed while the run was reading it: the line is not what was loaded")
        return line[len(_UTF8_BOM) :] if offset == 0 and line.startswith(_UTF8_BOM) else line

    def _changed(self, sample: Any, reason: str) -> DatasetChangedError:
        return DatasetChangedError(str(self.path), sample.meta.get("location", "its line"), sample.id, reason)


def _read_at(fd: int, offset: int, length: int) -> bytes:  # pragma: no cover - platforms without pread
    os.lseek(fd, offset, os.SEEK_SET)
    return os.read(fd, length)


class _Kept:
    """The samples whose loaded fields are kept, most recent last; the oldest lose theirs past :data:`KEPT`."""

    def __init__(self) -> None:
        self._order: OrderedDict[int, Any] = OrderedDict()
        self._lock = threading.Lock()

    def add(self, holder: Any, names: tuple[str, ...]) -> None:
        with self._lock:
            self._order[id(holder)] = holder
            self._order.move_to_end(id(holder))
            while len(self._order) > KEPT:
                _, old = self._order.popitem(last=False)
                for name in names:
                    old.__dict__.pop(name, None)


kept = _Kept()
