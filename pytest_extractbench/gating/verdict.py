"""The closing lines of a run: did the tool work, what did the model score, and what the exit code means.

Why: a newcomer's first live run on a CPU usually ends with exit code 1, which reads like a crash;
these lines say that the benchmark itself worked, that the model was measured, which production SLA
thresholds it missed (with a short reason for each kind) and how to report without the gate.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..analysis import catalog
from ..core.wording import counted
from .outcomes import MISSED, NOT_APPLICABLE
from .sla import GateCheck

__all__ = ["partial_text", "verdict_lines"]


def partial_text(counts: Mapping[str, Any] | None, *, gated: bool = True) -> str | None:
    """One model's share of a partial run (metrics.json run.partial.models[model]); None when it saw them all.
    A track without a gate (toolcall, generate, repair) says what its metrics cover instead."""
    if not counts or counts["scored"] >= counts["collected"]:
        return None
    seen = "the gate saw" if gated else "the metrics cover"
    return (
        f"{seen} {counts['scored']} of {counts['collected']} samples (a partial run: stopped early, "
        "deselected, rerun failures only, or items without a score)"
    )


def _reason(metric: str) -> str:
    """Why a threshold is usually missed, in words a newcomer can act on (the catalog's ``why_missed``)."""
    entry = catalog.get(metric)
    return (entry.why_missed if entry else "") or "below the tier"


def _value(check: GateCheck) -> str:
    if check.value is None:
        return "-"
    if check.metric.endswith("_ms"):
        return f"{check.value / 1000:.1f} s"
    if catalog.is_percent(check.metric):
        return f"{100 * check.value:.1f}%"
    return f"{check.value:.3f}"


def _threshold(check: GateCheck) -> str:
    op = ">=" if check.direction == "min" else "<="
    if check.metric.endswith("_ms"):
        return f"{op} {check.threshold / 1000:g} s"
    if catalog.is_percent(check.metric):
        return f"{op} {100 * check.threshold:g}%"
    return f"{op} {check.threshold:g}"


def _line(check: GateCheck, why: str | None = None) -> str:
    """One threshold that failed the gate or warns: value, threshold, outcome and why."""
    value = "" if check.value is None else f" {_value(check)}"
    reason = why if check.outcome == MISSED and why else check.reason
    return f"{check.label}{value} (needs {_threshold(check)}): {check.outcome}" + (f": {reason}" if reason else "")


def _answered(metrics: Mapping[str, Any]) -> str:
    reliability = (metrics.get("performance") or {}).get("reliability") or {}
    total = reliability.get("total_requests")
    if not total:
        return ""
    counts = reliability.get("error_counts") or {}
    failed = {name: n for name, n in counts.items() if n}
    text = f"; {reliability.get('successful_requests', 0)} of {total} requests answered"
    if failed:
        text += " (" + ", ".join(f"{n} {name}" for name, n in sorted(failed.items())) + ")"
    return text


def _asked_a_model(metrics_by_model: Mapping[str, Mapping[str, Any]]) -> bool:
    """Whether any model was asked in this run (or its answers replayed): advice about the model fits only then,
    not to a run that scored recorded predictions."""
    return any(
        ((metrics.get("performance") or {}).get("reliability") or {}).get("total_requests")
        for metrics in metrics_by_model.values()
    )


def verdict_lines(
    metrics_by_model: Mapping[str, Mapping[str, Any]],
    checks_by_model: Mapping[str, Sequence[GateCheck]],
    tier: str,
    *,
    regressions: int = 0,
    safe: Any = str,
    partial: Mapping[str, Any] | None = None,
    details: str = "details above",
    required: Mapping[str, Sequence[GateCheck]] | None = None,
) -> list[str]:
    """The verdict block printed last in the terminal summary (plain text; `safe` cleans model names);
    ``partial`` is metrics.json run.partial, when not every collected sample was scored; ``required`` the
    --extractbench-require checks per model."""
    required = required or {}
    if not metrics_by_model:
        return []
    if partial:
        lines = [
            f"verdict: a partial run: {partial['scored']} of {partial['collected']} samples were scored, "
            f"and the gate judged only those ({details})."
        ]
    else:
        lines = [f"verdict: the benchmark worked: it ran to the end and scored every model ({details})."]
    every = [c for checks in (*checks_by_model.values(), *required.values()) for c in checks]
    warned = [c for c in every if c.unmeasured and c.passed is not False]
    if warned:
        lines.insert(
            0,
            f"warning: {len(warned)} threshold(s) could not be measured and were let pass "
            "(--extractbench-unmeasured warn); listed below.",
        )
    missed_any = False
    for model, metrics in metrics_by_model.items():
        lines.append(
            f"  {safe(model)}: EQS {metrics['extraction_quality_score']:.3f} ({metrics['eqs_band'].split(' - ')[0]}), "
            f"schema validity {100 * metrics['schema_validity_rate']:.1f}% on {counted(metrics['num_samples'], 'sample')}"
            + _answered(metrics)
        )
        if partial and (seen := partial_text(partial["models"].get(model))):
            lines.append(f"    {seen}")
        unmet = [c for c in required.get(model, ()) if c.passed is False or c.unmeasured]
        if unmet:
            head = "missed" if all(c.outcome == MISSED for c in unmet) else "did not hold"
            lines.append(f"    {head} {len(unmet)} required threshold(s) (--extractbench-require):")
            lines.extend(f"      {_line(c)}" for c in unmet)
        if tier == "none":
            continue
        checks = checks_by_model.get(model, ())
        missed = [c for c in checks if c.passed is False or c.unmeasured]
        if not missed:
            skipped = sum(c.outcome == NOT_APPLICABLE for c in checks)
            lines.append(
                f"    meets every measured threshold of the '{tier}' SLA tier"
                + (f" ({skipped} not applicable to this run)" if skipped else "")
            )
            continue
        missed_any = missed_any or any(c.outcome == MISSED for c in missed)
        head = "missed" if all(c.outcome == MISSED for c in missed) else "did not hold"
        lines.append(f"    {head} {len(missed)} threshold(s) of the '{tier}' SLA tier:")
        lines.extend(f"      {_line(c, _reason(c.metric))}" for c in missed)
    unmeasured = any(c.unmeasured and c.passed is False for c in every)
    if missed_any and not _asked_a_model(metrics_by_model):
        lines.append(
            f"exit code 1 means the recorded outputs missed the production SLA ('{tier}'), not that the tool "
            "failed: report without the gate with --extractbench-sla none."
        )
    elif missed_any:
        lines.append(
            f"exit code 1 means the model missed the production SLA ('{tier}'), not that the tool failed: "
            "try a larger model (--model NAME, or --extractbench-base-url URL for a server), "
            "or report without the gate (--extractbench-sla none)."
        )
    elif unmeasured:
        lines.append(
            "exit code 1 means a threshold could not be measured (the component that measures it failed, "
            "listed above): fix it, or let such thresholds warn (--extractbench-unmeasured warn)."
        )
    elif any(c.passed is False for checks in required.values() for c in checks):
        lines.append(
            "exit code 1 means a model missed a threshold this run requires (listed above), not that the tool failed."
        )
    elif regressions:
        lines.append(
            "exit code 1 means the run regressed against its baseline (listed above), not that the tool failed."
        )
    elif tier == "none" and required:
        lines.append(
            "no SLA tier was asserted (--extractbench-sla none); every required threshold held or does not "
            "apply to this run: the session gate passes."
        )
    elif tier == "none":
        lines.append(
            "no SLA tier was asserted (--extractbench-sla none): no threshold gates the session whatever the "
            "scores; failed items still fail it unless --extractbench-report-only."
        )
    else:
        lines.append(f"the model meets the '{tier}' SLA tier: the session gate passes.")
    return lines
