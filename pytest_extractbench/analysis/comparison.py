"""Several models in one run: ranking, paired significance, best-by-metric, Pareto, win rates, gap rule.

A run-level metrics section: :func:`comparison_section` returns ``{"comparison": ...}``
for metrics.json when the run scored two or more models. Models are compared
on the sample ids both scored (paired), pairs in model-name order (``a_vs_b``
holds ``a - b``).
"""

from __future__ import annotations

import zlib
from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Any

import numpy as np

from ..dataset.records import SampleRecord
from ..scoring import ScoringOptions, StatsOptions
from . import catalog, stats
from .resampled import MetricDelta, pair_rows, paired_deltas, sample_row

EQS = "extraction_quality_score"
LATENCY = "latency_p95_ms"
COST = "estimated_cost_usd"
# an EQS gap under 5 points (or under the gap threshold, when that is smaller) is too small to act on: minimal
MINIMAL_GAP = 0.05


def _rows(records: Sequence[SampleRecord]) -> dict[str, dict[str, dict[str, float]]]:
    out: dict[str, dict[str, dict[str, float]]] = {}
    for record in records:
        out.setdefault(record.model, {})[record.sample_id] = sample_row(record.score)
    return out


def pair_key(a: str, b: str) -> str:
    return f"{a}_vs_{b}"


def _rng(options: StatsOptions, a: str, b: str) -> np.random.Generator:
    # One stream per pair: a pair's numbers do not depend on which other models ran. surrogatepass: a model
    # name is untrusted text and may hold a lone surrogate, which strict UTF-8 refuses; valid names encode as before.
    return np.random.default_rng([options.seed, zlib.crc32(f"{a}\0{b}".encode("utf-8", "surrogatepass"))])


def comparison_section(
    by_model: dict[str, dict[str, Any]], records: Sequence[SampleRecord], options: ScoringOptions
) -> dict[str, Any]:
    """``{"comparison": ...}`` for two or more models, else nothing."""
    if len(by_model) < 2:
        return {}
    settings = options.statistics
    rows = _rows(records)
    models = list(by_model)
    ranking = sorted(models, key=lambda m: (-by_model[m][EQS], m))

    pairwise: dict[str, Any] = {}
    significance: dict[str, Any] = {}
    eqs_delta: dict[str, float] = {}
    deltas: dict[tuple[str, str], MetricDelta] = {}
    wins: dict[str, dict[str, float]] = {m: {} for m in models}
    for a, b in combinations(models, 2):
        shared, rows_a, rows_b = pair_rows(rows.get(a, {}), rows.get(b, {}))
        key = pair_key(a, b)
        entry: dict[str, Any] = {
            "a": a,
            "b": b,
            "n_shared": len(shared),
            "only_in_a": len(rows.get(a, {})) - len(shared),
            "only_in_b": len(rows.get(b, {})) - len(shared),
        }
        pairwise[key] = entry
        if not shared:
            entry["note"] = "no sample scored by both models"
            continue
        found = paired_deltas(rows_a, rows_b, settings, catalog.names("headline"), rng=_rng(settings, a, b))
        entry["metrics"] = {name: d.as_dict() for name, d in found.items()}
        eqs = found[EQS]
        deltas[(a, b)] = eqs
        eqs_delta[key] = eqs.delta
        x = np.array([r["eqs"] for r in rows_a])
        y = np.array([r["eqs"] for r in rows_b])
        test = stats.TestResult(eqs.tests[settings.test]["statistic"], eqs.p_value, eqs.tests[settings.test]["note"])
        significance[key] = {
            "metric": EQS,
            **stats.significance_report(
                x, y, difference=eqs.ci, test=test, alpha=settings.alpha, test_name=f"paired {settings.test}"
            ),
        }
        # the flat fields, beside the full report
        significance[key]["effect_size_interpretation"] = significance[key]["effect_size"]["interpretation"]
        wins[a][b] = float(np.mean(x > y))
        wins[b][a] = float(np.mean(y > x))

    return {
        "comparison": {
            "models": models,
            "metric": EQS,
            "test": settings.test,
            "alpha": settings.alpha,
            "confidence": settings.confidence,
            "eqs_ranking": _ranking(ranking, by_model, deltas),
            "eqs_delta": eqs_delta,
            "statistical_significance": significance,
            "pairwise": pairwise,
            "best_by_metric": best_by_metric(ranking, by_model, records),
            "pareto_frontier": {
                "accuracy_vs_latency": pareto(ranking, by_model, _latencies(by_model, records), LATENCY),
                "accuracy_vs_cost": pareto(ranking, by_model, _costs(by_model), COST),
            },
            "win_rate_matrix": wins,
            "win_rate_metric": EQS,
            "gap_rule": gap_rule(ranking, by_model, deltas, settings),
        }
    }


def _ranking(
    ranking: Sequence[str], by_model: Mapping[str, Mapping[str, Any]], deltas: Mapping[tuple[str, str], MetricDelta]
) -> list[dict[str, Any]]:
    out = []
    for rank, model in enumerate(ranking, start=1):
        ci = by_model[model].get("confidence_intervals", {}).get(EQS, {})
        entry: dict[str, Any] = {
            "rank": rank,
            "model": model,
            EQS: by_model[model][EQS],
            "ci_low": ci.get("low"),
            "ci_high": ci.get("high"),
            "significantly_better_than_next": None,
        }
        if rank < len(ranking):
            nxt = ranking[rank]
            delta = deltas.get((model, nxt)) or deltas.get((nxt, model))
            entry["significantly_better_than_next"] = bool(delta.significant) if delta else None
        out.append(entry)
    return out


def _latencies(by_model: Mapping[str, Mapping[str, Any]], records: Sequence[SampleRecord]) -> dict[str, float | None]:
    """p95 latency per model: the model's own metric when measured, else from per-sample response latencies."""
    per_sample: dict[str, list[float]] = {}
    for record in records:
        latency = record.response.get("latency_s")
        if latency is not None:
            per_sample.setdefault(record.model, []).append(float(latency))
    out: dict[str, float | None] = {}
    for model, metrics in by_model.items():
        if metrics.get(LATENCY) is not None:
            out[model] = float(metrics[LATENCY])
        elif per_sample.get(model):
            out[model] = float(np.percentile(per_sample[model], 95) * 1000)
        else:
            out[model] = None
    return out


def _costs(by_model: Mapping[str, Mapping[str, Any]]) -> dict[str, float | None]:
    return {model: (None if m.get(COST) is None else float(m[COST])) for model, m in by_model.items()}


def pareto(
    ranking: Sequence[str], by_model: Mapping[str, Mapping[str, Any]], cost: Mapping[str, float | None], cost_key: str
) -> dict[str, Any]:
    """Models no other model beats on both EQS (higher) and ``cost`` (lower), or why there is no frontier."""
    missing = [m for m in ranking if cost.get(m) is None]
    if missing:
        reason = f"{cost_key} was not measured for {', '.join(missing)}" + (
            " (offline predictions carry no timings)" if cost_key == LATENCY else " (needs token usage and prices)"
        )
        return {"available": False, "reason": reason, "frontier": []}
    points = {m: (float(by_model[m][EQS]), float(cost[m])) for m in ranking}  # type: ignore[arg-type]  # none missing (above)

    def dominated(m: str) -> bool:
        acc, c = points[m]
        return any(
            o != m and points[o][0] >= acc and points[o][1] <= c and (points[o][0] > acc or points[o][1] < c)
            for o in points
        )

    frontier = sorted((m for m in ranking if not dominated(m)), key=lambda m: (points[m][1], -points[m][0], m))
    return {
        "available": True,
        "accuracy_metric": EQS,
        "cost_metric": cost_key,
        "frontier": frontier,
        "points": {m: {EQS: acc, cost_key: c} for m, (acc, c) in points.items()},
    }


def _best(ranking: Sequence[str], value: Mapping[str, float | None], *, highest: bool) -> str | None:
    # ranking order breaks ties: the better-EQS model wins a tie
    candidates = [m for m in ranking if value.get(m) is not None]
    if not candidates:
        return None
    sign = -1 if highest else 1
    return min(candidates, key=lambda m: (sign * value[m], ranking.index(m)))  # type: ignore[operator]  # candidates have values


def best_by_metric(
    ranking: Sequence[str], by_model: Mapping[str, Mapping[str, Any]], records: Sequence[SampleRecord]
) -> dict[str, str | None]:
    """The best model by each headline measure (EQS, F1, exact match, validity, hallucination, p95
    latency, EQS per dollar); None where the run did not measure it."""

    def metric(key: str) -> dict[str, float | None]:
        return {m: by_model[m].get(key) for m in ranking}

    costs = _costs(by_model)
    per_dollar = {m: (by_model[m][EQS] / c if c else None) for m, c in costs.items()}
    return {
        "highest_eqs": _best(ranking, metric(EQS), highest=True),
        "highest_f1_partial": _best(ranking, metric("field_f1_partial"), highest=True),
        "highest_exact_match": _best(ranking, metric("exact_match_rate"), highest=True),
        "highest_schema_validity": _best(ranking, metric("schema_validity_rate"), highest=True),
        "lowest_hallucination": _best(ranking, metric("hallucination_rate"), highest=False),
        "fastest_p95": _best(ranking, _latencies(by_model, records), highest=False),
        "best_cost_performance": _best(ranking, per_dollar, highest=True),
    }


def gap_rule(
    ranking: Sequence[str],
    by_model: Mapping[str, Mapping[str, Any]],
    deltas: Mapping[tuple[str, str], MetricDelta],
    settings: StatsOptions,
) -> dict[str, Any]:
    """Flag models that trail the reference ("large") model by more than the threshold in EQS.

    The reference is ``settings.reference_model`` when named, else the model with the
    highest EQS. The gap is absolute (EQS points:
    ``reference_eqs - model_eqs > 0.15`` by default); bands: minimal below 0.05,
    moderate up to the threshold, above it fine-tuning is recommended.
    """
    reference = settings.reference_model or ranking[0]
    out: dict[str, Any] = {
        "metric": EQS,
        "threshold": settings.gap_threshold,
        "reference": reference,
        "reference_from": "--extractbench-reference-model" if settings.reference_model else "highest EQS",
        "models": {},
        "flagged": [],
    }
    if reference not in by_model:
        out["error"] = f"reference model {reference!r} is not among this run's models ({', '.join(ranking)})"
        return out
    ref_eqs = by_model[reference][EQS]
    for model in ranking:
        if model == reference:
            continue
        gap = ref_eqs - by_model[model][EQS]
        flagged = gap > settings.gap_threshold
        if flagged:
            band = "significant difference: fine-tuning recommended"
        elif gap >= min(MINIMAL_GAP, settings.gap_threshold):
            band = "moderate difference: fine-tuning optional"
        elif gap < 0:
            band = "ahead of the reference"
        else:
            band = "minimal practical difference"
        delta = deltas.get((reference, model)) or deltas.get((model, reference))
        out["models"][model] = {
            "gap": gap,
            "relative_gap": gap / ref_eqs if ref_eqs else None,
            "band": band,
            "needs_fine_tuning": flagged,
            "p_value": delta.p_value if delta else None,
            "significant": bool(delta.significant) if delta else None,
        }
        if flagged:
            out["flagged"].append(model)
    return out
