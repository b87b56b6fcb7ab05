"""One line under each report chart saying what its data shows, computed from the numbers it was drawn from.

A chart without a reading makes every reader work out the same thing; these say it once ("weak: 25% of
fields exact, most of the rest missed"). Pure functions over plain numbers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ..analysis import catalog
from ..core.modelsections import extraction_sections
from ..core.sections import RankEntry


def _join(parts: Sequence[str]) -> str:
    return "; ".join(p for p in parts if p)


def _prefix(model: str, many: bool) -> str:
    return f"{model}: " if many else ""


def gauge(model: str, eqs: float, band: str | None, low: float | None, high: float | None) -> str:
    ci = f", 95% CI [{low:.3f}, {high:.3f}]" if low is not None and high is not None else ""
    return f"{model}: EQS {eqs:.3f}{ci}" + (f", {band.split(' - ')[0].lower()}" if band else "") + "."


def radar(models: Mapping[str, Mapping[str, Any]]) -> str:
    """Each model's weakest EQS component."""
    parts = []
    for model, m in models.items():
        values = {part.component_label: part.component_value(m) for part in catalog.eqs_components()}
        weakest = min(values, key=lambda k: (values[k], k))
        parts.append(f"{_prefix(model, len(models) > 1)}weakest component {weakest} ({values[weakest]:.3f})")
    return _join(parts) + "."


def categories(models: Mapping[str, Mapping[str, Any]]) -> str:
    """Each model's exact share and its largest non-exact category."""
    parts = []
    for model, m in models.items():
        dist = {k: float(v) for k, v in extraction_sections(m)["match_category_distribution"].items()}
        if not dist:
            continue
        text = f"{_prefix(model, len(models) > 1)}{100 * dist.get('exact', 0.0):.0f}% of fields exact"
        others = {k: v for k, v in dist.items() if k != "exact" and v > 0}
        if others:
            worst = max(others, key=lambda k: (others[k], k))
            text += f", most of the rest {worst} ({100 * others[worst]:.0f}%)"
        parts.append(text)
    return _join(parts) + "."


def medians(points: Mapping[str, Sequence[tuple[float, float]]], xname: str, yname: str) -> str:
    parts = []
    for model, values in points.items():
        if values:
            xs, ys = np.asarray(values, dtype=float).T
            parts.append(
                f"{_prefix(model, len(points) > 1)}median {xname} {np.median(xs):.3f}, {yname} {np.median(ys):.3f}"
            )
    return _join(parts) + "."


def correlation(points: Mapping[str, Sequence[tuple[float, float]]], xname: str, yname: str) -> str:
    """Spearman's rank correlation of the two axes per model (None when a side is constant)."""
    from scipy.stats import spearmanr

    parts = []
    for model, values in points.items():
        arr = np.asarray(values, dtype=float)
        if len(arr) < 3 or np.ptp(arr[:, 0]) == 0 or np.ptp(arr[:, 1]) == 0:
            parts.append(f"{_prefix(model, len(points) > 1)}no rank correlation defined (a constant axis)")
            continue
        rho = float(spearmanr(arr[:, 0], arr[:, 1]).statistic)
        strength = "no clear" if abs(rho) < 0.2 else ("a weak" if abs(rho) < 0.5 else "a strong")
        direction = "" if abs(rho) < 0.2 else (" rising" if rho > 0 else " falling")
        parts.append(
            f"{_prefix(model, len(points) > 1)}{strength}{direction} relation of {yname} to {xname} "
            f"(Spearman rho {rho:+.2f}, n {len(arr)})"
        )
    return _join(parts) + "."


def latency(latencies: Mapping[str, Sequence[float]]) -> str:
    parts = []
    for model, values in latencies.items():
        p50, p95 = np.percentile(np.asarray(values, dtype=float), [50, 95])
        parts.append(f"{_prefix(model, len(latencies) > 1)}p50 {p50:.2f} s, p95 {p95:.2f} s")
    return _join(parts) + "."


def throughput(finished: Mapping[str, Sequence[float]]) -> str:
    parts = []
    for model, values in finished.items():
        span = max(values) - min(values)
        rate = f"{(len(values) - 1) / span:.2f} responses/s on average" if span > 0 else "all at once"
        parts.append(f"{_prefix(model, len(finished) > 1)}{len(values)} responses, {rate}")
    return _join(parts) + "."


def error_patterns(models: Mapping[str, Mapping[str, Any]]) -> str:
    parts = []
    for model, m in models.items():
        flat: dict[str, int] = {}
        for group in extraction_sections(m)["error_patterns"].values():
            flat.update(group)
        if any(flat.values()):
            top = max(flat, key=lambda k: (flat[k], k))
            parts.append(f"{_prefix(model, len(models) > 1)}most common {top.replace('_', ' ')} ({flat[top]})")
        else:
            parts.append(f"{_prefix(model, len(models) > 1)}no error")
    return _join(parts) + "."


def heatmap_top(matrix: np.ndarray, rows: Sequence[str], cols: Sequence[str], what: str, fmt: str) -> str:
    """The cell with the largest absolute value."""
    if not np.isfinite(matrix).any():
        return ""
    r, c = (int(i) for i in np.unravel_index(np.nanargmax(np.abs(matrix)), matrix.shape))
    where = f"{rows[r]}" + (f", {cols[c]}" if len(cols) > 1 else "")
    return f"{what}: {where} ({fmt.format(matrix[r, c])})."


def severity(models: Mapping[str, Mapping[str, float]]) -> str:
    parts = []
    for model, counts in models.items():
        total = int(sum(counts.values()))
        parts.append(
            f"{_prefix(model, len(models) > 1)}{int(counts.get('critical', 0))} critical of {total} spurious fields"
        )
    return _join(parts) + "."


def bins(by_bin: Mapping[str, Mapping[str, Sequence[float]]], order: Sequence[str]) -> str:
    parts = []
    for model, values in by_bin.items():
        found = [f"{b} {np.median(values[b]):.2f} (n {len(values[b])})" for b in order if len(values.get(b, []))]
        if found:
            parts.append(f"{_prefix(model, len(by_bin) > 1)}median F1 " + ", ".join(found))
    return _join(parts) + "."


def ranking(entries: Sequence[RankEntry]) -> str:
    if len(entries) < 2:
        return ""
    first, second = entries[0], entries[1]
    gap = float(first["extraction_quality_score"]) - float(second["extraction_quality_score"])
    sure = {True: "significant", False: "not significant", None: "not tested"}[first["significantly_better_than_next"]]
    return f"{first['model']} leads {second['model']} by {gap:.3f} EQS ({sure})."


def largest_gap(models: Mapping[str, Mapping[str, Any]], metrics: Sequence[tuple[str, str]]) -> str:
    """The metric where the models differ most."""
    spreads = []
    for key, name in metrics:
        values = {m: float(v.get(key) or 0.0) for m, v in models.items()}
        hi, lo = max(values, key=lambda m: (values[m], m)), min(values, key=lambda m: (values[m], m))
        spreads.append((values[hi] - values[lo], name, hi, lo, values[hi], values[lo]))
    spread, name, hi, lo, a, b = max(spreads, key=lambda s: (s[0], s[1]))
    return f"Largest difference: {name}, {hi} {a:.3f} vs {lo} {b:.3f}." if spread > 0 else "The models score the same."


def win_rates(wins: Mapping[str, Mapping[str, float]], order: Sequence[str]) -> str:
    pairs = [(wins[a][b], a, b) for a in order for b in order if a != b and wins[a].get(b) is not None]
    if not pairs:
        return ""
    rate, a, b = max(pairs, key=lambda p: (p[0], p[1], p[2]))
    return f"Most one-sided: {a} beats {b} on {100 * rate:.0f}% of shared samples."


def reliability(calibrations: Mapping[str, Mapping[str, Any]]) -> str:
    parts = []
    for model, view in calibrations.items():
        filled = [b for b in view["bins"] if b["count"]]
        over = sum(b["confidence"] > b["accuracy"] for b in filled)
        parts.append(
            f"{_prefix(model, len(calibrations) > 1)}ECE {view['ece']:.3f}, overconfident in {over} of "
            f"{len(filled)} filled bins"
        )
    return _join(parts) + "."
