"""The report charts of how values spread: latency and throughput over the run, per-sample F1 by complexity bin
(box plots), and confidence against accuracy (the reliability diagram). The per-model metric charts are in
:mod:`.charts`; the drawing in :mod:`.svg`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .svg import INK, SMALL, UNIT, Chart, Legend, Plot, categorical, color, fitted, models_legend, numeric

MIN_BOX = 5  # values a box plot needs to mean something


# -- performance -------------------------------------------------------------------------------


def latency_histogram(latencies: Mapping[str, Sequence[float]]) -> Chart:
    """Latency histogram per model with p50/p95/p99 markers."""
    arrays = {m: (a := np.asarray(v, dtype=float))[np.isfinite(a)] for m, v in latencies.items()}
    every = np.concatenate([a for a in arrays.values() if a.size])
    bins = np.histogram_bin_edges(every, bins=min(40, max(5, int(np.sqrt(every.size)))))
    counts = {m: np.histogram(a, bins=bins)[0] for m, a in arrays.items() if a.size}
    tallest = max(int(c.max()) for c in counts.values())
    x = fitted([float(bins[0]), float(bins[-1])], "latency (s)")
    y = fitted([0.0, tallest], "samples", floor=0.0)
    legend = models_legend(list(latencies), show=len(latencies) > 1)
    plot = Plot("latency", "Latency distribution", x, y, width=480, height=210, legend=legend)
    c = plot.canvas
    for i, (model, values) in enumerate(arrays.items()):
        if not values.size:
            continue
        for left, right, n in zip(bins[:-1], bins[1:], counts[model]):
            if n:
                c.rect(
                    plot.px(left),
                    plot.py(n),
                    plot.px(right) - plot.px(left),
                    plot.py(0) - plot.py(n),
                    color(i),
                    fill_opacity=0.5,
                    class_="bar",
                )
        for row, (q, style) in enumerate(((50, ":"), (95, "--"), (99, "-"))):
            p = float(np.percentile(values, q))
            c.line(plot.px(p), plot.py(y.lo), plot.px(p), plot.py(y.hi), color(i), 1.2, style, class_="marker")
            c.text(plot.px(p) + 2, plot.py(y.hi * (0.95 - 0.08 * row)), f"p{q}", size=SMALL - 1, fill=color(i))
    return Chart("latency", "Latency distribution", plot.svg(), "Dotted p50, dashed p95, solid p99.")


def throughput(finished: Mapping[str, Sequence[float]]) -> Chart:
    """Completed requests per second over the run, per model."""
    start = min(min(v) for v in finished.values() if len(v))
    end = max(max(v) for v in finished.values() if len(v))
    span = max(end - start, 1e-9)
    width = max(span / 40, 1.0) if span > 5 else max(span / 10, 0.1)
    edges = np.arange(0.0, span + width, width)
    rates = {}
    for model, values in finished.items():
        if len(values):
            counts, _ = np.histogram(np.asarray(values, dtype=float) - start, bins=edges)
            rates[model] = counts / width
    middles = edges[:-1] + width / 2
    x = fitted(middles.tolist(), "seconds since the first response")
    y = fitted([float(r.max()) for r in rates.values()], "responses / s", floor=0.0)
    plot = Plot(
        "throughput",
        "Throughput over time",
        x,
        y,
        width=480,
        height=190,
        legend=models_legend(list(finished), "-", show=len(finished) > 1),
    )
    for i, model in enumerate(finished):
        if model in rates:
            corners = [(plot.px(m), plot.py(r)) for m, r in zip(middles, rates[model])]
            plot.canvas.polyline(corners, color(i), 1.6, class_="line")
            for cx, cy in corners:
                plot.canvas.circle(cx, cy, 2.0, color(i), class_="point")
    return Chart(
        "throughput",
        "Throughput over time",
        plot.svg(),
        f"Responses completed per second, in {width:.1f} s bins.",
    )


# -- complexity --------------------------------------------------------------------------------


def _box(values: Sequence[float]) -> tuple[float, float, float, float, float]:
    """Lower whisker, first quartile, median, third quartile, upper whisker (the furthest values within 1.5 IQR)."""
    data = np.asarray(values, dtype=float)
    q1, median, q3 = (float(v) for v in np.percentile(data, [25, 50, 75]))
    reach = 1.5 * (q3 - q1)
    low = float(data[data >= q1 - reach].min())
    high = float(data[data <= q3 + reach].max())
    return low, q1, median, q3, high


def _per_model(counts: Sequence[int]) -> str:
    """A bin's sample count as each model has it: one number when they agree (never their sum)."""
    return str(counts[0]) if len(set(counts)) <= 1 and counts else "/".join(map(str, counts))


def box_by_bin(values: Mapping[str, Mapping[str, Sequence[float]]], bins: Sequence[str]) -> Chart:
    """Box plots of per-sample F1 (partial) by complexity bin, one box per model and bin.

    A bin with fewer than :data:`MIN_BOX` samples is drawn as its points: a box of two values says nothing.
    """
    ticks = [f"{b}\n(n={_per_model([len(v.get(b, [])) for v in values.values()])})" for b in bins]
    unit = "samples per model" if len(values) > 1 else "samples"
    plot = Plot(
        "complexity-box",
        "F1 by complexity bin",
        categorical(ticks, f"schema complexity bin ({unit})"),
        numeric(-0.02, 1.05, "F1 (partial)", ticks=UNIT),
        width=480,
        height=210,
        legend=models_legend(list(values), show=len(values) > 1),
    )
    c = plot.canvas
    width = 0.8 / max(len(values), 1)
    for i, by_bin in enumerate(values.values()):
        for j, b in enumerate(bins):
            data = [float(v) for v in by_bin.get(b, [])]
            middle = j + (i - (len(values) - 1) / 2) * width
            x = plot.px(middle)
            if len(data) >= MIN_BOX:
                low, q1, median, q3, high = _box(data)
                half = (plot.px(middle + width * 0.45) - plot.px(middle - width * 0.45)) / 2
                c.line(x, plot.py(low), x, plot.py(q1), INK, 1.0, class_="whisker")
                c.line(x, plot.py(q3), x, plot.py(high), INK, 1.0, class_="whisker")
                for end in (low, high):
                    c.line(x - half / 2, plot.py(end), x + half / 2, plot.py(end), INK, 1.0)
                c.rect(
                    x - half,
                    plot.py(q3),
                    2 * half,
                    plot.py(q1) - plot.py(q3),
                    color(i),
                    fill_opacity=0.6,
                    stroke=INK,
                    stroke_width=0.8,
                    class_="box",
                )
                c.line(x - half, plot.py(median), x + half, plot.py(median), INK, 1.6, class_="median")
            else:
                for v in data:
                    c.circle(x, plot.py(v), 3.0, color(i), class_="point")
    return Chart(
        "complexity-box",
        "F1 by complexity bin",
        plot.svg(),
        f"Per-sample F1 (partial) in each schema complexity bin (n: {unit}, as the readings give it); a bin of "
        f"fewer than {MIN_BOX} samples shows its points.",
    )


# -- calibration -------------------------------------------------------------------------------


def reliability_diagram(calibrations: Mapping[str, Mapping[str, Any]]) -> Chart:
    """Accuracy against confidence per filled bin, one line per model; the diagonal is perfect calibration."""
    legend = Legend([("perfectly calibrated", "#999999", "--")] + models_legend(list(calibrations), "-").entries)
    plot = Plot(
        "reliability",
        "Reliability diagram",
        numeric(0.0, 1.02, "confidence (token probability)", ticks=UNIT),
        numeric(0.0, 1.02, "accuracy (fields correct)", ticks=UNIT),
        width=320,
        height=240,
        legend=legend,
    )
    c = plot.canvas
    c.line(plot.px(0), plot.py(0), plot.px(1), plot.py(1), "#999999", 1.0, "--")
    for i, view in enumerate(calibrations.values()):
        filled = [b for b in view["bins"] if b["count"]]
        corners = [(plot.px(b["confidence"]), plot.py(b["accuracy"])) for b in filled]
        c.polyline(corners, color(i), 1.5, class_="line")
        for x, y in corners:
            c.circle(x, y, 3.0, color(i), class_="point")
    return Chart(
        "reliability",
        "Reliability diagram",
        plot.svg(),
        "Mean confidence and accuracy of the fields in each confidence bin; below the diagonal: overconfident.",
    )
