"""Plain-text output: a failing sample's explanation and the end-of-session summary."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..analysis import catalog, track_metrics
from ..analysis.catalog import Metric
from ..analysis.stats import format_p
from ..core import textsafe
from ..core.modelsections import GroupSummary, Performance, extraction_sections, model_sections
from ..core.sections import IntervalDict
from ..core.textsafe import json_line
from ..core.wording import counted, plain
from ..gating.sla import GateCheck
from ..scoring.compare import similarity_paired_elements
from ..scoring.result import EXACT
from . import summary
from .run_sections import MAX_GROUPS

if TYPE_CHECKING:
    from ..dataset.records import SampleRecord, TrackRecord
    from ..dataset.samples import DatasetProblem
    from ..gating.regression import RunComparison

MAX_FAILING_FIELDS = 25
VALUE_WIDTH = 32
PROBLEM_WIDTH = 1000  # one input problem: file, line, sample id, field and a message that may quote the row


def clip(value: Any, width: int = VALUE_WIDTH) -> str:
    """A one-line JSON rendering of ``value``, cut to ``width`` characters."""
    return json_line(value, width)


def failure_headline(record: SampleRecord) -> str:
    """Why a sample item failed, in one line: which sample, which model, the reason."""
    # sample id, model, server messages, parse errors and schema errors quote untrusted text: each part clipped
    return (
        f"sample '{safe(record.sample_id)}' (model '{safe(record.model)}'): {safe(record.failure, textsafe.LINE_LIMIT)}"
    )


def failure_text(record: SampleRecord) -> str:
    """Why a sample item failed, with expected vs predicted for each failing field."""
    score = record.score
    lines = [failure_headline(record)]
    if score.parse_error:
        lines.append(f"  output: {safe(score.parse_error)}")
    for error in score.validation_errors[:10]:
        lines.append(f"  schema: {safe(error)}")
    if len(score.validation_errors) > 10:
        lines.append(f"  schema: ... {len(score.validation_errors) - 10} more")
    failing = [f for f in score.fields if f.category != EXACT]
    if failing:
        width = min(max(5, *(len(f.path) for f in failing)), 40)
        lines.append(
            f"  {'field':<{width}}  {'expected':<{VALUE_WIDTH}}  {'predicted':<{VALUE_WIDTH}}  category   score"
        )
        for field in failing[:MAX_FAILING_FIELDS]:
            lines.append(
                f"  {safe(field.path, width):<{width}}  {safe(clip(field.expected)):<{VALUE_WIDTH}}  "
                f"{safe(clip(field.predicted)):<{VALUE_WIDTH}}  {field.category:<9}  {field.score:.2f}"
            )
            lines.extend(element_lines(field, score.options, width))
        if len(failing) > MAX_FAILING_FIELDS:
            lines.append(f"  ... {len(failing) - MAX_FAILING_FIELDS} more fields")
    lines.append(
        f"  eqs {score.eqs:.3f}  f1 partial {score.f1['partial']:.3f}  exact {score.observed.exact}/"
        f"{score.observed.expected} fields"
    )
    return "\n".join(lines)


MAX_ELEMENTS = 12  # element lines under one list field


def element_lines(field: Any, options: Any, width: int) -> list[str]:
    """Under an array of scalars whose elements pair by similarity (``--extractbench-list-similarity``): each
    element, paired exactly, by similarity (with it), missed or spurious."""
    pairs = similarity_paired_elements(field.expected, field.predicted, field.category, options)
    if pairs is None:
        return []
    lines = [
        f"  {'':<{width}}    {pair.kind:<8}  {safe(clip(pair.expected)) if pair.kind != 'spurious' else '':<{VALUE_WIDTH}}"
        f"  {safe(clip(pair.predicted)) if pair.kind != 'missed' else '':<{VALUE_WIDTH}}"
        + (f"  {pair.similarity:.2f}" if pair.kind == "similar" else "")
        for pair in pairs[:MAX_ELEMENTS]
    ]
    if len(pairs) > MAX_ELEMENTS:
        lines.append(f"  {'':<{width}}    ... {len(pairs) - MAX_ELEMENTS} more elements")
    return [line.rstrip() for line in lines]


def pct(value: float) -> str:
    return f"{100 * value:.1f}%"


def num(value: float) -> str:
    return f"{value:.3f}"


def gap_words(gap: float) -> str:
    """The gap rule's distance to the reference as the sentence reads it: "trails by 0.114", "leads by 0.020"."""
    return f"trails by {gap:.3f}" if gap >= 0 else f"leads by {-gap:.3f}"


def safe(text: Any, limit: int | None = textsafe.LIMIT) -> str:
    """Model names and field paths come from user files: no control characters reach the terminal."""
    return textsafe.terminal(text, limit)


def with_ci(value: float, interval: IntervalDict | None, fmt: Callable[[float], str] = num) -> str:
    """``0.823 [95% CI: 0.812, 0.834]``; just the value when there is no interval."""
    if interval is None or interval["low"] is None or interval["high"] is None:
        return fmt(value)
    return f"{fmt(value)} [{100 * interval['confidence']:g}% CI: {fmt(interval['low'])}, {fmt(interval['high'])}]"


def metric_lines(metrics: Mapping[str, Any], cis: Mapping[str, IntervalDict]) -> list[str]:
    """One line per catalog terminal row: the first metric with its CI, the others of the row after it."""
    rows: dict[int, list[Metric]] = {}
    for metric in catalog.ranked("terminal_row"):
        if metric.name in metrics:
            rows.setdefault(metric.terminal_row or 0, []).append(metric)
    lines = []
    for first, *others in rows.values():
        fmt = pct if first.percent else num
        text = with_ci(metrics[first.name], cis.get(first.name) if first.headline else None, fmt)
        if first.name == "extraction_quality_score":
            typed = extraction_sections(metrics)
            text += f"  ({summary.consistent_band(str(typed['eqs_band']), str(typed['recommendation']))})"
        for other in others:
            text += f"   {other.short} {(pct if other.percent else num)(metrics[other.name])}"
        lines.append(f"  {first.short:<20}{text}")
    return lines


def model_lines(model: str, metrics: Mapping[str, Any], checks: Sequence[GateCheck], tier: str) -> list[str]:
    """The headline block of one model with confidence intervals, and its SLA verdict."""
    typed = extraction_sections(metrics)
    cis = typed.get("confidence_intervals", {})  # none in a document without resampled metrics

    lines = [f"model {safe(model)}: {counted(metrics['num_samples'], 'sample')}", *metric_lines(metrics, cis)]
    lines.extend(subset_lines(metrics))
    lines.extend(performance_lines(typed["performance"]))
    lines.extend(calibration_consistency_lines(metrics))
    if tier != "none":
        failed = any(c.passed is False for c in checks)
        lines.append(f"  SLA {tier}: FAILED" if failed else f"  SLA {tier}: passed")
        lines.extend(f"    {safe(c.describe())}" for c in checks if c.passed is False or c.unmeasured)
    lines.append(f"  recommendation: {typed['recommendation']}")
    return lines


def _opt(value: float | None, fmt: str, suffix: str = "") -> str:
    return "-" if value is None else f"{value:{fmt}}{suffix}"


def _opt_num(value: float | None) -> str:
    return "-" if value is None else num(value)


def _opt_pct(value: float | None) -> str:
    return "-" if value is None else pct(value)


def performance_lines(perf: Performance) -> list[str]:
    """Latency, throughput, tokens/cost and reliability in four lines, or why they are missing."""
    rel = perf["reliability"]
    if not rel["measured"]:
        return [f"  performance         {perf['note'] or 'not measured'}"]
    # end to end, the figure the gates read (a document written before it was measured has the answering attempt's)
    lat = perf.get("end_to_end_ms", perf["latency_ms"])
    thr, tok, cost = perf["throughput"], perf["tokens"], perf["cost"]
    counts = perf["requests"]
    lines = []
    if perf["measured"]:
        lines.append(
            f"  latency             p50 {_opt(lat['p50'], ',.0f')} ms  p95 {_opt(lat['p95'], ',.0f')} ms  "
            f"p99 {_opt(lat['p99'], ',.0f')} ms  (mean {_opt(lat['mean'], ',.0f')}, max {_opt(lat['max'], ',.0f')}; "
            f"{lat['count']} timed, {counts['cached']} cached)"
        )
    else:
        lines.append(f"  latency             {perf['note']}")
    if thr["requests_per_s"] is None:
        lines.append(f"  throughput          {thr.get('note') or 'not measured'}")
    else:
        lines.append(
            f"  throughput          {thr['requests_per_s']:.2f} req/s  {thr['samples_per_min']:.1f} samples/min  "
            f"{thr['tokens_per_s']:.0f} tokens/s  {thr['fields_per_s']:.1f} fields/s"
        )
    if tok["responses_with_usage"]:
        text = (
            f"  tokens              mean prompt {_opt(tok['prompt']['mean'], '.0f')}, completion "
            f"{_opt(tok['completion']['mean'], '.0f')}; total {tok['total']['sum']:,}; "
            f"{_opt(tok['token_efficiency'], '.3f')} fields/output token"
        )
        if cost["available"]:
            text += f"  cost ${cost['estimated_cost_usd']:.4f}"
        lines.append(text)
    lines.append(
        f"  reliability         success {_opt_pct(rel['success_rate'])}  "
        f"parse fail {_opt_pct(rel['parse_failure_rate'])}  "
        f"schema fail {_opt_pct(rel['schema_failure_rate'])}  timeout {_opt_pct(rel['timeout_rate'])}  "
        f"retried {_opt_pct(rel['retry_rate'])}  truncated {_opt_pct(rel['truncation_rate'])}"
    )
    errors = {k: v for k, v in rel["error_counts"].items() if v}
    if errors:
        lines.append("  errors              " + ", ".join(f"{safe(k)} {v}" for k, v in sorted(errors.items())))
    retried = summary.retried_text(perf)
    if retried:
        lines.append(f"  attempts            {safe(retried)}")
    return lines


MAX_LISTED = 10


def context_text(facts: Mapping[str, Any]) -> str | None:
    """The context an embedded server got, why, and its peak memory (raw text: callers escape it)."""
    plan = facts.get("context") or {}
    if not plan:
        return None
    peak = facts.get("peak_rss_bytes")
    memory = f"; llama-server peak RSS {peak / 2**20:.0f} MB" if peak else ""
    return f"{plan['ctx_per_slot']} tokens of context per slot x {plan['slots']} slot(s) ({plan['reason']}){memory}"


def context_lines(live: Mapping[str, Any] | None, records: Sequence[SampleRecord | TrackRecord]) -> list[str]:
    """The context each embedded server got and why, its peak memory, and the samples that did not fit."""
    lines = []
    for model, facts in ((live or {}).get("embedded") or {}).items():
        text = context_text(facts)
        if text:
            lines.append(f"embedded {safe(model)}: {safe(text)}")
    for model, budget in (((live or {}).get("prompt_budget") or {}).get("by_model") or {}).items():
        if budget.get("held"):
            lines.append(prompt_budget_text(model, budget))
        if budget.get("stretched_attempts"):
            lines.append(stretched_text(model, budget))
    unfit = [r for r in records if r.response.get("error_class") == "context_exceeded"]
    if unfit:

        def fit(record: SampleRecord | TrackRecord) -> str:
            found = record.response.get("context") or {}
            tokens, limit = found.get("prompt_tokens"), found.get("limit")
            size = f"{tokens if tokens is not None else '?'} tokens > {limit if limit is not None else '?'}"
            return f"{safe(record.sample_id)} ({size})"

        more = f", ... {len(unfit) - MAX_LISTED} more" if len(unfit) > MAX_LISTED else ""
        lines.append(
            f"{len(unfit)} sample(s) did not fit the model's context (context_exceeded): "
            + ", ".join(fit(r) for r in unfit[:MAX_LISTED])
            + more
        )
    return lines


def prompt_budget_text(model: str, budget: Mapping[str, Any]) -> str:
    """One line when long prompts waited for room: how many, for how long, and the limit that held them."""
    limit, speed = budget.get("tokens_in_flight_limit"), budget.get("prompt_tokens_per_s")
    why = (
        f"at most {limit:,} prompt tokens in flight"
        if limit is not None
        else "long prompts one at a time until the server reports its speed"
    )
    measured = f" (the server reads {speed:g} tokens/s)" if speed else ""
    return (
        f"prompt budget {safe(model)}: {budget['held']} request(s) waited for room, up to "
        f"{budget.get('longest_wait_s', 0):,.1f} s, before their attempts' clocks started: {why}{measured}; "
        "--extractbench-prompt-budget off sends them at once"
    )


def stretched_text(model: str, budget: Mapping[str, Any]) -> str:
    """One line when attempts got longer than the timeout: their prompts needed it at the server's measured speed."""
    return (
        f"prompt budget {safe(model)}: {budget['stretched_attempts']} attempt(s) given up to "
        f"{budget.get('longest_attempt_timeout_s') or 0:,.0f} s, longer than the timeout, for twice their prompt's "
        f"reading time at {budget.get('prompt_tokens_per_s') or 0:g} tokens/s; a fixed --extractbench-prompt-budget "
        "keeps the timeout strict"
    )


def calibration_consistency_lines(metrics: Mapping[str, Any]) -> list[str]:
    """The optional sections: confidence calibration (logprobs) and consistency (repeats)."""
    lines = []
    typed = model_sections(metrics)
    calibration = typed.get("calibration")
    if calibration:
        lines.append(
            f"  calibration         ECE {_opt_num(calibration['ece'])}   MCE {_opt_num(calibration['mce'])}   "
            f"Brier {_opt_num(calibration['brier'])} over {counted(calibration['fields'], 'field')}"
        )
    found = typed.get("consistency")
    if found:
        variance = "n/a" if found["value_variance"] is None else plain(found["value_variance"])
        lines.append(
            f"  consistency ({found['runs_per_sample']} runs)  exact {_opt_pct(found['exact_match_consistency'])}   "
            f"field-level {_opt_pct(found['field_level_consistency'])}   numeric std {variance}"
        )
    repeats = typed.get("repeats")
    if repeats and repeats["samples"]:
        k = repeats["runs"]
        fields = repeats["flaky_fields"]
        flaky = ", ".join(f"{safe(f['field'], 40)} {pct(f['rate'])}" for f in fields[:3])
        # the repeats section and both pass rates are written together, so a run with repeats has them
        lines.append(
            f"  repeats ({k} runs)    pass@{k} {pct(metrics['pass_at_k'])}   pass^{k} "
            f"{pct(metrics['pass_hat_k'])}   flaky samples {repeats['flaky_samples']}"
            + (f"; flaky fields {flaky}" if flaky else "")
        )
    return lines


def problem_lines(problems: Sequence[DatasetProblem], limit: int = 20) -> list[str]:
    """Dataset and predictions problems, most important first."""
    if not problems:
        return []
    ordered = sorted(problems, key=lambda p: p.severity != "error")
    lines = [f"{len(problems)} input problem(s):"]
    lines.extend(f"  [{p.severity}] {safe(p, PROBLEM_WIDTH)}" for p in ordered[:limit])
    if len(problems) > limit:
        lines.append(f"  ... {len(problems) - limit} more in metrics.json")
    return lines


def _summary_line(label: str, entry: GroupSummary) -> str:
    if not entry["count"]:
        return f"  {label}: no sample"
    # a subset with samples has its score, metrics and intervals
    eqs = with_ci(
        entry["metrics"]["extraction_quality_score"], entry["confidence_intervals"].get("extraction_quality_score")
    )
    return (
        f"  {label}: {counted(entry['count'], 'sample')}, {entry['aggregation']} EQS {num(entry['score'])}; EQS {eqs}"
    )


def subset_lines(metrics: Mapping[str, Any]) -> list[str]:
    """One line per subset and per group (at most MAX_GROUPS per field)."""
    typed = model_sections(metrics)
    lines = [_summary_line(f"subset {safe(name)}", entry) for name, entry in typed.get("subsets", {}).items()]
    for field, groups in typed.get("groups", {}).items():
        for value, entry in list(groups.items())[:MAX_GROUPS]:
            lines.append(_summary_line(f"group {safe(field)}={safe(value)}", entry))
        if len(groups) > MAX_GROUPS:
            lines.append(f"  ... {len(groups) - MAX_GROUPS} more groups of {safe(field)} in metrics.json")
    return lines


def _delta(entry: Mapping[str, Any]) -> str:
    ci = entry["ci"]
    return (
        f"{entry['delta']:+.3f} [{100 * ci['confidence']:g}% CI: {ci['low']:+.3f}, {ci['high']:+.3f}], "
        f"{format_p(entry['p_value'])}{' significant' if entry['significant'] else ''}"
    )


def _compact(name: str) -> str:
    """A metric's compact name from the catalog ("F1 partial"); an unknown key as it is."""
    metric = catalog.get(name)
    return metric.compact if metric else (track_metrics.label(name, compact=True) or name)


def comparison_lines(comparison: Mapping[str, Any]) -> list[str]:
    """Ranking, pairwise deltas with significance, best-by-metric, Pareto frontiers and the gap rule."""
    test = "paired permutation test" if comparison["test"] == "permutation" else f"paired {comparison['test']}"
    lines = [f"comparison of {len(comparison['models'])} models ({test}, alpha {comparison['alpha']:g}):"]
    for entry in comparison["eqs_ranking"]:
        ci: IntervalDict = {"low": entry["ci_low"], "high": entry["ci_high"], "confidence": comparison["confidence"]}
        lines.append(f"  {entry['rank']}. {safe(entry['model'])}  EQS {with_ci(entry['extraction_quality_score'], ci)}")
    wins = comparison["win_rate_matrix"]
    for key, pair in comparison["pairwise"].items():
        a, b = pair["a"], pair["b"]
        if "metrics" not in pair:
            lines.append(f"  {safe(a)} vs {safe(b)}: {pair.get('note', 'not compared')}")
            continue
        effect = comparison["statistical_significance"][key]["effect_size"]
        d = "inf" if effect["cohens_d"] is None else f"{effect['cohens_d']:.2f}"
        lines.append(
            f"  {safe(a)} vs {safe(b)} ({pair['n_shared']} shared samples): EQS {_delta(pair['metrics']['extraction_quality_score'])};"
            f" Cohen's d {d} ({effect['interpretation']}); per sample {safe(a)} wins {pct(wins[a][b])},"
            f" {safe(b)} wins {pct(wins[b][a])}"
        )
        others = [
            f"{_compact(name)} {m['delta']:+.3f} ({format_p(m['p_value'])})"
            for name, m in pair["metrics"].items()
            if name != "extraction_quality_score"
        ]
        lines.append("      " + ", ".join(others))
    best = ", ".join(
        f"{k.replace('_', ' ')}: {safe(v) if v else 'n/a'}" for k, v in comparison["best_by_metric"].items()
    )
    lines.append(f"  best by metric: {best}")
    for name, frontier in comparison["pareto_frontier"].items():
        label = name.replace("_", " ")
        if frontier["available"]:
            lines.append(f"  Pareto frontier {label}: {', '.join(safe(m) for m in frontier['frontier'])}")
        else:
            lines.append(f"  Pareto frontier {label}: not available: {frontier['reason']}")
    gap = comparison["gap_rule"]
    head = f"  gap rule (reference {safe(gap['reference'])} by {gap['reference_from']}, threshold {gap['threshold']:.3f} EQS)"
    if "error" in gap:
        lines.append(f"{head}: {gap['error']}")
    for model, entry in gap["models"].items():
        lines.append(f"{head}: {safe(model)} {gap_words(entry['gap'])}: {entry['band']}")
    return lines


WORST_SHOWN = 3  # regressed samples named in the terminal, worst first
_EQS = "extraction_quality_score"  # the extraction track's verdict metric; a track's reads its pass rate


def baseline_lines(result: RunComparison) -> list[str]:
    """Deltas against the baseline, the verdict, the largest per-field drops and every gate check."""
    lines = [f"baseline {safe(result.baseline.describe())}:"]
    pairing = result.pairing
    if pairing is not None:
        lines.append(
            f"  samples: {pairing.describe()}" if pairing.checked else f"  WARNING: sample pairing {pairing.describe()}"
        )
    for model, comparison in result.models.items():
        against = "" if comparison.baseline_model == model else f" (baseline model {safe(comparison.baseline_model)})"
        lines.append(
            f"  model {safe(model)}{against}: verdict {comparison.verdict.upper()} "
            f"on {len(comparison.shared)} shared samples"
        )
        buckets = comparison.buckets
        if buckets is not None:
            rule = "pass -> fail" + (f" or EQS drop > {buckets.delta:g}" if comparison.verdict_metric == _EQS else "")
            lines.append(f"    samples (regressed: {rule}): {buckets.describe()}")
            worst = buckets.worst(WORST_SHOWN)
            if worst:
                more = len(buckets.ids("regressed")) - len(worst)
                lines.append(
                    "    worst: "
                    + "; ".join(safe(s.describe()) for s in worst)
                    + (f"; +{more} more in metrics.json" if more > 0 else "")
                )
        for name, delta in comparison.deltas.items():
            lines.append(f"    {_compact(name):<14} {num(delta.b)} -> {num(delta.a)}  {_delta(delta.as_dict())}")
        drops = [(path, f) for path, f in comparison.fields.items() if f["delta"] is not None and f["delta"] < 0][:5]
        if drops:
            lines.append(
                "    largest field drops (F1 partial): "
                + ", ".join(f"{safe(path)} {f['delta']:+.3f}" for path, f in drops)
            )
    lines.extend(f"  note: {safe(note)}" for note in result.notes)
    for check in result.checks:
        lines.append(f"  {safe(check.message)}")
    if result.checks:
        lines.append("  regression gate: FAILED" if result.failures else "  regression gate: passed")
    return lines


def run_lines(run_level: Mapping[str, Any], baseline: RunComparison | None) -> list[str]:
    """Everything the run adds after the per-model blocks."""
    lines: list[str] = []
    if "comparison" in run_level:
        lines.extend(comparison_lines(run_level["comparison"]))
    if baseline is not None:
        lines.extend(baseline_lines(baseline))
    saved = run_level.get("baseline_saved")
    if saved:
        lines.append(f"baseline {safe(saved['name'])!r} saved to {safe(saved['path'])}")
    return lines
