"""Production SLA tiers (thresholds from the metric catalog), EQS bands and the deployment decision tree.

Pure functions over a model's metrics dict (the ``models.<name>`` object of metrics.json).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from ..analysis import catalog
from .outcomes import HELD, MISSED, UNMEASURED, Measuring, absence, decide, outcome_of

TIER_NAMES = ("minimum", "target", "excellence")


def tier_thresholds() -> dict[str, dict[str, float]]:
    """Tier -> metric -> threshold, from the catalog's gated metrics."""
    return {tier: {m.name: m.sla[i] for m in catalog.gated() if m.sla} for i, tier in enumerate(TIER_NAMES)}


SLA_TIERS: dict[str, dict[str, float]] = tier_thresholds()  # the public table, as shipped
SLA_CHOICES = (*SLA_TIERS, "none")


@dataclass(frozen=True)
class GateCheck:
    """One threshold applied to one metric, with its outcome (:mod:`.outcomes`): ``passed`` is False when it fails
    the gate, None when it neither holds nor fails (not applicable; could not be measured, downgraded to a warning).
    """

    metric: str
    label: str
    value: float | None
    threshold: float
    direction: str  # "min" or "max"
    passed: bool | None
    outcome: str = ""  # held, missed, not applicable, could not be measured ("" in an older metrics.json)
    reason: str = ""  # why it was not applicable or could not be measured

    def __post_init__(self) -> None:
        if not self.outcome:
            object.__setattr__(self, "outcome", outcome_of(self.passed, self.value))

    @property
    def unmeasured(self) -> bool:
        return self.outcome == UNMEASURED

    def describe(self) -> str:
        """``eqs = 0.712 (needs >= 0.750): missed``-style text for messages; the outcome word is always there."""
        op = ">=" if self.direction == "min" else "<="
        needs = f"needs {op} {_fmt(self.metric, self.threshold)}"
        if self.outcome in (HELD, MISSED):
            return f"{self.label} = {_fmt(self.metric, self.value or 0.0)} ({needs}): {self.outcome}"
        value = "" if self.value is None else f" = {_fmt(self.metric, self.value)}"
        return (
            f"{self.label}{value} ({needs}): {self.outcome}: {self.reason}"
            if self.reason
            else f"{self.label}{value} ({needs}): {self.outcome}"
        )

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _fmt(metric: str, value: float) -> str:
    return f"{value:.0f}" if metric.endswith("_ms") else f"{value:.3f}"


def evaluate_sla(
    metrics: Mapping[str, Any], tier: str, measuring: Measuring | None = None, policy: str = "fail"
) -> list[GateCheck]:
    """Every threshold of ``tier`` checked against ``metrics``; ``measuring`` says what the run set out to
    measure, ``policy`` whether a threshold that could not be measured fails ("fail") or warns ("warn")."""
    if tier == "none":
        return []
    try:
        thresholds = tier_thresholds()[tier]
    except KeyError:
        raise ValueError(f"unknown SLA tier {tier!r}; choose one of {', '.join(SLA_CHOICES)}") from None
    checks = []
    for metric in catalog.gated():
        key, label, direction = (
            metric.name,
            metric.gate_label or metric.name,
            "min" if metric.higher_is_better else "max",
        )
        threshold = thresholds[key]
        value = metrics.get(key)
        value = None if value is None else float(value)
        outcome, passed, reason = decide(
            value, threshold, direction, absence(key, metrics, value, measuring or Measuring()), policy
        )
        checks.append(GateCheck(key, label, value, threshold, direction, passed, outcome, reason))
    return checks


def sla_passed(checks: list[GateCheck]) -> bool:
    """True when no threshold fails the gate (missed, or could not be measured under the "fail" policy)."""
    return all(check.passed is not False for check in checks)
