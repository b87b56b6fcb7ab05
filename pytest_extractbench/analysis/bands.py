"""What a score means: the EQS interpretation bands and the deployment recommendation.

Facts about a model's metrics, not gates: the SLA tiers that fail a run are in :mod:`pytest_extractbench.gating.sla`.
"""

from __future__ import annotations

__all__ = ["eqs_band", "recommendation"]


def eqs_band(eqs: float) -> str:
    """What an EQS means for production use (docs/metrics.md, "EQS bands")."""
    if eqs >= 0.90:
        return "Excellent - production-ready for most use cases"
    if eqs >= 0.75:
        return "Good - suitable with human review"
    if eqs >= 0.60:
        return "Moderate - needs significant oversight"
    return "Poor - not recommended for production"


def recommendation(eqs: float, hallucination_rate: float) -> str:
    """The deployment decision from EQS and hallucination rate (docs/metrics.md, "Recommendation")."""
    if eqs >= 0.90 and hallucination_rate < 0.02:
        return "Deploy without human review"
    if eqs >= 0.80 and hallucination_rate < 0.05:
        return "Deploy with spot-check human review"
    if eqs >= 0.70 and hallucination_rate < 0.10:
        return "Deploy with mandatory human review"
    return "Not recommended for production - needs improvement"
