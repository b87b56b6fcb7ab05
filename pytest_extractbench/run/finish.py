"""The controller's end of a run: records -> aggregates -> baselines -> SLA -> metrics.json, samples.jsonl,
reports -> a :class:`~.result.RunResult`.

Runs once, on the controller (the single process, or xdist's controller), over the records of every
process; the same path serves the pytest plugin and :func:`~.api.evaluate`.
"""

from __future__ import annotations

import platform
import sys
import time
from dataclasses import asdict
from datetime import datetime, timezone
from importlib import metadata
from typing import TYPE_CHECKING, Any

from ..analysis.metrics import metrics_by_model, run_level_metrics
from ..analysis.performance import apply_prices
from ..core import files
from ..dataset.statistics import dataset_statistics
from ..gating import baseline as baselines
from ..gating.regression import compare_run
from ..gating.sla import evaluate_sla, sla_passed
from ..gating.subsets import gate_scopes, subset_metrics
from ..analysis.consistency import aggregate_consistency
from .context import records_by_model
from .result import RunResult

if TYPE_CHECKING:
    from ..dataset.records import SampleRecord, TrackRecord
    from .context import RunContext

FORMAT_VERSION = 1


def version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def finish_run(context: RunContext, records: list[Any], *, unscored: list[str] = (),  # type: ignore[assignment]
               pytest_version: str | None = None) -> RunResult:
    """Aggregate the records, apply the gates and write the run directory; the records are sorted in place."""
    records.sort(key=lambda r: r.sort_key)
    if context.track is not None:
        return _finish_track(context, records, list(unscored), pytest_version)
    settings = context.settings
    result = RunResult(run_dir=context.run_dir, records=list(records))
    if not records:
        return result
    result.metrics = metrics = metrics_by_model(records, settings.scoring)
    for section in metrics.values():
        apply_prices(section, settings.prices)  # before the comparison reads the cost
    by_model = records_by_model(records)
    if settings.subsets is not None:
        for model, section in metrics.items():
            section.update(subset_metrics(by_model[model], settings.subsets, settings.scoring.statistics))
    result.run_level = run_level_metrics(metrics, records, settings.scoring)
    _baselines(context, result, by_model)
    for model, section in metrics.items():
        result.checks[model] = checks = evaluate_sla(section, settings.sla)
        section["sla"] = {"tier": settings.sla, "passed": sla_passed(checks), "checks": [c.as_dict() for c in checks]}
    result.document = {
        "format_version": FORMAT_VERSION, "track": "extraction",
        "run": run_info(context, records, list(metrics), list(unscored), pytest_version),
        "dataset": dataset_section(context), "models": metrics, **result.run_level,
    }  # fmt: skip
    _write(context, result)
    context.events.run_finished(metrics)
    return result


def _baselines(context: RunContext, result: RunResult, by_model: dict[str, list[SampleRecord]]) -> None:
    """Compare with the --extractbench-compare baseline, then store --extractbench-save."""
    settings = context.settings
    if context.baseline is None and not settings.save:
        return
    snapshots = baselines.snapshot_records(result.records)
    dataset_hash = baselines.dataset_hash(context.dataset.samples)
    if context.baseline is not None:
        config = settings.subsets
        scopes = {model: gate_scopes(found, config) for model, found in by_model.items()} if config else {}
        comparison = compare_run(
            snapshots, context.baseline, settings.scoring.statistics, checks=settings.compare_fail, scopes=scopes,
            thresholds=settings.verdict_thresholds, dataset_hash=dataset_hash,
        )  # fmt: skip
        result.comparison = comparison
        result.regressions = comparison.failures
        result.run_level["baseline_comparison"] = comparison.as_dict()
    if settings.save:
        info = baselines.provenance(
            models=list(result.metrics),
            dataset=context.dataset,
            rootdir=settings.rootdir,
            # live runs add their server URLs and prompt-template hash here
            servers=context.live.server_urls(),
            prompt_hash=(context.live.facts(result.records) or {}).get("prompt_hash"),
            outputs=[context.base_dir / spec.path for spec in settings.predictions],
            package_version=version("pytest-extractbench"),
            options=settings.to_dict(),
        )
        document = baselines.build(settings.save, snapshots, result.metrics, info, asdict(settings.scoring.statistics))
        result.saved_baseline = baselines.save(document, baselines.baseline_dir(settings.rootdir))
        result.run_level["baseline_saved"] = {"name": settings.save, "path": str(result.saved_baseline)}


def run_info(context: RunContext, records: list[Any], models: list[str], unscored: list[str],
             pytest_version: str | None) -> dict[str, Any]:
    """metrics.json ``run``: when, what, with which options and versions, and what went wrong on the way."""
    dataset = context.dataset
    finished = datetime.now(timezone.utc)
    return {
        "started_at": context.started_at.isoformat(timespec="seconds"),
        "finished_at": finished.isoformat(timespec="seconds"),
        "duration_s": time.perf_counter() - context.clock,
        "dataset": {
            "name": dataset.name,
            "source": dataset.source,
            "num_samples": len(dataset.samples),
            "num_skipped": len(dataset.skipped),
        },
        "num_records": len(records),
        "models": models,
        "workers": context.processes,
        "options": context.settings.to_dict(),
        "versions": {
            "pytest_extractbench": version("pytest-extractbench"),
            "python": platform.python_version(),
            "pytest": pytest_version,
            "jsonschema": version("jsonschema"),
        },
        "platform": sys.platform,
        "problems": [p.as_dict() for p in context.problems],
        "unscored_items": sorted(unscored),
        "live": context.live.facts(records),
        "config": context.settings.config,
    }


def dataset_section(context: RunContext) -> dict[str, Any]:
    """metrics.json ``dataset``: what was evaluated, what was left out and why, and its statistics."""
    data, dataset = context.settings.data, context.dataset
    return {
        "name": dataset.name,
        "source": dataset.source,
        "num_samples": len(dataset.samples),
        "num_loaded": context.population,
        "sampling": {"sample": data.sample, "seed": data.seed, "method": "sha256(seed, sample id)"},
        "invalid_policy": data.invalid_samples,
        "invalid_samples": [p.as_dict() for p in dataset.skipped],
        "statistics": dataset_statistics(dataset.samples),
    }


def _write(context: RunContext, result: RunResult) -> None:
    from ..report import outputs

    run_dir, records = context.run_dir, result.records
    files.write_jsonl(run_dir / files.SAMPLES_FILE, (r.to_dict() for r in records))
    files.write_json(run_dir / files.METRICS_FILE, result.document)
    # reports: report.html, summary.md, metrics.csv, samples.csv from the same data
    result.report_files, result.report_errors = outputs.write_reports(
        run_dir, files.plain(result.document), lambda: (r.to_dict() for r in records), context.settings.report
    )


# -- the other tracks ------------------------------------------------------------------------------


def track_metrics(context: RunContext, records: list[TrackRecord]) -> dict[str, dict[str, Any]]:
    """Per model: samples, passes, the track's own aggregate and consistency over repeated runs."""
    track = context.track
    assert track is not None
    out: dict[str, dict[str, Any]] = {}
    grouped = records_by_model(records)  # type: ignore[arg-type]
    for model in sorted(grouped):
        found = grouped[model]
        section: dict[str, Any] = {
            "track": track.name,
            "num_samples": len(found),
            "passed_samples": sum(r.passed for r in found),
            track.name: track.aggregate([r.result for r in found]),
            "failed_samples": [r.sample_id for r in found if not r.passed],
        }
        runs = [r.consistency for r in found if r.consistency]
        if runs:
            section["consistency"] = aggregate_consistency(runs)
        out[model] = section
    return out


def _finish_track(context: RunContext, records: list[Any], unscored: list[str],
                  pytest_version: str | None) -> RunResult:
    track = context.track
    assert track is not None
    result = RunResult(run_dir=context.run_dir, track=track.name, records=list(records))
    if not records:
        return result
    result.metrics = track_metrics(context, records)
    info = run_info(context, records, list(result.metrics), unscored, pytest_version)
    result.document = {"format_version": FORMAT_VERSION, "track": track.name, "run": info, "models": result.metrics}
    files.write_jsonl(context.run_dir / files.SAMPLES_FILE, (r.to_dict() for r in records))
    files.write_json(context.run_dir / files.METRICS_FILE, result.document)
    context.events.run_finished(result.metrics)
    return result
