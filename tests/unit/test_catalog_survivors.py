"""Facts of the metric catalog no test read before a mutation run of analysis/catalog.py: which metrics carry a CI
everywhere, which get interval columns in metrics.csv and a row of the "At a Glance" table, which are shown as
percentages, the F1 tags, and what a metric states when a fact is left out. Each expected list is the documented
rule applied by hand, metric by metric, not a copy of the code's output."""

from __future__ import annotations

from pytest_extractbench.analysis import catalog


def test_the_headline_metrics_are_the_extraction_scores_with_a_ci_everywhere() -> None:
    # the metrics every summary and comparison gives with a bootstrap CI (docs/metrics.md, "Statistics"): the overall
    # score, schema validity, the three F1 modes, ANLS*, exact match and the hallucination rate, in table order; not
    # JSON validity, precision or recall alone, type accuracy or the per-sample rates
    assert catalog.names("headline") == (
        "extraction_quality_score",
        "schema_validity_rate",
        "field_f1_partial",
        "field_f1_strict",
        "field_f1_lenient",
        "anls_star",
        "exact_match_rate",
        "hallucination_rate",
    )


def test_metrics_csv_has_interval_columns_for_the_gated_and_graded_headline_metrics_and_pass_at_k() -> None:
    # _ci_low / _ci_high columns: the headline metrics but the strict and lenient F1 (partial F1 is the gated one),
    # plus pass@k and pass^k, whose intervals come from the repeats section
    assert catalog.names("ci_columns") == (
        "extraction_quality_score",
        "schema_validity_rate",
        "field_f1_partial",
        "anls_star",
        "exact_match_rate",
        "hallucination_rate",
        "pass_at_k",
        "pass_hat_k",
    )


def test_the_at_a_glance_rows_are_the_six_gated_metrics_with_anls_and_exact_match() -> None:
    # docs/metrics.md's SLA tiers gate six metrics (EQS, schema validity, partial F1, hallucination rate, p95 latency,
    # success rate); the table adds ANLS* and exact match, graded on their own tiers; table order
    gated = {m.name for m in catalog.gated()}
    assert gated == {
        "extraction_quality_score",
        "schema_validity_rate",
        "field_f1_partial",
        "hallucination_rate",
        "latency_p95_ms",
        "success_rate",
    }
    assert catalog.names("glance") == (
        "extraction_quality_score",
        "schema_validity_rate",
        "field_f1_partial",
        "anls_star",
        "exact_match_rate",
        "hallucination_rate",
        "latency_p95_ms",
        "success_rate",
    )


def test_shares_of_samples_fields_or_requests_are_percentages_and_scores_are_not() -> None:
    # a percentage is a share of counted things: outputs that parse or validate, exact samples, typed fields of the
    # right type, spurious or missed fields, perfect or zero-score samples, samples passing some or all of k runs,
    # answered requests, timed-out attempts. Scores (EQS, F1, precision, recall, ANLS*, similarity, the judge's
    # grade), latencies and throughput are not.
    assert catalog.names("percent") == (
        "schema_validity_rate",
        "json_valid_rate",
        "exact_match_rate",
        "exact_match_rate_valid",
        "type_accuracy",
        "hallucination_rate",
        "field_omission_rate",
        "perfect_sample_rate",
        "zero_score_rate",
        "pass_at_k",
        "pass_hat_k",
        "success_rate",
        "attempt_timeout_rate",
    )
    assert catalog.is_percent("exact_match_rate_valid") and catalog.is_percent("json_valid_rate")
    assert not catalog.is_percent("field_f1_partial") and not catalog.is_percent("latency_p95_ms")


def test_each_f1_is_tagged_with_its_mode_where_space_is_short() -> None:
    # comparison deltas and chart bars read "F1 <mode>", the terminal "field F1 (<mode>)"
    for mode in ("partial", "strict", "lenient"):
        metric = catalog.get(f"field_f1_{mode}")
        assert metric is not None
        assert (metric.tag, metric.compact, metric.short) == (f"F1 {mode}", f"F1 {mode}", f"field F1 ({mode})")


def test_a_metric_that_leaves_a_fact_out_states_none_or_false_for_it() -> None:
    # a metric given only its names: no gate, no grade, no per-sample value, no EQS term, no CI columns, no glance
    # row (None for an absent fact, as its type says: a 0 or a True would be a fact it does not have)
    bare = catalog.Metric("bare", "Bare", "bare")
    assert (bare.sla, bare.gate_label, bare.grade_tiers, bare.tiers) == (None, None, None, None)
    assert (bare.per_sample, bare.eqs_component, bare.compute, bare.measured_by) == (None, None, None, None)
    assert (bare.headline, bare.ci_columns, bare.glance, bare.percent) == (False, False, False, False)
    assert (bare.csv, bare.higher_is_better, bare.resampled) == (True, True, False)


def test_the_performance_figures_are_no_fixed_column_of_metrics_csv() -> None:
    # a per-request figure (latency percentiles, the latency breakdown, throughput, success and attempt-timeout rates)
    # comes into metrics.csv from the performance section, so it is not among the catalog's fixed columns
    per_request = {
        "latency_p50_ms",
        "latency_p95_ms",
        "latency_p99_ms",
        "attempt_latency_p95_ms",
        "time_to_first_token_p95_ms",
        "server_prompt_p95_ms",
        "server_generation_p95_ms",
        "network_queue_p95_ms",
        "client_wait_p95_ms",
        "throughput_rps",
        "success_rate",
        "attempt_timeout_rate",
    }
    assert {m.name for m in catalog.metrics() if m.performance} == per_request
    fixed = set(catalog.names("csv"))
    assert not fixed & per_request
    assert fixed | per_request == {m.name for m in catalog.metrics()}
