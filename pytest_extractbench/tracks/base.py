"""What every benchmark track provides: samples, the request, reading the answer, per-sample records, aggregates.

A track is a pure object (no pytest import). A run (:mod:`pytest_extractbench.run`) asks it for its
samples (:meth:`Track.load_samples`), sends the request it builds (live) or reads a predictions row
(offline), turns each (model, sample)'s answers into a record (:meth:`Track.score_item`) and, on the
controller, every model's records into its metrics (:meth:`Track.aggregate_records`). Extraction
(:mod:`.extraction`) is a track too; its records and metrics are the richer ones of metrics.json's
extraction format, and it is the track the SLA tiers gate (:attr:`Track.gated`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from ..analysis.consistency import aggregate_consistency, consistency
from ..analysis.repeats import repeats_section, sample_repeats
from ..core.jsonio import JsonInputError
from ..dataset.records import TrackRecord, records_by_model
from ..dataset.responses import ModelResponse
from ..dataset.samples import Dataset, DatasetProblem, iter_rows, row_error
from ..scoring import budget
from ..scoring.sample import SCORING_ERROR

EXTRACTION = "extraction"
TRACK_NAMES = (EXTRACTION, "toolcall", "generate", "repair")

Messages = list[dict[str, Any]]


@dataclass(frozen=True)
class TrackSettings:
    """The track options: which track, runs per sample, the OpenTelemetry exporter, logprobs."""

    track: str = EXTRACTION
    repeats: int = 1
    otel: str | None = None
    calibration: bool = False  # ask live servers for token logprobs

    def to_dict(self) -> dict[str, Any]:
        return {"track": self.track, "repeats": self.repeats, "otel": self.otel, "calibration": self.calibration}


@dataclass(frozen=True, eq=False)
class TrackSample:
    """One task of a non-extraction track: its inputs in ``data``, the reference in ``expected``."""

    id: str
    data: Mapping[str, Any]
    expected: Any = None
    meta: Mapping[str, Any] = field(default_factory=dict)

    @property
    def topic(self) -> str:
        return str(self.meta.get("topic") or "")

    # The extraction path's names, so code that only logs or keys by them works unchanged.
    @property
    def text(self) -> str:
        return str(self.data.get("text", ""))

    @property
    def schema(self) -> Any:
        return self.data.get("schema")


def load_rows(name: str, label: str, path: Path, parse: Callable[..., TrackSample | None]) -> Dataset:
    """Read a JSONL/JSON file with ``parse(row, sample_id, problem)``; bad rows become problems, never errors."""
    return parse_track_rows(name, label, iter_rows(path), parse)


def parse_track_rows(
    name: str, label: str, rows: Iterable[tuple[str, Any]], parse: Callable[..., TrackSample | None]
) -> Dataset:
    """``(location, row)`` pairs through ``parse(row, sample_id, problem)``; bad rows become problems."""
    samples: list[TrackSample] = []
    problems: list[DatasetProblem] = []
    seen: dict[str, str] = {}
    for index, (location, row) in enumerate(rows, start=1):
        if isinstance(row, (json.JSONDecodeError, JsonInputError)):
            problems.append(row_error(label, location, row))
            continue
        if not isinstance(row, dict):
            problems.append(DatasetProblem(label, location, f"a row must be a JSON object, got {type(row).__name__}"))
            continue
        sample_id = str(row.get("id")) if row.get("id") not in (None, "") else f"row-{index}"
        found: list[DatasetProblem] = []

        def problem(message: str, field_name: str | None, severity: str = "error") -> None:
            found.append(DatasetProblem(label, location, message, sample_id, field_name, severity))  # noqa: B023

        sample = parse(row, sample_id, problem)
        problems.extend(found)
        if sample is None or any(p.severity == "error" for p in found):
            continue
        if sample.id in seen:
            problems.append(
                DatasetProblem(
                    label, location, f"duplicate id (first seen at {seen[sample.id]}); row skipped", sample.id, "id"
                )
            )
            continue
        seen[sample.id] = location
        meta = {"source": label, "location": location, **dict(sample.meta)}
        samples.append(TrackSample(sample.id, sample.data, sample.expected, meta))
    return Dataset(name=name, source=label, samples=samples, problems=problems)  # type: ignore[arg-type]  # a track's Dataset holds TrackSamples


def mean(values: Sequence[float]) -> float:
    values = list(values)
    return sum(values) / len(values) if values else 0.0


class Track:
    """Base class of the tracks; toolcall, generate and repair score each sample into a plain dict."""

    name = ""
    bundled_file = ""
    description = ""
    # the answer is a JSON document under the sample's schema: the run's structured-output mode applies
    json_answer = False
    # consistency across repeats compares the track's parsed predictions (else the raw answers)
    compare_parsed = False
    # the SLA tiers, baselines and reports of metrics.json's extraction format apply
    gated = False
    # the track builds its own live request (build_request); else the run's extraction prompt templates do
    own_request = True
    # the aggregate metrics an exporter shows for a run (OpenTelemetry's run span and gauge)
    headline: tuple[str, ...] = ()

    def headline_metrics(self) -> tuple[str, ...]:
        """The names in a model's aggregate this track's run is summarized by, most important first."""
        return self.headline

    # -- samples -----------------------------------------------------------------------------

    def bundled_path(self) -> Path:
        return Path(str(resources.files("pytest_extractbench") / "data" / self.bundled_file))

    def load(self, spec: str | None = None, *, base_dir: Path | None = None) -> Dataset:
        """``bundled`` (default) or a JSONL/JSON file of this track's rows."""
        if spec in (None, "", "bundled"):
            path = self.bundled_path()
            return load_rows(f"bundled-{self.name}", str(path), path, self.parse_row)
        path = Path(spec).expanduser()
        if base_dir is not None and not path.is_absolute():
            path = base_dir / path
        if not path.is_file():
            raise FileNotFoundError(f"dataset {spec!r}: no such file {path}")
        return load_rows(path.name, spec, path, self.parse_row)

    def load_samples(self, spec: str | None, *, base_dir: Path, data: Any) -> Dataset:
        """The run's dataset (``data``: the dataset options, for tracks that read other sources)."""
        return self.load(spec, base_dir=base_dir)

    def samples_from_rows(self, label: str, rows: Iterable[tuple[str, Any]], *, data: Any) -> Dataset:
        """The run's dataset from rows given in memory, ``(location, row)`` pairs, read as a file's rows are."""
        return parse_track_rows(label, label, rows, self.parse_row)

    def input_problems(self, samples: Sequence[Any]) -> list[DatasetProblem]:
        """Problems found in the samples beyond their rows (reported once, the run goes on)."""
        return []

    def parse_row(self, row: Mapping[str, Any], sample_id: str, problem: Callable[..., None]) -> TrackSample | None:
        raise NotImplementedError

    # -- one sample ------------------------------------------------------------------------------

    def expected_lines(self, sample: TrackSample) -> list[str]:
        """Lines of a failing item's message that show the gold (none where it is a whole document)."""
        return []

    def build_request(self, sample: TrackSample) -> tuple[Messages, dict[str, Any]]:
        """The chat messages and the extra request fields (``tools``, ``response_format``...)."""
        raise NotImplementedError

    def read_response(self, sample: TrackSample, response: ModelResponse) -> Any:
        """The prediction this track scores, from a live response or a predictions-file row."""
        return response.content

    def score(self, sample: TrackSample, prediction: Any, options: Any = None) -> dict[str, Any]:
        """A JSON-able per-sample result; it has ``passed`` (bool) and ``failure`` (str or None)."""
        raise NotImplementedError

    def consistency_value(self, prediction: Any) -> Any:
        """What repeated runs of one sample are compared on (the consistency metrics)."""
        return prediction

    def score_item(self, model: str, sample: Any, responses: list[ModelResponse], settings: Any) -> Any:
        """The record of one (model, sample): the first run decides the item; every run is scored for its pass
        count (pass@k, pass^k), and compared for consistency.

        Any failure or overrun while scoring is the sample's ``scoring_error``, never a lost sample."""
        found = repeats = None
        try:
            with budget.time_budget(budget.ITEM_BUDGET_S):
                predictions = [self.read_response(sample, r) for r in responses]
                result = self.score(sample, predictions[0], settings.scoring)
                if len(predictions) > 1:
                    found = consistency([self.consistency_value(p) for p in predictions], parsed=self.compare_parsed)
                    later = [bool(self.score(sample, p, settings.scoring)["passed"]) for p in predictions[1:]]
                    # a track's answer has no field categories to flip: pass counts only
                    repeats = sample_repeats([bool(result["passed"]), *later], [None] * len(predictions))
        except (Exception, budget.ScoringTimeout) as exc:  # noqa: BLE001 - see the docstring
            result = self._scoring_error(sample, budget.failure_reason(exc), settings)
        return TrackRecord(
            model=model,
            sample_id=sample.id,
            track=self.name,
            result=result,
            meta=_plain_meta(sample.meta),
            response=responses[0].as_dict(),
            passed=bool(result["passed"]),
            failure=result["failure"],
            consistency=found,
            repeats=repeats,
            details=self.failure_lines(result) + self.expected_lines(sample) if not result["passed"] else [],
        )

    def _scoring_error(self, sample: Any, reason: str, settings: Any) -> dict[str, Any]:
        """The result of a sample whose scoring failed: scored as no output, failed, with the reason."""
        try:
            result = dict(self.score(sample, self.read_response(sample, ModelResponse()), settings.scoring))
        except Exception:  # noqa: BLE001 - a track that cannot score "no output" either
            result = {}
        result.update(passed=False, failure=f"scoring failed ({SCORING_ERROR}): {reason}", scoring_error=reason)
        return result

    def record_from_dict(self, data: dict[str, Any], settings: Any) -> Any:
        """A record back from its JSON form (xdist reports, samples.jsonl)."""
        return TrackRecord.from_dict(data)

    # -- a model's results ----------------------------------------------------------------------

    def aggregate_records(self, records: Sequence[Any], settings: Any) -> dict[str, dict[str, Any]]:
        """Per model: samples, passes, the track's own aggregate and consistency over repeated runs."""
        grouped = records_by_model(records)
        out: dict[str, dict[str, Any]] = {}
        for model in sorted(grouped):
            found = grouped[model]
            section: dict[str, Any] = {
                "track": self.name,
                "num_samples": len(found),
                "passed_samples": sum(r.passed for r in found),
                self.name: self.aggregate([r.result for r in found]),
                "failed_samples": [r.sample_id for r in found if not r.passed],
            }
            runs = [r.consistency for r in found if r.consistency]
            if runs:
                section["consistency"] = aggregate_consistency(runs)
            repeated = {r.sample_id: r.repeats for r in found if r.repeats}
            if repeated:  # pass@k, pass^k and their CIs, as the extraction track reports them
                statistics = settings.scoring.statistics
                section.update(
                    repeats_section(
                        repeated, confidence=statistics.confidence, resamples=statistics.resamples, seed=statistics.seed
                    )
                )
            out[model] = section
        return out

    def aggregate(self, results: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        raise NotImplementedError

    def summary_lines(self, section: Mapping[str, Any]) -> list[str]:
        raise NotImplementedError

    def failure_lines(self, result: Mapping[str, Any]) -> list[str]:
        """Details shown under a failing item."""
        return []


def iter_schema_nodes(schema: Any, depth: int = 0) -> Iterator[tuple[dict[str, Any], int]]:
    """Every subschema dict with its object depth (root properties are depth 1)."""
    if isinstance(schema, dict):
        yield schema, depth
        for key in ("properties", "patternProperties", "$defs", "definitions"):
            for child in (schema.get(key) or {}).values() if isinstance(schema.get(key), dict) else ():
                yield from iter_schema_nodes(child, depth + 1 if key.endswith("roperties") else depth)
        for key in ("items", "additionalProperties", "not", "contains"):
            if isinstance(schema.get(key), dict):
                yield from iter_schema_nodes(schema[key], depth)
        for key in ("allOf", "anyOf", "oneOf", "prefixItems"):
            for child in schema.get(key) or ():
                yield from iter_schema_nodes(child, depth)


def _plain_meta(meta: Any) -> dict[str, Any]:
    return {k: v for k, v in dict(meta).items() if k != "features"} | (
        {"features": list(meta["features"])} if "features" in meta else {}
    )
