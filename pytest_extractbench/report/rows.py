"""Reading a run directory back: metrics.json, and samples.jsonl's records with each one's per-sample row.

Reports never re-score: the numbers are metrics.json's; per-sample charts and tables use
the few scalars of each record (a 10,000-sample run's records hold ~200,000 field results,
far more than a chart needs), kept compact by :mod:`.sample_table`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..analysis import catalog
from ..core import rundoc
from ..scoring.options import ScoringOptions

Records = Callable[[], Iterable[Mapping[str, Any]]]  # a fresh iterator of full-form record dicts per call


@dataclass
class RunData:
    """What a report is made of: metrics.json with its guaranteed keys (:func:`..core.rundoc.complete`) and the
    records in their full form (:func:`..core.rundoc.iter_samples`)."""

    document: rundoc.MetricsDocument
    records: Records
    source: Path | None = None
    # the dataset's samples by the file the records name (meta.source), when the run that wrote the records
    # still holds them: the viewer takes them instead of parsing the file again
    samples: Mapping[str, Sequence[Any]] | None = None


def read_run(run_dir: Path) -> RunData:
    """metrics.json and (lazily) samples.jsonl of a run directory, or :class:`~..core.rundoc.RunDocError`."""
    document, samples = rundoc.read_run(run_dir)
    return RunData(document, lambda: rundoc.iter_samples(samples), run_dir)


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def per_sample_value(score: Mapping[str, Any], key: str) -> bool | float:
    """A metric's per-sample value in a record's score: ``score[key]``, or for ``<measure>_<mode>`` keys
    (``f1_partial``, ``precision_strict``) ``score[measure][mode]``. Flags stay flags (``exact_match``); a value
    the record lacks is 0."""
    value = score.get(key)
    if value is None:
        measure, _, mode = key.rpartition("_")
        nested = score.get(measure)
        value = nested.get(mode) if isinstance(nested, Mapping) else None
    if isinstance(value, bool):
        return value
    return float(value) if isinstance(value, (int, float)) else 0.0


def per_sample_metrics() -> tuple[str, ...]:
    """The catalog's per-sample values a row carries, in samples.csv's order."""
    return tuple(m.per_sample for m in catalog.ranked("sample_column") if m.per_sample)


def sample_row(record: Mapping[str, Any], metrics: Sequence[str] | None = None) -> dict[str, Any]:
    """The scalars of one record in full form (:func:`..core.rundoc.expand`) that charts, tables and samples.csv
    use; a track's record has no score (its per-sample values are 0). ``metrics``: the catalog's per-sample values
    (:func:`per_sample_metrics`), when the caller looked them up once for many records."""
    score = record.get("score") or {}
    response = record["response"]
    meta = record["meta"]
    complexity = meta.get("complexity") if isinstance(meta.get("complexity"), Mapping) else {}
    observed = score.get("observed") or dict.fromkeys(rundoc.COUNT_KEYS, 0)
    if metrics is None:
        metrics = per_sample_metrics()
    return {
        "model": record["model"],
        "sample_id": record["sample_id"],
        "passed": bool(record["passed"]),
        **{key: per_sample_value(score, key) for key in metrics},
        "fields_expected": int(observed["exact"] + observed["partial"] + observed["incorrect"] + observed["missed"]),
        "latency_s": _number(response["latency_s"]),
        "finished_at": _number(response["finished_at"]),
        "error_class": response["error_class"],
        "topic": meta.get("topic"),
        "complexity_score": _number(complexity.get("complexity_score")),
        "complexity_bin": complexity.get("complexity_bin") or meta.get("complexity_bin"),
        "failure": record["failure"],
    }


def recorded_scoring_options(document: rundoc.MetricsDocument) -> ScoringOptions:
    """The scoring options a run recorded; the defaults when it recorded none, or options of another version."""
    stored = document["run"]["options"].get("scoring")
    if not isinstance(stored, Mapping):
        return ScoringOptions()
    try:
        return ScoringOptions.from_dict(stored)
    except (TypeError, ValueError):
        return ScoringOptions()
