"""Offline mode: model outputs read from predictions files instead of a server.

A predictions file is JSONL with rows ``{"id", "output"}`` (``output`` is the raw
model text or a JSON value) and an optional ``"model"``. The option value is
``PATH`` or ``NAME=PATH``; a row's model is its ``model`` key, else ``NAME``, else
the single ``--model`` given, else ``predictions``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from ..core import jsonio
from .responses import ModelResponse
from .samples import DatasetProblem, Sample

DEFAULT_OFFLINE_MODEL = "predictions"


@dataclass(frozen=True)
class PredictionsSpec:
    """One ``--extractbench-predictions [NAME=]PATH`` value."""

    path: Path
    model: str | None = None
    # rows given in memory (from Python): ``path`` is then only their label in messages, e.g. ``<rows>``
    rows: tuple[Any, ...] | None = field(default=None, repr=False, compare=False)

    @classmethod
    def parse(cls, value: str) -> PredictionsSpec:
        name, sep, path = value.partition("=")
        if sep and name and not Path(value).exists():
            return cls(Path(path), name)
        return cls(Path(value))


@dataclass
class PredictionsSource:
    """Outputs keyed by (model, sample id), with the problems met while reading them."""

    outputs: dict[tuple[str, str], ModelResponse] = field(default_factory=dict)
    # every run of a row with "outputs": [...] (--extractbench-repeats)
    repeats: dict[tuple[str, str], list[ModelResponse]] = field(default_factory=dict)
    origin: dict[tuple[str, str], str] = field(default_factory=dict)
    problems: list[DatasetProblem] = field(default_factory=list)
    files: dict[str, FileFacts] = field(default_factory=dict)  # by the path as given
    # by label: how to read a row again (its line or row number -> the row, and the model a row without one gets)
    rereaders: dict[str, tuple[Callable[[int], object], str] | None] = field(
        default_factory=dict, repr=False, compare=False
    )

    @property
    def models(self) -> list[str]:
        return sorted({model for model, _ in self.outputs})

    def prepare(self, work: Sequence[tuple[str, Sample]]) -> None:
        """Nothing to prefetch: everything is already in memory."""

    def response(self, model: str, sample: Sample) -> ModelResponse:
        """The output of ``(model, sample)``. Once served, an output is no longer held (100,000 outputs are held
        until the session ends otherwise, a tenth of a large run's memory): its row is read again if it is asked
        for a second time (an item run again), from its file or rows, as it was read first."""
        key = (model, sample.id)
        found = self.outputs.get(key)
        if found is None:
            return ModelResponse(
                error_class="missing", error=f"no prediction for sample {sample.id!r} (model {model!r})"
            )
        if found is SERVED:
            return self._read_again(key)
        if key not in self.repeats and self.rereaders.get(self.origin.get(key, "").rpartition(":")[0]) is not None:
            self.outputs[key] = SERVED  # the key stays: the models and the ids answered are still known
        return found

    def _read_again(self, key: tuple[str, str]) -> ModelResponse:
        """A served output read again from its row; a row that is no longer there or no longer this sample's
        (its file was edited since) gives the output as missing, saying why."""
        label, _, location = self.origin[key].rpartition(":")
        unit, _, number = location.partition(" ")
        again, reader = PredictionsSource(), self.rereaders.get(label)  # a served output's label has its reader
        if reader is not None:
            try:
                row = reader[0](int(number))
            except (OSError, IndexError, ValueError):
                row = None
            if row is not None:
                _read_row(again, label, int(number), row, reader[1], unit)
        found = again.outputs.get(key)
        if found is None:
            return ModelResponse(
                error_class="missing",
                error=f"prediction for sample {key[1]!r} (model {key[0]!r}) changed since it was read "
                f"({label}, {location})",
            )
        return found

    def responses(self, model: str, sample: Sample, n: int) -> list[ModelResponse]:
        """Up to ``n`` runs of one sample: a row's ``outputs`` list, else its single output."""
        found = self.repeats.get((model, sample.id))
        return list(found[:n]) if found else [self.response(model, sample)]

    def close(self) -> None:
        """Nothing to release."""

    def check_ids(self, known: set[str]) -> None:
        """Report predictions whose id is not in the dataset (``known``: every id of it, drawn or not)."""
        for (model, sample_id), where in sorted(self.origin.items(), key=lambda kv: kv[1]):
            if sample_id not in known:
                source, location = where.rsplit(":", 1)
                self.problems.append(
                    DatasetProblem(
                        source,
                        location,
                        f"unknown sample id (model {model!r}): not in the dataset",
                        sample_id,
                        "id",
                        "warning",
                    )
                )


@dataclass
class FileFacts:
    """What one predictions file held, to explain a file that matches nothing."""

    rows: int = 0
    ids: set[str] = field(default_factory=set)
    keys: dict[str, None] = field(default_factory=dict)  # keys of its first rows, in order
    unreadable: int = 0  # lines that are not a JSON object


MIN_COVERAGE = 0.5


def coverage_problem(label: str, facts: FileFacts, known: set[str], dataset: str) -> str | None:
    """Why a predictions file cannot be this dataset's: under half of its ids are sample ids of it (a CSV file,
    rows keyed ``sample_id``, another dataset's predictions). A file answering only some samples is fine."""
    matched = len(facts.ids & known)
    if not known or (facts.ids and matched >= MIN_COVERAGE * len(facts.ids)):
        return None  # (a dataset without a single id has its own message)
    head = (
        f"predictions file {label}: {matched} of its {len(facts.ids)} ids are samples of dataset {dataset} "
        f"(at least half must be, or it is not this dataset's predictions)"
    )
    if not facts.rows:
        return (
            f"{head}: it holds no JSON rows ({facts.unreadable} unreadable line(s); "
            f'JSONL rows of {{"id", "output"}} expected)'
        )
    keys = ", ".join(repr(k) for k in list(facts.keys)[:8]) or "none"
    if not facts.ids:
        return (
            f"{head}: rows need the sample id under 'id' and the model text under 'output'; "
            f"its rows have the keys {keys}"
        )
    theirs = ", ".join(repr(i) for i in sorted(facts.ids - known)[:3])
    ours = ", ".join(repr(i) for i in sorted(known)[:3])
    return f"{head}: its ids look like {theirs}, the dataset's like {ours}"


def load_predictions(
    specs: Sequence[PredictionsSpec], *, default_model: str | None, base_dir: Path
) -> PredictionsSource:
    """Read every predictions file; bad rows become problems, the first row of a duplicate id wins."""
    source = PredictionsSource()
    for spec in specs:
        label = str(spec.path)
        fallback_model = spec.model or default_model or DEFAULT_OFFLINE_MODEL
        if spec.rows is not None:
            for number, row in enumerate(spec.rows, start=1):
                _read_row(source, label, number, row, fallback_model, "row")
            _rereader(source, label, partial(_nth_row, spec.rows), fallback_model)
            continue
        path = spec.path if spec.path.is_absolute() else base_dir / spec.path
        if not path.is_file():
            raise FileNotFoundError(f"predictions file {label}: no such file ({path})")
        for number, row in jsonio.iter_jsonl(path):
            _read_row(source, label, number, row, fallback_model)
        _rereader(source, label, partial(_nth_line, path), fallback_model)
    return source


def _rereader(source: PredictionsSource, label: str, read: Callable[[int], object], fallback_model: str) -> None:
    """How to read a row of ``label`` again; a label given twice (one file for two models) has none, so its
    outputs stay held."""
    source.rereaders[label] = None if label in source.rereaders else (read, fallback_model)


class _Served(ModelResponse):
    """Stands in :attr:`PredictionsSource.outputs` for an output already served (see its ``response``)."""


SERVED = _Served(error_class="served", error="served; read again from its row when asked again")


def _nth_row(rows: Sequence[object], number: int) -> object:
    return rows[number - 1]


def _nth_line(path: Path, number: int) -> object:
    """The value on line ``number`` of a JSONL file, None if there is none (read again: a rare path)."""
    for at, row in jsonio.iter_jsonl(path):
        if at == number:
            return row
        if at > number:
            break
    return None


def _read_row(
    source: PredictionsSource, label: str, number: int, row: object, fallback_model: str, unit: str = "line"
) -> None:
    location = f"{unit} {number}"
    facts = source.files.setdefault(label, FileFacts())
    if isinstance(row, dict):
        facts.rows += 1
        if facts.rows <= 3:
            facts.keys.update(dict.fromkeys(map(str, row)))
        if row.get("id") not in (None, ""):
            facts.ids.add(str(row["id"]))
    else:
        facts.unreadable += 1

    def problem(message: str, sample_id: str | None, field_name: str | None) -> None:
        source.problems.append(DatasetProblem(label, location, message, sample_id, field_name, "warning"))

    if isinstance(row, jsonio.JsonInputError):  # bad bytes, bad JSON, too deep, too long: the sample is missing
        problem(f"{row}; row ignored", row.sample_id, row.path.removeprefix("$.").split(".")[0] if row.path else None)
        return
    if not isinstance(row, dict) or row.get("id") in (None, ""):
        problem("a prediction row needs an 'id'; row ignored", None, "id")
        return
    sample_id = str(row["id"])
    runs = row.get("outputs")
    if runs is not None and (not isinstance(runs, list) or not runs):
        problem("'outputs' must be a non-empty list of outputs (one per run); row ignored", sample_id, "outputs")
        return
    if "output" not in row and runs is None:
        problem("missing 'output'; row ignored", sample_id, "output")
        return
    named = row.get("model")
    if named is not None and not isinstance(named, str):  # {"a": 1} is no model name: an input problem
        problem(f"'model' must be a string, got {_json_type(named)}; row ignored", sample_id, "model")
        return
    model = named or fallback_model
    key = (model, sample_id)
    if key in source.outputs:
        problem(
            f"duplicate id (first at {source.origin[key].rsplit(':', 1)[1]}); the first row is used", sample_id, "id"
        )
        return
    if runs is not None:
        source.repeats[key] = [_response(run, sample_id, row) for run in runs]
    # without "output", the first run is the scored one
    source.outputs[key] = _response(row["output"], sample_id, row) if "output" in row else source.repeats[key][0]
    source.origin[key] = f"{label}:{location}"


def _json_type(value: object) -> str:
    """A value's kind in JSON's words (object, array, number, boolean)."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    kinds: dict[type, str] = {dict: "an object", list: "an array"}
    return kinds.get(type(value), type(value).__name__)


def _response(output: object, sample_id: str, row: dict[str, Any]) -> ModelResponse:
    if output is None:
        return ModelResponse(error_class="missing", error=f"prediction for {sample_id!r} is null")
    response = ModelResponse(content=output)
    # token logprobs recorded with the output (OpenAI's {"content": [...]}): confidence calibration
    if row.get("logprobs") is not None:
        response.logprobs = row["logprobs"]
    return response
