"""The controller's end of a run: records -> aggregates -> baselines -> SLA -> metrics.json, samples.jsonl,
reports -> a :class:`~.result.RunResult`.

Runs once, on the controller (the single process, or xdist's controller), over the records of every
process; the same path serves the pytest plugin and :func:`~.api.evaluate`.
"""

from __future__ import annotations

import platform
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict
from datetime import datetime, timezone
from importlib import metadata
from typing import TYPE_CHECKING, Any

from ..analysis.metrics import run_level_metrics
from ..core import files, rundoc
from ..core.redact import mask
from ..dataset import identity as content
from ..dataset.records import records_by_model
from ..dataset.rowfile import DatasetChangedError
from ..dataset.statistics import dataset_statistics
from ..gating import baseline as baselines
from ..gating.gates import gated_recommendation
from ..gating.outcomes import Measuring
from ..gating.regression import compare_run
from ..gating.requirements import evaluate_requirements
from ..gating.sla import evaluate_sla, sla_passed
from ..gating.subsets import gate_scopes
from .result import RunResult, gate_results

if TYPE_CHECKING:
    from ..dataset.records import SampleRecord
    from .context import RunContext
    from .spool import RecordSpool


def version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def finish_run(
    context: RunContext,
    records: list[Any],
    *,
    unscored: Sequence[str] = (),
    pytest_version: str | None = None,
    keep_records: bool = True,
    spool: RecordSpool | None = None,
) -> RunResult:
    """Aggregate the records, apply the gates and write the run directory; the records are sorted in place.

    ``keep_records=False`` (a pytest session, which needs no records afterwards): once samples.jsonl holds them,
    ``records`` is emptied and ``result.records`` keeps only those whose request failed (the terminal summary
    names some of them), so the reports, made from the file, are not built beside every record.
    ``spool``: the records' lines as they were added (:mod:`.spool`), put in order as samples.jsonl instead of
    converting every record again, when the finish changes none of them."""
    records.sort(key=lambda r: r.sort_key)
    settings, track = context.settings, context.track
    result = RunResult(run_dir=context.run_dir, track=track.name, records=list(records))
    if not records:
        if spool is not None:
            spool.discard()
        return result
    context.live.record(records)  # before the records are released
    cost = _whole_output_scores(context, records)
    if spool is not None and (cost is not None or not spool.holds(records)):
        spool.discard()  # whole-output scores changed the records (or a line is missing): written from them
        spool = None
    result.metrics = metrics = track.aggregate_records(records, settings)
    info = run_info(context, records, list(metrics), list(unscored), pytest_version)
    if not track.gated:
        if settings.require:
            _track_requirements(result, track.name, settings)
        _baselines(context, result, records_by_model(records))
        _document(result, {"track": track.name, "run": info, "models": metrics, **result.run_level})
        _write(context, result, None if keep_records else records, spool)
        context.events.run_finished(metrics)
        return result
    result.run_level = run_level_metrics(metrics, records, settings.scoring)
    if cost is not None:
        result.run_level["whole_output_cost"] = cost.as_dict()
    _baselines(context, result, records_by_model(records))
    measuring = _measuring(context, records)
    for model, section in metrics.items():
        result.checks[model] = checks = evaluate_sla(section, settings.sla, measuring.get(model), settings.unmeasured)
        passed = sla_passed(checks)
        section["sla"] = {"tier": settings.sla, "passed": passed, "checks": [c.as_dict() for c in checks]}
        failed = [] if passed else [f"the '{settings.sla}' SLA tier"]
        if settings.require:
            result.requirements[model] = required = evaluate_requirements(
                section, settings.require, measuring.get(model), settings.unmeasured
            )
            met = sla_passed(required)
            section["requirements"] = {"passed": met, "checks": [c.as_dict() for c in required]}
            if not met:
                failed.append("the required thresholds")
        if any(check.model == model for check in result.regressions):
            failed.append("the regression check against the baseline")
        section["recommendation"] = gated_recommendation(section["recommendation"], failed)
    _document(
        result,
        {"track": track.name, "run": info, "dataset": dataset_section(context), "models": metrics, **result.run_level},
    )
    _write(context, result, None if keep_records else records, spool)
    context.events.run_finished(metrics)
    return result


def _track_requirements(result: RunResult, track: str, settings: Any) -> None:
    """``--extractbench-require`` on a toolcall, generate or repair run: checked against the track's own figures
    (``json_valid_rate``...) and pass@k / pass^k over repeats; one it does not measure could not be measured."""
    for model, section in result.metrics.items():
        passed = section["passed_samples"] / section["num_samples"] if section.get("num_samples") else None
        figures = {**(section.get(track) or {}), "pass_rate": passed, **section}
        result.requirements[model] = required = evaluate_requirements(
            figures, settings.require, None, settings.unmeasured
        )
        section["requirements"] = {"passed": sla_passed(required), "checks": [c.as_dict() for c in required]}


def _document(result: RunResult, document: dict[str, Any]) -> None:
    """metrics.json as a reader gets it back (JSON's types: no numpy scalars, tuples or NaN), and the result's
    metrics and run-level sections from it, so a result has the same types from :func:`~.api.evaluate` as from
    :func:`~.result.load_run`."""
    # what is plain already is shared with the sections, not copied (nothing changes either after this)
    result.document = rundoc.complete(
        files.plain_sharing({"format_version": rundoc.FORMAT_VERSION[rundoc.RUN], **document})
    )
    result.metrics = result.document["models"]
    result.run_level = {k: v for k, v in result.document.items() if k not in rundoc.DOCUMENT_KEYS}
    result.regressions = gate_results(result.document)[2]


def _whole_output_scores(context: RunContext, records: list[Any]) -> Any:
    """Whole-output similarity and the judge's grade of every extraction record, when the options ask for
    them; their cost, or None. Done here, once for the run, so the judge can grade several outputs per request."""
    options = context.settings.scoring
    if context.track.name != "extraction" or not (options.semantic or options.judge_model):
        return None
    from ..scoring.whole_output import Item, score_whole_outputs

    wanted = {r.sample_id for r in records if not r.score.extras}
    gold: dict[str, Any] = {}
    for sample in context.dataset.samples:
        if sample.id in wanted:  # a JSONL sample reads its gold from its line again: only those scored
            try:
                gold[sample.id] = sample.expected
            except DatasetChangedError:  # its line changed: named among the run's problems when its hash is taken
                continue
    items = [
        Item(r.score, gold[r.sample_id], r.response.get("content"), r.diagnostics)
        for r in records
        if r.sample_id in gold and not r.score.extras
    ]
    cost = score_whole_outputs(items, options)
    for item in items:  # a judge's or an embeddings server's error can quote the request's key: masked
        judged = item.diagnostics.get("judge")
        if isinstance(judged, dict) and isinstance(judged.get("error"), str):
            judged["error"] = mask(judged["error"])
        if isinstance(item.diagnostics.get("semantic_similarity_error"), str):
            item.diagnostics["semantic_similarity_error"] = mask(item.diagnostics["semantic_similarity_error"])
    return cost


def _measuring(context: RunContext, records: list[Any]) -> dict[str, Measuring]:
    """Per model: what the run set out to measure, and on how many samples the judge or the embeddings failed
    (their diagnostics say so), so a gate on their metric can tell "could not be measured" from "held"."""
    options = context.settings.scoring
    asked = frozenset(
        name for name, on in (("judge_score", options.judge_model), ("semantic_similarity", options.semantic)) if on
    )
    errors: dict[str, Callable[[Mapping[str, Any]], Any]] = {
        "judge_score": lambda d: (d.get("judge") or {}).get("error"),
        "semantic_similarity": lambda d: d.get("semantic_similarity_error"),
    }
    found: dict[str, dict[str, list[Any]]] = {}
    for record in records:
        per_metric = found.setdefault(record.model, {name: [0, 0, ""] for name in asked})
        for name in asked:
            error = errors[name](record.diagnostics or {})
            slot = per_metric[name]
            slot[1] += bool(record.score.json_valid)
            if error:
                slot[0] += 1
                slot[2] = slot[2] or str(error)
    streamed = bool(context.settings.live.stream)
    return {
        model: Measuring(asked, streamed, {name: (slot[0], slot[1], slot[2]) for name, slot in per_metric.items()})
        for model, per_metric in found.items()
    }


def _baselines(context: RunContext, result: RunResult, by_model: dict[str, list[SampleRecord]]) -> None:
    """Compare with the --extractbench-compare baseline, then store --extractbench-save; on every track (the
    toolcall, generate and repair tracks compare their own figures, :mod:`..analysis.track_metrics`)."""
    settings, track = context.settings, context.track
    if context.baseline is None and not settings.save:
        return
    hashes = context.sample_hashes()
    snapshots = baselines.snapshot_records(result.records, hashes)
    if context.baseline is not None:
        config = settings.subsets if track.gated else None  # subsets and groups read extraction records
        scopes = {model: gate_scopes(found, config) for model, found in by_model.items()} if config else {}
        comparison = compare_run(
            snapshots,
            context.baseline,
            settings.scoring.statistics,
            checks=settings.compare_fail,
            scopes=scopes,
            thresholds=settings.verdict_thresholds,
            sample_hashes=hashes,
            policy=settings.unmeasured,
            bucket_delta=settings.sample_regression_delta,
            track=track.name,
        )
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
            outputs=[context.base_dir / spec.path for spec in settings.predictions if spec.rows is None],
            package_version=version("pytest-extractbench"),
            options=settings.to_dict(),
            sample_hashes=hashes,
        )
        document = baselines.build(
            settings.save, snapshots, result.metrics, info, asdict(settings.scoring.statistics), track.name
        )
        result.saved_baseline = baselines.save(document, baselines.baseline_dir(settings.rootdir))
        result.run_level["baseline_saved"] = {"name": settings.save, "path": str(result.saved_baseline)}


def run_info(
    context: RunContext, records: list[Any], models: list[str], unscored: list[str], pytest_version: str | None
) -> dict[str, Any]:
    """metrics.json ``run``: when, what, with which options and versions, and what went wrong on the way."""
    dataset = context.dataset
    hashes = context.sample_hashes()  # each sample's content hashed once (a baseline comparison reads them too)
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
            # what was measured, provably: a comparison can pair only the samples whose content is unchanged
            "content_hash": content.dataset_hash_of(hashes),
            "sample_hashes": dict(hashes),
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
        # only in partial runs, so a full run's metrics.json keeps its shape
        **({"partial": partial} if (partial := partial_counts(context, records)) else {}),
    }


def partial_counts(context: RunContext, records: list[Any]) -> dict[str, Any] | None:
    """When fewer samples were scored than the benchmark collected (-x, --maxfail, -k, -m, --lf, an item that
    ended without a score): how many of how many, in all and per model; None when every sample was scored."""
    collected = len(context.dataset.samples)
    scored = {model: 0 for model in context.models()}
    for record in records:
        scored[record.model] = scored.get(record.model, 0) + 1
    if all(n >= collected for n in scored.values()):
        return None
    models = {model: {"scored": n, "collected": collected} for model, n in scored.items()}
    return {"scored": sum(scored.values()), "collected": collected * len(models), "models": models}


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
        "statistics": dataset_statistics(dataset.samples, context.text_measures()),
    }


def _write(context: RunContext, result: RunResult, release: list[Any] | None, spool: RecordSpool | None) -> None:
    """metrics.json, samples.jsonl, then the reports; ``release``: the caller's list of the records, emptied (with
    ``result.records``) before the reports are made; ``spool``: samples.jsonl's lines, already written. A file the
    disk refuses is named in ``result.write_errors`` (no temporary file stays behind, the journal is untouched);
    then no report is made from files not all there."""
    run_dir, records = context.run_dir, result.records

    def samples() -> None:
        if spool is not None:
            spool.write_sorted(run_dir / files.SAMPLES_FILE)
        else:
            rundoc.write_samples(run_dir / files.SAMPLES_FILE, (r.to_dict() for r in records))

    writes: tuple[Callable[[], object], ...] = (samples, lambda: rundoc.write_metrics(run_dir, result.document))
    for write in writes:
        try:
            write()
        except files.OutputWriteError as exc:
            result.write_errors.append(str(exc))
    if result.write_errors:
        return
    if release is not None:
        release.clear()
        result.records = [r for r in records if r.response.get("error_class")]
        del records
    from ..report import outputs

    # reports from the files just written, as `extractbench report` reads them (parsing a line back is several
    # times cheaper than converting a record again): report.html, summary.md, (extraction) metrics.csv, samples.csv
    samples_path = run_dir / files.SAMPLES_FILE
    result.report_files, result.report_errors, refused = outputs.write_reports(
        run_dir,
        result.document,
        lambda: rundoc.iter_samples(samples_path),
        context.settings.report,
        _samples_by_source(context),
    )
    result.write_errors.extend(refused)


def _samples_by_source(context: RunContext) -> dict[str, list[Any]]:
    """The dataset this process read, by the file each sample came from: report.html's sample viewer shows
    their text, schema and gold without parsing the dataset again."""
    found: dict[str, list[Any]] = {}
    for sample in context.dataset.samples:
        source = getattr(sample, "meta", {}).get("source")
        if isinstance(source, str):
            found.setdefault(source, []).append(sample)
    return found
