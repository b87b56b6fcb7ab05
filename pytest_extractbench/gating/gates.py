"""The session gate as verdicts, read from a run's metrics.json document: one per model and gate (its SLA
tier; its regression checks against the baseline, subset-scoped ones included), passed or failed, with the
words that explain it. The terminal, summary.md, report.html and the JUnit XML all show these, first."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from .sla import GateCheck


@dataclass(frozen=True)
class GateVerdict:
    gate: str  # "sla-minimum", "regression"
    model: str
    passed: bool
    headline: str
    details: tuple[str, ...]

    @property
    def name(self) -> str:
        return f"{self.gate}-{self.model}"

    @property
    def message(self) -> str:
        return "\n".join([self.headline, *self.details])


def gate_verdicts(document: Mapping[str, Any]) -> list[GateVerdict]:
    """Every gate the run applied, SLA tiers first, then required thresholds, then regression checks, per model in
    document order."""
    verdicts = []
    for model, metrics in (document.get("models") or {}).items():
        sla = (metrics or {}).get("sla") or {}
        checks = [GateCheck(**check) for check in sla.get("checks") or ()]
        if sla.get("tier") in (None, "none") or not checks:
            continue
        missed = [check for check in checks if check.passed is False]
        shown = missed or [check for check in checks if check.passed is not None]
        outcome = f"{len(missed)} threshold(s) missed" if missed else "every measured threshold met"
        verdicts.append(GateVerdict(f"sla-{sla['tier']}", model, not missed,
                                    f"SLA tier '{sla['tier']}', model '{model}': {outcome}",
                                    tuple(check.describe() for check in shown)))  # fmt: skip
    for model, metrics in (document.get("models") or {}).items():
        required = [GateCheck(**check) for check in ((metrics or {}).get("requirements") or {}).get("checks") or ()]
        if not required:
            continue
        missed = [check for check in required if check.passed is False]
        outcome = f"{len(missed)} of {len(required)} missed" if missed else f"{len(required)} met or not measured"
        verdicts.append(GateVerdict("required", model, not missed,
                                    f"required thresholds, model '{model}': {outcome}",
                                    tuple(check.describe() for check in missed or required)))  # fmt: skip
    by_model: dict[str, list[Mapping[str, Any]]] = {}
    for check in (document.get("baseline_comparison") or {}).get("checks") or ():
        by_model.setdefault(str(check.get("model")), []).append(check)
    for model, checks in by_model.items():
        failed = [check for check in checks if check.get("failed")]
        outcome = f"{len(failed)} of {len(checks)} check(s) failed" if failed else f"{len(checks)} check(s) passed"
        verdicts.append(GateVerdict("regression", model, not failed,
                                    f"regression against the baseline, model '{model}': {outcome}",
                                    tuple(str(check.get("message", "")) for check in failed or checks)))  # fmt: skip
    return verdicts


def gated_recommendation(recommendation: str, failed_gates: list[str]) -> str:
    """The deployment recommendation never reads "deploy" for a model that failed a gate of the run."""
    if not failed_gates:
        return recommendation
    return f"Not recommended: fails {' and '.join(failed_gates)} of this run"
