"""The metric catalog: every fact about a metric, stated once.

CIs and paired tests (:mod:`.resampled`), baselines, SLA gates and grades, metrics.csv and samples.csv,
the terminal block and comparison lines, summary.md, report.html's tables and key-metrics chart, and the
OpenTelemetry run span (the extraction track's headline metrics) all read :data:`CATALOG`. Adding a metric means
its scorer (a per-sample value in the row of :func:`.resampled.sample_row`), one entry here
and a test. Table order is metrics.csv's column order; other orders are explicit ranks.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

Sums = Mapping[str, Any]  # row key -> column sum (a float, or an array over resamples)


def _ratio(numerator: Any, denominator: Any) -> Any:
    return np.where(denominator > 0, numerator / np.where(denominator > 0, denominator, 1), 0.0)


def _prf(tp: Any, predicted: Any, expected: Any) -> tuple[Any, Any, Any]:
    # scoring.prf, vectorized: an empty denominator scores 1.0 only when the other side is empty too
    precision = np.where(predicted > 0, tp / np.where(predicted > 0, predicted, 1), np.where(expected > 0, 0.0, 1.0))
    recall = np.where(expected > 0, tp / np.where(expected > 0, expected, 1), np.where(predicted > 0, 0.0, 1.0))
    total = precision + recall
    return precision, recall, np.where(total > 0, 2 * precision * recall / np.where(total > 0, total, 1), 0.0)


def mean_of(key: str) -> Callable[[Sums], Any]:
    """A macro metric: the mean of one per-sample value."""
    return lambda s: s[key] / s["one"]


def micro_prf(part: int, mode: str) -> Callable[[Sums], Any]:
    """Micro precision (0), recall (1) or F1 (2) from summed field counts."""
    return prf_of(part, f"tp_{mode}", "predicted", "expected")


def prf_of(part: int, tp: str, predicted: str, expected: str) -> Callable[[Sums], Any]:
    """Micro precision (0), recall (1) or F1 (2) from three summed counts named by their row keys."""
    return lambda s: _prf(s[tp], s[predicted], s[expected])[part]


def ratio_of(numerator: str, denominator: str) -> Callable[[Sums], Any]:
    """A micro rate: one summed count over another (0 when nothing was counted)."""
    return lambda s: _ratio(s[numerator], s[denominator])


def _type_accuracy(s: Sums) -> Any:
    # metrics.accuracy_section: no typed field at all scores 1.0 when some output was valid
    return np.where(s["typed"] > 0, _ratio(s["type_correct"], s["typed"]), np.where(s["schema_valid"] > 0, 1.0, 0.0))


@dataclass(frozen=True)
class Metric:
    """One metric of metrics.json and everything its consumers need to know about it."""

    name: str  # key in metrics.json (models.<model>.<name>)
    label: str  # reports: "Field F1 (partial)"
    short: str  # terminal and comparisons: "field F1 (partial)"
    tag: str = ""  # where space is short (comparison deltas, chart bars): "F1 partial"; ``short`` when empty
    percent: bool = False  # shown as 82.3% rather than 0.823
    higher_is_better: bool = True
    # resampling: the row keys it is recomputed from, how, and its own per-sample value
    columns: tuple[str, ...] = ()
    compute: Callable[[Sums], Any] | None = None
    per_sample: str | None = None
    aggregation: str = "micro"
    aliases: tuple[str, ...] = ()
    sla: tuple[float, float, float] | None = None  # gate thresholds: minimum, target, excellence
    gate_label: str | None = None  # its name in SLA checks
    grade_tiers: tuple[float, float, float] | None = None  # grades only (no gate)
    headline: bool = False  # CIs in every summary and comparison
    ci_columns: bool = False  # _ci_low/_ci_high columns in metrics.csv
    glance: bool = False  # a row of the "At a Glance" table
    csv: bool = True  # a column of metrics.csv
    terminal_row: int | None = None  # metrics sharing a row share one terminal line
    strength_rank: int | None = None  # checked for strengths/weaknesses, in this order
    key_chart: int | None = None  # a bar of report.html's key-metrics chart, in this order
    eqs_component: str | None = None  # the EqsWeights term it feeds (as 1 - value when lower is better)
    sample_column: int | None = None  # a column of samples.csv (its per-sample value), in this order
    performance: tuple[str, ...] = ()  # where a performance figure lives (dotted paths)
    why_missed: str = ""  # why a gate on it is usually missed, in plain words
    description: str = ""  # what it reads, where the name alone leaves a choice open (the metrics reference shows it)
    measured_by: str | None = None  # a row key counting the samples it was measured on: absent when none was

    @property
    def resampled(self) -> bool:
        return self.compute is not None

    @property
    def compact(self) -> str:
        return self.tag or self.short

    @property
    def component_label(self) -> str:
        """Its name as an EQS component, which is always higher-is-better: ``1 - hallucination``."""
        return self.compact if self.higher_is_better else f"1 - {self.compact}"

    def component_value(self, entry: Mapping[str, Any]) -> float:
        """Its EQS-component value in a model's metrics entry (0 when absent)."""
        value = float(entry.get(self.name) or 0.0)
        return value if self.higher_is_better else 1.0 - value

    @property
    def tiers(self) -> tuple[float, float, float] | None:
        return self.sla or self.grade_tiers

    def statistic(self, keys: Any) -> Callable[[Any], Any]:
        """The metric as a function of a sums array whose last axis follows ``keys``."""
        index = {key: i for i, key in enumerate(keys)}
        positions = {key: index[key] for key in ("one", *self.columns)}
        compute = self.compute
        assert compute is not None, f"{self.name} is not resampled"
        return lambda sums: compute({key: sums[..., i] for key, i in positions.items()})


def _f1(mode: str, **facts: Any) -> Metric:
    facts.setdefault("aliases", (f"f1_{mode}",))
    facts.setdefault("tag", f"F1 {mode}")
    return Metric(
        f"field_f1_{mode}",
        f"Field F1 ({mode})",
        f"field F1 ({mode})",
        columns=(f"tp_{mode}", "predicted", "expected"),
        compute=micro_prf(2, mode),
        per_sample=f"f1_{mode}",
        headline=True,
        **facts,
    )


_END_TO_END = (
    "end to end: from a sample's first attempt's start to its final answer, timed-out attempts and backoff "
    "included, over successful non-cached requests (`performance.end_to_end_ms`); the SLA gate and "
    "`--extractbench-require` read this figure"
)

CATALOG: tuple[Metric, ...] = (
    Metric(
        "extraction_quality_score",
        "Overall score (EQS)",
        "EQS",
        columns=("eqs",),
        compute=mean_of("eqs"),
        per_sample="eqs",
        aggregation="macro",
        aliases=("eqs",),
        sla=(0.75, 0.85, 0.90),
        gate_label="eqs",
        headline=True,
        key_chart=0,
        sample_column=2,
        ci_columns=True,
        glance=True,
        terminal_row=0,
        why_missed="its extracted fields are often wrong or missing",
    ),
    Metric(
        "schema_validity_rate",
        "Schema validity",
        "schema validity",
        tag="validity",
        key_chart=1,
        sample_column=1,
        eqs_component="validity",
        percent=True,
        columns=("schema_valid",),
        compute=mean_of("schema_valid"),
        per_sample="schema_valid",
        aggregation="mean",
        aliases=("validity", "schema_validity"),
        sla=(0.95, 0.98, 0.99),
        gate_label="schema_validity",
        headline=True,
        ci_columns=True,
        glance=True,
        terminal_row=1,
        strength_rank=2,
        why_missed="some outputs are not valid JSON under the sample's schema",
    ),
    Metric(
        "json_valid_rate",
        "JSON valid",
        "JSON valid",
        percent=True,
        columns=("json_valid",),
        compute=mean_of("json_valid"),
        per_sample="json_valid",
        aggregation="mean",
        aliases=("json_valid",),
        terminal_row=1,
        sample_column=0,
    ),
    _f1(
        "partial",
        aliases=("f1", "field_f1", "f1_partial"),
        sla=(0.70, 0.80, 0.90),
        gate_label="field_f1_partial",
        ci_columns=True,
        glance=True,
        terminal_row=2,
        strength_rank=6,
        why_missed="too few fields match the gold",
        key_chart=2,
        sample_column=5,
        eqs_component="f1_partial",
    ),
    _f1("strict", terminal_row=3, sample_column=4),
    _f1("lenient", terminal_row=4, sample_column=6),
    Metric(
        "field_precision_partial",
        "Precision (partial)",
        "field precision (partial)",
        columns=("tp_partial", "predicted", "expected"),
        compute=micro_prf(0, "partial"),
        per_sample="precision_partial",
        aliases=("precision",),
        grade_tiers=(0.70, 0.80, 0.90),
        strength_rank=0,
        sample_column=7,
    ),
    Metric(
        "field_recall_partial",
        "Recall (partial)",
        "field recall (partial)",
        columns=("tp_partial", "predicted", "expected"),
        compute=micro_prf(1, "partial"),
        per_sample="recall_partial",
        aliases=("recall",),
        grade_tiers=(0.70, 0.80, 0.90),
        strength_rank=1,
        sample_column=8,
    ),
    Metric("field_precision_strict", "Precision (strict)", "field precision (strict)"),
    Metric("field_recall_strict", "Recall (strict)", "field recall (strict)"),
    Metric("field_precision_lenient", "Precision (lenient)", "field precision (lenient)"),
    Metric("field_recall_lenient", "Recall (lenient)", "field recall (lenient)"),
    Metric(
        "anls_star",
        "ANLS*",
        "ANLS*",
        columns=("anls_star", "anls_star_n"),
        compute=ratio_of("anls_star", "anls_star_n"),
        per_sample="anls_star",
        aggregation="macro",
        aliases=("anls",),
        grade_tiers=(0.70, 0.80, 0.90),
        headline=True,
        ci_columns=True,
        glance=True,
        terminal_row=5,
        sample_column=12,
        measured_by="anls_star_n",
        description="the mean over samples of ANLS* (Peer et al. 2024) of the raw output against the raw gold: "
        "normalized Levenshtein similarity of leaves (0 under 0.5), lists paired by the Hungarian "
        "method, missing and invented keys and elements counted; no schema rules apply; 0 for an "
        "invalid output",
    ),
    Metric(
        "exact_match_rate",
        "Exact match",
        "exact match",
        key_chart=3,
        sample_column=3,
        percent=True,
        columns=("exact_match",),
        compute=mean_of("exact_match"),
        per_sample="exact_match",
        aggregation="mean",
        aliases=("exact_match",),
        grade_tiers=(0.50, 0.65, 0.80),
        headline=True,
        ci_columns=True,
        glance=True,
        terminal_row=6,
        strength_rank=5,
    ),
    Metric("exact_match_rate_valid", "Exact match (valid outputs)", "exact match (valid outputs)", percent=True),
    Metric(
        "type_accuracy",
        "Type accuracy",
        "type accuracy",
        tag="type acc.",
        key_chart=4,
        sample_column=9,
        eqs_component="type_accuracy",
        percent=True,
        columns=("type_correct", "typed", "schema_valid"),
        compute=_type_accuracy,
        per_sample="type_accuracy",
        grade_tiers=(0.90, 0.95, 0.99),
        terminal_row=8,
        strength_rank=4,
    ),
    Metric(
        "hallucination_rate",
        "Hallucination rate",
        "hallucination rate",
        tag="hallucination",
        key_chart=5,
        sample_column=10,
        eqs_component="no_hallucination",
        percent=True,
        higher_is_better=False,
        columns=("obs_spurious", "obs_predicted"),
        compute=ratio_of("obs_spurious", "obs_predicted"),
        per_sample="hallucination_rate",
        aliases=("hallucination",),
        sla=(0.10, 0.05, 0.02),
        gate_label="hallucination_rate",
        headline=True,
        ci_columns=True,
        glance=True,
        terminal_row=7,
        strength_rank=3,
        why_missed="it fills in values the text does not contain",
    ),
    Metric(
        "field_omission_rate",
        "Omission rate",
        "omission rate",
        sample_column=11,
        percent=True,
        higher_is_better=False,
        columns=("obs_missed", "obs_expected"),
        compute=ratio_of("obs_missed", "obs_expected"),
        per_sample="omission_rate",
        aliases=("omission", "omission_rate"),
        grade_tiers=(0.20, 0.10, 0.05),
        terminal_row=7,
    ),
    Metric(
        "perfect_sample_rate",
        "Perfect samples (EQS 1)",
        "perfect samples",
        percent=True,
        columns=("perfect",),
        compute=mean_of("perfect"),
        per_sample="perfect",
        aggregation="mean",
        aliases=("perfect_samples",),
    ),
    Metric(
        "zero_score_rate",
        "Zero-score samples (EQS 0)",
        "zero-score samples",
        percent=True,
        higher_is_better=False,
        columns=("zero_score",),
        compute=mean_of("zero_score"),
        per_sample="zero_score",
        aggregation="mean",
        aliases=("zero_scores",),
    ),
    # whole-output scores: only in runs that ask for them (--extractbench-semantic, --extractbench-judge)
    Metric(
        "semantic_similarity",
        "Whole-output similarity",
        "whole-output similarity",
        columns=("semantic_similarity_sum", "semantic_similarity_n"),
        compute=ratio_of("semantic_similarity_sum", "semantic_similarity_n"),
        per_sample="semantic_similarity_sum",
        aggregation="mean",
        measured_by="semantic_similarity_n",
    ),
    Metric(
        "judge_score",
        "LLM judge (grade / 7)",
        "LLM judge",
        columns=("judge_score_sum", "judge_score_n"),
        compute=ratio_of("judge_score_sum", "judge_score_n"),
        per_sample="judge_score_sum",
        aggregation="mean",
        measured_by="judge_score_n",
    ),
    # over repeated runs of each sample (--extractbench-repeats N): k = N; CIs from the repeats section
    Metric(
        "pass_at_k",
        "pass@k (some of k runs pass)",
        "pass@k",
        percent=True,
        aggregation="macro",
        aliases=("pass@k",),
        ci_columns=True,
        why_missed="some samples fail in every one of their runs",
    ),
    Metric(
        "pass_hat_k",
        "pass^k (all k runs pass)",
        "pass^k",
        percent=True,
        aggregation="macro",
        aliases=("pass^k", "pass_all_k"),
        ci_columns=True,
        why_missed="some samples pass in one run and fail in another: the model is flaky on them",
    ),
    # performance figures: measured per request, not per sample; metrics.csv gets them from the performance section
    Metric(
        "latency_p50_ms",
        "P50 latency",
        "p50 latency",
        higher_is_better=False,
        csv=False,
        performance=("end_to_end_ms.p50", "latency_ms.p50"),
        description=_END_TO_END,
    ),
    Metric(
        "latency_p95_ms",
        "P95 latency",
        "p95 latency",
        higher_is_better=False,
        csv=False,
        sla=(5000, 2000, 1000),
        gate_label="p95_latency_ms",
        glance=True,
        strength_rank=7,
        performance=("end_to_end_ms.p95", "latency_ms.p95", "latency_p95_ms"),
        why_missed="answers take too long on this hardware",
        description=_END_TO_END,
    ),
    Metric(
        "latency_p99_ms",
        "P99 latency",
        "p99 latency",
        higher_is_better=False,
        csv=False,
        performance=("end_to_end_ms.p99", "latency_ms.p99"),
        description=_END_TO_END,
    ),
    Metric(
        "attempt_latency_p95_ms",
        "P95 latency of one attempt",
        "p95 attempt latency",
        higher_is_better=False,
        csv=False,
        performance=("attempt_latency_ms.p95",),
        description="every attempt's own latency, timed out and failed ones included "
        "(`performance.attempt_latency_ms`)",
    ),
    Metric(
        "time_to_first_token_p95_ms",
        "P95 time to first token",
        "p95 time to first token",
        higher_is_better=False,
        csv=False,
        performance=("latency_breakdown.time_to_first_token_ms.p95",),
    ),
    Metric(
        "server_prompt_p95_ms",
        "P95 prompt processing (server)",
        "p95 prompt processing",
        higher_is_better=False,
        csv=False,
        performance=("latency_breakdown.server_prompt_ms.p95",),
    ),
    Metric(
        "server_generation_p95_ms",
        "P95 generation (server)",
        "p95 generation",
        higher_is_better=False,
        csv=False,
        performance=("latency_breakdown.server_generation_ms.p95",),
    ),
    Metric(
        "network_queue_p95_ms",
        "P95 network and server queue",
        "p95 network and queue",
        higher_is_better=False,
        csv=False,
        performance=("latency_breakdown.network_and_queue_ms.p95",),
    ),
    Metric(
        "client_wait_p95_ms",
        "P95 wait for a request slot",
        "p95 slot wait",
        higher_is_better=False,
        csv=False,
        performance=("latency_breakdown.client_wait_ms.p95",),
    ),
    Metric("throughput_rps", "Throughput", "throughput", csv=False, performance=("throughput.requests_per_s",)),
    Metric(
        "success_rate",
        "Success rate",
        "success rate",
        percent=True,
        csv=False,
        sla=(0.99, 0.995, 0.999),
        gate_label="success_rate",
        glance=True,
        performance=("reliability.success_rate", "success_rate"),
        why_missed="some requests failed (timeouts, errors or truncated output)",
        description="samples whose final attempt produced content (`performance.reliability.success_rate`)",
    ),
    Metric(
        "attempt_timeout_rate",
        "Attempts timed out",
        "attempts timed out",
        percent=True,
        higher_is_better=False,
        csv=False,
        performance=("reliability.attempt_timeout_rate",),
        description="attempts that timed out over every attempt sent, retried samples that then succeeded included "
        "(`performance.reliability.attempt_timeout_rate`)",
    ),
)


# Views of the catalog. They read CATALOG when called, so a test can patch in one more metric.


def metrics() -> tuple[Metric, ...]:
    return CATALOG


def get(name: str) -> Metric | None:
    return next((m for m in CATALOG if m.name == name), None)


def resampled() -> dict[str, Metric]:
    """Metrics with a bootstrap CI and paired tests, by name."""
    return {m.name: m for m in CATALOG if m.resampled}


def names(flag: str) -> tuple[str, ...]:
    """Names of the metrics whose boolean fact ``flag`` is set (``headline``, ``glance``, ``csv``, ...)."""
    return tuple(m.name for m in CATALOG if getattr(m, flag))


def aliases() -> dict[str, str]:
    return {alias: m.name for m in CATALOG for alias in m.aliases}


def gated() -> tuple[Metric, ...]:
    """Metrics with SLA thresholds, in the order the gate checks them."""
    return tuple(m for m in CATALOG if m.sla)


def ranked(attribute: str) -> tuple[Metric, ...]:
    """Metrics with a rank ``attribute`` (``terminal_row``, ``strength_rank``), by rank then table order."""
    chosen = [m for m in CATALOG if getattr(m, attribute) is not None]
    return tuple(sorted(chosen, key=lambda m: getattr(m, attribute)))


def eqs_components() -> tuple[Metric, ...]:
    """The metrics EQS is made of, in the order of its weights (:data:`~..scoring.result.EQS_COMPONENTS`)."""
    from ..scoring.result import EQS_COMPONENTS

    by_term = {m.eqs_component: m for m in CATALOG if m.eqs_component}
    return tuple(by_term[term] for term in EQS_COMPONENTS if term in by_term)


def is_percent(name: str) -> bool:
    metric = get(name)
    return bool(metric and metric.percent)


def lower_is_better(name: str) -> bool:
    metric = get(name)
    return bool(metric and not metric.higher_is_better)
