"""The report charts as inline SVG strings (matplotlib, no pyplot, no JavaScript).

Drawing, labels and the safe SVG output live in :mod:`.svg`.
Per-sample scatter plots show at most :data:`MAX_POINTS` seeded-random points per model.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..analysis import catalog
from .svg import (  # noqa: F401  (Chart and the helpers are part of this module's interface)
    CATEGORY_COLORS, MAX_LABEL, MAX_POINTS, PALETTE, RC, Chart, _axes, color, figure, label, sample_points, to_svg,
)  # fmt: skip

MIN_BOX = 5  # values a box plot needs to mean something


# -- overview ----------------------------------------------------------------------------------


def eqs_gauge(model: str, eqs: float, low: float | None, high: float | None, key: str) -> Chart:
    """A half-circle gauge with the EQS bands and the EQS needle (CI as a grey arc)."""
    from matplotlib.patches import Wedge

    fig = figure(3.4, 2.0)
    ax = _axes(fig)
    zones = ((0.0, 0.60, "#e53935"), (0.60, 0.75, "#ffb300"), (0.75, 0.90, "#9ccc65"), (0.90, 1.0, "#2e7d32"))
    for start, end, fill in zones:
        ax.add_patch(Wedge((0, 0), 1.0, 180 - 180 * end, 180 - 180 * start, width=0.3, color=fill))
    if low is not None and high is not None:
        ax.add_patch(Wedge((0, 0), 0.68, 180 - 180 * high, 180 - 180 * low, width=0.06, color="#555555"))
    angle = np.pi * (1 - min(max(eqs, 0.0), 1.0))
    ax.plot([0, 0.85 * np.cos(angle)], [0, 0.85 * np.sin(angle)], color="#222222", lw=2.5)
    ax.add_patch(Wedge((0, 0), 0.06, 0, 360, color="#222222"))
    ax.text(0, -0.22, f"EQS {eqs:.3f}", ha="center", va="center", fontsize=12, weight="bold")
    for tick in (0.0, 0.6, 0.75, 0.9, 1.0):
        a = np.pi * (1 - tick)
        ax.text(1.12 * np.cos(a), 1.12 * np.sin(a), f"{tick:g}", ha="center", va="center", fontsize=7)
    ax.set_xlim(-1.25, 1.25)
    ax.set_ylim(-0.35, 1.2)
    ax.set_aspect("equal")
    ax.axis("off")
    return Chart(
        f"gauge-{key}",
        f"EQS gauge: {label(model)}",
        to_svg(fig, f"gauge-{key}"),
        "EQS bands: poor < 0.60 <= moderate < 0.75 <= good < 0.90 <= excellent; grey arc: the CI.",
    )


def radar(models: Mapping[str, Mapping[str, Any]]) -> Chart:
    """The EQS inputs (validity, F1 partial, type accuracy, 1 - hallucination: the catalog's components) per model."""
    parts = catalog.eqs_components()
    # compact names: polar labels are not laid out
    names = [part.component_label[:1].upper() + part.component_label[1:] for part in parts]
    angles = np.linspace(0, 2 * np.pi, len(names), endpoint=False).tolist()
    fig = figure(4.2, 3.6)
    ax = _axes(fig, projection="polar")
    for i, (model, m) in enumerate(models.items()):
        values = [part.component_value(m) for part in parts]
        ax.plot(angles + angles[:1], values + values[:1], color=color(i), lw=1.8, label=label(model))
        ax.fill(angles + angles[:1], values + values[:1], color=color(i), alpha=0.12)
    ax.set_xticks(angles)
    ax.set_xticklabels(names)
    ax.tick_params(axis="x", pad=10)
    ax.set_rlabel_position(100)
    ax.set_ylim(0, 1)
    ax.set_yticks([0.25, 0.5, 0.75, 1.0])
    ax.legend(loc="lower right", bbox_to_anchor=(1.35, -0.1), fontsize=8, frameon=False)
    return Chart(
        "radar",
        "EQS components",
        to_svg(fig, "radar"),
        "Validity, F1 (partial), type accuracy and 1 - hallucination rate.",
    )


# -- accuracy ----------------------------------------------------------------------------------


def categories(models: Mapping[str, Mapping[str, Any]]) -> Chart:
    """Stacked horizontal bars of the match category distribution."""
    fig = figure(6.0, 0.9 + 0.45 * len(models))
    ax = _axes(fig)
    names = list(models)
    left = np.zeros(len(names))
    for cat, fill in CATEGORY_COLORS.items():
        values = np.array([float((models[m].get("match_category_distribution") or {}).get(cat, 0.0)) for m in names])
        ax.barh(range(len(names)), values, left=left, color=fill, label=cat)
        for y, (x0, v) in enumerate(zip(left, values)):
            if v >= 0.06:
                ax.text(x0 + v / 2, y, f"{100 * v:.0f}%", ha="center", va="center", fontsize=7, color="white")
        left += values
    ax.set_yticks(range(len(names)))
    ax.set_yticklabels([label(m) for m in names])
    ax.set_xlim(0, 1)
    ax.set_xlabel("share of fields")
    ax.set_ylabel("model")
    ax.invert_yaxis()
    ax.legend(ncol=5, loc="lower center", bbox_to_anchor=(0.5, 1.0), fontsize=8, frameon=False)
    return Chart(
        "categories",
        "Match categories",
        to_svg(fig, "categories"),
        "Share of fields that are exact, partial, incorrect, missed or spurious.",
    )


def grouped_bars(
    models: Mapping[str, Mapping[str, Any]],
    metrics: Sequence[tuple[str, str]],
    key: str,
    title: str,
    caption: str,
    errors: Mapping[str, Mapping[str, tuple[float, float]]] | None = None,
) -> Chart:
    """One group per metric, one bar per model (with CI whiskers where given)."""
    fig = figure(6.4, 3.0)
    ax = _axes(fig)
    x = np.arange(len(metrics))
    width = 0.8 / max(len(models), 1)
    for i, (model, m) in enumerate(models.items()):
        values = [float(m.get(k) or 0.0) for k, _ in metrics]
        bars = ax.bar(x + (i - (len(models) - 1) / 2) * width, values, width, color=color(i), label=label(model))
        if errors and model in errors:
            lows = [values[j] - errors[model].get(k, (values[j], values[j]))[0] for j, (k, _) in enumerate(metrics)]
            highs = [errors[model].get(k, (values[j], values[j]))[1] - values[j] for j, (k, _) in enumerate(metrics)]
            ax.errorbar(
                [b.get_x() + b.get_width() / 2 for b in bars],
                values,
                yerr=[np.maximum(lows, 0), np.maximum(highs, 0)],
                fmt="none",
                ecolor="#333333",
                lw=1,
                capsize=2,
            )
        if len(models) * len(metrics) <= 24:
            # above the whisker, where one is drawn, so the number never sits on it
            tops = [max(v, (errors or {}).get(model, {}).get(k, (v, v))[1] or v) for v, (k, _) in zip(values, metrics)]
            for b, v, top in zip(bars, values, tops):
                ax.text(b.get_x() + b.get_width() / 2, top + 0.01, f"{v:.2f}", ha="center", va="bottom", fontsize=6.5)
    ax.set_xticks(x)
    ax.set_xticklabels([name for _, name in metrics])
    ax.set_xlabel("metric")
    ax.set_ylabel("value (0 to 1)")
    ax.set_ylim(0, 1.12)
    ax.legend(fontsize=8, frameon=False, ncol=min(len(models), 4), loc="upper center", bbox_to_anchor=(0.5, 1.18))
    return Chart(key, title, to_svg(fig, key), caption)


def scatter(
    points: Mapping[str, Sequence[tuple[float, float]]],
    key: str,
    title: str,
    xlabel: str,
    ylabel: str,
    caption: str,
    *,
    xlim: tuple[float, float] | None = (0, 1.02),
    ylim: tuple[float, float] | None = (0, 1.02),
    total: Mapping[str, int] | None = None,
) -> Chart:
    """Per-sample points, one colour per model (subsampled for huge runs)."""
    fig = figure(4.6, 3.4)
    ax = _axes(fig)
    shown = 0
    for i, (model, values) in enumerate(points.items()):
        kept = sample_points(values)
        shown += len(kept)
        if kept:
            xs, ys = zip(*kept)
            ax.scatter(xs, ys, s=12, alpha=0.55, color=color(i), label=label(model), edgecolors="none")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if xlim:
        ax.set_xlim(*xlim)
    if ylim:
        ax.set_ylim(*ylim)
    if len(points) > 1:
        ax.legend(fontsize=8, frameon=False)
    count = sum(len(v) for v in points.values())
    if shown < count:
        caption += f" {shown:,} of {count:,} samples shown (seeded random subset)."
    return Chart(key, title, to_svg(fig, key), caption)


# -- performance -------------------------------------------------------------------------------


def latency_histogram(latencies: Mapping[str, Sequence[float]]) -> Chart:
    """Latency histogram per model with p50/p95/p99 markers."""
    fig = figure(6.0, 3.0)
    ax = _axes(fig)
    every = np.concatenate([np.asarray(v, dtype=float) for v in latencies.values() if len(v)])
    bins = np.histogram_bin_edges(every, bins=min(40, max(5, int(np.sqrt(every.size)))))
    for i, (model, values) in enumerate(latencies.items()):
        values = np.asarray(values, dtype=float)
        if not values.size:
            continue
        ax.hist(values, bins=bins, alpha=0.5, color=color(i), label=label(model))
        for q, style in ((50, ":"), (95, "--"), (99, "-")):
            p = float(np.percentile(values, q))
            ax.axvline(p, color=color(i), ls=style, lw=1.2)
            ax.text(p, ax.get_ylim()[1] * (0.95 - 0.08 * (q // 50)), f"p{q}", color=color(i), fontsize=7, ha="left")
    ax.set_xlabel("latency (s)")
    ax.set_ylabel("samples")
    if len(latencies) > 1:
        ax.legend(fontsize=8, frameon=False)
    return Chart("latency", "Latency distribution", to_svg(fig, "latency"), "Dotted p50, dashed p95, solid p99.")


def throughput(finished: Mapping[str, Sequence[float]]) -> Chart:
    """Completed requests per second over the run, per model."""
    fig = figure(6.0, 2.8)
    ax = _axes(fig)
    start = min(min(v) for v in finished.values() if len(v))
    end = max(max(v) for v in finished.values() if len(v))
    span = max(end - start, 1e-9)
    width = max(span / 40, 1.0) if span > 5 else max(span / 10, 0.1)
    edges = np.arange(0.0, span + width, width)
    for i, (model, values) in enumerate(finished.items()):
        if not len(values):
            continue
        counts, _ = np.histogram(np.asarray(values, dtype=float) - start, bins=edges)
        ax.plot(edges[:-1] + width / 2, counts / width, color=color(i), lw=1.6, marker="o", ms=2.5, label=label(model))
    ax.set_xlabel("seconds since the first response")
    ax.set_ylabel("responses / s")
    ax.set_ylim(bottom=0)
    if len(finished) > 1:
        ax.legend(fontsize=8, frameon=False)
    return Chart(
        "throughput",
        "Throughput over time",
        to_svg(fig, "throughput"),
        f"Responses completed per second, in {width:.1f} s bins.",
    )


# -- errors ------------------------------------------------------------------------------------


def error_patterns(models: Mapping[str, Mapping[str, Any]]) -> Chart | None:
    """Extraction, type, structure and boundary error counts, one bar per model and category."""
    totals: dict[str, int] = {}
    for m in models.values():
        for group in (m.get("error_patterns") or {}).values():
            for name, count in group.items():
                totals[name] = totals.get(name, 0) + int(count)
    # patterns no model shows are left out; the most frequent first
    names = sorted((n for n, c in totals.items() if c), key=lambda n: (-totals[n], n))
    if not names:
        return None
    fig = figure(6.2, 0.6 + 0.28 * len(names) * max(1, len(models)) ** 0.5)
    ax = _axes(fig)
    height = 0.8 / len(models)
    for i, (model, m) in enumerate(models.items()):
        flat: dict[str, int] = {}
        for group in (m.get("error_patterns") or {}).values():
            flat.update(group)
        ax.barh(
            np.arange(len(names)) + i * height,
            [flat.get(n, 0) for n in names],
            height,
            color=color(i),
            label=label(model),
        )
    ax.set_yticks(np.arange(len(names)) + height * (len(models) - 1) / 2)
    ax.set_yticklabels([label(n.replace("_", " "), 40) for n in names])
    ax.invert_yaxis()
    ax.set_xlabel("fields with this error")
    ax.set_ylabel("error pattern")
    if len(models) > 1:
        ax.legend(fontsize=8, frameon=False)
    return Chart(
        "errors",
        "Error patterns",
        to_svg(fig, "errors"),
        "Extraction, type, structure and boundary errors.",
    )


def heatmap(
    matrix: np.ndarray,
    rows: Sequence[str],
    cols: Sequence[str],
    key: str,
    title: str,
    caption: str,
    *,
    vmin: float = 0.0,
    vmax: float = 1.0,
    cmap: str = "Reds",
    fmt: str = "{:.0%}",
    xlabel: str = "",
    ylabel: str = "",
) -> Chart:
    """A labelled heatmap; NaN cells are blank. Rows keep the caller's order (sort them before)."""
    fig = figure(min(max(4.6, 3.2 + 1.1 * len(cols)), 9.0), max(2.4, 1.2 + 0.3 * len(rows)))
    ax = _axes(fig)
    image = ax.imshow(np.ma.masked_invalid(matrix), cmap=cmap, vmin=vmin, vmax=vmax, aspect="auto")
    ax.set_xticks(range(len(cols)))
    ax.set_xticklabels(
        [label(c, 28) for c in cols], rotation=25 if len(cols) > 1 else 0, ha="right" if len(cols) > 1 else "center"
    )
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([label(r, 48, keep_end=True) for r in rows])
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    for (r, c), v in np.ndenumerate(matrix):
        if np.isfinite(v):
            dark = (v - vmin) / ((vmax - vmin) or 1) > 0.6
            ax.text(c, r, fmt.format(v), ha="center", va="center", fontsize=7, color="white" if dark else "black")
    fig.colorbar(image, ax=ax, fraction=0.05)
    for spine in ax.spines.values():
        spine.set_visible(False)
    return Chart(key, title, to_svg(fig, key), caption)


def stacked_counts(
    models: Mapping[str, Mapping[str, float]], order: Sequence[tuple[str, str]], key: str, title: str, caption: str
) -> Chart:
    """Stacked horizontal bars of counts (e.g. hallucination severity)."""
    fig = figure(6.0, 0.9 + 0.45 * len(models))
    ax = _axes(fig)
    names = list(models)
    left = np.zeros(len(names))
    for name, fill in order:
        values = np.array([float(models[m].get(name, 0)) for m in names])
        ax.barh(range(len(names)), values, left=left, color=fill, label=name)
        left += values
    ax.set_yticks(range(len(names)))
    ax.set_yticklabels([label(m) for m in names])
    ax.invert_yaxis()
    ax.set_xlabel("fields")
    ax.set_ylabel("model")
    ax.legend(ncol=len(order), loc="lower center", bbox_to_anchor=(0.5, 1.0), fontsize=8, frameon=False)
    return Chart(key, title, to_svg(fig, key), caption)


# -- complexity --------------------------------------------------------------------------------


def box_by_bin(values: Mapping[str, Mapping[str, Sequence[float]]], bins: Sequence[str]) -> Chart:
    """Box plots of per-sample F1 (partial) by complexity bin, one box per model and bin.

    A bin with fewer than :data:`MIN_BOX` samples is drawn as its points: a box of two values says nothing.
    """
    from matplotlib.patches import Patch

    fig = figure(6.0, 3.0)
    ax = _axes(fig)
    width = 0.8 / max(len(values), 1)
    for i, (model, by_bin) in enumerate(values.items()):
        positions = np.arange(len(bins)) + (i - (len(values) - 1) / 2) * width
        boxed = [(p, list(by_bin.get(b, []))) for p, b in zip(positions, bins) if len(by_bin.get(b, [])) >= MIN_BOX]
        if boxed:
            parts = ax.boxplot([d for _, d in boxed], positions=[p for p, _ in boxed], widths=width * 0.9,
                               patch_artist=True, showfliers=False)  # fmt: skip
            for box in parts["boxes"]:
                box.set_facecolor(color(i))
                box.set_alpha(0.6)
            for median in parts["medians"]:
                median.set_color("#222222")
        for p, b in zip(positions, bins):
            few = list(by_bin.get(b, []))
            if 0 < len(few) < MIN_BOX:
                ax.scatter([p] * len(few), few, s=14, color=color(i), zorder=3)
    ax.set_xticks(range(len(bins)))
    ax.set_xticklabels([f"{b}\n(n={sum(len(v.get(b, [])) for v in values.values())})" for b in bins])
    ax.set_xlabel("schema complexity bin (samples)")
    ax.set_ylabel("F1 (partial)")
    ax.set_ylim(-0.02, 1.05)
    if len(values) > 1:
        handles = [Patch(color=color(i), alpha=0.6, label=label(m)) for i, m in enumerate(values)]
        ax.legend(handles=handles, fontsize=8, frameon=False)
    return Chart(
        "complexity-box",
        "F1 by complexity bin",
        to_svg(fig, "complexity-box"),
        f"Per-sample F1 (partial) in each schema complexity bin; a bin of fewer than {MIN_BOX} samples shows its points.",
    )


# -- several models ----------------------------------------------------------------------------


def eqs_ranking(ranking: Sequence[Mapping[str, Any]]) -> Chart:
    """EQS per model with its CI; a star between neighbours whose difference is significant."""
    fig = figure(6.0, 0.9 + 0.5 * len(ranking))
    ax = _axes(fig)
    for i, entry in enumerate(ranking):
        eqs = float(entry["extraction_quality_score"])
        ax.barh(i, eqs, color=color(i), height=0.6)
        low, high = entry.get("ci_low"), entry.get("ci_high")
        if low is not None and high is not None:
            ax.errorbar(
                eqs, i, xerr=[[max(eqs - low, 0)], [max(high - eqs, 0)]], fmt="none", ecolor="#222222", capsize=3
            )
        ax.text(min(max(eqs, high if high is not None else eqs) + 0.02, 1.0), i, f"{eqs:.3f}", va="center", fontsize=8)
        if entry.get("significantly_better_than_next"):
            ax.text(0.02, i + 0.5, "* significantly better than the next", va="center", fontsize=7, color="#b71c1c")
    ax.set_yticks(range(len(ranking)))
    ax.set_yticklabels([f"{e['rank']}. {label(e['model'])}" for e in ranking])
    ax.set_xlim(0, 1.1)
    ax.invert_yaxis()
    ax.set_xlabel("EQS")
    ax.set_ylabel("model (rank)")
    return Chart(
        "ranking",
        "EQS ranking with significance",
        to_svg(fig, "ranking"),
        "Bars: EQS with its bootstrap CI. * marks a significant difference from the next model (paired test).",
    )


def pareto(points: Mapping[str, Mapping[str, float]], frontier: Sequence[str], cost_key: str) -> Chart:
    """EQS against p95 latency (or cost); the frontier joined by a line."""
    fig = figure(4.8, 3.4)
    ax = _axes(fig)
    for i, (model, p) in enumerate(points.items()):
        ax.scatter(p[cost_key], p["extraction_quality_score"], s=40, color=color(i), zorder=3)
        ax.annotate(
            label(model, 20),
            (p[cost_key], p["extraction_quality_score"]),
            textcoords="offset points",
            xytext=(5, 4),
            fontsize=7,
        )
    line = [(points[m][cost_key], points[m]["extraction_quality_score"]) for m in frontier if m in points]
    if line:
        xs, ys = zip(*sorted(line))
        ax.step(xs, ys, where="post", color="#555555", ls="--", lw=1)
    ax.set_xlabel("p95 latency (ms)" if cost_key.startswith("latency") else "estimated cost (USD)")
    ax.set_ylabel("EQS")
    key = "pareto-" + cost_key.split("_")[0]
    return Chart(
        key,
        "Pareto frontier: accuracy vs " + ("latency" if cost_key.startswith("latency") else "cost"),
        to_svg(fig, key),
        "Models on the dashed line are not beaten on both axes by another model.",
    )


# -- calibration -------------------------------------------------------------------------------


def reliability_diagram(calibrations: Mapping[str, Mapping[str, Any]]) -> Chart:
    """Accuracy against confidence per filled bin, one line per model; the diagonal is perfect calibration."""
    fig = figure(4.6, 3.4)
    ax = _axes(fig)
    ax.plot([0, 1], [0, 1], color="#999999", ls="--", lw=1, label="perfectly calibrated")
    for i, (model, view) in enumerate(calibrations.items()):
        filled = [b for b in view["bins"] if b.get("count")]
        ax.plot([b["confidence"] for b in filled], [b["accuracy"] for b in filled], color=color(i), marker="o",
                ms=3, lw=1.5, label=label(model))  # fmt: skip
    ax.set_xlabel("confidence (token probability)")
    ax.set_ylabel("accuracy (fields correct)")
    ax.set_xlim(0, 1.02)
    ax.set_ylim(0, 1.02)
    ax.legend(fontsize=8, frameon=False)
    return Chart(
        "reliability",
        "Reliability diagram",
        to_svg(fig, "reliability"),
        "Mean confidence and accuracy of the fields in each confidence bin; below the diagonal: overconfident.",
    )
