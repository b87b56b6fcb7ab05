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

from array import array
from pathlib import Path
from typing import Any, BinaryIO

from ..core import files, rundoc

SPOOL_SUFFIX = ".spool"


class RecordSpool:
    """An append-only file of record lines and their index: each line's sort key, offset and length, kept as
    columns (the key's two texts, shared with the record, and the numbers in an array): 100,000 lines cost about
    3 MB of index instead of 19 MB as tuples."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._models: list[str] = []
        self._ids: list[str] = []
        self._spans = array("q")  # offset, length, offset, length...
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
        model, sample_id = record.sort_key
        self._models.append(model)
        self._ids.append(sample_id)
        self._spans.extend((self._offset, len(line)))
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
        if self.broken or len(self._ids) != len(records):
            self.discard()
            return False
        return True

    def write_sorted(self, destination: Path) -> None:
        """samples.jsonl, atomically, its lines in record order (after :meth:`holds`); the spool is removed after.
        A refused write raises :class:`~..core.files.OutputWriteError` as :func:`~..core.rundoc.write_samples`
        does."""
        models, ids, spans = self._models, self._ids, self._spans
        order = sorted(range(len(ids)), key=lambda i: (models[i], ids[i]))  # stable: equal keys keep arrival order
        try:
            with files.atomic(destination) as out:
                if order:
                    with self.path.open("rb") as spool:
                        for i in order:
                            spool.seek(spans[2 * i])
                            out.write(spool.read(spans[2 * i + 1]))
        finally:
            self.discard()

    def discard(self) -> None:
        """Stop spooling and remove the file."""
        self.broken = True
        self._models, self._ids, self._spans = [], [], array("q")
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
