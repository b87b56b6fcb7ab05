"""The performance and diagnostics figures a mutation run found unguarded. Every expected value is worked out by hand
in the comments."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from pytest_extractbench import SampleRecord, score_sample
from pytest_extractbench.analysis.performance import (
    ALL_CACHED,
    NOT_MEASURED,
    Prices,
    apply_prices,
    attempt_log,
    busy_time,
    cost,
    outcome,
    output_chars,
    performance_metrics,
    reliability,
    token_stats,
)

# --- performance ---


def _record(**response) -> SampleRecord:
    return SampleRecord(model="m", sample_id="s", score=score_sample({"a": "x"}, {"a": "x"}), response=response)


def test_one_price_alone_is_enough_for_a_cost() -> None:
    tokens = {"prompt": {"count": 1, "sum": 2000}, "completion": {"count": 1, "sum": 500}}
    # 2000 prompt tokens at $1 per 1,000: $2; no output price: output costs 0
    found = cost(tokens, Prices(input_per_1k=1.0), 1)
    assert (found["available"], found["estimated_cost_usd"]) == (True, pytest.approx(2.0))
    found = cost(tokens, Prices(output_per_1k=2.0), 1)  # 500 output tokens at $2 per 1,000: $1
    assert (found["available"], found["estimated_cost_usd"]) == (True, pytest.approx(1.0))


def test_a_sample_whose_scoring_failed_is_its_own_outcome() -> None:
    record = _record(content='{"a": "x"}', attempts=1)
    assert outcome(record) == "valid"
    record.scoring_error = "ScoringTimeout"
    assert outcome(record) == "scoring_error"


def test_no_output_has_no_length() -> None:
    assert output_chars(None) is None
    assert (output_chars(""), output_chars({"a": "é"})) == (0.0, 10.0)  # {"a": "é"} is 10 characters


def test_a_request_recorded_without_attempts_adds_no_attempt() -> None:
    # a latency makes it a request; no attempt count: 0 attempts, none counted, no retry
    found = reliability([_record(content="{}", latency_s=1.0)])
    assert (found["total_requests"], found["attempts_counted"], found["retry_rate"]) == (1, 0, 0.0)


def test_truncation_is_either_the_error_class_or_the_length_finish_reason() -> None:
    truncated = _record(content=None, error_class="truncated", attempts=1)
    cut = _record(content="{}", finish_reason="length", attempts=1)
    whole = _record(content="{}", finish_reason="stop", attempts=1)
    assert reliability([truncated, cut, whole])["truncation_rate"] == pytest.approx(2 / 3)


def test_an_error_class_a_newer_client_added_is_counted_once() -> None:
    found = reliability([_record(content=None, error_class="brand_new", attempts=1)])
    assert found["outcome_counts"]["brand_new"] == 1
    assert found["error_counts"]["brand_new"] == 1


def test_one_attempts_latency_is_known_only_for_a_single_attempt() -> None:
    # two attempts and no attempt log: which attempt took how long is unknown; one attempt: its latency
    retried = _record(content="{}", latency_s=2.0, attempts=2)
    single = _record(content="{}", latency_s=1.0, attempts=1)
    assert performance_metrics([retried])["attempt_latency_ms"]["count"] == 0
    assert performance_metrics([single])["attempt_latency_ms"]["mean"] == 1000.0
    # an attempt with no latency adds nothing
    assert performance_metrics([_record(content="{}", attempts=1)])["attempt_latency_ms"]["count"] == 0


def test_the_attempt_log_keeps_the_entries_with_a_text_outcome() -> None:
    log = [{"outcome": "ok", "latency_s": 1.0}, {"outcome": 3}, "timeout", {"latency_s": 2.0}]
    assert attempt_log({"attempt_log": log}) == [{"outcome": "ok", "latency_s": 1.0}]
    assert attempt_log({"attempt_log": "ok"}) == []


def test_token_statistics_of_no_value() -> None:
    assert token_stats([]) == {"count": 0, "mean": None, "median": None, "p95": None, "sum": 0}


def test_reliability_says_not_measured_only_without_requests() -> None:
    measured = reliability([_record(content="{}", attempts=1)])
    # one attempt, answered: no timeout, no error
    assert "note" not in measured
    assert (measured["attempt_timeouts"], measured["attempt_errors"], measured["attempts_counted"]) == (0, 0, 1)
    offline = reliability([_record(content="{}")])  # no attempt, no latency: not a request
    assert (offline["total_requests"], offline["note"]) == (0, NOT_MEASURED)


def test_the_note_says_why_latency_was_not_measured_and_is_null_when_it_was() -> None:
    assert performance_metrics([_record(content="{}", latency_s=1.0, attempts=1)])["note"] is None
    cached = _record(content="{}", cached=True, attempts=1)
    assert performance_metrics([cached])["note"] == ALL_CACHED
    failed = _record(content=None, error_class="timeout", attempts=1)
    assert performance_metrics([failed])["note"] == "no successful timed request"


def test_a_p95_of_exactly_two_seconds_is_not_under_two_seconds() -> None:
    # one request: every percentile is its 2.0 s = 2000 ms (and 5.0 s = 5000 ms for the p99 limit)
    found = performance_metrics([_record(content="{}", latency_s=2.0, attempts=1)])["sla_compliance"]
    assert found["p95_under_2s"] is False
    assert performance_metrics([_record(content="{}", latency_s=5.0, attempts=1)])["sla_compliance"] == {
        "p95_under_2s": False,
        "p99_under_5s": False,
    }
    assert performance_metrics([_record(content="{}", latency_s=1.5, attempts=1)])["sla_compliance"] == {
        "p95_under_2s": True,
        "p99_under_5s": True,
    }
    unmeasured = performance_metrics([_record(content="{}")])["sla_compliance"]
    assert (unmeasured["p95_under_2s"], unmeasured["p99_under_5s"]) == (None, None)


def test_the_latency_breakdown_by_hand() -> None:
    served = _record(
        content="{}",
        attempts=1,
        latency_s=1.0,
        wait_s=0.2,
        first_token_s=0.4,
        timings={"prompt_ms": 300.0, "predicted_ms": 500.0},
    )
    plain = _record(content="{}", attempts=1, latency_s=2.0)
    half_timed = _record(content="{}", attempts=1, latency_s=1.5, timings={"prompt_ms": 100.0})  # no predicted_ms
    found = performance_metrics([served, plain, half_timed])["latency_breakdown"]
    # only the first request has both server timings, a wait and a first token
    assert (found["server_timed"], found["streamed"]) == (1, 1)
    means = {k: found[k]["mean"] for k in found if isinstance(found[k], dict)}
    assert means == {
        "client_wait_ms": pytest.approx(200.0),
        "server_prompt_ms": pytest.approx(300.0),
        "server_generation_ms": pytest.approx(500.0),
        "network_and_queue_ms": pytest.approx(200.0),  # 1.0 s - (300 + 500) ms
        "time_to_first_token_ms": pytest.approx(400.0),
        "after_first_token_ms": pytest.approx(600.0),  # 1.0 s - 0.4 s
    }


def test_a_retried_record_without_a_sample_id_is_listed_with_none() -> None:
    score = score_sample({"a": "x"}, {"a": "x"})
    record = SimpleNamespace(response={"content": "{}", "attempts": 2}, score=score, meta={})
    assert performance_metrics([record])["retried_samples"] == [{"sample_id": None, "attempts": 2, "outcomes": []}]


def test_busy_time_of_intervals_before_zero() -> None:
    # the union of [-2, -1] and [0.5, 1]: 1 + 0.5 = 1.5 (times relative to any origin)
    assert busy_time([(-2.0, -1.0), (0.5, 1.0)]) == 1.5


def test_throughput_by_hand_counting_a_success_without_usage_as_no_tokens() -> None:
    usage = {"prompt_tokens": 100, "completion_tokens": 50}
    first = _record(content="{}", attempts=1, latency_s=0.5, started_at=10.0, finished_at=10.5, usage=usage)
    second = _record(content="{}", attempts=1, latency_s=0.25, started_at=10.25, finished_at=10.5)
    found = performance_metrics([first, second])["throughput"]
    # in flight over [10, 10.5]: 0.5 s; 2 successes: 4 per s, 240 a minute; 150 tokens: 300 per s; one field each: 4/s
    assert found == {
        "wall_time_s": 0.5,
        "busy_time_s": 0.5,
        "requests_per_s": 4.0,
        "samples_per_min": 240.0,
        "tokens_per_s": 300.0,
        "fields_per_s": 4.0,
    }


def test_throughput_of_an_instant_request_and_of_no_timestamps() -> None:
    instant = _record(content="{}", attempts=1, latency_s=0.0, started_at=10.0, finished_at=10.0)
    found = performance_metrics([instant])["throughput"]
    assert (found["wall_time_s"], found["busy_time_s"], found["note"]) == (0.0, 0.0, "zero wall time")
    untimed = performance_metrics([_record(content="{}", attempts=1, latency_s=1.0)])["throughput"]
    assert untimed == {
        "wall_time_s": None,
        "busy_time_s": None,
        "requests_per_s": None,
        "samples_per_min": None,
        "tokens_per_s": None,
        "fields_per_s": None,
        "note": "no request timestamps",
    }


def test_no_output_tokens_no_token_efficiency_and_one_kind_of_usage_is_enough_for_a_cost() -> None:
    assert performance_metrics([_record(content="{}", attempts=1)])["tokens"]["token_efficiency"] is None
    tokens = {"prompt": {"count": 1, "sum": 1000}, "completion": {"count": 0, "sum": 0}}
    # 1000 prompt tokens at $0.5 per 1,000
    found = cost(tokens, Prices(input_per_1k=0.5, output_per_1k=1.0), 1)
    assert (found["available"], found["estimated_cost_usd"]) == (True, 0.5)


def test_prices_are_applied_only_with_a_performance_section_and_a_price() -> None:
    metrics = {"performance": performance_metrics([_record(content="{}", attempts=1)])}
    before = dict(metrics["performance"]["cost"])
    apply_prices(metrics, Prices())  # no price: the section is left as it was
    assert metrics["performance"]["cost"] == before and "estimated_cost_usd" not in metrics
    bare: dict = {}
    apply_prices(bare, Prices(input_per_1k=1.0))  # no performance section: nothing to price
    assert bare == {}
