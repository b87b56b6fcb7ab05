"""The charts of report.html: which figures each model and the comparison get, from metrics and rows.

Each chart is drawn by :mod:`.charts`; one that fails is logged and left out, so the report still renders.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np

from ..analysis import catalog
from ..core import rundoc, textsafe
from ..core.modelsections import OmittedField, extraction_sections, model_sections
from ..core.sections import Comparison
from . import chart_readings as readings
from . import charts
from . import distribution_charts as spread
from . import run_sections as sections
from .svg import Chart

if TYPE_CHECKING:
    from .html import ModelView

log = textsafe.get_logger(__name__)
MAX_NAMES = 20  # rows of per-field-name tables and heatmaps
MIN_POINTS = 5  # fewer per-sample points than this make no chart: the tables say it better
BINS = ("simple", "medium", "complex")


def _chart(build: Callable[..., Chart | None], *args: Any, **kwargs: Any) -> Chart | None:
    """A chart, or None with a log message when its data cannot be drawn (the report still renders)."""
    try:
        return build(*args, **kwargs)
    except Exception as exc:  # noqa: BLE001 - one bad chart must not lose the report
        log.warning("extractbench: chart %s failed: %s", getattr(build, "__name__", build), exc)
        return None


def _read(chart: Chart | None, reading: Callable[[], str]) -> Chart | None:
    """Attach the one-line reading to a drawn chart (a reading that fails leaves the chart without one)."""
    if chart is not None:
        try:
            chart.reading = reading()
        except Exception as exc:  # noqa: BLE001 - the figure is still worth showing
            log.warning("extractbench: reading of chart %s failed: %s", chart.key, exc)
    return chart


def _enough(points: Mapping[str, Sequence[Any]]) -> dict[str, Sequence[Any]]:
    """The models with data, when together they have enough points to plot (else nothing)."""
    kept = {n: v for n, v in points.items() if len(v)}
    return kept if sum(len(v) for v in kept.values()) >= MIN_POINTS else {}


def report_charts(models: list[ModelView], document: rundoc.MetricsDocument) -> dict[str, list[Chart]]:
    """The charts per report section; a figure with too little data to read is left out."""
    scored = {m.name: m.metrics for m in models if m.metrics.get("num_samples")}
    out: dict[str, list[Chart | None]] = defaultdict(list)
    for i, view in enumerate(models):
        if view.metrics.get("num_samples"):
            ci = model_sections(view.metrics).get("confidence_intervals", {}).get("extraction_quality_score")
            low, high = (None, None) if ci is None else (ci["low"], ci["high"])
            chart = _chart(charts.eqs_gauge, view.name, view.summary.eqs, low, high, str(i))
            out["overview"].append(
                _read(chart, partial(readings.gauge, view.name, view.summary.eqs, view.summary.verdict_band, low, high))
            )
    if scored:
        rows = {m.name: m.rows for m in models if m.rows}
        _overview_and_accuracy(out, scored, rows)
        _performance(out, rows)
        _errors(out, scored)
        _complexity(out, scored, rows)
        _breakdowns(out, models)
        comparison = document.get("comparison")  # only with two or more models
        if comparison is not None and len(scored) > 1:
            _comparison(out, scored, comparison)
    return defaultdict(list, {k: [c for c in v if c is not None] for k, v in out.items()})


def _overview_and_accuracy(
    out: dict[str, list[Chart | None]],
    scored: Mapping[str, Mapping[str, Any]],
    rows: Mapping[str, Sequence[Mapping[str, Any]]],
) -> None:
    out["overview"].append(_read(_chart(charts.radar, scored), lambda: readings.radar(scored)))
    out["accuracy"].append(_read(_chart(charts.categories, scored), lambda: readings.categories(scored)))
    pr = _enough({n: [(r["recall_partial"], r["precision_partial"]) for r in v] for n, v in rows.items()})
    if pr:
        chart = _chart(
            charts.scatter,
            pr,
            "pr",
            "Precision vs recall per sample",
            "recall (partial)",
            "precision (partial)",
            "One point per sample.",
        )
        out["accuracy"].append(_read(chart, lambda: readings.medians(pr, "recall", "precision")))


def _performance(out: dict[str, list[Chart | None]], rows: Mapping[str, Sequence[Mapping[str, Any]]]) -> None:
    latencies = _enough({n: [r["latency_s"] for r in v if r["latency_s"] is not None] for n, v in rows.items()})
    if latencies:
        out["performance"].append(
            _read(_chart(spread.latency_histogram, latencies), lambda: readings.latency(latencies))
        )
        points = {n: [(r["latency_s"], r["eqs"]) for r in rows[n] if r["latency_s"] is not None] for n in latencies}
        chart = _chart(
            charts.scatter,
            points,
            "latency-eqs",
            "Latency vs accuracy",
            "latency (s)",
            "EQS",
            "One point per sample.",
            xlim=None,
        )
        out["performance"].append(_read(chart, lambda: readings.correlation(points, "latency", "EQS")))
    finished = _enough({n: [r["finished_at"] for r in v if r["finished_at"] is not None] for n, v in rows.items()})
    if finished:
        out["performance"].append(_read(_chart(spread.throughput, finished), lambda: readings.throughput(finished)))


def _errors(out: dict[str, list[Chart | None]], scored: Mapping[str, Mapping[str, Any]]) -> None:
    out["errors"].append(_read(_chart(charts.error_patterns, scored), lambda: readings.error_patterns(scored)))
    names = _omitted_names(scored)
    if names:
        matrix = np.array(
            [
                [
                    _omission_rate(extraction_sections(m)["omission_analysis"]["by_field_name"], n)
                    for m in scored.values()
                ]
                for n in names
            ],
            dtype=float,
        )
        chart = _chart(
            charts.heatmap,
            matrix,
            names,
            list(scored),
            "omissions",
            "Field omission heatmap",
            f"Omission rate of the {len(names)} most often missed fields, highest mean rate first.",
            xlabel="model",
            ylabel="field",
        )
        out["errors"].append(
            _read(chart, lambda: readings.heatmap_top(matrix, names, list(scored), "Most omitted", "{:.0%}"))
        )
    severity = {n: extraction_sections(m)["hallucination_analysis"]["severity"] for n, m in scored.items()}
    if any(sum(v.values()) for v in severity.values()):
        chart = _chart(
            charts.stacked_counts,
            severity,
            [("critical", "#b71c1c"), ("moderate", "#fb8c00"), ("minor", "#fdd835")],
            "severity",
            "Hallucination severity",
            "Spurious fields by severity.",
        )
        out["errors"].append(_read(chart, lambda: readings.severity(severity)))


def _complexity(
    out: dict[str, list[Chart | None]],
    scored: Mapping[str, Mapping[str, Any]],
    rows: Mapping[str, Sequence[Mapping[str, Any]]],
) -> None:
    complexity = _enough(
        {
            n: [(r["complexity_score"], r["f1_partial"]) for r in v if r["complexity_score"] is not None]
            for n, v in rows.items()
        }
    )
    if complexity:
        chart = _chart(
            charts.scatter,
            complexity,
            "f1-complexity",
            "F1 vs schema complexity",
            "complexity score",
            "F1 (partial)",
            "One point per sample.",
            xlim=None,
        )
        out["complexity"].append(_read(chart, lambda: readings.correlation(complexity, "complexity", "F1")))
        by_bin = {
            n: {b: [r["f1_partial"] for r in v if r["complexity_bin"] == b] for b in BINS} for n, v in rows.items()
        }
        out["complexity"].append(_read(_chart(spread.box_by_bin, by_bin, BINS), lambda: readings.bins(by_bin, BINS)))
    correlation = _correlations(scored)
    if correlation is not None:
        matrix, labels, features = correlation
        chart = _chart(
            charts.heatmap,
            matrix,
            labels,
            features,
            "correlation",
            "Correlation: metrics vs complexity features",
            "Pearson r of per-sample F1 and latency with each complexity feature, strongest first; blank: undefined.",
            vmin=-1.0,
            vmax=1.0,
            cmap="RdBu_r",
            fmt="{:+.2f}",
            xlabel="complexity feature",
            ylabel="per-sample metric",
        )
        out["complexity"].append(
            _read(chart, lambda: readings.heatmap_top(matrix, labels, features, "Strongest", "r {:+.2f}"))
        )


def _breakdowns(out: dict[str, list[Chart | None]], models: Sequence[ModelView]) -> None:
    calibrations = {
        m.name: view
        for m in models
        if (view := sections.calibration_view(m.metrics)) and view["fields"] >= MIN_POINTS and len(view["bins"]) >= 2
    }
    if calibrations:
        out["breakdowns"].append(
            _read(_chart(spread.reliability_diagram, calibrations), lambda: readings.reliability(calibrations))
        )


def key_metrics() -> tuple[tuple[str, str], ...]:
    """The bars of the key-metrics chart, the catalog's ``key_chart`` metrics in order: a lower-is-better metric
    is drawn as ``1 - value`` (key ``1 - <name>``), so that every bar reads higher is better."""
    return tuple(
        (m.name, m.compact) if m.higher_is_better else (f"1 - {m.name}", f"1 - {m.compact}")
        for m in catalog.ranked("key_chart")
    )


def _key_bars(entry: Mapping[str, Any]) -> dict[str, Any]:
    lower = [m.name for m in catalog.ranked("key_chart") if not m.higher_is_better]
    return {**entry, **{f"1 - {name}": 1 - entry.get(name, 0.0) for name in lower}}


def _omission_rate(by_name: Mapping[str, OmittedField], name: str) -> float:
    found = by_name.get(name)  # a field this model never saw
    return np.nan if found is None else found["omission_rate"]


def _comparison(
    out: dict[str, list[Chart | None]], scored: Mapping[str, Mapping[str, Any]], comparison: Comparison
) -> None:
    ranking = comparison["eqs_ranking"]
    out["comparison"].append(_read(_chart(charts.eqs_ranking, ranking), lambda: readings.ranking(ranking)))
    ci = {
        n: {
            k: (v["low"], v["high"])
            for k, v in model_sections(m).get("confidence_intervals", {}).items()
            if v["low"] is not None
        }
        for n, m in scored.items()
    }
    bars = {n: _key_bars(m) for n, m in scored.items()}
    keys = key_metrics()
    chart = _chart(
        charts.grouped_bars,
        bars,
        keys,
        "grouped",
        "Key metrics across models",
        "Bars with 95% bootstrap CIs where computed.",
        errors=ci,
    )
    out["comparison"].append(_read(chart, lambda: readings.largest_gap(bars, keys)))
    wins = comparison["win_rate_matrix"]
    order = [m for m in comparison["models"] if m in wins]
    # two models' win rates are two numbers, in the pairwise table; a matrix earns its place from three
    if len(order) >= 3:
        matrix = np.array([[wins[a].get(b, np.nan) if a != b else np.nan for b in order] for a in order], dtype=float)
        chart = _chart(
            charts.heatmap,
            matrix,
            order,
            order,
            "winrate",
            "Win rate matrix",
            "Share of shared samples where the row model's EQS beats the column model's.",
            cmap="Greens",
            xlabel="against model",
            ylabel="model",
        )
        out["comparison"].append(_read(chart, lambda: readings.win_rates(wins, order)))
    for frontier in comparison["pareto_frontier"].values():
        if isinstance(frontier, Mapping) and frontier.get("available") and len(frontier["points"]) >= 3:
            chart = _chart(charts.pareto, frontier["points"], frontier["frontier"], frontier["cost_metric"])
            out["comparison"].append(_read(chart, partial(_on_frontier, frontier)))


def _on_frontier(frontier: Mapping[str, Any]) -> str:
    return "On the frontier: " + ", ".join(frontier["frontier"]) + "."


def _omitted_names(models: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The MAX_NAMES fields missed most often over all models, shown by mean omission rate (highest first)."""
    missed: dict[str, int] = {}
    rates: dict[str, list[float]] = defaultdict(list)
    for m in models.values():
        for name, entry in extraction_sections(m)["omission_analysis"]["by_field_name"].items():
            missed[name] = missed.get(name, 0) + int(entry["missed"])
            rates[name].append(float(entry["omission_rate"]))
    chosen = sorted((n for n, c in missed.items() if c > 0), key=lambda n: (-missed[n], n))[:MAX_NAMES]
    return sorted(chosen, key=lambda n: (-float(np.mean(rates[n])), -missed[n], n))


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
        found = extraction_sections(m)["complexity_correlation"]
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
    # strongest feature first (largest |r| in its column); an all-blank column last
    with np.errstate(all="ignore"):
        strength = np.nan_to_num(np.nanmax(np.where(np.isfinite(matrix), np.abs(matrix), -1.0), axis=0), nan=-1.0)
    order = sorted(range(len(features)), key=lambda j: (-strength[j], features[j]))
    return matrix[:, order], [r for r, _ in rows], [features[j].replace("_", " ") for j in order]
