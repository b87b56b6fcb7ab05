"""Thresholds a team sets on any metric of the catalog or figure of a track (``--extractbench-require
METRIC>=VALUE``), beside the SLA tiers: a floor on the judge's grade, a ceiling on p95 time to first token, a rate of perfect samples. Each one is
a gate of the session, checked per model like a tier's thresholds, with the same four outcomes (:mod:`.outcomes`):
one that does not apply to the run is skipped, one a failed component could not measure fails by default."""

from __future__ import annotations

import argparse
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..analysis import catalog, track_metrics
from .outcomes import Measuring, absence, decide
from .sla import GateCheck

_EXPR = re.compile(r"^\s*([A-Za-z][\w.@^-]*)\s*(>=|<=)\s*([-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)(%?)\s*$")


@dataclass(frozen=True)
class Requirement:
    """``metric >= threshold`` (direction "min") or ``metric <= threshold`` ("max")."""

    metric: str
    direction: str
    threshold: float
    expr: str

    def __str__(self) -> str:
        return self.expr


def parse_requirement(value: str) -> Requirement:
    """Parse ``judge_score>=0.8``, ``time_to_first_token_p95_ms<=800``, ``perfect_samples>=40%``, ``pass^k>=0.8``
    (argparse type)."""
    text = str(value).strip()
    match = _EXPR.match(text)
    if not match:
        raise argparse.ArgumentTypeError(
            f"{value!r}: expected METRIC>=VALUE or METRIC<=VALUE, e.g. judge_score>=0.8 or latency_p95_ms<=2000"
        )
    name, op, number, percent = match.groups()
    key = name.lower().replace("-", "_")
    # a figure of the toolcall, generate or repair track too (``accuracy>=0.9``): the run's track is not known here
    metric = catalog.get(catalog.aliases().get(key, key)) or track_metrics.find(key)
    if metric is None:
        known = ", ".join(sorted({m.name for m in catalog.metrics()} | set(track_metrics.find_names())))
        raise argparse.ArgumentTypeError(f"{value!r}: unknown metric {name!r}; known: {known}")
    threshold = float(number) / (100 if percent else 1)
    if not math.isfinite(threshold):  # 1e999 reads as infinity: a threshold nothing can miss, or nothing meet
        raise argparse.ArgumentTypeError(f"{value!r}: the threshold must be a finite number")
    return Requirement(metric.name, "min" if op == ">=" else "max", threshold, text)


def _value(metrics: Mapping[str, Any], name: str) -> float | None:
    """A metric's value in a model's metrics.json entry: top level, else where the catalog says a performance
    figure lives."""
    entry = catalog.get(name)
    places = [metrics.get(name)]
    for path in entry.performance if entry else ():
        found: Any = metrics.get("performance") or {}
        for part in path.split("."):
            found = found.get(part) if isinstance(found, Mapping) else None
        places.append(found)
    for value in places:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    return None


def evaluate_requirements(
    metrics: Mapping[str, Any],
    requirements: Sequence[Requirement],
    measuring: Measuring | None = None,
    policy: str = "fail",
) -> list[GateCheck]:
    """Every requirement checked against one model's metrics (``measuring`` and ``policy`` as for the SLA tier)."""
    checks = []
    for requirement in requirements:
        value = _value(metrics, requirement.metric)
        why = absence(requirement.metric, metrics, value, measuring or Measuring())
        outcome, passed, reason = decide(value, requirement.threshold, requirement.direction, why, policy)
        checks.append(
            GateCheck(
                requirement.metric,
                requirement.metric,
                value,
                requirement.threshold,
                requirement.direction,
                passed,
                outcome,
                reason,
            )
        )
    return checks
