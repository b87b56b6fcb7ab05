"""The session gate as verdicts, read from a run's metrics.json document: one per model and gate (its SLA
tier; its required thresholds; its regression checks against the baseline, subset-scoped ones included), passed
or failed, with the words that explain it: how many thresholds held, were missed, did not apply or could not be
measured. The terminal, summary.md, report.html and the JUnit XML all show these, first."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .outcomes import HELD, MISSED, NOT_APPLICABLE, OUTCOMES, UNMEASURED
from .sla import GateCheck


@dataclass(frozen=True)
class GateVerdict:
    gate: str  # "sla-minimum", "regression"
    model: str
    passed: bool
    headline: str
    details: tuple[str, ...]
    warnings: tuple[str, ...] = ()  # thresholds that could not be measured, let pass as warnings

    @property
    def name(self) -> str:
        return f"{self.gate}-{self.model}"

    @property
    def message(self) -> str:
        return "\n".join([self.headline, *self.details])


def _counts(checks: list[Any], outcome_of: Any = lambda check: check.outcome) -> str:
    """``1 missed, 1 could not be measured``: how many thresholds ended each way."""
    counts = {outcome: sum(outcome_of(check) == outcome for check in checks) for outcome in OUTCOMES}
    return ", ".join(f"{n} {outcome}" for outcome, n in counts.items() if n)


def _thresholds_verdict(gate: str, model: str, what: str, checks: list[GateCheck], policy: str) -> GateVerdict:
    failing = [check for check in checks if check.passed is False]
    unmeasured = [check for check in checks if check.unmeasured]
    skipped = [check for check in checks if check.outcome == NOT_APPLICABLE]
    if failing and all(check.outcome == MISSED for check in failing):
        outcome = f"{len(failing)} threshold(s) missed"
    elif failing:
        outcome = f"{len(failing)} threshold(s) failed ({_counts(failing)})"
    elif unmeasured:
        outcome = f"no threshold failed ({_counts(checks)})"
    else:
        outcome = "every threshold held" + (f" ({len(skipped)} not applicable to this run)" if skipped else "")
    warned = () if policy == "fail" else tuple(check.describe() for check in unmeasured)
    shown = failing + [check for check in unmeasured if check not in failing] or checks
    return GateVerdict(
        gate,
        model,
        not failing,
        f"{what}, model '{model}': {outcome}",
        tuple(check.describe() for check in shown),
        warned,
    )


def gate_verdicts(document: Mapping[str, Any]) -> list[GateVerdict]:
    """Every gate the run applied, SLA tiers first, then required thresholds, then regression checks, per model in
    document order."""
    verdicts = []
    policy = str(((document.get("run") or {}).get("options") or {}).get("unmeasured") or "fail")
    for model, metrics in (document.get("models") or {}).items():
        sla = (metrics or {}).get("sla") or {}
        tiers = [GateCheck(**check) for check in sla.get("checks") or ()]
        if sla.get("tier") in (None, "none") or not tiers:
            continue
        verdicts.append(_thresholds_verdict(f"sla-{sla['tier']}", model, f"SLA tier '{sla['tier']}'", tiers, policy))
    for model, metrics in (document.get("models") or {}).items():
        required = [GateCheck(**check) for check in ((metrics or {}).get("requirements") or {}).get("checks") or ()]
        if required:
            verdicts.append(_thresholds_verdict("required", model, "required thresholds", required, policy))
    by_model: dict[str, list[Mapping[str, Any]]] = {}
    for check in (document.get("baseline_comparison") or {}).get("checks") or ():
        by_model.setdefault(str(check.get("model")), []).append(check)
    for model, checks in by_model.items():
        failed = [check for check in checks if check.get("failed")]
        outcome = f"{len(failed)} of {len(checks)} check(s) failed" if failed else f"{len(checks)} check(s) passed"
        if any(_regression_outcome(check) == UNMEASURED for check in checks):
            outcome += f" ({_counts(checks, _regression_outcome)})"
        warned = tuple(
            str(check.get("message", ""))
            for check in checks
            if _regression_outcome(check) == UNMEASURED and not check.get("failed")
        )
        verdicts.append(
            GateVerdict(
                "regression",
                model,
                not failed,
                f"regression against the baseline, model '{model}': {outcome}",
                tuple(f"{_regression_outcome(check)}: {check.get('message', '')}" for check in failed or checks),
                warned,
            )
        )
    return verdicts


def _regression_outcome(check: Mapping[str, Any]) -> str:
    """A regression check's outcome (a metrics.json of an older version has none: failed or not)."""
    return str(check.get("outcome") or (MISSED if check.get("failed") else HELD))


def unmeasured_warnings(verdicts: list[GateVerdict]) -> list[str]:
    """Thresholds that could not be measured but were let pass (``--extractbench-unmeasured warn``), each with
    its model: what the summaries say first."""
    return [f"{verdict.model}: {warning}" for verdict in verdicts for warning in verdict.warnings]


def gated_recommendation(recommendation: str, failed_gates: list[str]) -> str:
    """The deployment recommendation never reads "deploy" for a model that failed a gate of the run."""
    if not failed_gates:
        return recommendation
    return f"Not recommended: fails {' and '.join(failed_gates)} of this run"
