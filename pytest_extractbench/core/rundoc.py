"""The run document: what metrics.json, a samples.jsonl record, a baseline, a cassette and a journal line hold,
their format versions, the one reader (it checks the version) and the one writer (atomic).

Every file a run keeps is read here and nowhere else, and every failure to read one is a :class:`RunDocError`
naming the file (and, for a version, the version found and the versions this release reads). The models are
``TypedDict``\\ s, not classes: a run document is JSON that report templates, CSV writers and users' notebooks
read as dicts, and a 10,000-sample run's records are read three times at finish; a TypedDict costs no
conversion, keeps those readers unchanged and still lets a type checker see which keys exist. Keys a reader can
rely on are ``Required``; the reader fills the rest of a guaranteed key set from the defaults below, so
``record["response"]["latency_s"]`` needs no ``.get``.

samples.jsonl is written compact: a record leaves out every key whose value is its default (the tables
``*_DEFAULTS`` beside each model, in :mod:`.recordform`), and :func:`iter_samples` puts them back, so a file in
the full form (what releases before format 2 wrote) and a compact one read the same.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict

from . import jsonio, modelsections, sections
from .files import METRICS_FILE, SAMPLES_FILE, atomic, write_json, write_jsonl
from .recordform import (
    COUNT_KEYS,
    RECORD_DEFAULTS,
    RESPONSE_DEFAULTS,
    SCORE_DEFAULTS,
    TRACK_RECORD_DEFAULTS,
    Record,
    ResponseDict,
    SampleRecordDict,
    ScoreDict,
    TrackRecordDict,
    _fill,
    compact,
    expand,
)
from .rundir import RunDirError
from .shapes import Shape, filled

__all__ = [  # the run document's models, versions, readers and writers (the record models from .recordform)
    "BASELINE",
    "BASELINE_KIND",
    "BaselineDocument",
    "BaselineModel",
    "BaselineSample",
    "CASSETTE",
    "CASSETTE_FORMAT",
    "COUNT_KEYS",
    "CassetteEntry",
    "CassetteHeader",
    "DATASET_DEFAULTS",
    "DOCUMENT_KEYS",
    "DatasetInfo",
    "FORMAT_VERSION",
    "JOURNAL",
    "JournalEntry",
    "MetricsDocument",
    "ModelMetrics",
    "PROBLEM_DEFAULTS",
    "PartialCounts",
    "PartialRun",
    "ProblemDict",
    "READS",
    "RECORD_DEFAULTS",
    "RESPONSE_DEFAULTS",
    "RUN",
    "RUN_DEFAULTS",
    "Record",
    "ResponseDict",
    "RunDocError",
    "RunInfo",
    "SCORE_DEFAULTS",
    "SampleRecordDict",
    "ScoreDict",
    "TRACK_RECORD_DEFAULTS",
    "TrackRecordDict",
    "check_version",
    "compact",
    "complete",
    "expand",
    "iter_journal",
    "iter_samples",
    "journal_line",
    "read_baseline",
    "read_cassette",
    "read_metrics",
    "read_run",
    "write_baseline",
    "write_cassette",
    "write_metrics",
    "write_samples",
]

if TYPE_CHECKING:  # the annotations are strings (Python 3.10 has no NotRequired)
    from typing_extensions import NotRequired, Required

# -- format versions ---------------------------------------------------------------------------------------
# One version per file kind, and the versions this release still reads. A run directory's metrics.json
# carries the version of the directory: 2 writes samples.jsonl compact (both forms read the same). A baseline of
# format 2 keeps each repeated sample's pass count (``repeats``); one of format 1 was saved before it did, so its
# pass@k is unknown rather than absent. A journal line carries its own version (xdist workers and resumed runs
# append to one file); a line without one was written before lines had it, in the same form, and reads as 1.
RUN, BASELINE, CASSETTE, JOURNAL = "run", "baseline", "cassette", "journal"
FORMAT_VERSION: dict[str, int] = {RUN: 2, BASELINE: 2, CASSETTE: 1, JOURNAL: 1}
READS: dict[str, tuple[int, ...]] = {RUN: (1, 2), BASELINE: (1, 2), CASSETTE: (1,), JOURNAL: (1,)}
_AGAIN = {
    RUN: "run it again with this release",
    BASELINE: "save the baseline again",
    CASSETTE: "record it again",
    JOURNAL: "run it afresh instead of resuming or replaying it",
}

BASELINE_KIND = "pytest-extractbench baseline"
CASSETTE_FORMAT = "extractbench-cassette"


class RunDocError(RunDirError):
    """A run document (metrics.json, samples.jsonl, a baseline, a cassette) that cannot be read.

    The message names the file (and line) and says why; for a format version it names the version found and
    the versions this release reads. ``version`` is the version found, when that is the reason."""

    def __init__(self, message: str, *, version: Any = None) -> None:
        super().__init__(message)
        self.version = version


def check_version(kind: str, found: Any, where: str) -> int:
    """``found`` when this release reads that version of ``kind``; else :class:`RunDocError` saying which it reads."""
    reads = READS[kind]
    known = ", ".join(map(str, reads))
    if isinstance(found, int) and not isinstance(found, bool) and found in reads:
        return found
    if found is None:
        raise RunDocError(
            f"{where}: no format version (this release reads {kind} format {known}); "
            f"is it a pytest-extractbench {kind} file?"
        )
    if isinstance(found, int) and not isinstance(found, bool) and found > reads[-1]:
        raise RunDocError(
            f"{where}: format_version {found} was written by a newer pytest-extractbench (this "
            f"release reads {kind} format {known}); upgrade pytest-extractbench",
            version=found,
        )
    raise RunDocError(
        f"{where}: format_version {jsonio.clip(repr(found), 60)} is not supported (this release reads "
        f"{kind} format {known}); {_AGAIN[kind]}",
        version=found,
    )


# -- metrics.json --------------------------------------------------------------------------------------------


class DatasetInfo(TypedDict, total=False):
    """metrics.json ``run.dataset``: what was evaluated (the ``dataset`` section beside ``run`` has its statistics)."""

    name: Required[str | None]  # None only in a document that did not say
    source: str
    num_samples: int
    num_skipped: int
    content_hash: str
    sample_hashes: dict[str, str]


class ProblemDict(TypedDict):
    """One entry of metrics.json ``run.problems``: ``DatasetProblem.as_dict()`` (dataset/samples.py)."""

    source: str | None
    location: str | None
    sample_id: str | None
    field: str | None
    severity: str  # "error" or "warning"
    message: str


PROBLEM_DEFAULTS: dict[str, Any] = {
    "source": None,
    "location": None,
    "sample_id": None,
    "field": None,
    "severity": "warning",
    "message": "",
}


class PartialCounts(TypedDict):
    """Samples scored of those collected."""

    scored: int
    collected: int


class PartialRun(TypedDict):
    """metrics.json ``run.partial``, in a run that scored fewer samples than it collected: in all, and per model."""

    scored: int
    collected: int
    models: dict[str, PartialCounts]


class RunInfo(TypedDict, total=False):
    """metrics.json ``run``: when, what, with which options and versions, what went wrong on the way."""

    started_at: Required[str | None]  # None only in a document that did not say
    finished_at: str
    duration_s: float
    dataset: Required[DatasetInfo]
    num_records: int
    models: list[str]
    workers: int
    options: Required[dict[str, Any]]
    versions: dict[str, str | None]
    platform: str
    problems: Required[list[ProblemDict]]
    unscored_items: list[str]
    live: Required[dict[str, Any] | None]  # None: offline
    config: Any
    partial: PartialRun  # only in a partial run


# What a document made by this package always has and a hand-made or foreign one may lack.
RUN_DEFAULTS: dict[str, Any] = {"dataset": {}, "options": {}, "problems": [], "started_at": None, "live": None}
DATASET_DEFAULTS: dict[str, Any] = {"name": None}
_COUNTS = {"scored": 0, "collected": 0}
_PARTIAL = Shape({**_COUNTS, "models": {}}, maps={"models": Shape(_COUNTS)})


def _problem(found: Any) -> dict[str, Any]:
    return _fill(found, PROBLEM_DEFAULTS) if isinstance(found, Mapping) else {**PROBLEM_DEFAULTS, "message": str(found)}


# A model's section is the catalog's metrics plus sections (sla, performance, ...): its keys are the catalog's
# to decide (analysis/catalog.py), so it stays a plain mapping.
ModelMetrics = dict[str, Any]


class MetricsDocument(TypedDict, total=False):
    """metrics.json. Besides these keys, the run-level sections (``comparison``, ``baseline_comparison``,
    ``baseline_saved``, ``whole_output_cost``, ...) that :func:`..analysis.metrics.run_level_metrics` adds."""

    format_version: Required[int]
    track: Required[str]
    run: Required[RunInfo]
    models: Required[dict[str, ModelMetrics]]
    dataset: dict[str, Any]  # the gated tracks: what was evaluated, left out, its statistics
    baseline_comparison: sections.BaselineComparison
    baseline_saved: sections.BaselineSaved
    comparison: sections.Comparison
    whole_output_cost: sections.WholeOutputCost


DOCUMENT_KEYS = ("format_version", "track", "run", "dataset", "models")  # the rest is run-level sections


def complete(data: Mapping[str, Any]) -> MetricsDocument:
    """A metrics document with every guaranteed key (``format_version``, ``track``, ``run`` and its ``dataset``,
    ``options``, ``problems`` (each with every key), ``started_at`` and ``live``, ``models``, and the keys of the
    sections it has: :func:`.sections.fill`, :func:`.modelsections.fill_model`), the defaults filling what ``data`` lacks; no version check (for
    documents made in memory: a run's own, a merge of runs)."""
    out = dict(data)
    run = out.get("run")
    out["run"] = run = _fill(run if isinstance(run, dict) else {}, RUN_DEFAULTS)
    run["dataset"] = _fill(run["dataset"] if isinstance(run["dataset"], dict) else {}, DATASET_DEFAULTS)
    problems = run["problems"]
    run["problems"] = [_problem(p) for p in problems] if isinstance(problems, list) else []
    if "partial" in run:  # a partial run's counts, each there
        partial = filled(_PARTIAL, run["partial"])
        if partial is None:
            del run["partial"]
        else:
            run["partial"] = partial
    out["track"] = out.get("track") or "extraction"
    out.setdefault("format_version", FORMAT_VERSION[RUN])
    if not isinstance(out.get("models"), dict):
        out["models"] = {}
    sections.fill(out)
    out["models"] = {model: modelsections.fill_model(section, out["track"]) for model, section in out["models"].items()}
    return out  # type: ignore[return-value]


def read_metrics(run_dir: Path) -> MetricsDocument:
    """The metrics.json of ``run_dir``, read with the limits of every input file, checked (an object with a
    ``models`` object, a format this release reads) and completed (:func:`complete`)."""
    path = run_dir / METRICS_FILE
    if not path.is_file():
        raise RunDocError(f"{path}: no such file (is {run_dir} a run directory?)")
    data = _load(path, str(path))
    if not isinstance(data, dict):
        raise RunDocError(f"{path}: a {type(data).__name__}, not an object (not an extractbench metrics.json)")
    check_version(RUN, data.get("format_version"), str(path))  # first: a newer format may be shaped otherwise
    if not isinstance(data.get("models"), dict):
        raise RunDocError(f"{path}: no 'models' object (not an extractbench metrics.json)")
    for model, section in data["models"].items():
        if not isinstance(section, dict):
            raise RunDocError(f"{path}: models.{jsonio.clip(str(model), 60)} is not an object")
    return complete(data)


def write_metrics(run_dir: Path, document: Mapping[str, Any]) -> None:
    """metrics.json, atomically, stamped with this release's run format."""
    write_json(run_dir / METRICS_FILE, {**document, "format_version": FORMAT_VERSION[RUN]})


# -- samples.jsonl -------------------------------------------------------------------------------------------


def iter_samples(path: Path) -> Iterator[Record]:
    """The records of a samples.jsonl in full form, one by one (none when the file is absent); a bad line is a
    :class:`RunDocError` naming the file and line. jsonio, not orjson alone: an integer past 64 bits (a long id,
    a 4,000-digit gold value) keeps every digit."""
    if not path.is_file():
        return
    for lineno, value in jsonio.iter_jsonl(path):
        if isinstance(value, jsonio.JsonInputError):
            raise RunDocError(f"{path}:{lineno}: not a JSON record: {value}")
        if (
            not isinstance(value, dict)
            or not isinstance(value.get("model"), str)
            or not isinstance(value.get("sample_id"), str)
        ):
            what = (
                f"a {type(value).__name__}, not an object"
                if not isinstance(value, dict)
                else "no string model and sample_id"
            )
            raise RunDocError(f"{path}:{lineno}: not a JSON record: {what}")
        yield expand(value)


def write_samples(path: Path, records: Iterable[Mapping[str, Any]]) -> None:
    """samples.jsonl, atomically, each record compact."""
    write_jsonl(path, (compact(record) for record in records))


def read_run(run_dir: Path) -> tuple[MetricsDocument, Path]:
    """metrics.json of ``run_dir`` (checked) and the path of its samples.jsonl, for :func:`iter_samples`."""
    return read_metrics(run_dir), run_dir / SAMPLES_FILE


# -- baselines -----------------------------------------------------------------------------------------------


class BaselineSample(TypedDict):
    """One sample of a baseline: its resampled row, (path, category, score) of every field, its content hash."""

    sample_id: str
    row: dict[str, float]
    fields: list[list[Any]]
    sample_hash: NotRequired[str]  # not in baselines saved before content hashes
    passed: NotRequired[bool]  # not in baselines saved before it was kept
    repeats: NotRequired[dict[str, int]]  # {"runs": n, "passed": c}: format 2, samples run more than once


class BaselineModel(TypedDict):
    metrics: dict[str, Any]
    confidence_intervals: dict[str, Any]
    samples: list[BaselineSample]


class BaselineDocument(TypedDict):
    """``.extractbench/baselines/NNNN_NAME.json``."""

    format_version: int
    kind: str  # BASELINE_KIND
    name: str
    track: NotRequired[str]  # the run's track; absent in baselines saved before other tracks had them: extraction
    created_at: str
    provenance: dict[str, Any]
    statistics: dict[str, Any]
    models: dict[str, BaselineModel]


def read_baseline(path: Path) -> BaselineDocument:
    """A baseline file: its kind and version checked, and every model's ``samples`` a list of objects."""
    where = f"baseline {path}"
    data = _load(path, where)
    if not isinstance(data, dict) or data.get("kind") != BASELINE_KIND:
        raise RunDocError(f"{where}: not a pytest-extractbench baseline file")
    check_version(BASELINE, data.get("format_version"), where)
    models = data.get("models")
    if not isinstance(models, dict):
        raise RunDocError(f"{where}: malformed (no 'models' object)")
    for model, entry in models.items():
        samples = entry.get("samples") if isinstance(entry, dict) else None
        if not isinstance(samples, list) or not all(isinstance(s, dict) for s in samples):
            raise RunDocError(f"{where}: malformed (model {jsonio.clip(repr(model), 60)} has no list of samples)")
    return data  # type: ignore[return-value]


def write_baseline(path: Path, document: Mapping[str, Any]) -> None:
    """A baseline file, atomically, stamped with this release's baseline format."""
    write_json(path, {**document, "format_version": FORMAT_VERSION[BASELINE], "kind": BASELINE_KIND})


# -- cassettes -----------------------------------------------------------------------------------------------


class CassetteHeader(TypedDict):
    """A cassette's first line."""

    format: str  # CASSETTE_FORMAT
    version: int
    dataset: str
    dataset_hash: str
    answers: int


class CassetteEntry(TypedDict):
    """One recorded answer: who was asked about what, the answer's key, and the answer."""

    model: str
    sample_id: str
    sample_hash: str
    key: str
    response: dict[str, Any]  # ModelResponse.as_dict(), full form (a cassette is diffed in pull requests)


def read_cassette(path: Path) -> tuple[CassetteHeader, dict[str, CassetteEntry]]:
    """(header, key -> entry); a line that is not a cassette entry is a :class:`RunDocError` with its file and
    line (a cassette is checked in: a broken one is a mistake to fix, not to skip)."""
    if not path.is_file():
        raise RunDocError(f"extractbench: --extractbench-replay: no {path.name} in {path.parent}")
    header: CassetteHeader | None = None
    entries: dict[str, CassetteEntry] = {}
    for number, value in jsonio.iter_jsonl(path):
        where = f"extractbench: cassette {path}, line {number}"
        if isinstance(value, Exception):
            raise RunDocError(f"{where}: {value}")
        if header is None:
            if not isinstance(value, dict) or value.get("format") != CASSETTE_FORMAT:
                raise RunDocError(f'{where}: not a cassette (its first line has no "format": "{CASSETTE_FORMAT}")')
            check_version(CASSETTE, value.get("version"), where)
            header = value  # type: ignore[assignment]
            continue
        if not (
            isinstance(value, dict)
            and all(isinstance(value.get(f), str) for f in ("model", "sample_id", "key"))
            and isinstance(value.get("response"), dict)
        ):
            raise RunDocError(f"{where}: an entry needs string model, sample_id and key and an object response")
        if value["key"] in entries:
            raise RunDocError(f"{where}: sample {value['sample_id']!r} (model {value['model']!r}) is recorded twice")
        entries[value["key"]] = value  # type: ignore[assignment]
    if header is None:
        raise RunDocError(f"extractbench: cassette {path} is empty")
    return header, entries


def write_cassette(path: Path, header: Mapping[str, Any], entries: Iterable[Mapping[str, Any]]) -> None:
    """A cassette, atomically and fsynced (it is checked in): the header, then one entry a line, keys sorted, so
    two recordings diff line by line."""
    with atomic(path) as handle:
        handle.write(_cassette_line({**header, "format": CASSETTE_FORMAT, "version": FORMAT_VERSION[CASSETTE]}))
        for entry in entries:
            handle.write(_cassette_line(entry))
        handle.flush()
        os.fsync(handle.fileno())


def _cassette_line(data: Mapping[str, Any]) -> bytes:
    import json

    return (json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str) + "\n").encode()


# -- responses.jsonl (the journal) ------------------------------------------------------------------------------


class JournalEntry(TypedDict):
    """One line of a run's responses.jsonl: who was asked about what, the request's cache key, the answer."""

    format_version: NotRequired[int]  # absent in journals written before lines carried it
    model: str
    sample_id: str
    key: str | None
    response: dict[str, Any]  # ModelResponse.as_dict(); live/journal.py reads it back with its types checked


def journal_line(model: str, sample_id: str, key: str, response: Mapping[str, Any]) -> bytes:
    """One journal line, newline included, stamped with this release's journal format (one write appends it)."""
    import json

    entry = {"format_version": FORMAT_VERSION[JOURNAL], "model": model, "sample_id": sample_id, "key": key}
    entry["response"] = response
    return (json.dumps(entry, ensure_ascii=False, separators=(",", ":"), default=str) + "\n").encode("utf-8")


def iter_journal(path: Path) -> Iterator[JournalEntry]:
    """The entries of a journal in order (none when the file is absent).

    Skipped: a line cut short (a run killed or a disk full mid-write; a resumed run ends it and appends after it)
    and a line past the input limits (a hostile answer: its sample is asked again, or reported missing on replay).
    Any other line that is not an entry (not JSON, not UTF-8, not of this shape, a format this release does not
    read) is a :class:`RunDocError` naming the file and line: resuming past it would silently ask again, or score
    as missing, answers the file holds. A journal an editor saved as UTF-16 is read."""
    if not path.is_file():
        return
    for number, value in jsonio.iter_jsonl(path, utf16=True):
        where = f"{path}:{number}"
        if isinstance(value, jsonio.JsonInputError):
            if value.truncated or jsonio.over_limits(value):
                continue
            raise RunDocError(f"{where}: not a journal line: {value}")
        if isinstance(value, dict) and "format_version" in value:
            check_version(JOURNAL, value["format_version"], where)
        if not (
            isinstance(value, dict)
            and isinstance(value.get("model"), str)
            and isinstance(value.get("sample_id"), str)
            and isinstance(value.get("key"), (str, type(None)))
            and isinstance(value.get("response"), dict)
        ):
            what = f"a {type(value).__name__}" if not isinstance(value, dict) else "an object"
            raise RunDocError(
                f"{where}: not a journal line: {what}, not one with string model, sample_id and key and an object "
                f"response (this release reads journal format {', '.join(map(str, READS[JOURNAL]))})"
            )
        value.setdefault("key", None)
        yield value  # type: ignore[misc]


# -- shared ------------------------------------------------------------------------------------------------------


def _load(path: Path, where: str) -> Any:
    """A whole JSON file with the limits of every input (a document nested thousands deep or of gigabytes is
    refused with a message, not a RecursionError or a memory error)."""
    try:
        return jsonio.load_file(path)
    except jsonio.JsonInputError as exc:
        raise RunDocError(f"{where}: {f'line {exc.line}: ' if exc.line else ''}{exc}") from None
    except OSError as exc:
        raise RunDocError(f"{where}: cannot read it: {os.strerror(exc.errno) if exc.errno else exc}") from None
