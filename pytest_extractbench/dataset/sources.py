"""Dataset sources: the bundled file, JSONL/JSON/Parquet files, Benchson folders and HuggingFace datasets.

Every source yields ``(location, row)`` pairs that :func:`.dataset.parse_rows` turns into
samples, so validation and problem reports are the same whatever the source. Specs:

- ``bundled``: the dataset installed with the package;
- ``PATH.jsonl`` / ``PATH.json`` / ``PATH.parquet``: a file of rows;
- ``DIR`` with a ``test/`` folder: Benchson's layout, ``DIR/test/*.json`` instances of
  ``{"data": ..., "ground_truth": ...}`` (the schema is the instance's ``schema`` or ``DIR/schema.json``);
- ``hf:OWNER/NAME[:SPLIT]``: a dataset on the HuggingFace Hub, loaded with ``datasets``;
- ``hf:PATH[:SPLIT]``: a local file or folder loaded with ``datasets`` (Parquet/JSON/CSV files or a
  saved dataset repository), for machines without the Hub;
- ``[hf:]DIR[:SPLIT]`` written by ``Dataset.save_to_disk`` or ``DatasetDict.save_to_disk``: read back with
  ``datasets.load_from_disk``.

A ``DatasetDict`` (no split named) is every split, each row's location naming its split; splits that share
sample ids are refused in one message naming them and how to pick one, not reported row by row as duplicates.
"""

from __future__ import annotations

import argparse
import importlib
import os
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..core import jsonio
from ..core.errors import ExtractbenchError
from .documents import DocumentReader
from .samples import BUNDLED, Dataset, JsonlRows, bundled_path, iter_rows, parse_rows

HF_PREFIX = "hf:"
# Our field names that --extractbench-columns may map to a dataset's own column names.
COLUMN_NAMES = ("id", "text", "document", "schema", "expected", "topic", "title", "medium")
HUB_CHECK_TIMEOUT_S = 3.0
_DATASETS_BUILDERS = {".parquet": "parquet", ".jsonl": "json", ".json": "json", ".csv": "csv"}


INVALID_POLICIES = ("skip", "warn", "fail")


@dataclass(frozen=True)
class DataOptions:
    """How the dataset is read and cut down (the dataset options)."""

    columns: tuple[tuple[str, str], ...] = ()
    sample: int | None = None
    seed: int = 42
    invalid_samples: str = "warn"
    cache_dir: Path | None = None
    input: str = "text"  # what a model gets of a document: its text, its page images, or both
    documents_cache: Path | None = None  # where document text and page renders are kept (not an option)

    def as_dict(self) -> dict[str, Any]:
        return {
            "columns": dict(self.columns),
            "sample": self.sample,
            "seed": self.seed,
            "invalid_samples": self.invalid_samples,
            "cache_dir": str(self.cache_dir) if self.cache_dir else None,
            "input": self.input,
        }


class DatasetSourceError(ExtractbenchError):
    """The dataset spec cannot be loaded at all (as opposed to bad rows, which are problems)."""


def parse_columns(value: str) -> tuple[tuple[str, str], ...]:
    """``text=document,expected=gold`` -> ``(("text", "document"), ("expected", "gold"))``."""
    pairs: list[tuple[str, str]] = []
    for part in (p.strip() for p in value.split(",")):
        if not part:
            continue
        ours, sep, theirs = part.partition("=")
        ours, theirs = ours.strip(), theirs.strip()
        if not sep or not ours or not theirs:
            raise argparse.ArgumentTypeError(f"expected OURS=THEIRS pairs like text=document, got {part!r}")
        if ours not in COLUMN_NAMES:
            raise argparse.ArgumentTypeError(f"unknown field {ours!r}; map one of {', '.join(COLUMN_NAMES)}")
        pairs.append((ours, theirs))
    if len({ours for ours, _ in pairs}) != len(pairs):
        raise argparse.ArgumentTypeError(f"a field is mapped twice in {value!r}")
    return tuple(pairs)


def load_source(
    spec: str | None = None,
    *,
    base_dir: Path | None = None,
    columns: Mapping[str, str] | None = None,
    cache_dir: Path | None = None,
    documents: DocumentReader | None = None,
) -> Dataset:
    """Load the dataset named by ``spec`` (see the module docstring); bad rows become problems.

    ``documents`` says how rows' documents are read (input mode, cache); their paths are relative to the dataset
    file's folder (a Benchson folder: the folder itself)."""
    columns = dict(columns or {})
    reader = documents or DocumentReader()
    if spec in (None, "", BUNDLED):
        path = bundled_path()
        return parse_rows(BUNDLED, str(path), JsonlRows(path), columns=columns)
    assert spec is not None
    if spec.startswith(HF_PREFIX):
        return _load_hf(spec, base_dir=base_dir, columns=columns, cache_dir=cache_dir, documents=reader)
    path = _resolve(spec, base_dir)
    if path.is_dir() and is_saved_to_disk(path):
        return _load_hf_local(spec, path, None, columns, cache_dir, replace(reader, base_dir=path))
    if path.is_dir():
        return parse_rows(
            path.name, spec, iter_benchson(path, spec), columns=columns, documents=replace(reader, base_dir=path)
        )
    if not path.is_file():
        raise FileNotFoundError(f"dataset {spec!r}: no such file or folder {path}")
    suffix = path.suffix.lower()
    documents = replace(reader, base_dir=path.parent)
    if suffix == ".parquet":
        return parse_rows(path.name, spec, iter_parquet(path), columns=columns, documents=documents)
    if suffix in (".jsonl", ".ndjson"):  # samples read their text and gold again from their line (rowfile.py)
        return parse_rows(path.name, spec, JsonlRows(path), columns=columns, documents=documents)
    if suffix == ".json":
        return parse_rows(path.name, spec, iter_rows(path), columns=columns, documents=documents)
    raise DatasetSourceError(
        f"dataset {spec!r}: unknown file type {suffix or '(none)'}; "
        "use .jsonl, .json, .parquet, a Benchson folder or hf:NAME"
    )


def _resolve(spec: str, base_dir: Path | None) -> Path:
    path = Path(spec).expanduser()
    if base_dir is not None and not path.is_absolute():
        path = base_dir / path
    return path


# -- files and folders ----------------------------------------------------------------------


HF_EXTRA = "pip install 'pytest-extractbench[hf]'"


def _optional(module: str, what: str) -> Any:
    """An import from the ``hf`` extra, or a one-line message saying how to install it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise DatasetSourceError(
            f"{what} needs the datasets libraries, which are an optional extra: {HF_EXTRA}"
        ) from None


def iter_parquet(path: Path) -> Iterator[tuple[str, Any]]:
    """``(row N, row)`` of a Parquet file, read in record batches."""
    pq = _optional("pyarrow.parquet", f"dataset {path}: reading Parquet")

    try:
        handle = pq.ParquetFile(path)
    except Exception as exc:  # noqa: BLE001 - pyarrow raises ArrowInvalid & co. for a broken file
        raise DatasetSourceError(f"dataset {path}: not a readable Parquet file: {exc}") from None
    number = 0
    for batch in handle.iter_batches(batch_size=4096):
        for row in batch.to_pylist():
            number += 1
            yield f"row {number}", row


def iter_benchson(folder: Path, label: str) -> Iterator[tuple[str, Any]]:
    """Benchson instances ``folder/test/*.json`` as rows; ``train/`` is reference data, not evaluated.

    An instance's ``data`` is the document (a string, or an object with ``text`` and maybe
    ``schema``); ``ground_truth`` is the gold; the schema is the instance's ``schema`` key, else
    ``folder/schema.json``. Locations name the instance file, so problems point at it.
    """
    test_dir = folder / "test"
    if not test_dir.is_dir():
        raise DatasetSourceError(
            f"dataset {label!r}: {folder} is a folder without test/ (expected Benchson's NAME/test/*.json layout)"
        )
    shared_schema: Any = None
    schema_file = folder / "schema.json"
    if schema_file.is_file():
        try:
            shared_schema = jsonio.load_file(schema_file, allow_nonfinite=False)
        except jsonio.JsonInputError as exc:
            raise DatasetSourceError(f"{schema_file}: line {exc.line or 1}: {exc}") from None
    files = sorted(test_dir.glob("*.json"))
    if not files:
        raise DatasetSourceError(f"dataset {label!r}: {test_dir} holds no *.json instances")
    for file in files:
        location = f"test/{file.name} line 1"
        try:
            instance = jsonio.load_file(file)
        except jsonio.JsonInputError as exc:
            yield f"test/{file.name} line {exc.line or 1}", exc
            continue
        except OSError as exc:
            yield location, jsonio.JsonInputError(f"unreadable: {exc.strerror or exc}")
            continue
        yield location, benchson_row(instance, file.stem, shared_schema)


def benchson_row(instance: Any, stem: str, shared_schema: Any) -> Any:
    """One Benchson instance as a ``{id, text, schema, expected}`` row (other shapes pass through)."""
    if not isinstance(instance, dict) or "data" not in instance:
        return instance  # reported by the row checks ("missing 'text'", "must be a JSON object")
    data = instance["data"]
    row: dict[str, Any] = {"id": instance.get("id", stem)}
    if isinstance(data, dict):
        row.update({k: v for k, v in data.items() if k in ("text", "document", "schema", "topic", "title", "medium")})
    else:
        row["text"] = data
    row.setdefault("schema", instance.get("schema", shared_schema))
    if row["schema"] is None:
        del row["schema"]  # "missing 'schema'"
    if "ground_truth" in instance and instance["ground_truth"] is not None:
        row["expected"] = instance["ground_truth"]
    for key in ("document", "topic", "title", "medium"):
        if key in instance:
            row[key] = instance[key]
    return row


# -- HuggingFace --------------------------------------------------------------------------------


def _split_spec(rest: str) -> tuple[str, str | None]:
    """``NAME:split`` -> (NAME, split); a Windows drive letter is not a split."""
    name, sep, split = rest.rpartition(":")
    if sep and name and split and "/" not in split and "\\" not in split and len(name) > 1:
        return name, split
    return rest, None


def _load_hf(
    spec: str, *, base_dir: Path | None, columns: Mapping[str, str], cache_dir: Path | None, documents: DocumentReader
) -> Dataset:
    rest = spec[len(HF_PREFIX) :]
    name, split = _split_spec(rest)
    local = _resolve(name, base_dir)
    if not local.exists() and _resolve(rest, base_dir).exists():
        local, split = _resolve(rest, base_dir), None
    if local.exists():
        return _load_hf_local(
            spec,
            local,
            split,
            columns,
            cache_dir,
            replace(documents, base_dir=local if local.is_dir() else local.parent),
        )
    datasets = _optional("datasets", f"dataset {spec!r}")
    if not _hub_offline():
        check_hub_reachable(spec)

    try:
        loaded = datasets.load_dataset(name, split=split, cache_dir=str(cache_dir) if cache_dir else None)
    except Exception as exc:  # noqa: BLE001 - datasets raises many kinds; the user needs one clear sentence
        if _hub_offline():
            why = "HF_HUB_OFFLINE is set and it is not in the local datasets cache"
        elif isinstance(exc, FileNotFoundError):  # DatasetNotFoundError and friends
            why = (
                "it is neither a local path nor a dataset on the HuggingFace Hub (check the name; a private or "
                "gated dataset needs HF_TOKEN in the environment)"
            )
        elif isinstance(exc, ValueError):  # e.g. an unknown split
            why = "it could not be loaded as asked"
        else:
            why = "it could not be downloaded"
        raise DatasetSourceError(f"dataset {spec!r}: {name!r}: {why}: {type(exc).__name__}: {exc}") from None
    rows = iter_hf_rows(loaded, f"dataset {spec!r}", _spec_pick(spec, split), columns)
    return parse_rows(name, spec, rows, columns=columns, documents=replace(documents, base_dir=None))


def _load_hf_local(
    spec: str,
    path: Path,
    split: str | None,
    columns: Mapping[str, str],
    cache_dir: Path | None,
    documents: DocumentReader,
) -> Dataset:
    """A local file or folder through ``datasets`` (the same code path as the Hub, minus the download)."""
    datasets = _optional("datasets", f"dataset {spec!r}")

    try:
        if is_saved_to_disk(path):
            loaded = datasets.load_from_disk(str(path))
            if split is not None:
                loaded = _pick_split(spec, path.name, loaded, split)
        elif path.is_file():
            builder = _DATASETS_BUILDERS.get(path.suffix.lower())
            if builder is None:
                raise DatasetSourceError(f"dataset {spec!r}: datasets cannot read {path.suffix or 'this'} files")
            loaded = datasets.load_dataset(
                builder, data_files=str(path), split=split or "train", cache_dir=str(cache_dir) if cache_dir else None
            )
        else:
            loaded = datasets.load_dataset(str(path), split=split, cache_dir=str(cache_dir) if cache_dir else None)
    except DatasetSourceError:
        raise
    except Exception as exc:  # noqa: BLE001 - datasets raises many kinds; the user needs the words
        reason = f"{type(exc).__name__}: {exc}"
        raise DatasetSourceError(f"dataset {spec!r}: datasets could not load {path}: {reason}") from None
    rows = iter_hf_rows(loaded, f"dataset {spec!r}", _spec_pick(spec, split), columns)
    return parse_rows(path.name, spec, rows, columns=columns, documents=documents)


SAVED_MARKERS = ("dataset_dict.json", "state.json")  # what save_to_disk writes beside the data


def is_saved_to_disk(path: Path) -> bool:
    """A folder written by ``Dataset.save_to_disk`` or ``DatasetDict.save_to_disk``."""
    return path.is_dir() and any((path / marker).is_file() for marker in SAVED_MARKERS)


def _pick_split(spec: str, name: str, loaded: Any, split: str) -> Any:
    if not isinstance(loaded, dict):
        raise DatasetSourceError(f"dataset {spec!r}: {name} holds one dataset, not splits; name no split")
    if split not in loaded:
        raise DatasetSourceError(f"dataset {spec!r}: no split {split!r} in {name}; its splits: {', '.join(loaded)}")
    return loaded[split]


def _spec_pick(spec: str, split: str | None) -> str:
    """How a command line names one split of ``spec`` (for the shared-ids message)."""
    base = spec if spec.startswith(HF_PREFIX) else HF_PREFIX + spec
    base = base[: -len(split) - 1] if split and base.endswith(f":{split}") else base
    return f"--extractbench-dataset {base}:SPLIT"


def iter_hf_rows(
    loaded: Any, where: str = "the dataset", pick: str = "one split", columns: Mapping[str, str] | None = None
) -> Iterator[tuple[str, Any]]:
    """Rows of a ``Dataset``, or of every split of a ``DatasetDict`` (locations name the split).

    Splits that share sample ids (ids restarting in each split, or one set of samples split twice) are one
    :class:`DatasetSourceError` naming ``where``, the splits and ``pick`` (how to name one), raised before any
    row: row by row they would be as many "duplicate id" problems and a benchmark of whichever split came first."""
    if isinstance(loaded, dict):  # a DatasetDict
        splits = list(loaded.keys())
        _check_split_ids(loaded, where, pick, (columns or {}).get("id", "id"))
        for split in splits:
            for number, row in enumerate(loaded[split].to_list(), start=1):
                if len(splits) > 1 and "id" not in row:
                    row = {**row, "id": f"{split}-{number}"}
                yield (f"{split} row {number}" if len(splits) > 1 else f"row {number}"), row
        return
    for number, row in enumerate(loaded.to_list(), start=1):
        yield f"row {number}", row


def _check_split_ids(loaded: Mapping[str, Any], where: str, pick: str, id_column: str) -> None:
    seen: dict[str, str] = {}
    for split, part in loaded.items():
        if id_column not in (getattr(part, "column_names", None) or ()):
            continue
        for value in part[id_column]:
            first = seen.setdefault(str(value), split)
            if first != split:
                raise DatasetSourceError(
                    f"{where}: splits {first!r} and {split!r} share sample ids (such as {jsonio.clip(str(value))!r}), "
                    f"so they cannot be benchmarked as one dataset (its splits: {', '.join(map(str, loaded))}); "
                    f"pick one: {pick}"
                )


def _hub_offline() -> bool:
    return any(
        os.environ.get(var, "").strip().lower() in ("1", "true", "yes", "on")
        for var in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")
    )


def hub_endpoint() -> str:
    return os.environ.get("HF_ENDPOINT", "https://huggingface.co").rstrip("/")


def check_hub_reachable(spec: str, timeout: float = HUB_CHECK_TIMEOUT_S) -> None:
    """Fail in seconds, not after minutes of retries, when the Hub cannot be reached (proxies honoured)."""
    endpoint = hub_endpoint()
    request = urllib.request.Request(endpoint + "/api/datasets?limit=1", method="HEAD")
    try:
        urllib.request.urlopen(request, timeout=timeout).close()
    except urllib.error.HTTPError:
        return  # the Hub answered: reachable
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        raise DatasetSourceError(
            f"dataset {spec!r}: the HuggingFace Hub ({endpoint}) is unreachable ({reason}). Download the dataset "
            "on a connected machine and pass its local files as hf:PATH or PATH.parquet, or set HF_HUB_OFFLINE=1 "
            "to use the local datasets cache."
        ) from None


def load_dataset(
    spec: str | None = None, *, base_dir: Path | None = None, columns: Mapping[str, str] | None = None
) -> Dataset:
    """Load the dataset named by ``spec`` (``bundled`` by default; :func:`load_source` lists every source)."""
    return load_source(spec, base_dir=base_dir, columns=columns)
