"""samples.jsonl streamed: each record written as the controller receives it, put in order once at the end.

Records arrive in the order items finish (any order under xdist); samples.jsonl lists them by (model, sample
id). Each record's line goes to ``samples.jsonl.spool`` the moment the record is added, with its offset kept in
a small index; at the end the lines are copied into samples.jsonl in order, as bytes (no record is converted or
parsed again), and the spool is removed. The finish then writes no record: at 10,000 samples converting and
writing every record took about a tenth of it.

A line the spool cannot take (a value JSON cannot hold, a refused write) turns it off: the finish then writes
samples.jsonl from the records, which names the value the way it always did.
"""

from __future__ import annotations

from operator import itemgetter
from pathlib import Path
from typing import Any, BinaryIO

from ..core import files, rundoc

SPOOL_SUFFIX = ".spool"


class RecordSpool:
    """An append-only file of record lines and their (sort key, offset, length) index."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.index: list[tuple[tuple[str, str], int, int]] = []
        self.broken = False
        self._offset = 0
        self._handle: BinaryIO | None = None

    def add(self, record: Any) -> None:
        """Append ``record``'s samples.jsonl line; on any failure the spool stops and the finish writes instead."""
        if self.broken:
            return
        try:
            line = files.jsonl_line(rundoc.compact(record.to_dict()))
            if self._handle is None:
                self._handle = self.path.open("wb")
            self._handle.write(line)
            self._handle.flush()  # on disk as it arrives: a run stopped now keeps every line scored so far
        except (ValueError, OSError):
            self.discard()
            return
        self.index.append((record.sort_key, self._offset, len(line)))
        self._offset += len(line)

    def holds(self, records: list[Any]) -> bool:
        """True when every line is on disk (the last buffered writes included) and there is one for each of
        ``records`` and no other; else the spool is discarded."""
        if not self.broken and self._handle is not None:
            try:
                self._handle.close()  # a full disk may refuse only the last buffered lines
            except OSError:
                self.discard()
            self._handle = None
        if self.broken or len(self.index) != len(records):
            self.discard()
            return False
        return True

    def write_sorted(self, destination: Path) -> None:
        """samples.jsonl, atomically, its lines in record order (after :meth:`holds`); the spool is removed after.
        A refused write raises :class:`~..core.files.OutputWriteError` as :func:`~..core.rundoc.write_samples`
        does."""
        order = sorted(self.index, key=itemgetter(0))  # stable: equal keys keep their arrival order
        try:
            with files.atomic(destination) as out:
                if order:
                    with self.path.open("rb") as spool:
                        for _, offset, length in order:
                            spool.seek(offset)
                            out.write(spool.read(length))
        finally:
            self.discard()

    def discard(self) -> None:
        """Stop spooling and remove the file."""
        self.broken = True
        self.index = []
        if self._handle is not None:
            try:
                self._handle.close()
            except OSError:
                pass
            self._handle = None
        try:
            self.path.unlink(missing_ok=True)
        except OSError:
            pass
