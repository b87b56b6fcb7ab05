"""The sample viewer's data made in one pass over the records and held encoded until the page is written.

The page carries the data as two JSON documents (:func:`.viewer.split`): a head that draws the table's first rows
and a body with the string table, then every sample's details and results, which refer to the table by index. The
table is complete only once the last record is read, so each result is encoded as soon as it is made (the JSON text
the page will hold) and kept compressed (:class:`.spool.TextSpool`), each sample's details likewise once the pass is
over; what waits for the page is a few hundred bytes per sample, not the Python lists they were made of. The texts
written join to exactly what :func:`.viewer.embed_json` gives for the whole document.
"""

from __future__ import annotations

import json
import zlib
from array import array
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from itertools import islice
from typing import Any

import numpy as np

from ..analysis.stats import format_p
from ..core import textsafe
from ..dataset.rowfile import DatasetChangedError
from ..dataset.samples import Sample
from ..gating.baseline import SampleSnapshot, repeat_counts
from ..gating.buckets import BUCKETS, UNCHANGED, bucket_samples
from ..gating.repeated import REPEATED, compare_repeats
from .rows import recorded_scoring_options
from .spool import TextSpool
from .viewer import (
    CATEGORIES,
    ELEMENT_KINDS,
    ENCODED_TOGETHER,
    ENCODER,
    MAX_TEXT,
    PIECE_ELEMENTS,
    StringTable,
    ViewerRun,
    clip,
    dataset_samples,
    embed_json_parts,
    encode_elements,
    json_text,
    list_pairing,
    result_entry,
    run_columns,
    script_safe,
)

Parts = Callable[[], Iterator[str]]  # a value's JSON text, piece by piece


def _encoded(value: Any) -> str:
    return script_safe(ENCODER.encode(value))


class _Column:
    """One column's results: their JSON texts in the order read and the row of each, and per row the EQS and
    validity the head shows."""

    def __init__(self) -> None:
        self.texts = TextSpool()
        self.rows = array("q")
        self.in_order = True  # every row after the one before: the texts are written as they are
        self.eqs = array("d")
        self.valid = bytearray()  # per row: 0 no result, 1 invalid, 2 valid

    def add(self, row: int, result: list[Any]) -> None:
        if self.rows and row <= self.rows[-1]:
            self.in_order = False  # rows of another run's order, or a sample read twice (its last result counts)
        self.rows.append(row)
        self.texts.append(_encoded(result))
        if row >= len(self.valid):
            grow = row + 1 - len(self.valid)
            self.valid.extend(bytes(grow))
            self.eqs.frombytes(bytes(8 * grow))
        self.eqs[row] = result[0]
        self.valid[row] = 1 + result[1]

    def texts_by_row(self, count: int) -> Iterator[str]:
        """Each row's result text, ``null`` where the column has none."""
        if not self.in_order:
            by_row = dict(zip(self.rows, self.texts))
            yield from (by_row.get(row, "null") for row in range(count))
            return
        row = 0
        for at, text in zip(self.rows, self.texts):
            while row < at:
                yield "null"
                row += 1
            yield text
            row += 1
        yield from ("null" for _ in range(row, count))

    def results(self) -> dict[int, list[Any]]:
        """The results read back, by row (the last of a row read twice), in the order rows first came."""
        return {row: json.loads(text) for row, text in zip(self.rows, self.texts)}

    def scores(self, count: int) -> Parts:
        valid = self.valid

        def parts() -> Iterator[str]:
            yield "["
            yield from _values(self.eqs[row] if row < len(valid) and valid[row] else None for row in range(count))
            yield ","
            yield from _values(valid[row] - 1 if row < len(valid) and valid[row] else None for row in range(count))
            yield "]"

        return parts


def _batched(items: Iterable[Any], encode: Callable[[list[Any]], str]) -> Iterator[str]:
    """A JSON list of ``items``, :data:`.viewer.PIECE_ELEMENTS` of them encoded at a time by ``encode``."""
    yield "["
    items = iter(items)
    separator = ""
    while batch := list(islice(items, PIECE_ELEMENTS)):
        yield separator + encode(batch)
        separator = ","
    yield "]"


def _values(values: Iterable[Any]) -> Iterator[str]:
    """A JSON list of ``values`` as :func:`.viewer.embed_json` writes it."""
    return _batched(values, lambda batch: script_safe(encode_elements(batch)))


def _texts(texts: Iterable[str]) -> Iterator[str]:
    """A JSON list whose elements are ``texts``, each already JSON."""
    return _batched(texts, ",".join)


def _lists(columns: Iterable[Parts]) -> Iterator[str]:
    """A JSON list of the columns' JSON texts."""
    yield "["
    for k, parts in enumerate(columns):
        yield "," if k else ""
        yield from parts()
    yield "]"


def _object(entries: Sequence[tuple[str, Parts]]) -> Iterator[str]:
    yield "{"
    for index, (key, parts) in enumerate(entries):
        yield ("," if index else "") + _encoded(key) + ":"
        yield from parts()
    yield "}"


def _plain(value: Any) -> Parts:
    return lambda: embed_json_parts(value, 2)


class ViewerDocument:
    """The viewer's data for ``runs`` (the first is the current run): :meth:`head_parts` and :meth:`body_parts` give
    the two JSON texts the page carries, :meth:`data` the whole document as :func:`viewer_data` returns it."""

    def __init__(self, runs: Sequence[ViewerRun], *, with_dataset: bool = True) -> None:
        self.strings = StringTable()
        self.columns: list[dict[str, str]] = []
        self._models: list[str] = []  # per column, the model's name as the records spell it
        self._order: dict[str, int] = {}  # sample id -> row
        self._ids: list[str] = []  # row -> sample id
        self._samples = TextSpool()  # the rows' [id, topic, complexity bin, title], a few rows per text
        self._results: list[_Column] = []
        self._passes: list[dict[int, tuple[int, int]]] = []  # per column: row -> (runs, passing runs), when repeated
        self._gold: list[array[int] | None] = []  # per row: (path, expected value) string indices, by path
        sources = self._read(runs)
        self._rows = len(self._ids)
        self.notes: list[str] = []
        self._details = self._make_details(runs, sources, with_dataset)
        first_run = sum(1 for c in self.columns if c["run"] == runs[0].label) if runs else 0
        self._buckets = self._bucket_rows(runs[0].run.document if runs else {}, first_run)
        self._order = {}
        self._repeats = _repeat_deltas(runs, self.columns, self._models, first_run, self._passes, self.notes)

    def _read(self, runs: Sequence[ViewerRun]) -> dict[str, Mapping[str, str]]:
        """Every record once: its sample's row, its result encoded; the dataset files the records name."""
        sources: dict[str, Mapping[str, str]] = {}
        waiting: list[list[str]] = []
        for item in runs:
            by_model: dict[str, int] = {}
            columns_used = run_columns(item)
            pairing = list_pairing(item)
            for record in item.run.records():
                model = record["model"]
                if model not in by_model:
                    by_model[model] = len(self.columns)
                    # a column heading, shown as the terminal and summary.md show the name (escapes visible)
                    self.columns.append({"run": item.label, "model": textsafe.terminal(model)})
                    self._models.append(model)
                    self._results.append(_Column())
                    self._passes.append({})
                sid = record["sample_id"]
                meta = record["meta"]
                source = meta.get("source")
                if isinstance(source, str) and source:
                    sources.setdefault(source, columns_used)
                row = self._order.get(sid)
                if row is None:
                    row = self._order[sid] = len(self._ids)
                    self._ids.append(sid)
                    complexity = meta.get("complexity") if isinstance(meta.get("complexity"), Mapping) else {}
                    topic, complexity_bin = meta.get("topic"), complexity.get("complexity_bin")
                    waiting.append([sid, str(topic or ""), str(complexity_bin or ""), str(meta.get("title") or "")])
                    if len(waiting) == ENCODED_TOGETHER:
                        self._samples.append(script_safe(encode_elements(waiting)))
                        waiting = []
                    self._gold.append(None)
                held = self._gold[row]
                gold = {} if held is None else dict(zip(held[::2], held[1::2]))
                column = by_model[model]
                self._results[column].add(row, result_entry(record, self.strings, gold, pairing))
                if gold:
                    self._gold[row] = array("i", [x for pair in sorted(gold.items()) for x in pair])
                # a track's record keeps its runs at the top, an extraction record among its diagnostics
                counts = repeat_counts(record.get("repeats") or (record.get("diagnostics") or {}).get("repeats"))
                if counts is not None:
                    self._passes[column][row] = counts
        if waiting:
            self._samples.append(script_safe(encode_elements(waiting)))
        return sources

    def _make_details(
        self, runs: Sequence[ViewerRun], sources: Mapping[str, Mapping[str, str]], with_dataset: bool
    ) -> TextSpool:
        """Per row: the source text, the schema (a string index), the gold and the gold's fields, encoded."""
        dataset: dict[str, Sample] = {}
        if with_dataset and self._ids:
            dataset, self.notes = dataset_samples(runs, set(self._order), sources)
        details = TextSpool()
        schemas: dict[int, int] = {}  # id of a schema object -> its string: samples of one schema share the object
        for row, sid in enumerate(self._ids):
            sample = dataset.get(sid)
            text = expected = None
            if sample is not None:
                try:  # a sample of a JSONL file reads its text and gold again from its line
                    text, expected = clip(sample.text), json_text(sample.expected, MAX_TEXT)
                except DatasetChangedError as exc:
                    self.notes.append(f"{exc}: the source text, schema and gold of the samples after it are not shown")
                    dataset = {}
                    sample = None
            if sample is not None and (schema := schemas.get(id(sample.schema))) is None:
                schema = schemas[id(sample.schema)] = self.strings(json_text(sample.schema, MAX_TEXT))
            gold = self._gold[row]
            self._gold[row] = None  # let go as soon as it is written
            details.append(_encoded([text, schema if sample else -1, expected, list(gold or ())]))
        self._ids = []
        self._gold = []
        return details

    def _bucket_rows(self, document: Mapping[str, Any], first_run: int) -> list[dict[str, Any] | None]:
        """Per column, each row's bucket (an index into BUCKETS, -1 for none) and what it was measured against: for
        a column of the current run, the run's own baseline comparison (metrics.json) when it made one, else the
        same model in the next run that has it (bucketed here as the gate buckets); None for the other columns."""
        compared = (document.get("baseline_comparison") or {}).get("models") or {}
        index = {name: i for i, name in enumerate(BUCKETS)}
        columns, models = self.columns, self._models
        out: list[dict[str, Any] | None] = [None] * len(columns)
        for k in range(first_run):
            given = (compared.get(models[k]) or {}).get("buckets") if isinstance(compared, Mapping) else None
            rows = [-1] * self._rows
            if isinstance(given, Mapping) and isinstance(given.get("samples"), Mapping):
                for row in self._results[k].rows:
                    rows[row] = index[UNCHANGED]  # every bucket but "unchanged" lists its samples
                for bucket, ids in given["samples"].items():
                    for sid in ids if bucket in index and isinstance(ids, list) else ():
                        if (at := self._order.get(str(sid))) is not None:
                            rows[at] = index[bucket]
                out[k] = {"against": "the run's baseline", "rows": rows}
                continue
            partner = next((j for j in range(first_run, len(columns)) if models[j] == models[k]), None)
            if partner is None:
                continue
            strings = self.strings.items
            now, then = (_snapshots(self._results[j].results(), strings) for j in (k, partner))
            found = bucket_samples(now, then)
            for key, sample in found.samples.items():
                rows[int(key)] = index[sample.bucket]
            out[k] = {"against": columns[partner]["run"], "rows": rows}
        return out

    def head_parts(self) -> Iterator[str]:
        """The head's JSON text (:func:`.viewer.split`), piece by piece."""
        count = self._rows
        passes = [
            [list(column[row]) if row in column else None for row in range(count)] if column else None
            for column in self._passes
        ]
        scores = [column.scores(count) for column in self._results]
        return _object(
            [
                ("columns", _plain(self.columns)),
                ("categories", _plain(list(CATEGORIES))),
                ("element_kinds", _plain(list(ELEMENT_KINDS))),
                ("bucket_names", _plain(list(BUCKETS))),
                ("buckets", _plain(self._buckets)),
                ("samples", lambda: _texts(self._samples)),
                ("passes", _plain(passes)),
                ("repeats", _plain(self._repeats)),
                ("notes", _plain(self.notes)),
                ("scores", lambda: _lists(scores)),
            ]
        )

    def body_parts(self) -> Iterator[str]:
        """The body's JSON text (strings, details, results), piece by piece."""

        def column_texts(column: _Column) -> Parts:
            return lambda: _texts(column.texts_by_row(self._rows))

        return _object(
            [
                ("strings", _plain(self.strings.items)),
                ("details", lambda: _texts(self._details)),
                ("results", lambda: _lists(column_texts(column) for column in self._results)),
            ]
        )

    def data(self) -> dict[str, Any]:
        """The whole document, read back from its texts (tests and tools; the page never holds it whole)."""
        head = json.loads("".join(self.head_parts()))
        body = json.loads("".join(self.body_parts()))
        return {key: body[key] if key in body else head[key] for key in _KEYS}


_KEYS = (  # the document's keys in the order viewer_data has always given them
    "columns",
    "categories",
    "element_kinds",
    "bucket_names",
    "buckets",
    "strings",
    "samples",
    "details",
    "results",
    "passes",
    "repeats",
    "notes",
)


def _repeat_deltas(
    runs: Sequence[ViewerRun],
    columns: Sequence[Mapping[str, str]],
    models: Sequence[str],
    first_run: int,
    passes: Sequence[Mapping[int, tuple[int, int]]],
    notes: list[str],
) -> list[dict[str, Any]]:
    """pass@k and pass^k of each column of the current run against the same model in the next run that has it, on
    the samples both repeated (at k, the fewest runs either gave one of them), as a baseline comparison computes
    them; a note when only one of the two repeated its samples."""
    if not runs:
        return []
    options = recorded_scoring_options(runs[0].run.document).statistics
    out: list[dict[str, Any]] = []
    for k in range(first_run):
        partner = next((j for j in range(first_run, len(columns)) if models[j] == models[k]), None)
        if partner is None or not (passes[k] or passes[partner]):
            continue
        if not (passes[k] and passes[partner]):
            once = columns[partner if passes[k] else k]["run"]
            notes.append(f"pass@k / pass^k of {columns[k]['model']} not compared: run {once} asked each sample once")
            continue
        now, then = (_repeat_snapshots(passes[i]) for i in (k, partner))
        shared = sorted(set(now) & set(then))
        seed = [options.seed, zlib.crc32(f"{models[k]}\0{columns[partner]['run']}".encode())]
        found = compare_repeats(now, then, shared, options, keeps_repeats=True, rng=np.random.default_rng(seed))
        if not found.deltas:
            continue
        metrics = {}
        for name in REPEATED:
            d = found.deltas[name]
            metrics[name] = {
                "a": d.a,
                "b": d.b,
                "delta": d.delta,
                "low": d.ci.low,
                "high": d.ci.high,
                "p": format_p(d.p_value),
                "significant": d.significant,
            }
        out.append({"column": k, "against": partner, "k": found.k, "samples": len(found.samples), "metrics": metrics})
    return out


def _repeat_snapshots(counts: Mapping[int, tuple[int, int]]) -> dict[str, SampleSnapshot]:
    """A column's pass counts as the snapshots a baseline keeps (keyed by row)."""
    return {str(row): SampleSnapshot({}, repeats=found) for row, found in counts.items()}


def _snapshots(results: Mapping[int, list[Any]], strings: Sequence[str]) -> dict[str, SampleSnapshot]:
    """A column's results as the snapshots a baseline keeps (keyed by row, written as the sample ids a baseline
    keys them by)."""
    out = {}
    for row, r in results.items():
        fields = r[5]
        out[str(row)] = SampleSnapshot(
            {"eqs": r[0]},
            tuple(
                (strings[fields[j]], CATEGORIES[fields[j + 1]] if fields[j + 1] >= 0 else "other", fields[j + 2])
                for j in range(0, len(fields), 4)
            ),
            passed=bool(r[7]),
        )
    return out


def viewer_data(runs: Sequence[ViewerRun], *, with_dataset: bool = True) -> dict[str, Any]:
    """The viewer's compact JSON document for ``runs`` (the first is the current run), whole: a page takes it in
    pieces from a :class:`ViewerDocument` instead."""
    return ViewerDocument(runs, with_dataset=with_dataset).data()
