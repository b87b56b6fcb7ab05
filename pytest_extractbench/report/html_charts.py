"""The charts of report.html: which figures each model and the comparison get, from metrics and rows.

Each chart is drawn by :mod:`.charts`; one that fails is logged and left out, so the report still renders.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ..core import textsafe
from . import charts
from .charts import Chart

if TYPE_CHECKING:
    from .html import ModelView

log = textsafe.get_logger(__name__)
MAX_NAMES = 20  # rows of per-field-name tables and heatmaps
BINS = ("simple", "medium", "complex")


def _chart(build: Callable[..., Chart | None], *args: Any, **kwargs: Any) -> Chart | None:
    """A chart, or None with a log message when its data cannot be drawn (the report still renders)."""
    try:
        return build(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - one bad chart must not lose the report
        log.warning("extractbench: chart %s failed: %s", getattr(build, "__name__", build), exc)
        return None


def report_charts(models: list[ModelView], document: Mapping[str, Any]) -> dict[str, list[Chart]]:
    by_name = {m.name: m.metrics for m in models}
    scored = {name: m for name, m in by_name.items() if m.get("num_samples")}
    out: dict[str, list[Chart | None]] = defaultdict(list)
    for i, view in enumerate(models):
        if view.metrics.get("num_samples"):
            ci = (view.metrics.get("confidence_intervals") or {}).get("extraction_quality_score") or {}
            out["overview"].append(
                _chart(charts.eqs_gauge, view.name, view.summary.eqs, ci.get("low"), ci.get("high"), str(i))
            )
    if not scored:
        return defaultdict(list, {k: [c for c in v if c is not None] for k, v in out.items()})
    out["overview"].append(_chart(charts.radar, scored))
    out["accuracy"].append(_chart(charts.categories, scored))
    out["accuracy"].append(
        _chart(
            charts.grouped_bars,
            scored,
            [("field_f1_strict", "strict"), ("field_f1_partial", "partial"), ("field_f1_lenient", "lenient")],
            "f1-modes",
            "Field F1: strict, partial, lenient",
            "Micro F1 under the three credit modes (strict, partial, lenient).",
        )
    )
    rows = {m.name: m.rows for m in models if m.rows}
    out["accuracy"].append(
        _chart(
            charts.scatter,
            {n: [(r["recall_partial"], r["precision_partial"]) for r in v] for n, v in rows.items()},
            "pr",
            "Precision vs recall per sample",
            "recall (partial)",
            "precision (partial)",
            "One point per sample.",
        )
    )
    latencies = {n: [r["latency_s"] for r in v if r["latency_s"] is not None] for n, v in rows.items()}
    latencies = {n: v for n, v in latencies.items() if v}
    if latencies:
        out["performance"].append(_chart(charts.latency_histogram, latencies))
        out["performance"].append(
            _chart(
                charts.scatter,
                {n: [(r["latency_s"], r["eqs"]) for r in rows[n] if r["latency_s"] is not None] for n in latencies},
                "latency-eqs",
                "Latency vs accuracy",
                "latency (s)",
                "EQS",
                "One point per sample.",
                xlim=None,
            )
        )
    finished = {n: [r["finished_at"] for r in v if r["finished_at"] is not None] for n, v in rows.items()}
    finished = {n: v for n, v in finished.items() if v}
    if finished:
        out["performance"].append(_chart(charts.throughput, finished))
    out["errors"].append(_chart(charts.error_patterns, scored))
    names = _omitted_names(scored)
    if names:
        matrix = np.array(
            [
                [
                    ((m.get("omission_analysis") or {}).get("by_field_name") or {})
                    .get(n, {})
                    .get("omission_rate", np.nan)
                    for m in scored.values()
                ]
                for n in names
            ],
            dtype=float,
        )
        out["errors"].append(
            _chart(
                charts.heatmap,
                matrix,
                names,
                list(scored),
                "omissions",
                "Field omission heatmap",
                f"Omission rate of the {len(names)} most omitted fields.",
            )
        )
    severity = {n: (m.get("hallucination_analysis") or {}).get("severity") or {} for n, m in scored.items()}
    if any(sum(v.values()) for v in severity.values()):
        out["errors"].append(
            _chart(
                charts.stacked_counts,
                severity,
                [("critical", "#b71c1c"), ("moderate", "#fb8c00"), ("minor", "#fdd835")],
                "severity",
                "Hallucination severity",
                "Spurious fields by severity.",
            )
        )
    complexity = {
        n: [(r["complexity_score"], r["f1_partial"]) for r in v if r["complexity_score"] is not None]
        for n, v in rows.items()
    }
    if any(complexity.values()):
        out["complexity"].append(
            _chart(
                charts.scatter,
                complexity,
                "f1-complexity",
                "F1 vs schema complexity",
                "complexity score",
                "F1 (partial)",
                "One point per sample.",
            )
        )
        by_bin = {
            n: {b: [r["f1_partial"] for r in v if r["complexity_bin"] == b] for b in BINS} for n, v in rows.items()
        }
        out["complexity"].append(_chart(charts.box_by_bin, by_bin, BINS))
    correlation = _correlations(scored)
    if correlation is not None:
        matrix, labels, features = correlation
        out["complexity"].append(
            _chart(
                charts.heatmap,
                matrix,
                labels,
                features,
                "correlation",
                "Correlation: metrics vs complexity features",
                "Pearson r of per-sample F1 and latency with each complexity feature; blank: undefined.",
                vmin=-1.0,
                vmax=1.0,
                cmap="RdBu_r",
                fmt="{:+.2f}",
            )
        )
    comparison = document.get("comparison")
    if isinstance(comparison, Mapping) and len(scored) > 1:
        out["comparison"].append(_chart(charts.eqs_ranking, comparison.get("eqs_ranking") or []))
        ci = {
            n: {
                k: (v.get("low"), v.get("high"))
                for k, v in (m.get("confidence_intervals") or {}).items()
                if v.get("low") is not None
            }
            for n, m in scored.items()
        }
        bars = scored | {}
        for n in bars:
            bars[n] = dict(bars[n], no_hallucination=1 - bars[n].get("hallucination_rate", 0.0))
        out["comparison"].append(
            _chart(
                charts.grouped_bars,
                bars,
                [
                    ("extraction_quality_score", "EQS"),
                    ("schema_validity_rate", "validity"),
                    ("field_f1_partial", "F1 partial"),
                    ("exact_match_rate", "exact match"),
                    ("type_accuracy", "type acc."),
                    ("no_hallucination", "1 - halluc."),
                ],
                "grouped",
                "Key metrics across models",
                "Bars with 95% bootstrap CIs where computed.",
                errors=ci,
            )
        )
        wins = comparison.get("win_rate_matrix") or {}
        order = [m for m in comparison.get("models", []) if m in wins]
        if order:
            matrix = np.array(
                [[wins[a].get(b, np.nan) if a != b else np.nan for b in order] for a in order], dtype=float
            )
            out["comparison"].append(
                _chart(
                    charts.heatmap,
                    matrix,
                    order,
                    order,
                    "winrate",
                    "Win rate matrix",
                    "Share of shared samples where the row model's EQS beats the column model's.",
                    cmap="Greens",
                )
            )
        for name, frontier in (comparison.get("pareto_frontier") or {}).items():
            if isinstance(frontier, Mapping) and frontier.get("available"):
                out["comparison"].append(
                    _chart(charts.pareto, frontier["points"], frontier["frontier"], frontier["cost_metric"])
                )
    return defaultdict(list, {k: [c for c in v if c is not None] for k, v in out.items()})


def _omitted_names(models: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Field names most often missed (by count over all models, then by rate)."""
    missed: dict[str, int] = {}
    rate: dict[str, float] = {}
    for m in models.values():
        for name, entry in ((m.get("omission_analysis") or {}).get("by_field_name") or {}).items():
            missed[name] = missed.get(name, 0) + int(entry.get("missed", 0))
            rate[name] = max(rate.get(name, 0.0), float(entry.get("omission_rate", 0.0)))
    ranked = sorted((n for n, c in missed.items() if c > 0), key=lambda n: (-missed[n], -rate[n], n))
    return ranked[:MAX_NAMES]


def latency_figures(rows: Sequence[Mapping[str, Any]]) -> dict[str, float | None]:
    """p50/p95/p99 of the per-sample latencies, for runs whose metrics carry no performance section."""
    values = [r["latency_s"] for r in rows if r["latency_s"] is not None]
    if not values:
        return {}
    p50, p95, p99 = np.percentile(np.asarray(values, dtype=float) * 1000, [50, 95, 99])
    return {"latency_p50_ms": float(p50), "latency_p95_ms": float(p95), "latency_p99_ms": float(p99)}


def _correlations(models: Mapping[str, Mapping[str, Any]]) -> tuple[np.ndarray, list[str], list[str]] | None:
    features: list[str] = []
    rows: list[tuple[str, dict[str, Any]]] = []
    for name, m in models.items():
        found = m.get("complexity_correlation") or {}
        for metric in ("f1", "latency"):
            entries = {k[len(metric) + 4 :]: v for k, v in found.items() if k.startswith(f"{metric}_vs_")}
            if any(isinstance(v, Mapping) and v.get("r") is not None for v in entries.values()):
                prefix = f"{name}: " if len(models) > 1 else ""
                rows.append((f"{prefix}{metric}", entries))
                features.extend(f for f in entries if f not in features)
    if not rows:
        return None
    matrix = np.array(
        [
            [(e.get(f) or {}).get("r") if (e.get(f) or {}).get("r") is not None else np.nan for f in features]
            for _, e in rows
        ],
        dtype=float,
    )
    return matrix, [r for r, _ in rows], [f.replace("_", " ") for f in features]
