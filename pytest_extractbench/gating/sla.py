"""Production SLA tiers (thresholds from the metric catalog), EQS bands and the deployment decision tree.

Pure functions over a model's metrics dict (the ``models.<name>`` object of metrics.json).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Mapping

from ..analysis import catalog
from ..analysis.bands import eqs_band, recommendation

TIER_NAMES = ("minimum", "target", "excellence")


def tier_thresholds() -> dict[str, dict[str, float]]:
    """Tier -> metric -> threshold, from the catalog's gated metrics."""
    return {tier: {m.name: m.sla[i] for m in catalog.gated() if m.sla} for i, tier in enumerate(TIER_NAMES)}


SLA_TIERS: dict[str, dict[str, float]] = tier_thresholds()  # the public table, as shipped
SLA_CHOICES = (*SLA_TIERS, "none")


@dataclass(frozen=True)
class GateCheck:
    """One threshold of a tier applied to one metric; ``passed`` is None when the run did not measure it."""

    metric: str
    label: str
    value: float | None
    threshold: float
    direction: str  # "min" or "max"
    passed: bool | None

    def describe(self) -> str:
        """``eqs 0.712 < 0.75 (minimum)``-style text for messages."""
        if self.value is None:
            return f"{self.label}: not measured in this run"
        op = ">=" if self.direction == "min" else "<="
        verdict = "ok" if self.passed else "MISSED"
        return f"{self.label} = {_fmt(self.metric, self.value)} (needs {op} {_fmt(self.metric, self.threshold)}): {verdict}"

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _fmt(metric: str, value: float) -> str:
    return f"{value:.0f}" if metric.endswith("_ms") else f"{value:.3f}"


def evaluate_sla(metrics: Mapping[str, Any], tier: str) -> list[GateCheck]:
    """Every threshold of ``tier`` checked against ``metrics``."""
    if tier == "none":
        return []
    try:
        thresholds = tier_thresholds()[tier]
    except KeyError:
        raise ValueError(f"unknown SLA tier {tier!r}; choose one of {', '.join(SLA_CHOICES)}") from None
    checks = []
    for metric in catalog.gated():
        key, label, direction = metric.name, metric.gate_label or metric.name, "min" if metric.higher_is_better else "max"
        threshold = thresholds[key]
        value = metrics.get(key)
        if value is None:
            checks.append(GateCheck(key, label, None, threshold, direction, None))
            continue
        passed = value >= threshold if direction == "min" else value <= threshold
        checks.append(GateCheck(key, label, float(value), threshold, direction, bool(passed)))
    return checks


def sla_passed(checks: list[GateCheck]) -> bool:
    """True when no measured threshold was missed."""
    return all(check.passed is not False for check in checks)
