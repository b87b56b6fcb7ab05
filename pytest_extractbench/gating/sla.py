"""Production SLA tiers (spec 4.5.10), EQS bands (spec 4.0.1) and the deployment decision tree.

Pure functions over a model's metrics dict (the ``models.<name>`` object of metrics.json).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Mapping

from ..analysis.bands import eqs_band, recommendation

# (metric key in metrics.json, display name, "min" = value must be >= threshold, "max" = <=)
_SLA_METRICS = (
    ("extraction_quality_score", "eqs", "min"),
    ("schema_validity_rate", "schema_validity", "min"),
    ("field_f1_partial", "field_f1_partial", "min"),
    ("hallucination_rate", "hallucination_rate", "max"),
    ("latency_p95_ms", "p95_latency_ms", "max"),
    ("success_rate", "success_rate", "min"),
)

SLA_TIERS: dict[str, dict[str, float]] = {
    "minimum": {
        "extraction_quality_score": 0.75,
        "schema_validity_rate": 0.95,
        "field_f1_partial": 0.70,
        "hallucination_rate": 0.10,
        "latency_p95_ms": 5000,
        "success_rate": 0.99,
    },
    "target": {
        "extraction_quality_score": 0.85,
        "schema_validity_rate": 0.98,
        "field_f1_partial": 0.80,
        "hallucination_rate": 0.05,
        "latency_p95_ms": 2000,
        "success_rate": 0.995,
    },
    "excellence": {
        "extraction_quality_score": 0.90,
        "schema_validity_rate": 0.99,
        "field_f1_partial": 0.90,
        "hallucination_rate": 0.02,
        "latency_p95_ms": 1000,
        "success_rate": 0.999,
    },
}
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
        thresholds = SLA_TIERS[tier]
    except KeyError:
        raise ValueError(f"unknown SLA tier {tier!r}; choose one of {', '.join(SLA_CHOICES)}") from None
    checks = []
    for key, label, direction in _SLA_METRICS:
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
