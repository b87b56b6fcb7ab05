"""The terminal summary of a finished run: one headline block per model, problems, where the files are."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ..analysis.provenance import reuse_sentence
from ..core.wording import counted
from ..gating.verdict import partial_text, verdict_lines
from ..report import terminal

if TYPE_CHECKING:
    from .context import RunContext
    from .result import RunResult


def summary_lines(
    context: RunContext, result: RunResult | None, unscored: list[str], *, verdict_only: bool = False
) -> list[str]:
    """The whole summary, or (``verdict_only``, for -qq) just its closing verdict block."""
    if not context.track.gated:
        return _track_lines(context, result, unscored)
    problems = context.problems
    if result is None or not result.metrics:
        return ["no sample was scored"] + terminal.problem_lines(problems)
    settings, dataset = context.settings, context.dataset
    partial = result.document.get("run", {}).get("partial")
    verdict = verdict_lines(
        result.metrics,
        result.checks,
        settings.sla,
        regressions=len(result.regressions),
        safe=terminal.safe,
        partial=partial,
        required=result.requirements,
        details="the rest of the summary without -qq" if verdict_only else "details above",
    )
    if verdict_only:
        return write_error_lines(context, result) + verdict
    lines = [f"dataset {dataset.name}: {counted(len(dataset.samples), 'sample')}; results in {context.run_dir}"]
    if reuse := reuse_sentence(context.live.facts(result.records)):
        lines.insert(0, f"REUSED ANSWERS: {terminal.safe(reuse)}")
    if settings.data.sample is not None:
        lines.append(f"sampled {len(dataset.samples)} of {context.population} (seed {settings.data.seed})")
    invalid = {p.sample_id or f"{p.source}:{p.location}" for p in dataset.skipped}
    if invalid:
        lines.append(
            f"{len(invalid)} invalid sample(s) skipped (--extractbench-invalid-samples "
            f"{settings.data.invalid_samples}): " + ", ".join(sorted(invalid)[:10])
        )
    lines.extend(terminal.context_lines(context.live.facts(result.records), result.records))
    for model, metrics in result.metrics.items():
        lines.extend(terminal.model_lines(model, metrics, result.checks.get(model, []), settings.sla))
        if partial and (seen := partial_text(partial["models"].get(model))):
            lines.append(f"  {seen}")
    lines.extend(terminal.run_lines(result.run_level, result.comparison))
    if result.report_files:
        lines.append("reports: " + ", ".join(p.name for p in result.report_files))
    lines.extend(f"report not written: {error}" for error in result.report_errors)
    lines.extend(_unscored_lines(unscored))
    lines.extend(terminal.problem_lines(problems))
    lines.extend(write_error_lines(context, result))
    lines.extend(verdict)
    return lines


def write_error_lines(context: RunContext, result: RunResult) -> list[str]:
    """Each file the disk refused, and how to get the run's files without asking the model again."""
    if not result.write_errors:
        return []
    from ..live.journal import JOURNAL_FILE

    lines = [f"error: {terminal.safe(error)}" for error in result.write_errors]
    journal = context.run_dir / JOURNAL_FILE
    if journal.is_file():
        lines.append(
            f"every answer is kept in {journal}: once the cause is fixed (a full disk: free some space), "
            f"finish the run with --extractbench-resume {context.run_dir} (nothing is asked again)"
        )
    else:
        lines.append(
            "once the cause is fixed (a full disk: free some space, or choose another --extractbench-output), run again"
        )
    return lines


def _track_lines(context: RunContext, result: RunResult | None, unscored: list[str]) -> list[str]:
    track = context.track
    if result is None or not result.metrics:
        return ["no sample was scored"] + terminal.problem_lines(context.problems)
    dataset, partial = context.dataset, result.document.get("run", {}).get("partial")
    lines = [
        f"track {track.name} ({track.description}); dataset {terminal.safe(dataset.name)}: "
        f"{counted(len(dataset.samples), 'sample')}; results in {context.run_dir}"
    ]
    for model, metrics in result.metrics.items():
        lines.append(
            f"model {terminal.safe(model)}: {counted(metrics['num_samples'], 'sample')}, "
            f"{metrics['passed_samples']} passed"
        )
        if partial and (seen := partial_text(partial["models"].get(model), gated=False)):
            lines.append(f"  {seen}")
        lines.extend(track.summary_lines(metrics[track.name]))
        lines.extend(terminal.calibration_consistency_lines(metrics))
        required = result.requirements.get(model)
        if required:
            held = all(check.passed is not False for check in required)
            lines.append(
                f"  required thresholds: {'passed' if held else 'FAILED'}: "
                + "; ".join(terminal.safe(check.describe()) for check in required)
            )
    lines.extend(terminal.run_lines(result.run_level, result.comparison))
    lines.extend(_unscored_lines(unscored))
    lines.extend(terminal.problem_lines(context.problems))
    lines.extend(write_error_lines(context, result))
    return lines


def _unscored_lines(unscored: list[str]) -> list[str]:
    if not unscored:
        return []
    return [f"{len(unscored)} item(s) ended without a score: " + ", ".join(sorted(unscored)[:5])]


def failure_class(record: Any) -> str:
    """Why an item failed, as one class: the error class of its answer, unusable output, or its score."""
    if not hasattr(record, "score"):  # a track's item
        return "track check failed"
    from ..analysis.performance import outcome

    found = outcome(record)
    return "below --extractbench-sample-min-eqs" if found == "valid" else found


INTERRUPTED = 2  # pytest.ExitCode.INTERRUPTED; this module does not import pytest


def exit_lines(
    exitstatus: Any, failed: Mapping[str, int], unscored: int, *, gate_passed: bool, report_only: bool
) -> list[str]:
    """The closing lines that say what the exit code means: every reason it is not 0, or why failed items
    leave it at 0 (a report-only run)."""
    reasons = [f"{count} {name}" for name, count in sorted(failed.items(), key=lambda kv: (-kv[1], kv[0]))]
    items = f"{sum(failed.values())} item(s) failed ({', '.join(reasons)})" if reasons else ""
    if unscored:
        items = "; ".join(filter(None, [items, f"{unscored} item(s) ended without a score"]))
    code = int(exitstatus) if exitstatus is not None else None
    if code == INTERRUPTED:  # whatever the gate said of the samples scored, the run did not finish
        return [
            f"exit code 2: interrupted before every item ran{'; ' + items if items else ''}"
            + ("; a gate failed (listed above)" if not gate_passed else "")
        ]
    if code is None or not (items or not gate_passed):
        return []
    if code == 0:
        return (
            [f"exit code 0: report-only run (--extractbench-report-only): {items}; every gate asked for held"]
            if report_only and items
            else []
        )
    why = [items] if items and not report_only else []
    if not gate_passed:
        why.append("a gate failed (listed above)")
    return [f"exit code {code}: {'; '.join(why)}"] if why else []
