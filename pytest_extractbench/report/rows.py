"""Reading a run directory back: metrics.json, and samples.jsonl as compact per-sample rows.

Reports never re-score: the numbers are metrics.json's; per-sample charts and tables use
the few scalars of each record (a 10,000-sample run's records hold ~200,000 field results,
far more than a chart needs), and full records are read again only for the samples shown.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core import rundir
from ..core.files import SAMPLES_FILE

Records = Callable[[], Iterable[Mapping[str, Any]]]  # a fresh iterator of record dicts per call


@dataclass
class RunData:
    """What a report is made of."""

    document: dict[str, Any]  # metrics.json
    records: Records
    source: Path | None = None
    # the dataset's samples by the file the records name (meta.source), when the run that wrote the records
    # still holds them: the viewer takes them instead of parsing the file again
    samples: Mapping[str, Sequence[Any]] | None = None


def read_run(run_dir: Path) -> RunData:
    """metrics.json and (lazily) samples.jsonl of a run directory, or :class:`~..core.rundir.RunDirError`."""
    document = rundir.read_document(run_dir)
    samples = run_dir / SAMPLES_FILE

    def records() -> Iterable[Mapping[str, Any]]:
        return rundir.iter_records(samples) if samples.is_file() else iter(())

    return RunData(document, records, run_dir)


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def sample_row(record: Mapping[str, Any]) -> dict[str, Any]:
    """The scalars of one record that charts, tables and samples.csv use."""
    score = record.get("score") or {}
    response = record.get("response") or {}
    meta = record.get("meta") or {}
    complexity = meta.get("complexity") if isinstance(meta.get("complexity"), Mapping) else {}
    f1 = score.get("f1") or {}
    observed = score.get("observed") or {}
    return {
        "model": str(record.get("model", "")),
        "sample_id": str(record.get("sample_id", "")),
        "passed": bool(record.get("passed", True)),
        "json_valid": bool(score.get("json_valid")),
        "schema_valid": bool(score.get("schema_valid")),
        "eqs": float(score.get("eqs", 0.0)),
        "exact_match": bool(score.get("exact_match")),
        "f1_strict": float(f1.get("strict", 0.0)),
        "f1_partial": float(f1.get("partial", 0.0)),
        "f1_lenient": float(f1.get("lenient", 0.0)),
        "precision_partial": float((score.get("precision") or {}).get("partial", 0.0)),
        "recall_partial": float((score.get("recall") or {}).get("partial", 0.0)),
        "type_accuracy": float(score.get("type_accuracy", 0.0)),
        "hallucination_rate": float(score.get("hallucination_rate", 0.0)),
        "omission_rate": float(score.get("omission_rate", 0.0)),
        "fields_expected": int(
            observed.get("exact", 0)
            + observed.get("partial", 0)
            + observed.get("incorrect", 0)
            + observed.get("missed", 0)
        ),
        "latency_s": _number(response.get("latency_s")),
        "finished_at": _number(response.get("finished_at")),
        "error_class": response.get("error_class"),
        "topic": meta.get("topic"),
        "complexity_score": _number(complexity.get("complexity_score")),
        "complexity_bin": complexity.get("complexity_bin") or meta.get("complexity_bin"),
        "failure": record.get("failure"),
    }
