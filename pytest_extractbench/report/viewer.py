"""The sample viewer: one or more runs' records made into compact JSON for report.html's sample section.

The page filters, sorts and pages the samples in the browser (templates/viewer.js); this module only
gathers what it shows. Columns are (run, model) pairs, the first run being the "current" one that the
others are compared with. Per sample: id, topic, complexity bin, the source text, the schema and the gold
(from the dataset file the records name, when it can still be read), and per column the score, the raw
output and each field's category and prediction, the samples' buckets against a baseline, and how many of its
runs passed when the run repeated it; with repeats in both runs, pass@k and pass^k of each model against the same
model in the other run, with the paired CI and test a baseline comparison gives them (:mod:`..gating.repeated`). Strings are
clipped and interned, and the JSON packed (gzip in base64, unpacked by the browser: nothing is fetched), so
10,000 samples x 2 models stay under 10 MB; the JSON is escaped as for an HTML ``<script>`` element besides,
so no ``</script>`` or ``<!--`` in untrusted text could end it early even unpacked.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import zlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from ..analysis.stats import format_p
from ..core import textsafe
from ..dataset.rowfile import DatasetChangedError
from ..dataset.samples import Sample
from ..dataset.sources import load_source
from ..gating.baseline import SampleSnapshot, repeat_counts
from ..gating.buckets import BUCKETS, UNCHANGED, bucket_samples
from ..gating.repeated import REPEATED, compare_repeats
from ..scoring.compare import similarity_paired_elements
from ..scoring.options import ScoringOptions
from .rows import RunData, recorded_scoring_options

CATEGORIES = ("exact", "partial", "incorrect", "missed", "spurious")
ELEMENT_KINDS = ("exact", "similar", "missed", "spurious")  # an element of a similarity-paired list
MAX_ELEMENTS = 50  # elements listed under one field; the rest are counted
_CATEGORY_INDEX = {name: index for index, name in enumerate(CATEGORIES)}
MAX_TEXT = 20_000  # characters of source text, output, schema and gold per sample
MAX_VALUE = 300  # characters of one field value
SCRIPT_FILE = "viewer.js"


@dataclass(frozen=True)
class ViewerRun:
    """One run directory's data and the label its columns carry."""

    label: str
    run: RunData


def clip(text: str, width: int = MAX_TEXT) -> str:
    return text if len(text) <= width else text[: width - 1] + f"… ({len(text):,} characters)"


# json.dumps of these scalars, without its encoder set-up: a run has tens of field values per sample
_SCALARS: dict[type, Any] = {
    type(None): lambda v: "null",
    bool: lambda v: "true" if v else "false",
    int: int.__repr__,
    float: lambda v: float.__repr__(v) if math.isfinite(v) else json.dumps(v),
}


def _json_text(value: Any, width: int = MAX_VALUE) -> str:
    """Compact JSON (the page indents schema and gold for display), clipped."""
    if isinstance(value, str):
        text = value
    else:
        scalar = _SCALARS.get(type(value))
        text = scalar(value) if scalar is not None else json.dumps(value, ensure_ascii=False, default=str)
    return clip(text, width)


class _Strings:
    """A string table: each distinct string stored once, referred to by index."""

    def __init__(self) -> None:
        self.items: list[str] = []
        self._index: dict[str, int] = {}

    def __call__(self, text: str) -> int:
        found = self._index.get(text)
        if found is None:
            found = self._index[text] = len(self.items)
            self.items.append(text)
        return found

    def value(self, value: Any) -> int:
        """The index of ``_json_text(value)``, a short string (most field values) taken as it is."""
        if type(value) is str and len(value) <= MAX_VALUE:
            found = self._index.get(value)
            return self(value) if found is None else found
        return self(_json_text(value))


def _columns(item: ViewerRun) -> Mapping[str, str]:
    """The column mapping the run read its dataset with."""
    options = item.run.document["run"]["options"]
    columns = options["data"].get("columns") if isinstance(options.get("data"), Mapping) else None
    return columns if isinstance(columns, Mapping) else {}


def _dataset_samples(
    runs: Sequence[ViewerRun], wanted: set[str], sources: Mapping[str, Mapping[str, str]]
) -> tuple[dict[str, Sample], list[str]]:
    """The samples of the dataset files the records name (``sources``: file -> the column mapping the run used),
    by id; notes say what was not found. A run that still holds its dataset (the session that just ran it) lends
    its samples instead of the file being parsed again."""
    loaded: dict[str, Sequence[Sample]] = {}
    for item in runs:
        for source, held in (item.run.samples or {}).items():
            loaded.setdefault(source, held)
    found: dict[str, Sample] = {}
    notes: list[str] = []
    for source, columns in sources.items():
        if source.startswith("hf:") or not Path(source).exists():
            notes.append(f"dataset {source}: not readable here, so source text, schema and gold are not shown")
            continue
        samples = loaded.get(source)
        if samples is None:
            try:
                samples = load_source(source, columns=columns).samples
            except Exception as exc:  # noqa: BLE001 - a changed or foreign file: the viewer still shows scores and outputs
                notes.append(f"dataset {source}: {type(exc).__name__}: {exc}")
                continue
        for sample in samples:
            if sample.id in wanted:
                found.setdefault(sample.id, sample)
    if not notes and len(found) < len(wanted):  # a dataset file edited since, or read without its mapping
        notes.append(
            f"{len(wanted) - len(found):,} of {len(wanted):,} samples are not in the dataset file now: "
            "their source text, schema and gold are not shown"
        )
    return found, notes


def viewer_data(runs: Sequence[ViewerRun], *, with_dataset: bool = True) -> dict[str, Any]:
    """The viewer's compact JSON document for ``runs`` (the first is the current run)."""
    strings = _Strings()
    columns: list[dict[str, str]] = []
    models: list[str] = []  # per column, the model's name as the records spell it
    order: dict[str, int] = {}  # sample id -> row
    samples: list[list[Any]] = []
    results: list[dict[int, list[Any]]] = []
    passes: list[dict[int, tuple[int, int]]] = []  # per column: row -> (runs, passing runs) of a repeated sample
    gold_fields: list[dict[int, int]] = []  # per row: path -> expected value (string index)
    sources: dict[str, Mapping[str, str]] = {}
    for item in runs:
        by_model: dict[str, int] = {}
        columns_used = _columns(item)
        pairing = _list_pairing(item)
        for record in item.run.records():
            model = record["model"]
            if model not in by_model:
                by_model[model] = len(columns)
                # a column heading, shown as the terminal and summary.md show the name (escapes visible)
                columns.append({"run": item.label, "model": textsafe.terminal(model)})
                models.append(model)
                results.append({})
                passes.append({})
            sid = record["sample_id"]
            meta = record["meta"]
            source = meta.get("source")
            if isinstance(source, str) and source:
                sources.setdefault(source, columns_used)
            row = order.get(sid)
            if row is None:
                row = order[sid] = len(samples)
                complexity = meta.get("complexity") if isinstance(meta.get("complexity"), Mapping) else {}
                samples.append(
                    [
                        sid,
                        str(meta.get("topic") or ""),
                        str(complexity.get("complexity_bin") or ""),
                        str(meta.get("title") or ""),
                    ]
                )
                gold_fields.append({})
            results[by_model[model]][row] = _result(record, strings, gold_fields[row], pairing)
            # a track's record keeps its runs at the top, an extraction record among its diagnostics
            counts = repeat_counts(record.get("repeats") or (record.get("diagnostics") or {}).get("repeats"))
            if counts is not None:
                passes[by_model[model]][row] = counts
    dataset: dict[str, Sample] = {}
    notes: list[str] = []
    if with_dataset and samples:
        dataset, notes = _dataset_samples(runs, set(order), sources)
    details = []
    schemas: dict[int, int] = {}  # id of a schema object -> its string: samples of one schema share the object
    for (sid, *_), gold in zip(samples, gold_fields):
        sample = dataset.get(sid)
        text = expected = None
        if sample is not None:
            try:  # a sample of a JSONL file reads its text and gold again from its line
                text, expected = clip(sample.text), _json_text(sample.expected, MAX_TEXT)
            except DatasetChangedError as exc:
                notes.append(f"{exc}: the source text, schema and gold of the samples after it are not shown")
                dataset = {}
                sample = None
        if sample is not None and (schema := schemas.get(id(sample.schema))) is None:
            schema = schemas[id(sample.schema)] = strings(_json_text(sample.schema, MAX_TEXT))
        details.append([text, schema if sample else -1, expected, [x for pair in sorted(gold.items()) for x in pair]])
    first_run = sum(1 for c in columns if c["run"] == runs[0].label) if runs else 0
    return {
        "columns": columns,
        "categories": list(CATEGORIES),
        "element_kinds": list(ELEMENT_KINDS),
        "bucket_names": list(BUCKETS),
        "buckets": _buckets(
            runs[0].run.document if runs else {}, columns, models, first_run, results, order, strings.items
        ),
        "strings": strings.items,
        "samples": samples,
        "details": details,
        "results": [[column.get(row) for row in range(len(samples))] for column in results],
        "passes": [
            [list(column[row]) if row in column else None for row in range(len(samples))] if column else None
            for column in passes
        ],
        "repeats": _repeat_deltas(runs, columns, models, first_run, passes, notes),
        "notes": notes,
    }


def split(data: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """The viewer's document as the page carries it: a small head that draws the table's first rows (columns,
    samples, each column's EQS and validity, buckets), and the body that a sample's detail, the field filters and
    the search need (strings, details, every result), unpacked by the page after the first rows are shown."""
    head = {key: value for key, value in data.items() if key not in ("strings", "details", "results")}
    head["scores"] = [
        [[None if r is None else r[0] for r in column], [None if r is None else r[1] for r in column]]
        for column in data["results"]
    ]
    return head, {"strings": data["strings"], "details": data["details"], "results": data["results"]}


def _buckets(
    document: Mapping[str, Any],
    columns: Sequence[Mapping[str, str]],
    models: Sequence[str],
    first_run: int,
    results: Sequence[Mapping[int, list[Any]]],
    order: Mapping[str, int],
    strings: Sequence[str],
) -> list[dict[str, Any] | None]:
    """Per column, each row's bucket (an index into BUCKETS, -1 for none) and what it was measured against: for
    a column of the current run, the run's own baseline comparison (metrics.json) when it made one, else the
    same model in the next run that has it (bucketed here as the gate buckets); None for the other columns."""
    compared = (document.get("baseline_comparison") or {}).get("models") or {}
    index = {name: i for i, name in enumerate(BUCKETS)}
    out: list[dict[str, Any] | None] = [None] * len(columns)
    for k in range(first_run):
        given = (compared.get(models[k]) or {}).get("buckets") if isinstance(compared, Mapping) else None
        rows = [-1] * len(order)
        if isinstance(given, Mapping) and isinstance(given.get("samples"), Mapping):
            for row in results[k]:
                rows[row] = index[UNCHANGED]  # every bucket but "unchanged" lists its samples
            for bucket, ids in given["samples"].items():
                for sid in ids if bucket in index and isinstance(ids, list) else ():
                    if (at := order.get(str(sid))) is not None:
                        rows[at] = index[bucket]
            out[k] = {"against": "the run's baseline", "rows": rows}
            continue
        partner = next((j for j in range(first_run, len(columns)) if models[j] == models[k]), None)
        if partner is None:
            continue
        found = bucket_samples(_snapshots(results[k], strings), _snapshots(results[partner], strings))
        for key, sample in found.samples.items():
            rows[int(key)] = index[sample.bucket]
        out[k] = {"against": columns[partner]["run"], "rows": rows}
    return out


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


_NO_SCORE: Mapping[str, Any] = {
    "fields": [],
    "validation_errors": [],
    "parse_error": None,
    "eqs": 0.0,
    "schema_valid": False,
}


def _list_pairing(item: ViewerRun) -> ScoringOptions | None:
    """The run's scoring options when its lists of scalars pair by similarity (their elements are shown), else
    None."""
    options = recorded_scoring_options(item.run.document)
    return options if options.list_similarity is not None else None


def _elements(path: int, f: Mapping[str, Any], pairing: ScoringOptions, strings: _Strings) -> list[Any]:
    """A similarity-paired list field's elements, flat as (path, kind, expected, predicted, similarity); -1 for
    the side an element lacks, similarity -1 for pairs not made by similarity."""
    pairs = similarity_paired_elements(f.get("expected"), f.get("predicted"), str(f["category"]), pairing)
    out: list[Any] = []
    for pair in (pairs or [])[:MAX_ELEMENTS]:
        out += (
            path,
            ELEMENT_KINDS.index(pair.kind),
            strings.value(pair.expected) if pair.kind != "spurious" else -1,
            strings.value(pair.predicted) if pair.kind != "missed" else -1,
            round(pair.similarity, 3) if pair.kind == "similar" and pair.similarity is not None else -1,
        )
    return out


def _result(
    record: Mapping[str, Any], strings: _Strings, gold: dict[int, int], pairing: ScoringOptions | None = None
) -> list[Any]:
    """``[eqs, valid, failure, output, problems, fields, unusable, passed, elements]``; fields flat as (path,
    category, score, predicted), predicted -1 when it equals the gold; ``unusable``: why no value could be read from
    the output (it did not parse, or there was none), else None, and then not among the problems (shown once);
    ``elements``: the elements of similarity-paired lists (:func:`_elements`), when the run pairs them."""
    score = record.get("score") or _NO_SCORE  # a track's record has none
    fields: list[Any] = []
    elements: list[Any] = []
    value = strings.value
    for f in score["fields"]:
        get = f.get  # tens of fields per sample, hundreds of thousands per run; the keys at defaults are left out
        path = strings(str(f["path"]))
        category = str(f["category"])
        expected = get("expected")
        if expected is not None:
            gold.setdefault(path, value(expected))
        predicted = -1 if category == "exact" else value(get("predicted"))
        fields += (path, _CATEGORY_INDEX.get(category, -1), round(float(f["score"] or 0.0), 3), predicted)
        if pairing is not None and category != "exact" and type(expected) is list:
            elements += _elements(path, f, pairing, strings)
    content = record["response"]["content"]
    problems = [clip(str(p), 400) for p in score["validation_errors"][:5] if p]
    unusable = score["parse_error"] or (None if content is not None else str(record["failure"] or "no output"))
    passed = record["passed"]
    return [
        round(float(score["eqs"]), 4),
        1 if score["schema_valid"] else 0,
        record["failure"],
        None if content is None else clip(content if isinstance(content, str) else json.dumps(content)),
        problems,
        fields,
        None if not unusable else clip(str(unusable), 400),
        (1 if score["schema_valid"] else 0) if passed is None else (1 if passed else 0),
        elements,
    ]


def embed_json(data: Any) -> str:
    """JSON safe inside an HTML ``<script type="application/json">`` element: no ``<``, ``>`` or ``&``
    can open or close a tag (they become ``\\u003c``... escapes, which JSON.parse reads back)."""
    return _escaped(_ENCODER.encode(data))


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
_BATCH = 512  # list elements per piece


_ENCODED_TOGETHER = 32  # list elements per encoder call: its set-up costs more than a short element, and
# the pieces it collects for a call (one per number, comma and bracket) must stay small beside the page


def _encode_elements(items: list[Any]) -> str:
    """The JSON elements of ``items`` joined by commas, as ``",".join(map(_ENCODER.encode, items))``."""
    return ",".join(
        _ENCODER.encode(items[start : start + _ENCODED_TOGETHER])[1:-1]
        for start in range(0, len(items), _ENCODED_TOGETHER)
    )


def _escaped(text: str) -> str:
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


def embed_json_parts(data: Any, levels: int = 3) -> Iterator[str]:
    """:func:`embed_json` in pieces that join to the same text, so a page can be written without ever holding
    its data's JSON whole (tens of megabytes per 10,000 samples, two or four bytes a character once one is not
    ASCII). Objects of the first ``levels`` levels are opened key by key; a long list is written in batches
    of elements, a short one opened element by element."""
    if levels > 0 and isinstance(data, dict) and all(type(key) is str for key in data):
        yield "{"
        for index, (key, value) in enumerate(data.items()):
            yield ("," if index else "") + _escaped(_ENCODER.encode(key)) + ":"
            yield from embed_json_parts(value, levels - 1)
        yield "}"
    elif levels > 0 and isinstance(data, list):
        yield "["
        if levels > 1 and len(data) <= _BATCH:
            for index, value in enumerate(data):
                if index:
                    yield ","
                yield from embed_json_parts(value, levels - 1)
        else:
            for start in range(0, len(data), _BATCH):
                yield ("," if start else "") + _escaped(_encode_elements(data[start : start + _BATCH]))
        yield "]"
    else:
        yield _escaped(_ENCODER.encode(data))


ENCODING = "gzip-base64"  # the data element's data-encoding: what the page's script undoes
_PACKED_PIECE = 3 * 65_536  # compressed bytes per base64 piece (a multiple of 3: the pieces join to one text)


def packed_parts(texts: Iterable[str], level: int = 6) -> Iterator[str]:
    """``texts`` joined, as UTF-8 compressed with gzip and written in base64, piece by piece. A 10,000-sample
    run's JSON is tens of megabytes of repeated keys and categories: packed it is a fifth of that, and the browser
    unpacks it (DecompressionStream) faster than it would read the page's extra megabytes. Base64 holds no
    ``<``, ``>`` or ``&``, so the text cannot end its element either."""
    packer = zlib.compressobj(level, zlib.DEFLATED, 31)  # 31: a gzip stream (header with no name, time 0)
    pending = bytearray()
    for text in texts:
        pending += packer.compress(text.encode("utf-8"))
        if len(pending) >= _PACKED_PIECE:
            cut = len(pending) - len(pending) % 3
            yield base64.b64encode(pending[:cut]).decode("ascii")
            del pending[:cut]
    pending += packer.flush()
    yield base64.b64encode(pending).decode("ascii")


def unpack(text: str) -> Any:
    """The data of a page's viewer element (what the page's script reads)."""
    return json.loads(zlib.decompress(base64.b64decode(text), 31).decode("utf-8"))


class EmbeddedJson:
    """Data for the viewer's ``<script type="application/json">`` element, packed (:func:`packed_parts`): renders
    whole (``__html__``, so a template can mark it safe), and :meth:`parts` gives the same text piece by piece to
    a page written as a stream, never holding the data's JSON whole."""

    def __init__(self, data: Any) -> None:
        self.data = data

    def parts(self) -> Iterator[str]:
        return packed_parts(embed_json_parts(self.data))

    def __html__(self) -> str:
        return "".join(self.parts())

    def __str__(self) -> str:
        return self.__html__()


@lru_cache(maxsize=1)
def script() -> str:
    """The viewer's script (inline in the page; allowed by its hash in the page's CSP)."""
    return (resources.files(__package__) / "templates" / SCRIPT_FILE).read_text(encoding="utf-8")


def script_hash(text: str) -> str:
    """The CSP source that allows exactly this inline script."""
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii") + "'"


def runs_from_dirs(paths: Sequence[Path]) -> list[ViewerRun]:
    """Run directories as viewer runs labelled by their folder name (made unique when two share it)."""
    from .rows import read_run

    out: list[ViewerRun] = []
    seen: set[str] = set()
    for path in paths:
        label = path.resolve().name or str(path)
        if label in seen:
            label = str(path)
        seen.add(label)
        out.append(ViewerRun(label, read_run(path)))
    return out
