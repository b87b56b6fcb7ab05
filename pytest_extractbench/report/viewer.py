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
so no ``</script>`` or ``<!--`` in untrusted text could end it early even unpacked. The pass over the records and
what it holds until the page is written: :mod:`.viewer_document`.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from ..dataset.samples import Sample
from ..dataset.sources import load_source
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


def json_text(value: Any, width: int = MAX_VALUE) -> str:
    """Compact JSON (the page indents schema and gold for display), clipped."""
    if isinstance(value, str):
        text = value
    else:
        scalar = _SCALARS.get(type(value))
        text = scalar(value) if scalar is not None else json.dumps(value, ensure_ascii=False, default=str)
    return clip(text, width)


class StringTable:
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
        """The index of ``json_text(value)``, a short string (most field values) taken as it is; the text of a
        scalar made here (hundreds of thousands of field values per run: a call less each)."""
        kind = type(value)
        if kind is str and len(value) <= MAX_VALUE:
            text = value
        elif value is None:
            text = "null"
        elif kind is bool:
            text = "true" if value else "false"
        elif kind is int:
            text = clip(int.__repr__(value), MAX_VALUE)
        elif kind is float and math.isfinite(value):
            text = float.__repr__(value)  # at most 24 characters: never clipped
        else:
            text = json_text(value)
        found = self._index.get(text)
        return self(text) if found is None else found


def run_columns(item: ViewerRun) -> Mapping[str, str]:
    """The column mapping the run read its dataset with."""
    options = item.run.document["run"]["options"]
    columns = options["data"].get("columns") if isinstance(options.get("data"), Mapping) else None
    return columns if isinstance(columns, Mapping) else {}


def dataset_samples(
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


_NO_SCORE: Mapping[str, Any] = {
    "fields": [],
    "validation_errors": [],
    "parse_error": None,
    "eqs": 0.0,
    "schema_valid": False,
}


def list_pairing(item: ViewerRun) -> ScoringOptions | None:
    """The run's scoring options when its lists of scalars pair by similarity (their elements are shown), else
    None."""
    options = recorded_scoring_options(item.run.document)
    return options if options.list_similarity is not None else None


def _elements(path: int, f: Mapping[str, Any], pairing: ScoringOptions, strings: StringTable) -> list[Any]:
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


def result_entry(
    record: Mapping[str, Any], strings: StringTable, gold: dict[int, int], pairing: ScoringOptions | None = None
) -> list[Any]:
    """``[eqs, valid, failure, output, problems, fields, unusable, passed, elements]``; fields flat as (path,
    category, score, predicted), predicted -1 when it equals the gold; ``unusable``: why no value could be read from
    the output (it did not parse, or there was none), else None, and then not among the problems (shown once);
    ``elements``: the elements of similarity-paired lists (:func:`_elements`), when the run pairs them."""
    score = record.get("score") or _NO_SCORE  # a track's record has none
    fields: list[Any] = []
    elements: list[Any] = []
    value = strings.value
    # tens of fields per sample, hundreds of thousands per run: a path or short text already in the table is looked
    # up here (what strings() and strings.value() would do, without a call each)
    index = strings._index
    for f in score["fields"]:
        get = f.get  # the keys at defaults are left out
        path = f["path"]
        path = index.get(path) if type(path) is str else None
        if path is None:
            path = strings(str(f["path"]))
        category = f["category"]
        if type(category) is not str:
            category = str(category)
        expected = get("expected")
        if expected is not None:
            known = index.get(expected) if type(expected) is str and len(expected) <= MAX_VALUE else None
            gold.setdefault(path, value(expected) if known is None else known)
        if category == "exact":
            predicted = -1
        else:
            guess = get("predicted")
            known = index.get(guess) if type(guess) is str and len(guess) <= MAX_VALUE else None
            predicted = value(guess) if known is None else known
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
    return script_safe(ENCODER.encode(data))


ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
PIECE_ELEMENTS = 512  # list elements per piece


ENCODED_TOGETHER = 32  # list elements per encoder call: its set-up costs more than a short element, and
# the pieces it collects for a call (one per number, comma and bracket) must stay small beside the page


def encode_elements(items: list[Any]) -> str:
    """The JSON elements of ``items`` joined by commas, as ``",".join(map(ENCODER.encode, items))``."""
    return ",".join(
        ENCODER.encode(items[start : start + ENCODED_TOGETHER])[1:-1]
        for start in range(0, len(items), ENCODED_TOGETHER)
    )


def script_safe(text: str) -> str:
    """JSON text that cannot end or open markup inside a ``<script>`` element: ``&``, ``<`` and ``>`` as JSON escapes."""
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


def embed_json_parts(data: Any, levels: int = 3) -> Iterator[str]:
    """:func:`embed_json` in pieces that join to the same text, so a page can be written without ever holding
    its data's JSON whole (tens of megabytes per 10,000 samples, two or four bytes a character once one is not
    ASCII). Objects of the first ``levels`` levels are opened key by key; a long list is written in batches
    of elements, a short one opened element by element."""
    if levels > 0 and isinstance(data, dict) and all(type(key) is str for key in data):
        yield "{"
        for index, (key, value) in enumerate(data.items()):
            yield ("," if index else "") + script_safe(ENCODER.encode(key)) + ":"
            yield from embed_json_parts(value, levels - 1)
        yield "}"
    elif levels > 0 and isinstance(data, list):
        yield "["
        if levels > 1 and len(data) <= PIECE_ELEMENTS:
            for index, value in enumerate(data):
                if index:
                    yield ","
                yield from embed_json_parts(value, levels - 1)
        else:
            for start in range(0, len(data), PIECE_ELEMENTS):
                yield ("," if start else "") + script_safe(encode_elements(data[start : start + PIECE_ELEMENTS]))
        yield "]"
    else:
        yield script_safe(ENCODER.encode(data))


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
    a page written as a stream, never holding the data's JSON whole. ``texts``: the data's JSON text made piece by
    piece (:class:`.viewer_document.ViewerDocument`), in place of ``data``."""

    def __init__(self, data: Any = None, *, texts: Callable[[], Iterable[str]] | None = None) -> None:
        self.data = data
        self._texts = texts

    def parts(self) -> Iterator[str]:
        return packed_parts(embed_json_parts(self.data) if self._texts is None else self._texts())

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
