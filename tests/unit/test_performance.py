"""Performance metrics: hand-computed latency, throughput, token, cost and reliability figures."""

from __future__ import annotations

import math
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_extractbench import SampleRecord, ScoringOptions, evaluate_sla, model_metrics, score_sample
from pytest_extractbench.analysis.performance import (
    NOT_MEASURED,
    Prices,
    apply_prices,
    busy_time,
    estimate_cost,
    latency_stats,
    outcome,
    performance_metrics,
    reliability,
    spearman,
)
from pytest_extractbench.dataset.responses import ERROR_CLASSES, ModelResponse

SCHEMA = {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}, "required": ["a"]}
EXPECTED = {"a": "x", "b": 1}
CONTENT = {"valid": '{"a": "x", "b": 1}', "parse_failure": "{not json", "schema_failure": '{"b": "one"}'}


def score(kind: str | None) -> Any:
    """The score of one of the three kinds of content a successful request can return (None: a failed request),
    made in the test that asks: a score made while pytest collects would run the scorer outside every test."""
    scored = {None: None, "valid": {"a": "x", "b": 1}, "parse_failure": "{not json", "schema_failure": {"b": "one"}}
    return score_sample(scored[kind], EXPECTED, SCHEMA)


def rec(sample_id: str, kind: str = "valid", *, meta: dict | None = None, **response) -> SampleRecord:
    """A record whose response carries ``response`` fields; an error class means no content."""
    if response.get("error_class") is not None:
        response.setdefault("content", None)
        found = score(None)
    else:
        response.setdefault("content", CONTENT[kind])
        found = score(kind)
    response.setdefault("attempts", 1)
    data = ModelResponse(**response).as_dict()
    return SampleRecord(model="m", sample_id=sample_id, score=found, meta=meta or {}, response=data)


def offline(sample_id: str, kind: str = "valid") -> SampleRecord:
    return SampleRecord("m", sample_id, score(kind), response=ModelResponse(content=CONTENT[kind]).as_dict())


# -- latency ---------------------------------------------------------------------------


def test_latency_percentiles_of_known_values() -> None:
    stats = latency_stats([i / 10 for i in range(1, 11)])  # 100, 200, ..., 1000 ms
    assert stats["count"] == 10
    assert stats["mean"] == pytest.approx(550)
    assert stats["p50"] == pytest.approx(550)
    assert stats["p95"] == pytest.approx(955)  # rank 0.95 * 9 = 8.55: 900 + 0.55 * 100
    assert stats["p99"] == pytest.approx(991)
    assert (stats["min"], stats["max"]) == (pytest.approx(100), pytest.approx(1000))
    assert stats["std"] == pytest.approx(100 * math.sqrt(8.25))  # population std of 1..10, times 100


def test_latency_leaves_out_failed_and_cached_requests() -> None:
    records = [rec(f"s{i}", latency_s=i / 10) for i in range(1, 11)]
    records += [
        rec("cached", latency_s=50.0, cached=True),
        rec("timeout", error_class="timeout", latency_s=30.0, attempts=4),
        rec("unparseable", "parse_failure", latency_s=0.55),  # a completed request: it counts
    ]
    perf = performance_metrics(records)
    assert perf["measured"] is True
    assert perf["latency_ms"]["count"] == 11
    assert perf["latency_ms"]["max"] == pytest.approx(1000)
    assert perf["latency_ms"]["p50"] == pytest.approx(550)
    assert perf["requests"] == {"samples": 13, "requests": 13, "cached": 1, "timed": 11}
    assert perf["sla_compliance"] == {"p95_under_2s": True, "p99_under_5s": True}


def test_latency_correlation_signs() -> None:
    records = [
        rec(
            f"s{i}",
            latency_s=0.1 * i,
            usage={"prompt_tokens": 100 * i, "completion_tokens": 50 - i},
            meta={"text_chars": 1000 + 10 * i, "complexity": {"total_fields": 4, "max_nesting_depth": 1}},
        )
        for i in range(1, 8)
    ]
    corr = performance_metrics(records)["latency_correlation"]
    assert corr["input_chars"]["rho"] == pytest.approx(1.0)
    assert corr["prompt_tokens"]["rho"] == pytest.approx(1.0)
    assert corr["output_tokens"]["rho"] == pytest.approx(-1.0)
    assert corr["input_chars"]["n"] == 7
    assert corr["schema_fields"] == {"rho": None, "p_value": None, "n": 7, "note": "constant input"}


def test_spearman_is_rank_based_and_undefined_on_short_input() -> None:
    # monotone but far from linear: Spearman is exactly 1
    assert spearman([1, 2, 3, 4], [1, 10, 1000, 1e6])["rho"] == pytest.approx(1.0)
    assert spearman([1, 2], [2, 1])["note"] == "fewer than 3 samples"


# -- throughput, tokens, cost ----------------------------------------------------------


def test_throughput_over_the_wall_span() -> None:
    usage = {"prompt_tokens": 300, "completion_tokens": 100, "total_tokens": 400}
    records = [
        rec("a", latency_s=1.0, started_at=100.0, finished_at=101.0, usage=usage),
        rec("b", latency_s=1.0, started_at=100.5, finished_at=101.5, usage=usage),
        rec("c", latency_s=1.0, started_at=101.0, finished_at=102.0, usage=usage),
        rec("d", error_class="timeout", latency_s=3.0, started_at=101.0, finished_at=104.0, attempts=2),
        rec("e", latency_s=0.0, started_at=0.0, finished_at=500.0, cached=True, usage=usage),  # not this run's time
    ]
    thr = performance_metrics(records)["throughput"]
    assert thr["wall_time_s"] == thr["busy_time_s"] == pytest.approx(4.0)  # 100.0 .. 104.0
    assert thr["requests_per_s"] == pytest.approx(3 / 4)  # successful requests
    assert thr["samples_per_min"] == pytest.approx(60 * 3 / 4)  # the same successes over the same interval
    assert thr["tokens_per_s"] == pytest.approx(3 * 400 / 4)
    assert thr["fields_per_s"] == pytest.approx(3 * 2 / 4)  # two fields extracted per valid answer


def test_throughput_is_not_measured_when_no_request_succeeded() -> None:
    # The run a new user saw: every request refused at once; "0.00 req/s, 2426.5 samples/min" must not recur.
    records = [
        rec(f"s{i}", error_class="context_exceeded", started_at=100.0 + i / 100, finished_at=100.01 + i / 100)
        for i in range(3)
    ]
    perf = performance_metrics(records)
    thr = perf["throughput"]
    assert thr["requests_per_s"] is None and thr["samples_per_min"] is None and thr["tokens_per_s"] is None
    assert thr["note"] == "not measured: no request succeeded"
    assert perf["reliability"]["error_counts"]["context_exceeded"] == 3
    assert perf["reliability"]["context_exceeded_rate"] == 1.0 and perf["reliability"]["success_rate"] == 0.0


@given(st.lists(st.tuples(st.floats(0, 100), st.floats(0, 10), st.booleans()), min_size=1, max_size=30))
def test_throughput_figures_always_agree(requests: list[tuple[float, float, bool]]) -> None:
    records = [
        rec(
            f"s{i}",
            **({} if ok else {"error_class": "timeout"}),
            started_at=start,
            finished_at=start + length,
            latency_s=length,
        )
        for i, (start, length, ok) in enumerate(requests)
    ]
    thr = performance_metrics(records)["throughput"]
    if thr["requests_per_s"] is None:
        assert thr["samples_per_min"] is None
        assert not any(ok for *_, ok in requests) or thr["busy_time_s"] == 0
    else:
        assert thr["samples_per_min"] == pytest.approx(60 * thr["requests_per_s"])
        assert thr["requests_per_s"] == pytest.approx(sum(ok for *_, ok in requests) / thr["busy_time_s"])


def test_throughput_leaves_out_the_gap_before_a_resume() -> None:
    first = [rec(f"a{i}", latency_s=1.0, started_at=100.0 + i, finished_at=101.0 + i) for i in range(3)]  # 100..103
    resumed = [rec(f"b{i}", latency_s=2.0, started_at=5000.0, finished_at=5002.0) for i in range(3)]  # 5000..5002
    thr = performance_metrics(first + resumed)["throughput"]
    assert thr["wall_time_s"] == pytest.approx(4902.0)
    assert thr["busy_time_s"] == pytest.approx(3.0 + 2.0)
    assert thr["requests_per_s"] == pytest.approx(6 / 5)


def test_busy_time_is_the_union_of_intervals() -> None:
    assert busy_time([(0, 2), (1, 3), (5, 6), (5.5, 5.7), (10, 10)]) == pytest.approx(3 + 1 + 0)
    assert busy_time([]) == 0.0


def test_token_statistics_and_efficiency() -> None:
    records = [
        rec("a", latency_s=1, usage={"prompt_tokens": 1000, "completion_tokens": 10}),  # total filled in: 1010
        rec("b", latency_s=1, usage={"prompt_tokens": 3000, "completion_tokens": 30, "total_tokens": 3030}),
        rec("c", latency_s=1),  # a server that reports no usage
    ]
    tok = performance_metrics(records)["tokens"]
    assert tok["prompt"] == {"count": 2, "mean": 2000.0, "median": 2000.0, "p95": pytest.approx(2900.0), "sum": 4000}
    assert tok["total"]["sum"] == 4040
    assert tok["responses_with_usage"] == 2
    assert tok["token_efficiency"] == pytest.approx(4 / 40)  # 2 + 2 fields over 40 output tokens


def test_cost_from_known_tokens_and_prices() -> None:
    assert estimate_cost(4000, 2000, Prices(0.5, 1.5)) == pytest.approx(2.0 + 3.0)
    assert estimate_cost(4000, 2000, Prices(0.5, None)) == pytest.approx(2.0)
    records = [
        rec("a", latency_s=1, usage={"prompt_tokens": 1000, "completion_tokens": 500}),
        rec("b", latency_s=1, usage={"prompt_tokens": 3000, "completion_tokens": 1500}),
    ]
    metrics = model_metrics(records, ScoringOptions())
    assert metrics["estimated_cost_usd"] is None
    assert metrics["performance"]["cost"]["available"] is False
    apply_prices(metrics, Prices(0.5, 1.5))
    cost = metrics["performance"]["cost"]
    assert metrics["estimated_cost_usd"] == cost["estimated_cost_usd"] == pytest.approx(5.0)
    assert (cost["input_cost_usd"], cost["output_cost_usd"]) == (pytest.approx(2.0), pytest.approx(3.0))
    assert cost["cost_per_sample_usd"] == pytest.approx(2.5)


def test_no_usage_means_no_cost_even_with_prices() -> None:
    perf = performance_metrics([rec("a", latency_s=1)], Prices(1.0, 1.0))
    assert perf["cost"]["available"] is False
    assert perf["cost"]["reason"] == "no token usage recorded"


# -- reliability -----------------------------------------------------------------------


def test_rates_of_a_known_error_mix() -> None:
    records = [rec(f"v{i}", latency_s=1) for i in range(4)]
    records += [rec("r1", latency_s=1, attempts=2), rec("r2", latency_s=1, attempts=3)]
    records += [
        rec("p", "parse_failure", latency_s=1),
        rec("s", "schema_failure", latency_s=1),
        rec("t", error_class="timeout", latency_s=60, attempts=4),
        rec("x", error_class="truncated", finish_reason="length", latency_s=2, content='{"a": "x'),
    ]
    rel = reliability(records)
    assert rel["total_requests"] == 10
    assert rel["successful_requests"] == 8
    assert rel["success_rate"] == pytest.approx(0.8)
    assert rel["parse_failure_rate"] == pytest.approx(0.1)
    assert rel["schema_failure_rate"] == pytest.approx(0.1)
    assert rel["timeout_rate"] == pytest.approx(0.1)
    assert rel["truncation_rate"] == pytest.approx(0.1)
    assert rel["retry_rate"] == pytest.approx(0.3)  # r1, r2 and the timeout
    assert rel["retried_successes"] == 2
    assert rel["reliability_score"] == pytest.approx((8 - 0.5 * 2) / 10)
    assert rel["error_counts"]["timeout"] == 1 and rel["error_counts"]["truncated"] == 1
    assert sum(rel["error_counts"].values()) == 2
    assert rel["outcome_counts"]["valid"] == 6


def test_offline_records_are_not_measured() -> None:
    records = [offline("a"), offline("b", "parse_failure")]
    metrics = model_metrics(records, ScoringOptions())
    perf = metrics["performance"]
    assert perf["measured"] is False and perf["note"] == NOT_MEASURED
    assert set(perf["latency_ms"].values()) == {0, None}
    assert perf["reliability"]["success_rate"] is None
    assert perf["throughput"]["requests_per_s"] is None
    assert metrics["latency_p95_ms"] is None and metrics["success_rate"] is None
    checks = {c.label: c for c in evaluate_sla(metrics, "minimum")}
    assert checks["p95_latency_ms"].passed is None and checks["success_rate"].passed is None
    assert "not applicable: no request was sent" in checks["p95_latency_ms"].describe()


def test_the_gate_fails_on_p95_latency_and_success_rate() -> None:
    # 20 requests, the slowest two take 8 s: p95 is about 7.9 s > 5 s; one timeout: success 95% < 99%
    records = [rec(f"s{i:02d}", latency_s=0.5) for i in range(17)]
    records += [rec("slow1", latency_s=8.0), rec("slow2", latency_s=8.0), rec("t", error_class="timeout", attempts=4)]
    metrics = model_metrics(records, ScoringOptions())
    assert metrics["latency_p95_ms"] > 5000
    assert metrics["success_rate"] == pytest.approx(19 / 20)
    missed = [c for c in evaluate_sla(metrics, "minimum") if c.passed is False]
    assert {c.label for c in missed} >= {"p95_latency_ms", "success_rate"}
    assert any(c.describe() == "p95_latency_ms = 8000 (needs <= 5000): missed" for c in missed)


# -- invariants ------------------------------------------------------------------------

KINDS = st.sampled_from(["valid", "parse_failure", "schema_failure", *ERROR_CLASSES])
RESPONSES = st.lists(
    st.tuples(KINDS, st.floats(0.001, 120.0), st.integers(1, 5), st.booleans(), st.integers(0, 4000)),
    min_size=0,
    max_size=30,
)


def build(rows: list) -> list[SampleRecord]:
    records = []
    for n, (kind, latency, attempts, cached, tokens) in enumerate(rows):
        usage = {"prompt_tokens": tokens, "completion_tokens": tokens // 3}
        common = dict(
            latency_s=latency,
            attempts=attempts,
            cached=cached,
            usage=usage,
            started_at=1000.0 + n,
            finished_at=1000.0 + n + latency,
        )
        if kind in ERROR_CLASSES:
            records.append(rec(f"s{n}", error_class=kind, **common))
        else:
            records.append(rec(f"s{n}", kind, **common))
    return records


@given(RESPONSES)
def test_invariants(rows: list) -> None:
    records = build(rows)
    perf = performance_metrics(records, Prices(0.1, 0.2))
    lat = perf["latency_ms"]
    if lat["count"]:
        assert lat["min"] <= lat["p50"] <= lat["p95"] <= lat["p99"] <= lat["max"]
        assert lat["min"] * (1 - 1e-12) <= lat["mean"] <= lat["max"] * (1 + 1e-12)  # a float sum's rounding
    else:
        assert perf["measured"] is False and lat["p95"] is None
    rel = perf["reliability"]
    for key in (
        "success_rate",
        "parse_failure_rate",
        "schema_failure_rate",
        "timeout_rate",
        "retry_rate",
        "truncation_rate",
        "reliability_score",
    ):
        assert rel[key] is None if not records else 0.0 <= rel[key] <= 1.0
    outcomes = rel["outcome_counts"]
    assert sum(outcomes.values()) == rel["total_requests"] == len(records)
    assert outcomes["valid"] + outcomes["parse_failure"] + outcomes["schema_failure"] == rel["successful_requests"]
    assert rel["successful_requests"] + sum(rel["error_counts"].values()) == rel["total_requests"]
    assert [outcome(r) for r in records].count("valid") == outcomes["valid"]
    non_cached_successes = sum(1 for r in records if not r.response["cached"] and r.response["error_class"] is None)
    assert lat["count"] == non_cached_successes
    thr = perf["throughput"]
    if thr["busy_time_s"] is not None:
        assert 0 <= thr["busy_time_s"] <= thr["wall_time_s"] + 1e-9
    if perf["cost"]["available"]:
        assert perf["cost"]["estimated_cost_usd"] >= 0


@pytest.mark.slow
def test_the_module_is_pure() -> None:
    code = "import sys, pytest_extractbench.analysis.performance; assert 'pytest' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)
