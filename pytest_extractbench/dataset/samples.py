"""Samples and where they come from: the bundled dataset and JSONL/JSON files.

Rows look like ``{"id", "text", "schema", "expected"}``; ``schema`` and
``expected`` may be objects or JSON strings, and paraloq's ``item`` (or
``expected_output``) is accepted for ``expected``. A row may give ``document`` (a PDF
or an image: documents.py) instead of or beside ``text``. Bad rows never stop a
load: each becomes a :class:`DatasetProblem` naming the file, line, sample id and
field, and the rest of the dataset loads.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import orjson

from ..core import jsonio
from ..scoring import check_schema, validation_errors
from .complexity import complexity_features
from .documents import Document, DocumentError, DocumentReader
from .rowfile import RowFile, digest, kept

BUNDLED = "bundled"
"""Dataset spec naming the dataset shipped inside the package."""

_EXPECTED_KEYS = ("expected", "item", "expected_output")
_META_KEYS = ("topic", "title", "medium")
_READ_AGAIN = ("text", "expected")  # what a sample of a JSONL file reads from its line when asked (rowfile.py)


@dataclass(frozen=True, eq=False)
class Sample:
    """One extraction task: a document, the JSON Schema to fill and the gold JSON."""

    id: str
    text: str
    schema: dict[str, Any]
    expected: Any
    meta: Mapping[str, Any] = field(default_factory=dict)
    document: Document | None = None  # the PDF or image the text came from (or that a vision model gets)

    @property
    def topic(self) -> str:
        return str(self.meta.get("topic") or "")

    def __getattr__(self, name: str) -> Any:
        # only when the attribute is not in __dict__: the text and gold of a sample read from a JSONL file, which
        # are read again from its line (rowfile.py); anything else is missing as usual
        row = self.__dict__.get("_row") if name in _READ_AGAIN else None
        if row is None:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return _read_again(self, row)[name]

    def view(self) -> SampleView:
        """What the system under test may see of this sample: everything but the gold."""
        return SampleView(self.id, self.text, copy.deepcopy(self.schema), copy.deepcopy(dict(self.meta)))


@dataclass(frozen=True, slots=True)
class SampleView:
    """What an extractor is given: what a model would see (text, schema, id and metadata), never the gold.

    It holds no reference to the :class:`Sample` it was made from, so no attribute, ``vars()``, field list or
    pickle leads to ``expected``; ``schema`` and ``meta`` are copies, so changing them changes nothing for the
    run. (It is not a sandbox: code in the same process that goes looking through the interpreter can find
    anything.)
    """

    id: str
    text: str
    schema: dict[str, Any]
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def topic(self) -> str:
        return str(self.meta.get("topic") or "")


@dataclass(frozen=True)
class DatasetProblem:
    """Something wrong with one row; ``severity`` "error" means the sample was not loaded."""

    source: str
    location: str  # "line 12" or "row 3"
    message: str
    sample_id: str | None = None
    field: str | None = None
    severity: str = "error"

    @property
    def lineno(self) -> int:
        """The line (or row) number, for tools that point at a file position."""
        digits = self.location.rpartition(" ")[2]
        return int(digits) if digits.isdigit() else 0

    def __str__(self) -> str:
        parts = [f"{self.source}:{self.location}"]
        if self.sample_id is not None:
            parts.append(f"sample {self.sample_id!r}")
        if self.field is not None:
            parts.append(f"field {self.field!r}")
        return ", ".join(parts) + f": {self.message}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "location": self.location,
            "sample_id": self.sample_id,
            "field": self.field,
            "severity": self.severity,
            "message": self.message,
        }


@dataclass
class Dataset:
    """Loaded samples in file order, plus every problem met on the way."""

    name: str
    source: str
    samples: list[Sample]
    problems: list[DatasetProblem] = field(default_factory=list)

    @property
    def skipped(self) -> list[DatasetProblem]:
        return [p for p in self.problems if p.severity == "error"]


def _read_again(sample: Sample, row: tuple[Any, ...]) -> dict[str, Any]:
    """The text and gold of ``sample`` from its line (checked to be the line loaded), kept while it is recent."""
    (source, text_key, expected_key), offset, length, check = row
    data = jsonio.loads(source.read(offset, length, check, sample))
    expected = data[expected_key]
    # the same bytes as when the sample was loaded, so the same values, checked then; a gold given as a JSON
    # string is parsed again as it was then
    loaded = {"text": data[text_key], "expected": jsonio.loads(expected) if isinstance(expected, str) else expected}
    sample.__dict__.update(loaded)
    kept.add(sample, _READ_AGAIN)
    return loaded


class JsonlRows:
    """``(location, row)`` of a JSONL file as :func:`iter_rows` gives them, remembering where the row last given
    is, so :func:`parse_rows` can let its sample read its text and gold again instead of holding them."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.file = RowFile(path)
        self.span: tuple[int, bytes] | None = None

    def __iter__(self) -> Iterator[tuple[str, Any]]:
        for number, row, span in jsonio.iter_jsonl_spans(self.path):
            self.span = span
            yield f"line {number}", row
        self.span = None


def _read_later(
    sample: Sample, row: dict[str, Any], rows: JsonlRows, columns: Mapping[str, str], keys: dict[Any, Any]
) -> None:
    """Let ``sample`` drop its text and gold and read them again from its line when asked."""
    span = rows.span
    if span is None or sample.document is not None:  # text from a document: held as it is
        return
    text_key = columns.get("text", "text")
    candidates = (columns["expected"],) if "expected" in columns else _EXPECTED_KEYS
    expected_key = next(k for k in candidates if k in row)
    shared = keys.setdefault((text_key, expected_key), (rows.file, text_key, expected_key))
    offset, line = span
    sample.__dict__["_row"] = (shared, offset, len(line), digest(line))
    for name in _READ_AGAIN:
        del sample.__dict__[name]


def bundled_path() -> Path:
    """The dataset file installed with the package."""
    return Path(str(resources.files("pytest_extractbench") / "data" / "extraction.jsonl"))


def iter_rows(path: Path) -> Iterator[tuple[str, Any]]:
    """``(location, row)`` pairs of a JSONL or JSON file; a row that cannot be read is a :class:`JsonInputError`.

    Reading goes through :mod:`.jsonio`, whose limits (encoding, line size, nesting, number size)
    turn hostile rows into problems instead of crashes.
    """
    if path.suffix.lower() == ".json":
        try:
            data = jsonio.load_file(path)
        except jsonio.JsonInputError as exc:
            yield f"line {exc.line or 1}", exc
            return
        if isinstance(data, dict):  # {"samples": [...]} / {"data": [...]} wrappers
            data = next((data[k] for k in ("samples", "data", "rows") if isinstance(data.get(k), list)), [data])
        for index, row in enumerate(data if isinstance(data, list) else [data], start=1):
            yield f"row {index}", row
        return
    for number, row in jsonio.iter_jsonl(path):
        yield f"line {number}", row


def row_error(source: str, location: str, error: Exception) -> DatasetProblem:
    """The problem for a row that could not be read (bad JSON, bad bytes, too deep, too long)."""
    if isinstance(error, jsonio.JsonInputError):
        field_name = error.path.removeprefix("$.").split(".")[0].split("[")[0] if error.path else None
        return DatasetProblem(
            source,
            location,
            str(error) if error.path or error.column else error.message,
            error.sample_id,
            field_name or None,
        )
    if isinstance(error, json.JSONDecodeError):
        return DatasetProblem(source, location, f"not valid JSON: {error.msg} (column {error.colno})")
    return DatasetProblem(source, location, jsonio.clip(str(error), 300))


def parse_rows(
    name: str,
    source: str,
    rows: Iterable[tuple[str, Any]],
    *,
    columns: Mapping[str, str] | None = None,
    documents: DocumentReader | None = None,
) -> Dataset:
    """Turn raw rows into samples, collecting problems instead of raising (``documents``: how a row's
    ``document`` is read; without it, documents are only read as bytes)."""
    samples: list[Sample] = []
    problems: list[DatasetProblem] = []
    seen: dict[str, str] = {}
    schemas = SchemaCache()
    lines = rows if isinstance(rows, JsonlRows) else None
    keys: dict[Any, Any] = {}
    for index, (location, row) in enumerate(rows, start=1):
        if isinstance(row, (json.JSONDecodeError, jsonio.JsonInputError)):
            problems.append(row_error(source, location, row))
            continue
        sample, row_problems = sample_from_row(
            row, source=source, location=location, index=index, columns=columns, schemas=schemas, documents=documents
        )
        problems.extend(row_problems)
        if sample is None:
            continue
        if sample.id in seen:
            problems.append(
                DatasetProblem(
                    source, location, f"duplicate id (first seen at {seen[sample.id]}); row skipped", sample.id, "id"
                )
            )
            continue
        seen[sample.id] = location
        if lines is not None:
            _read_later(sample, row, lines, columns or {}, keys)
        samples.append(sample)
    return Dataset(name=name, source=source, samples=samples, problems=problems)


def _json_value(value: Any) -> tuple[Any, str | None]:
    """A row's value, parsed when it is a JSON string, or why it cannot be used."""
    if isinstance(value, str):
        try:
            value = jsonio.loads(value)
        except jsonio.JsonInputError as exc:
            return None, f"is a string but {exc}"
    else:
        deep = jsonio.too_deep(value)
        if deep is not None:
            return None, f"{deep}: nested too deeply (more than {jsonio.MAX_DEPTH} levels)"
    bad = jsonio.find_nonfinite(value)
    if bad is not None:
        return None, f"{bad}: {jsonio.NONFINITE}"
    return value, None


class SchemaCache:
    """Each distinct schema of a dataset read, checked and measured once and shared by its samples, so the
    validators and rules compiled per schema object are compiled once per schema content as well."""

    def __init__(self) -> None:
        self._entries: dict[Any, tuple[Any, str | None, list[str], dict[str, Any] | None]] = {}

    def get(self, raw: Any) -> tuple[Any, str | None, list[str], dict[str, Any] | None]:
        """``(schema, why it is not JSON, why it is not a valid JSON Schema, complexity features)``."""
        key = _content_key(raw)
        entry = self._entries.get(key) if key is not None else None
        if entry is None:
            entry = _read_schema(raw)
            if key is not None:
                self._entries[key] = entry
        return entry


def _content_key(raw: Any) -> Any:
    if isinstance(raw, str):
        return raw
    try:
        return orjson.dumps(raw, option=orjson.OPT_SORT_KEYS)
    except (orjson.JSONEncodeError, TypeError):  # too deep, NaN keys, big integers: not shared, checked alone
        return None


def _read_schema(raw: Any) -> tuple[Any, str | None, list[str], dict[str, Any] | None]:
    schema, error = _json_value(raw)
    if error:
        return None, error, [], None
    schema_errors = check_schema(schema)
    return schema, None, schema_errors, None if schema_errors else complexity_features(schema)


def sample_from_row(
    row: Any,
    *,
    source: str,
    location: str,
    index: int,
    columns: Mapping[str, str] | None = None,
    schemas: SchemaCache | None = None,
    documents: DocumentReader | None = None,
) -> tuple[Sample | None, list[DatasetProblem]]:
    """Validate one row; returns the sample (or None when unusable) and its problems.

    ``columns`` maps our names (id, text, schema, expected, topic, ...) to the row's own
    column names; problems name the row's column, which is what the user can look up.
    """
    if not isinstance(row, dict):
        return None, [DatasetProblem(source, location, f"a row must be a JSON object, got {type(row).__name__}")]
    columns = columns or {}

    def col(name: str) -> str:
        return columns.get(name, name)

    raw_id = row.get(col("id"))
    sample_id = str(raw_id) if raw_id not in (None, "") else f"row-{index}"
    problems: list[DatasetProblem] = []

    def problem(message: str, field_name: str | None, severity: str = "error") -> None:
        problems.append(DatasetProblem(source, location, message, sample_id, field_name, severity))

    text = row.get(col("text"))
    document: Document | None = None
    documented = col("document") != col("text")  # text=document maps a text column that is called "document"
    if documented and row.get(col("document")) is not None and (text is None or isinstance(text, str)):
        try:
            document, document_text = (documents or DocumentReader()).load(row[col("document")])
        except DocumentError as exc:
            problem(str(exc), col("document"))
            return None, problems
        if text is None and document_text is None and (documents or DocumentReader()).input_mode == "text":
            problem(
                f"document {document.name!r} is an image, which has no text: give the row a {col('text')!r} "
                "too, or run a vision model with --extractbench-input image",
                col("document"),
            )
            return None, problems
        text = text if text is not None else document_text or ""
    if not isinstance(text, str):
        name = col("text")
        either = f" or {col('document')!r} (a PDF or an image)" if documented else ""
        problem(
            f"missing {name!r} (a string){either}"
            if text is None
            else f"{name!r} must be a string, got {type(text).__name__}",
            name,
        )
    if col("schema") not in row:
        problem(f"missing {col('schema')!r}", col("schema"))
    candidates = (columns["expected"],) if "expected" in columns else _EXPECTED_KEYS
    expected_key = next((k for k in candidates if k in row), None)
    if expected_key is None:
        problem(f"missing the gold output (one of {', '.join(candidates)})", col("expected"))
    if problems or not isinstance(text, str):  # a text that is not a string is among the problems
        return None, problems

    schema, error, schema_errors, complexity = (schemas or SchemaCache()).get(row[col("schema")])
    if error:
        problem(error, col("schema"))
        return None, problems
    if schema_errors:
        problem("not a valid JSON Schema: " + "; ".join(schema_errors[:3]), col("schema"))
        return None, problems
    expected, error = _json_value(row[expected_key])
    if error:
        problem(error, expected_key)
        return None, problems
    gold_errors = validation_errors(expected, schema)
    for message in gold_errors:
        # Gold must satisfy its schema, or the sample measures nothing; it is skipped.
        problem(f"gold violates its own schema at {message}", expected_key)
    if gold_errors:
        return None, problems

    meta = {key: row[col(key)] for key in _META_KEYS if row.get(col(key)) is not None}
    # Records carry the meta to the controller, where breakdowns by complexity need it.
    # the complexity dict is shared by every sample of the same schema: read it, never change it
    meta.update({"source": source, "location": location, "complexity": complexity or {}})
    if document is not None:
        meta["document"] = document.as_meta()
    return Sample(id=sample_id, text=text, schema=schema, expected=expected, meta=meta, document=document), problems


def subsample(samples: list[Sample], n: int | None, seed: int) -> list[Sample]:
    """``n`` samples chosen by the SHA-256 of ``seed`` and each sample id, kept in dataset order.

    A hash instead of ``random``: the choice depends only on (seed, id), so it is the same on
    every machine, Python version and xdist worker, whatever order the rows come in.
    """
    if n is None or n >= len(samples):
        return list(samples)
    rank = {id(s): hashlib.sha256(f"{seed}\x00{s.id}".encode()).digest() for s in samples}
    chosen = {id(s) for s in sorted(samples, key=lambda s: rank[id(s)])[:n]}
    return [s for s in samples if id(s) in chosen]
