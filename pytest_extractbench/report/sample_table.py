"""The per-sample values of a run's records as the charts, the summaries and samples.csv use them, kept compact.

The finish reads samples.jsonl once (:class:`OnePass`): report.html's sample viewer reads the records whole, and as
each passes its :func:`.rows.sample_row` is made and kept twice over, both small: the few values the charts and
summaries read, per model in typed arrays (8 bytes a number, not a 25-key dict per sample), and samples.csv's line,
written as the CSV will hold it and kept compressed (:class:`.spool.TextSpool`) until the file is written.
"""

from __future__ import annotations

import csv
from array import array
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, overload

from ..core import redact, textsafe
from ..core.spreadsheet import neutral_cell
from .rows import Records, per_sample_metrics, sample_row
from .spool import TextSpool

# samples.csv: the record's identity, the catalog's per-sample values (``sample_column`` order), then the rest
SAMPLE_LEADING = ("model", "sample_id", "passed")
SAMPLE_TRAILING = (
    "fields_expected",
    "latency_s",
    "error_class",
    "topic",
    "complexity_score",
    "complexity_bin",
    "failure",
)
# what report.html's charts and the summaries read of a sample (:mod:`.html_charts`, :func:`.summary.summarize`)
CHART_KEYS = (
    "eqs",
    "f1_partial",
    "precision_partial",
    "recall_partial",
    "schema_valid",
    "latency_s",
    "finished_at",
    "complexity_score",
    "complexity_bin",
)
_SHARED_CELLS = 4096  # texts of cells kept made safe: what repeats comes early, an id column never is kept


def sample_columns() -> tuple[str, ...]:
    """The columns of samples.csv; a metric with a ``sample_column`` in the catalog gets its per-sample value."""
    return (*SAMPLE_LEADING, *per_sample_metrics(), *SAMPLE_TRAILING)


def cell(value: Any, secrets: tuple[str, ...] | None = None) -> Any:
    """A CSV cell that no spreadsheet evaluates (:func:`..core.spreadsheet.neutral_cell`), with controls escaped
    and credentials masked first (``secrets``: :func:`..core.redact.env_secrets`, read once for a whole file)."""
    if isinstance(value, str):
        value = textsafe.terminal(value, None, lines=True, secrets=secrets)
    return neutral_cell(value)


class _Numbers:
    """One key's values in the order added: floats, flags and None in typed arrays (anything else held as it is)."""

    _FLOAT, _FLAG, _NONE, _OTHER = range(4)

    def __init__(self) -> None:
        self._floats = array("d")
        self._kinds = bytearray()
        self._others: dict[int, Any] = {}

    def append(self, value: Any) -> None:
        kind = type(value)
        if kind is float:
            self._floats.append(value)
            self._kinds.append(self._FLOAT)
        elif kind is bool:
            self._floats.append(float(value))
            self._kinds.append(self._FLAG)
        else:
            self._floats.append(0.0)
            if value is None:
                self._kinds.append(self._NONE)
            else:
                self._others[len(self._kinds)] = value
                self._kinds.append(self._OTHER)

    def __getitem__(self, index: int) -> Any:
        kind = self._kinds[index]
        if kind == self._FLOAT:
            return self._floats[index]
        if kind == self._FLAG:
            return self._floats[index] != 0.0
        return None if kind == self._NONE else self._others[index]


class _Labels:
    """One key's values in the order added, equal texts shared (a complexity bin: a few distinct values)."""

    def __init__(self) -> None:
        self._values: list[Any] = []
        self._shared: dict[str, str] = {}

    def append(self, value: Any) -> None:
        if type(value) is str:
            value = self._shared.setdefault(value, value)
        self._values.append(value)

    def __getitem__(self, index: int) -> Any:
        return self._values[index]


class _Row(Mapping[str, Any]):
    """One sample's chart values, read from its model's columns."""

    __slots__ = ("_columns", "_index")

    def __init__(self, columns: Mapping[str, _Numbers | _Labels], index: int) -> None:
        self._columns = columns
        self._index = index

    def __getitem__(self, key: str) -> Any:
        return self._columns[key][self._index]

    def __iter__(self) -> Iterator[str]:
        return iter(CHART_KEYS)

    def __len__(self) -> int:
        return len(CHART_KEYS)


class SampleRows(Sequence[Mapping[str, Any]]):
    """One model's samples in the order read, each a mapping of :data:`CHART_KEYS` to its values."""

    def __init__(self) -> None:
        self._columns: dict[str, _Numbers | _Labels] = {
            key: _Labels() if key == "complexity_bin" else _Numbers() for key in CHART_KEYS
        }
        self._length = 0

    def add(self, row: Mapping[str, Any]) -> None:
        for key, column in self._columns.items():
            column.append(row[key])
        self._length += 1

    def __len__(self) -> int:
        return self._length

    @overload
    def __getitem__(self, index: int) -> Mapping[str, Any]: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Mapping[str, Any]]: ...

    def __getitem__(self, index: int | slice) -> Mapping[str, Any] | Sequence[Mapping[str, Any]]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._length))]
        if not -self._length <= index < self._length:
            raise IndexError(index)
        return _Row(self._columns, index % self._length)

    def __iter__(self) -> Iterator[Mapping[str, Any]]:
        columns = self._columns
        return (_Row(columns, index) for index in range(self._length))


class _Lines:
    """Where the CSV writer puts each row's line: the spool."""

    def __init__(self, spool: TextSpool) -> None:
        self.write = spool.append


class SampleTable:
    """Every record's :func:`.rows.sample_row`, as the reports use it: ``models`` (model -> its :class:`SampleRows`,
    in the order the records name them) and, with ``csv``, samples.csv's lines (:meth:`csv_lines`)."""

    def __init__(self, *, csv_lines: bool = True) -> None:
        self.models: dict[str, SampleRows] = {}
        self._metrics = per_sample_metrics()
        self._columns = sample_columns()
        self._lines = TextSpool() if csv_lines else None
        self._writer = csv.writer(_Lines(self._lines)) if self._lines is not None else None  # RFC 4180: CRLF rows
        self._secrets = redact.env_secrets()  # read once for every cell of the file
        self._shared = [(key, key != "sample_id") for key in self._columns]
        self._cells: dict[str, Any] = {}
        self._error: Exception | None = None  # why samples.csv cannot be written (the charts may still be)

    def add(self, record: Mapping[str, Any]) -> None:
        row = sample_row(record, self._metrics)
        rows = self.models.get(row["model"])
        if rows is None:
            rows = self.models[row["model"]] = SampleRows()
        rows.add(row)
        if self._writer is not None and self._error is None:
            try:
                self._writer.writerow([self._cell(row[key], shared) for key, shared in self._shared])
            except Exception as exc:  # noqa: BLE001 - said when samples.csv is written; report.html goes on
                self._error = exc

    def _cell(self, value: Any, shared: bool) -> Any:
        """:func:`cell`; the text of a column whose values repeat (model, topic, failure...) made safe once."""
        if not shared or type(value) is not str:  # a number, a flag, None or a str subclass: made each time
            return cell(value, self._secrets)
        found = self._cells.get(value)
        if found is None:
            found = cell(value, self._secrets)
            if len(self._cells) < _SHARED_CELLS:
                self._cells[value] = found
        return found

    @property
    def keeps_csv_lines(self) -> bool:
        return self._lines is not None

    def csv_lines(self) -> Iterator[str]:
        """samples.csv's header and rows, line by line (CRLF ends)."""
        if self._lines is None:
            raise ValueError("this table keeps no CSV lines")
        if self._error is not None:
            raise self._error
        header = TextSpool()
        csv.writer(_Lines(header)).writerow(self._columns)
        yield from header
        yield from self._lines


class OnePass:
    """A :data:`.rows.Records` whose first whole pass also makes the records' :class:`SampleTable`: the reports that
    need only the table (summary.md, the CSVs, report.html's charts) then take it from memory, so the finish reads
    samples.jsonl once, for the one report that needs records whole (the sample viewer)."""

    def __init__(self, records: Records, *, csv_lines: bool = True) -> None:
        self._records = records
        self._csv_lines = csv_lines
        self.table: SampleTable | None = None  # set once a pass has seen every record

    def __call__(self) -> Iterator[Mapping[str, Any]]:
        table = SampleTable(csv_lines=self._csv_lines)
        for record in self._records():
            table.add(record)
            yield record
        self.table = table


def sample_table(records: Records, *, csv_lines: bool = True) -> SampleTable:
    """The records' :class:`SampleTable`, from a :class:`OnePass` that has read them all, else by reading them."""
    table = getattr(records, "table", None)
    if isinstance(table, SampleTable) and (table.keeps_csv_lines or not csv_lines):
        return table
    table = SampleTable(csv_lines=csv_lines)
    for record in records():
        table.add(record)
    return table
