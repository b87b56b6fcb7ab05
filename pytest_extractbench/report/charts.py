"""The report charts as inline SVG strings (written from Python: no plotting library, no JavaScript).

Drawing, labels and the safe SVG output live in :mod:`.svg`. Marks carry a class (``bar``, ``point``, ``box``,
``line``, ``cell``, ``needle``) so a test can find them. Per-sample scatter plots show at most :data:`MAX_POINTS`
seeded-random points per model.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..analysis import catalog
from ..core.modelsections import extraction_sections
from ..core.sections import RankEntry
from .svg import (  # noqa: F401  (Chart and the helpers are part of this module's interface)
    CATEGORY_COLORS,
    GREY,
    INK,
    MAX_LABEL,
    MAX_POINTS,
    PALETTE,
    SMALL,
    UNIT,
    Axis,
    Canvas,
    Chart,
    Legend,
    Plot,
    categorical,
    color,
    color_map,
    fitted,
    ink_on,
    label,
    models_legend,
    numeric,
    sample_points,
    text_width,
)

# -- overview ----------------------------------------------------------------------------------


def _arc(cx: float, cy: float, outer: float, inner: float, start: float, end: float) -> str:
    """An annular sector of the half-circle dial from value ``start`` to ``end`` (0 at the left, 1 at the right)."""

    def at(r: float, v: float) -> str:
        a = math.pi * (1 - v)
        return f"{cx + r * math.cos(a):.1f},{cy - r * math.sin(a):.1f}"

    if end - start >= 1.0:  # a full half circle: two arcs, so no arc spans exactly 180 degrees
        mid = (start + end) / 2
        return (
            f"M{at(outer, start)} A{outer:.1f},{outer:.1f} 0 0 1 {at(outer, mid)} A{outer:.1f},{outer:.1f} 0 0 1 "
            f"{at(outer, end)} L{at(inner, end)} A{inner:.1f},{inner:.1f} 0 0 0 {at(inner, mid)} "
            f"A{inner:.1f},{inner:.1f} 0 0 0 {at(inner, start)} Z"
        )
    return (
        f"M{at(outer, start)} A{outer:.1f},{outer:.1f} 0 0 1 {at(outer, end)} L{at(inner, end)} "
        f"A{inner:.1f},{inner:.1f} 0 0 0 {at(inner, start)} Z"
    )


def eqs_gauge(model: str, eqs: float, low: float | None, high: float | None, key: str) -> Chart:
    """A half-circle gauge with the EQS bands and the EQS needle (CI as a grey arc)."""
    title = f"EQS gauge: {label(model)}"
    radius, cx, cy = 110.0, 150.0, 135.0
    c = Canvas(300, cy + 0.35 * radius + 12, f"gauge-{key}", title)
    zones = ((0.0, 0.60, "#e53935"), (0.60, 0.75, "#ffb300"), (0.75, 0.90, "#9ccc65"), (0.90, 1.0, "#2e7d32"))
    for start, end, fill in zones:
        c.path(_arc(cx, cy, radius, 0.7 * radius, start, end), fill=fill, class_="band")
    if low is not None and high is not None:
        lo, hi = sorted((min(max(low, 0.0), 1.0), min(max(high, 0.0), 1.0)))
        if hi > lo:
            c.path(_arc(cx, cy, 0.68 * radius, 0.62 * radius, lo, hi), fill=GREY, class_="ci")
    angle = math.pi * (1 - min(max(eqs, 0.0), 1.0))
    c.line(
        cx,
        cy,
        cx + 0.85 * radius * math.cos(angle),
        cy - 0.85 * radius * math.sin(angle),
        INK,
        2.5,
        stroke_linecap="round",
        class_="needle",
    )
    c.circle(cx, cy, 0.06 * radius, INK)
    c.text(cx, cy + 0.22 * radius, f"EQS {eqs:.3f}", size=16, anchor="middle", font_weight="bold")
    for tick in (0.0, 0.6, 0.75, 0.9, 1.0):
        a = math.pi * (1 - tick)
        c.text(
            cx + 1.12 * radius * math.cos(a), cy - 1.12 * radius * math.sin(a), f"{tick:g}", size=SMALL, anchor="middle"
        )
    return Chart(
        f"gauge-{key}",
        title,
        c.render(),
        "EQS bands: poor < 0.60 <= moderate < 0.75 <= good < 0.90 <= excellent; grey arc: the CI.",
    )


def radar(models: Mapping[str, Mapping[str, Any]]) -> Chart:
    """The EQS inputs (validity, F1 partial, type accuracy, 1 - hallucination: the catalog's components) per model."""
    parts = catalog.eqs_components()
    # the catalog's compact names: polar labels are not laid out
    names = [part.component_label[:1].upper() + part.component_label[1:] for part in parts]
    angles = [2 * math.pi * k / len(names) for k in range(len(names))]  # counter-clockwise from the right
    legend = models_legend(list(models))
    width, radius = 420.0, 110.0
    top = 10 + legend.height(width)
    cx, cy = width / 2, top + radius + 30
    c = Canvas(width, cy + radius + 40, "radar", "EQS components")
    legend.draw(c, 6, width)

    def at(r: float, a: float) -> tuple[float, float]:
        return cx + r * radius * math.cos(a), cy - r * radius * math.sin(a)

    for ring in (0.25, 0.5, 0.75, 1.0):
        c.circle(cx, cy, ring * radius, "none", stroke="#d0d4dc", stroke_width=0.8)
        x, y = at(ring, math.radians(100))
        c.text(x + 2, y, f"{ring:g}", size=SMALL - 1, fill="#68707f")
    for name, a in zip(names, angles):
        c.line(cx, cy, *at(1.0, a), "#d0d4dc", 0.8)
        x, y = at(1.14, a)
        anchor = "start" if math.cos(a) > 0.1 else "end" if math.cos(a) < -0.1 else "middle"
        lines = name.count("\n")
        c.text(x, y - 7 * lines + (8 if math.sin(a) < -0.1 else -8 if math.sin(a) > 0.1 else 0), name, anchor=anchor)
    for i, m in enumerate(models.values()):
        values = [part.component_value(m) for part in parts]
        corners = [at(min(max(float(v or 0.0), 0.0), 1.0), a) for v, a in zip(values, angles)]
        c.polygon(corners, fill=color(i), fill_opacity=0.12, stroke=color(i), stroke_width=1.8, class_="area")
    return Chart(
        "radar", "EQS components", c.render(), "Validity, F1 (partial), type accuracy and 1 - hallucination rate."
    )


# -- accuracy ----------------------------------------------------------------------------------


def _stacked(
    key: str,
    title: str,
    models: Mapping[str, Mapping[str, float]],
    order: Sequence[tuple[str, str]],
    x: Axis,
    *,
    percent: bool,
) -> str:
    names = list(models)
    legend = Legend([(name, fill, "box") for name, fill in order])
    plot = Plot(
        key,
        title,
        x,
        categorical([label(m) for m in names], "model", top_down=True),
        width=480,
        height=34 * len(names),
        legend=legend,
    )
    c = plot.canvas
    for row, model in enumerate(names):
        left = 0.0
        top, bottom = plot.py(row - 0.4), plot.py(row + 0.4)
        for name, fill in order:
            value = float(models[model].get(name, 0.0) or 0.0)
            if value > 0:
                c.rect(plot.px(left), top, plot.px(left + value) - plot.px(left), bottom - top, fill, class_="bar")
                if percent and value >= 0.06:
                    c.text(
                        plot.px(left + value / 2),
                        (top + bottom) / 2,
                        f"{100 * value:.0f}%",
                        size=SMALL - 1,
                        anchor="middle",
                        fill=ink_on(fill),
                    )
            left += value
    return plot.svg()


def categories(models: Mapping[str, Mapping[str, Any]]) -> Chart:
    """Stacked horizontal bars of the match category distribution."""
    shares = {
        m: {k: float(v or 0.0) for k, v in extraction_sections(models[m])["match_category_distribution"].items()}
        for m in models
    }
    svg = _stacked(
        "categories",
        "Match categories",
        shares,
        list(CATEGORY_COLORS.items()),
        numeric(0.0, 1.0, "share of fields", ticks=UNIT),
        percent=True,
    )
    return Chart(
        "categories", "Match categories", svg, "Share of fields that are exact, partial, incorrect, missed or spurious."
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
    plot = Plot(
        key,
        title,
        categorical([name for _, name in metrics], "metric"),
        numeric(0.0, 1.12, "value (0 to 1)", ticks=UNIT),
        width=520,
        height=220,
        legend=models_legend(list(models)),
    )
    c = plot.canvas
    width = 0.8 / max(len(models), 1)
    for i, (model, m) in enumerate(models.items()):
        for j, (k, _) in enumerate(metrics):
            value = float(m.get(k) or 0.0)
            middle = j + (i - (len(models) - 1) / 2) * width
            left, right = plot.px(middle - width / 2), plot.px(middle + width / 2)
            c.rect(left, plot.py(value), right - left, plot.py(0.0) - plot.py(value), color(i), class_="bar")
            top = value
            bounds = (errors or {}).get(model, {}).get(k)
            if bounds is not None and bounds[0] is not None and bounds[1] is not None:
                lo, hi = min(bounds[0], value), max(bounds[1], value)
                x = plot.px(middle)
                c.line(x, plot.py(lo), x, plot.py(hi), "#333333", 1.0, class_="whisker")
                for end in (lo, hi):
                    c.line(x - 2.5, plot.py(end), x + 2.5, plot.py(end), "#333333", 1.0)
                top = hi
            if len(models) * len(metrics) <= 24:
                # above the whisker, where one is drawn, so the number never sits on it
                c.text(
                    plot.px(middle),
                    plot.py(top) - 3,
                    f"{value:.2f}",
                    size=SMALL - 2,
                    anchor="middle",
                    baseline="bottom",
                )
    return Chart(key, title, plot.svg(), caption)


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
    kept = {
        model: [
            (float(x), float(y))
            for x, y in sample_points(values)
            if x is not None and y is not None and math.isfinite(x) and math.isfinite(y)
        ]
        for model, values in points.items()
    }
    every = [p for values in kept.values() for p in values]
    x = numeric(*xlim, xlabel, ticks=UNIT) if xlim else fitted((p[0] for p in every), xlabel)
    y = numeric(*ylim, ylabel, ticks=UNIT) if ylim else fitted((p[1] for p in every), ylabel)
    legend = models_legend(list(points), "dot", show=len(points) > 1)
    plot = Plot(key, title, x, y, width=340, height=240, legend=legend)
    for i, values in enumerate(kept.values()):
        for a, b in values:
            plot.canvas.circle(plot.px(a), plot.py(b), 2.6, color(i), fill_opacity=0.55, class_="point")
    count = sum(len(v) for v in points.values())
    shown = sum(len(v) for v in kept.values())
    if shown < count:
        caption += f" {shown:,} of {count:,} samples shown (seeded random subset)."
    return Chart(key, title, plot.svg(), caption)


# -- errors ------------------------------------------------------------------------------------


def error_patterns(models: Mapping[str, Mapping[str, Any]]) -> Chart | None:
    """Extraction, type, structure and boundary error counts, one bar per model and category."""
    totals: dict[str, int] = {}
    for m in models.values():
        for group in extraction_sections(m)["error_patterns"].values():
            for name, count in group.items():
                totals[name] = totals.get(name, 0) + int(count)
    # patterns no model shows are left out; the most frequent first
    names = sorted((n for n, c in totals.items() if c), key=lambda n: (-totals[n], n))
    if not names:
        return None
    flat: dict[str, dict[str, int]] = {}
    for model, m in models.items():
        flat[model] = {}
        for group in extraction_sections(m)["error_patterns"].values():
            flat[model].update({k: int(v) for k, v in group.items()})
    largest = max(v for counts in flat.values() for v in counts.values())
    plot = Plot(
        "errors",
        "Error patterns",
        fitted([0, largest], "fields with this error", floor=0.0),
        categorical([label(n.replace("_", " "), 40) for n in names], "error pattern", top_down=True),
        width=440,
        height=24 * len(names) * max(1, len(models)) ** 0.5,
        legend=models_legend(list(models), show=len(models) > 1),
    )
    height = 0.8 / len(models)
    for i, model in enumerate(models):
        for row, name in enumerate(names):
            value = flat[model].get(name, 0)
            top = row - 0.4 + i * height
            if value:
                plot.canvas.rect(
                    plot.px(0),
                    plot.py(top),
                    plot.px(value) - plot.px(0),
                    plot.py(top + height) - plot.py(top),
                    color(i),
                    class_="bar",
                )
    return Chart(
        "errors",
        "Error patterns",
        plot.svg(),
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
    """A labelled heatmap with its colour scale; NaN cells are blank. Rows keep the caller's order (sort them
    before)."""
    x = categorical([label(c, 28) for c in cols], xlabel, slanted=len(cols) > 1)
    y = categorical([label(r, 48, keep_end=True) for r in rows], ylabel, top_down=True)
    cell = min(max(60.0, max(text_width(t, SMALL) for _, t in x.ticks) + 16), 110.0)
    plot = Plot(key, title, x, y, width=cell * len(cols), height=22 * len(rows), right=78, spines=False)
    c = plot.canvas
    span = (vmax - vmin) or 1.0
    for (r, col), value in np.ndenumerate(matrix):
        if not np.isfinite(value):
            continue
        fraction = (value - vmin) / span
        left, top = plot.px(col - 0.5), plot.py(r - 0.5)
        fill = color_map(cmap, fraction)
        c.rect(left, top, plot.px(col + 0.5) - left, plot.py(r + 0.5) - top, fill, class_="cell")
        c.text(plot.px(col), plot.py(r), fmt.format(value), size=SMALL - 1, anchor="middle", fill=ink_on(fill))
    # the colour scale: a column of steps at the right, its ticks beside it
    bar_left, steps = plot.left + plot.width + 14, 40
    bar_top, bar_height = plot.top, max(plot.height, 80.0)
    for s in range(steps):
        fraction = (s + 0.5) / steps
        c.rect(
            bar_left,
            bar_top + bar_height * (1 - (s + 1) / steps),
            12,
            bar_height / steps + 0.3,
            color_map(cmap, fraction),
        )
    for value, text in numeric(vmin, vmax).ticks:
        ty = bar_top + bar_height * (1 - (value - vmin) / span)
        c.line(bar_left + 12, ty, bar_left + 16, ty, "#444444", 0.8)
        c.text(bar_left + 19, ty, text, size=SMALL)
    c.height = max(c.height, bar_top + bar_height + 8)
    return Chart(key, title, plot.svg(), caption)


def stacked_counts(
    models: Mapping[str, Mapping[str, float]], order: Sequence[tuple[str, str]], key: str, title: str, caption: str
) -> Chart:
    """Stacked horizontal bars of counts (e.g. hallucination severity)."""
    totals = [sum(float(models[m].get(name, 0) or 0) for name, _ in order) for m in models]
    svg = _stacked(key, title, models, order, fitted([0.0, *totals], "fields", floor=0.0), percent=False)
    return Chart(key, title, svg, caption)


# -- several models ----------------------------------------------------------------------------


def eqs_ranking(ranking: Sequence[RankEntry]) -> Chart:
    """EQS per model with its CI; a star between neighbours whose difference is significant."""
    names = [f"{e['rank']}. {label(e['model'])}" for e in ranking]
    plot = Plot(
        "ranking",
        "EQS ranking with significance",
        numeric(0.0, 1.1, "EQS", ticks=UNIT),
        categorical(names, "model (rank)", top_down=True),
        width=460,
        height=40 * len(ranking),
    )
    c = plot.canvas
    for i, entry in enumerate(ranking):
        eqs = float(entry["extraction_quality_score"])
        c.rect(
            plot.px(0),
            plot.py(i - 0.3),
            plot.px(eqs) - plot.px(0),
            plot.py(i + 0.3) - plot.py(i - 0.3),
            color(i),
            class_="bar",
        )
        low, high = entry["ci_low"], entry["ci_high"]
        if low is not None and high is not None:
            y = plot.py(i)
            c.line(plot.px(min(low, eqs)), y, plot.px(max(high, eqs)), y, INK, 1.0, class_="whisker")
            for end in (min(low, eqs), max(high, eqs)):
                c.line(plot.px(end), y - 3, plot.px(end), y + 3, INK, 1.0)
        c.text(
            plot.px(min(max(eqs, high if high is not None else eqs) + 0.02, 1.0)), plot.py(i), f"{eqs:.3f}", size=SMALL
        )
        if entry["significantly_better_than_next"]:
            c.text(
                plot.px(0.02), plot.py(i + 0.5), "* significantly better than the next", size=SMALL - 1, fill="#b71c1c"
            )
    return Chart(
        "ranking",
        "EQS ranking with significance",
        plot.svg(),
        "Bars: EQS with its bootstrap CI. * marks a significant difference from the next model (paired test).",
    )


def pareto(points: Mapping[str, Mapping[str, float]], frontier: Sequence[str], cost_key: str) -> Chart:
    """EQS against p95 latency (or cost); the frontier joined by a line."""
    key = "pareto-" + cost_key.split("_")[0]
    title = "Pareto frontier: accuracy vs " + ("latency" if cost_key.startswith("latency") else "cost")
    xs = [float(p[cost_key]) for p in points.values()]
    ys = [float(p["extraction_quality_score"]) for p in points.values()]
    x = fitted(xs, "p95 latency (ms)" if cost_key.startswith("latency") else "estimated cost (USD)", margin=0.1)
    plot = Plot(key, title, x, fitted(ys, "EQS", margin=0.1), width=360, height=240, right=60)
    c = plot.canvas
    line = sorted((points[m][cost_key], points[m]["extraction_quality_score"]) for m in frontier if m in points)
    if line:
        steps = [(plot.px(line[0][0]), plot.py(line[0][1]))]
        for (_, y0), (x1, y1) in zip(line, line[1:]):  # "post" steps: a value holds until the next point
            steps += [(plot.px(x1), plot.py(y0)), (plot.px(x1), plot.py(y1))]
        c.polyline(steps, GREY, 1.0, "--", class_="frontier")
    for i, (model, p) in enumerate(points.items()):
        px, py = plot.px(p[cost_key]), plot.py(p["extraction_quality_score"])
        c.circle(px, py, 4.0, color(i), class_="point")
        c.text(px + 6, py - 6, label(model, 20), size=SMALL - 1)
    return Chart(key, title, plot.svg(), "Models on the dashed line are not beaten on both axes by another model.")
