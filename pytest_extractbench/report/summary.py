"""The executive summary, as data: headline values with grades, strengths, weaknesses,
the recommendation and the next steps. Pure functions over a model's ``metrics.json`` entry and the
compact per-sample rows (:mod:`.rows`); the HTML report and summary.md both render it.

Grades: A+ at or beyond the SLA tier "excellence", A at "target", B at "minimum",
C within one tier step below "minimum", F beyond. Metrics without an SLA use the grade-only
tiers of the metric catalog (:mod:`..analysis.catalog`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..analysis import catalog
from ..core import rundoc
from ..core.modelsections import Performance, extraction_sections, model_sections
from ..gating.sla import tier_thresholds
from .rows import recorded_scoring_options


def _performance_keys() -> tuple[str, ...]:
    return tuple(m.name for m in catalog.metrics() if m.performance)


def tiers(metric: str) -> tuple[float, float, float] | None:
    """The metric's grade scale: its SLA tiers, or grade-only tiers chosen in the catalog."""
    entry = catalog.get(metric)
    return entry.tiers if entry else None


def grade(metric: str, value: float | None) -> str:
    """A+ / A / B / C / F against the metric's tiers; "-" when unmeasured or ungraded."""
    levels = tiers(metric)
    if value is None or levels is None:
        return "-"
    low, mid, high = levels
    sign = -1.0 if catalog.lower_is_better(metric) else 1.0
    v, low, mid, high = sign * value, sign * low, sign * mid, sign * high
    if v >= high:
        return "A+"
    if v >= mid:
        return "A"
    if v >= low:
        return "B"
    return "C" if v >= low - (mid - low) else "F"


def fmt(metric: str, value: float | None) -> str:
    """Display form: rates as percentages, latencies in ms or s, scores with three decimals."""
    if value is None:
        return "not measured"
    if catalog.is_percent(metric):
        return f"{100 * value:.1f}%"
    if metric.endswith("_ms"):
        return f"{value:.0f} ms" if value < 1000 else f"{value / 1000:.2f} s"
    if metric.endswith("_rps"):
        return f"{value:.2f}/s"
    return f"{value:.3f}"


def _lookup(data: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        if not isinstance(data, Mapping) or part not in data:
            return None
        data = data[part]
    return data


def performance(metrics: Mapping[str, Any]) -> dict[str, float | None]:
    """Latency percentiles, throughput and success rate where the run measured them, else None."""
    out: dict[str, float | None] = {}
    perf = metrics.get("performance")  # a track's model section has none
    perf = perf if isinstance(perf, Mapping) else {}
    for entry in catalog.metrics():
        key = entry.name
        if not entry.performance:
            continue
        value = None
        for alias in entry.performance:
            for source in (perf, metrics):
                found = _lookup(source, alias)
                if isinstance(found, (int, float)) and not isinstance(found, bool):
                    value = float(found)
                    break
            if value is not None:
                break
        out[key] = value
    return out


def value_of(metrics: Mapping[str, Any], metric: str) -> float | None:
    if metric in _performance_keys():
        return performance(metrics)[metric]
    found = metrics.get(metric)
    return float(found) if isinstance(found, (int, float)) and not isinstance(found, bool) else None


@dataclass
class Headline:
    metric: str
    label: str
    value: float | None
    text: str
    grade: str
    ci: str = ""


@dataclass
class Summary:
    """What a reviewer reads first about one model."""

    model: str
    eqs: float
    eqs_text: str
    band: str
    recommendation: str
    verdict_band: str  # the band as shown beside the recommendation (consistent_band)
    headlines: list[Headline]
    strengths: list[str] = field(default_factory=list)
    weaknesses: list[str] = field(default_factory=list)
    next_steps: list[str] = field(default_factory=list)


def ci_text(metrics: Mapping[str, Any], metric: str) -> str:
    interval = model_sections(metrics).get("confidence_intervals", {}).get(metric)  # a metric may have none
    if interval is None or interval["low"] is None or interval["high"] is None:
        return ""
    level = 100 * float(interval["confidence"])
    return f"[{level:g}% CI: {fmt(metric, interval['low'])}, {fmt(metric, interval['high'])}]"


def headlines(metrics: Mapping[str, Any], keys: Sequence[str] | None = None) -> list[Headline]:
    out = []
    for key in catalog.names("glance") if keys is None else keys:
        value = value_of(metrics, key)
        entry = catalog.get(key)
        out.append(
            Headline(
                key, entry.label if entry else key, value, fmt(key, value), grade(key, value), ci_text(metrics, key)
            )
        )
    return out


def _bins(rows: Iterable[Mapping[str, Any]], metrics: Mapping[str, Any]) -> dict[str, tuple[int, float]]:
    """Complexity bin -> (samples, mean F1 partial): metrics_by_complexity_bin when present, else the rows."""
    given = extraction_sections(metrics)["metrics_by_complexity_bin"]
    out: dict[str, tuple[int, float]] = {}
    for name, entry in given.items():
        # an empty bin has no F1; a document written before bins counted samples has "count"
        if isinstance(entry, Mapping) and isinstance(entry.get("field_f1_partial"), (int, float)):
            count = entry.get("num_samples", entry.get("count", 0))
            out[str(name)] = (int(count or 0), float(entry["field_f1_partial"]))
    if out:
        return out
    grouped: dict[str, list[float]] = {}
    for row in rows:
        if row.get("complexity_bin"):
            grouped.setdefault(str(row["complexity_bin"]), []).append(float(row["f1_partial"]))
    return {name: (len(values), float(np.mean(values))) for name, values in grouped.items()}


def _weak_depth(metrics: Mapping[str, Any]) -> tuple[int, float] | None:
    """The shallowest nesting depth from which F1 stays 0.1 below the overall F1 (support >= 5)."""
    overall = metrics.get("field_f1_partial")  # a catalog metric, read by name
    depths = extraction_sections(metrics)["field_metrics_by_depth"]
    if not isinstance(overall, (int, float)):
        return None
    weak = [
        (int(d), e["f1_partial"])
        for d, e in depths.items()
        if str(d).isdigit() and e.get("support", 0) >= 5 and e["f1_partial"] < overall - 0.1
    ]
    if not weak or min(d for d, _ in weak) == 0:
        return None
    depth = min(d for d, _ in weak)
    deeper = [e for d, e in depths.items() if str(d).isdigit() and int(d) >= depth]
    support = sum(e.get("support", 0) for e in deeper)
    f1 = sum(e["f1_partial"] * e.get("support", 0) for e in deeper) / support if support else 0.0
    return depth, f1


# how much review a band's wording promises a model needs, and how much the recommendation allows (more: less review)
_BAND_TRUST = {"Excellent": 3, "Good": 1, "Moderate": 1, "Poor": 0}
_RECOMMENDATION_TRUST = (("Deploy without", 3), ("Deploy with spot-check", 2), ("Deploy with mandatory", 1), ("Not", 0))


def consistent_band(band: str, recommendation: str) -> str:
    """The EQS band as the summary shows it: the band reads EQS alone, the recommendation also the hallucination
    rate and the run's gates, so a band that promises more than the recommendation allows ("Good - suitable with
    human review" beside "Not recommended") keeps its name and gives the recommendation's word instead."""
    name = band.split(" - ")[0]
    allowed = next((trust for prefix, trust in _RECOMMENDATION_TRUST if recommendation.startswith(prefix)), None)
    if name not in _BAND_TRUST or allowed is None or allowed >= _BAND_TRUST[name]:
        return band
    return f"{name} EQS - but {recommendation[0].lower()}{recommendation[1:]}"


def summarize(model: str, metrics: Mapping[str, Any], rows: Sequence[Mapping[str, Any]] = ()) -> Summary:
    """The executive summary of one model."""
    eqs = float(metrics.get("extraction_quality_score", 0.0))
    typed = extraction_sections(metrics)
    lines = headlines(metrics)
    summary = Summary(
        model=model,
        eqs=eqs,
        eqs_text=f"{eqs:.3f} {ci_text(metrics, 'extraction_quality_score')}".strip(),
        band=str(typed["eqs_band"]),
        recommendation=str(typed["recommendation"]),
        verdict_band=consistent_band(str(typed["eqs_band"]), str(typed["recommendation"])),
        headlines=lines,
    )
    if not metrics.get("num_samples"):
        summary.weaknesses.append("No sample was scored.")
        summary.next_steps.append("Check the dataset and the predictions or server: nothing was scored.")
        return summary
    for entry in catalog.ranked("strength_rank"):
        key = entry.name
        value = value_of(metrics, key)
        g = grade(key, value)
        name = entry.label[0].lower() + entry.label[1:]
        if g in ("A+", "A"):
            adjective = "Low" if not entry.higher_is_better else "High"
            summary.strengths.append(f"{adjective} {name} ({fmt(key, value)})")
        elif g in ("C", "F"):
            adjective = "High" if not entry.higher_is_better else "Low"
            summary.weaknesses.append(f"{adjective} {name} ({fmt(key, value)})")
    depth = _weak_depth(metrics)
    if depth:
        summary.weaknesses.append(f"Struggles with deeply nested fields (F1: {depth[1]:.2f} at depth {depth[0]}+)")
        if eqs >= 0.70 and summary.recommendation.startswith("Deploy"):
            summary.recommendation += f" for schemas with nesting depth < {depth[0]}"
    bins = _bins(rows, metrics)
    if (
        "complex" in bins
        and bins["complex"][0]
        and bins["complex"][1] < float(metrics.get("field_f1_partial", 0)) - 0.1
    ):
        summary.weaknesses.append(
            f"Weaker on complex schemas (F1: {bins['complex'][1]:.2f} over {bins['complex'][0]} samples)"
        )
    omissions = typed["omission_analysis"]["by_field_name"]
    worst = sorted(
        (
            (e["omission_rate"], name)
            for name, e in omissions.items()
            if e["total_occurrences"] >= 3 and e["omission_rate"] >= 0.3
        ),
        reverse=True,
    )
    if worst:
        rate, name = worst[0]
        summary.weaknesses.append(f"Often omits {name} ({100 * rate:.0f}% of occurrences)")
    summary.next_steps = next_steps(metrics, bins, worst)
    return summary


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def next_steps(
    metrics: Mapping[str, Any], bins: Mapping[str, tuple[int, float]], omitted: Sequence[tuple[float, str]]
) -> list[str]:
    """Concrete actions, most important first."""
    steps: list[str] = []
    typed = extraction_sections(metrics)
    validity = float(metrics.get("schema_validity_rate", 1.0))
    if validity < 0.95:
        invalid = typed["invalid_samples"]
        steps.append(
            f"Schema validity is {validity:.1%} ({len(invalid)} invalid outputs): use constrained decoding "
            "(json_schema structured output) and check for truncated outputs (max tokens)."
        )
    if float(metrics.get("hallucination_rate", 0.0)) >= 0.05:
        severity = typed["hallucination_analysis"]["severity"]
        steps.append(
            f"Hallucinations ({metrics['hallucination_rate']:.1%}; critical {severity.get('critical', 0)}): "
            "instruct the model to omit fields that the text does not state, and review the worst samples."
        )
    copied = typed["copied_examples"]
    if copied["total"]:
        fields = ", ".join(f"{name} {count}" for name, count in list(copied["by_field"].items())[:3])
        steps.append(
            f"{_count(copied['total'], 'value')} copied from the schema's examples in {_count(copied['samples'], 'sample')} "
            f"({fields}): the model answers with the example when the text does not say; drop example values from "
            "field descriptions or ask for null."
        )
    if omitted:
        names = ", ".join(name for _, name in omitted[:3])
        steps.append(f"Most omitted fields: {names}: describe them in the prompt or the schema.")
    types = typed["error_patterns"]["type_errors"]
    if (
        types.get("wrong_type", 0) + types.get("type_coercion_failed", 0) > 0
        and float(metrics.get("type_accuracy", 1.0)) < 0.95
    ):
        steps.append(
            f"Type errors ({types.get('wrong_type', 0)} wrong types, {types.get('type_coercion_failed', 0)} "
            'placeholders such as "N/A"): ask for JSON numbers/booleans and null for unknown values.'
        )
    top = typed["top_field_errors"]
    if top:
        first = top[0]
        steps.append(
            f"Most common field error: {first['field']} ({first['error'].replace('_', ' ')}, {first['count']}x)."
        )
    if "complex" in bins and "simple" in bins and bins["simple"][1] - bins["complex"][1] > 0.1:
        steps.append("Accuracy drops on complex schemas: split large schemas or add few-shot examples for them.")
    p95 = performance(metrics)["latency_p95_ms"]
    if p95 is not None and p95 > tier_thresholds()["minimum"]["latency_p95_ms"]:
        steps.append(
            f"P95 latency {fmt('latency_p95_ms', p95)} exceeds the 5 s minimum SLA: raise concurrency or use a smaller model."
        )
    if not steps:
        steps.append(
            "No weak spot stands out: gate future changes with a saved baseline (--extractbench-save / --extractbench-compare)."
        )
    return steps


def exactness_text(document: rundoc.MetricsDocument) -> str:
    """Which rule made a field "exact" in this run (its recorded scoring options), in words."""
    return recorded_scoring_options(document).exactness_rule  # another version's options: the default's rule


WEAKEST_FIELDS = 15


def weakest_fields(metrics: Mapping[str, Any], limit: int = WEAKEST_FIELDS) -> list[tuple[str, Mapping[str, Any]]]:
    """The fields an extractor struggles with: those scoring under 1 on average, the most score lost first
    (occurrences x (1 - mean score): a field missed in 30 samples before one missed once), then the lowest mean
    score, then name; at most ``limit``."""
    table = extraction_sections(metrics)["field_scores_by_name"]
    weak = [
        (str(name), entry)
        for name, entry in table.items()
        if isinstance(entry, Mapping) and isinstance(entry.get("mean_score"), (int, float)) and entry["mean_score"] < 1
    ]
    weak.sort(
        key=lambda item: (
            -(item[1].get("occurrences") or 0) * (1 - item[1]["mean_score"]),
            item[1]["mean_score"],
            item[0],
        )
    )
    # the field's ANLS* beside its own scores, when the run measured it
    anls = extraction_sections(metrics).get("anls_star_by_field", {})
    return [
        (name, {**entry, "anls_star": found.get("anls_star") if isinstance(found := anls.get(name), Mapping) else None})
        for name, entry in weak[:limit]
    ]


MAX_RETRIED_LISTED = 10  # sample ids named per attempt count


def retried_text(perf: Performance) -> str:
    """``4 samples needed 2 attempts: a, b, c, d``, one clause per attempt count, with what the failed attempts
    were and the end-to-end p95 beside the answering attempt's; empty when every sample took one attempt."""
    retried = perf["retried_samples"]
    if not retried:
        return ""
    by_count: dict[int, list[str]] = {}
    for entry in retried:
        by_count.setdefault(int(entry["attempts"]), []).append(str(entry["sample_id"]))
    clauses = []
    for count, ids in sorted(by_count.items()):
        more = len(ids) - MAX_RETRIED_LISTED
        shown = ", ".join(ids[:MAX_RETRIED_LISTED]) + (f" and {more} more" if more > 0 else "")
        clauses.append(f"{len(ids)} sample{'s' if len(ids) != 1 else ''} needed {count} attempts: {shown}")
    failed = {k: v for k, v in perf["reliability"]["attempt_error_counts"].items() if v}
    if failed:
        clauses.append("failed attempts: " + ", ".join(f"{k} {v}" for k, v in sorted(failed.items())))
    end_to_end = perf.get("end_to_end_ms")  # not in documents written before it was measured
    end, last = None if end_to_end is None else end_to_end["p95"], perf["latency_ms"]["p95"]
    if end is not None and last is not None:
        clauses.append(f"p95 end to end {end:.0f} ms, answering attempt {last:.0f} ms")
    return "; ".join(clauses)
