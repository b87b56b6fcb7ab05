"""Text held compressed between the pass over the records that makes it and the file that writes it.

The reports read samples.jsonl once, but write what they make of it in another order: report.html's sample viewer
writes its string table before the samples' details and results that refer to it, and the table is complete only
after the last record; samples.csv is written after report.html. What waits is kept here as text, past a few megabytes
compressed in batches (zlib's fastest level: the viewer's JSON and the CSV lines shrink five to tenfold), and read
back text by text in the order it came: a few hundred bytes per sample wait, instead of the Python objects they were
made of.
"""

from __future__ import annotations

import zlib
from array import array
from collections.abc import Iterator

_BATCH = 1 << 16  # characters compressed together: large enough to compress well, small beside the page
_LEVEL = 1  # the fastest: what is held is read back once or twice, by this process
_AS_TEXT = 1 << 20  # characters a spool keeps as they are before it compresses: a run of a few hundred samples
# pays no compression, a larger one holds this much more (a constant) and compresses the rest. Five spools wait at
# once (the viewer's texts, rows and details, samples.csv's lines and header): at 8M characters each they held
# 25 MB as text at 30,000 samples, large strings that the small objects freed by the records cannot make room
# for; zlib's fastest level costs ~6 ms of CPU a megabyte of JSON on this machine


class TextSpool:
    """Texts appended one by one and read back in the same order, as often as needed."""

    def __init__(self) -> None:
        self._batches: list[tuple[str | bytes, int]] = []  # a batch (compressed past _AS_TEXT), how many texts
        self._as_text = 0  # characters of the batches kept as text
        self._lengths = array("q")  # of every text, in characters
        self._pending: list[str] = []
        self._pending_size = 0

    def append(self, text: str) -> None:
        self._pending.append(text)
        self._lengths.append(len(text))
        self._pending_size += len(text)
        if self._pending_size >= _BATCH:
            self._seal()

    def _seal(self) -> None:
        text = "".join(self._pending)
        if self._as_text + len(text) <= _AS_TEXT:
            self._batches.append((text, len(self._pending)))
            self._as_text += len(text)
        else:
            # surrogatepass: a lone surrogate (a record's text can hold one) comes back as it went in; whether it
            # can be written is for the file's own encoding to say
            data = zlib.compress(text.encode("utf-8", "surrogatepass"), _LEVEL)
            self._batches.append((data, len(self._pending)))
        self._pending = []
        self._pending_size = 0

    def __len__(self) -> int:
        return len(self._lengths)

    def __iter__(self) -> Iterator[str]:
        lengths = iter(self._lengths)
        for batch, count in self._batches:
            text = batch if isinstance(batch, str) else zlib.decompress(batch).decode("utf-8", "surrogatepass")
            start = 0
            for _ in range(count):
                end = start + next(lengths)
                yield text[start:end]
                start = end
        yield from list(self._pending)

    def size(self) -> int:
        """Bytes held (the compressed batches) and characters (the batches kept as text, the texts not yet in a
        batch), for tests and benchmarks."""
        return sum(len(batch) for batch, _ in self._batches) + sum(len(text) for text in self._pending)
