"""Every attempt counted: each attempt's latency and outcome in the response, the end-to-end latency from the first
attempt's start to the final answer, against a real loopback server (tests/faultserver.py), and the reliability
counts they feed. Times are bounded by what the server was told to do, never asserted as speeds."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from faultserver import Fault, FaultServer

from pytest_extractbench import SampleRecord, score_sample
from pytest_extractbench.analysis.performance import performance_metrics, reliability
from pytest_extractbench.dataset.responses import ModelResponse
from pytest_extractbench.live.client import ClientConfig, ExtractionClient, build_messages
from pytest_extractbench.live.journal import response_from_dict

TIMEOUT_S = 1.0
BACKOFF_S = 0.2  # with jitter 0: the delay before the first retry exactly


def config(server: FaultServer, **overrides: Any) -> ClientConfig:
    values: dict[str, Any] = {
        "timeout_s": TIMEOUT_S,
        "backoff_base_s": BACKOFF_S,
        "backoff_max_s": BACKOFF_S,
        "jitter": 0.0,
    }
    values.update(overrides)
    return ClientConfig(server.url, **values)


def extract(cfg: ClientConfig) -> ModelResponse:
    async def go() -> ModelResponse:
        async with ExtractionClient(cfg) as client:
            return await client.extract("test-model", build_messages("Ann", SCHEMA), SCHEMA)

    return asyncio.run(go())


def timed_extract(cfg: ClientConfig) -> tuple[ModelResponse, float]:
    """The response and the wall time the test itself saw around the call (an upper bound of any recorded time)."""
    t0 = time.perf_counter()
    response = extract(cfg)
    return response, time.perf_counter() - t0


def test_a_timed_out_attempt_is_recorded_and_the_end_to_end_latency_covers_it(fault_server: FaultServer) -> None:
    fault_server.enqueue(Fault.slow(5.0), Fault.ok(delay=0.1))
    response, wall = timed_extract(config(fault_server))
    assert response.ok and response.attempts == 2 and fault_server.served == ["slow", "ok"]
    first, second = response.attempt_log
    assert (first["outcome"], second["outcome"]) == ("timeout", "ok")
    assert f"within {TIMEOUT_S:g}s" in first["error"]
    # the first attempt lasted its whole budget (the server held it 5 s); the second started after it and the backoff
    assert first["start_s"] == 0.0 and TIMEOUT_S <= first["latency_s"] < 5.0
    assert second["start_s"] >= first["latency_s"] + BACKOFF_S
    assert second["latency_s"] >= 0.1 and response.latency_s == second["latency_s"]  # the answering attempt alone
    assert response.end_to_end_s == second["start_s"] + second["latency_s"]
    assert TIMEOUT_S + BACKOFF_S + 0.1 <= response.end_to_end_s <= wall


def test_an_error_then_an_answer_keeps_both_attempts(fault_server: FaultServer) -> None:
    fault_server.enqueue(Fault.status(500, "the GPU fell over"))
    response, wall = timed_extract(config(fault_server, timeout_s=10.0))
    assert response.ok and response.error_class is None
    assert [a["outcome"] for a in response.attempt_log] == ["server_error", "ok"]
    assert "the GPU fell over" in response.attempt_log[0]["error"] and "error" not in response.attempt_log[1]
    assert response.attempt_log[1]["start_s"] >= response.attempt_log[0]["latency_s"] + BACKOFF_S
    assert response.latency_s < response.end_to_end_s <= wall


def test_a_slow_single_attempt_has_its_own_latency_end_to_end(fault_server: FaultServer) -> None:
    fault_server.enqueue(Fault.ok(delay=0.3))
    response, wall = timed_extract(config(fault_server, timeout_s=10.0))
    assert response.attempts == 1 and [a["outcome"] for a in response.attempt_log] == ["ok"]
    assert response.attempt_log[0]["start_s"] == 0.0
    assert 0.3 <= response.latency_s == response.end_to_end_s == response.attempt_log[0]["latency_s"] <= wall


def test_a_final_failure_has_an_end_to_end_latency_but_no_answer_latency(fault_server: FaultServer) -> None:
    fault_server.default = Fault.status(503, "loading")
    response, wall = timed_extract(config(fault_server, timeout_s=10.0, retries=2))
    assert response.error_class == "server_error" and response.latency_s is None
    assert [a["outcome"] for a in response.attempt_log] == ["server_error"] * 3
    # backoff 0.2 s before each of the two retries
    assert 2 * BACKOFF_S <= response.end_to_end_s <= wall


def test_a_request_error_is_one_logged_attempt(fault_server: FaultServer) -> None:
    fault_server.enqueue(Fault.bad_request("no such field"))
    response = extract(config(fault_server, timeout_s=10.0))
    assert response.error_class == "request_error" and response.attempts == 1
    assert [a["outcome"] for a in response.attempt_log] == ["request_error"]
    assert response.end_to_end_s == response.attempt_log[0]["latency_s"]


def test_the_attempt_log_survives_the_journal_and_odd_entries_are_dropped() -> None:
    log = [
        {"start_s": 0.0, "latency_s": 1.5, "outcome": "timeout", "error": "timed out"},
        {"start_s": 2.0, "latency_s": 0.5, "outcome": "ok"},
    ]
    stored = ModelResponse(content="{}", attempts=2, latency_s=0.5, end_to_end_s=2.5, attempt_log=log).as_dict()
    back = response_from_dict(stored)
    assert back.attempt_log == log and back.end_to_end_s == 2.5
    odd = response_from_dict(
        {
            **stored,
            "end_to_end_s": float("nan"),
            "attempt_log": [
                log[0],
                "x",
                {"outcome": "ok", "start_s": -1, "latency_s": 1},
                {"outcome": 3, "start_s": 0, "latency_s": 1},
                {"outcome": "ok", "start_s": 0, "latency_s": float("inf")},
            ],
        }
    )
    assert odd.attempt_log == [log[0]] and odd.end_to_end_s is None


# -- the reliability counts and latency figures they feed ------------------------------------------------------

SCHEMA = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}


def attempt(start: float, latency: float, outcome: str = "ok") -> dict[str, Any]:
    return {"start_s": start, "latency_s": latency, "outcome": outcome}


def rec(sample_id: str, *log: dict[str, Any], error_class: str | None = None, **fields: Any) -> SampleRecord:
    end = log[-1]["start_s"] + log[-1]["latency_s"] if log else None
    last_ok = log and log[-1]["outcome"] == "ok"
    values: dict[str, Any] = {"latency_s": log[-1]["latency_s"] if last_ok else None, **fields}
    response = ModelResponse(
        content=None if error_class else '{"a": "x"}',
        error_class=error_class,
        attempts=len(log) or 1,
        end_to_end_s=end,
        attempt_log=list(log) or None,
        started_at=100.0,
        finished_at=100.0 + (end or 1.0),
        **values,
    )
    score = score_sample(None if error_class else {"a": "x"}, {"a": "x"}, SCHEMA)
    return SampleRecord("m", sample_id, score, response=response.as_dict())


# made in the tests that use them: the scorer run while pytest collects would be outside every test, and the
# mutation tool would judge each of its mutants in a fresh import (tests/mutation/README.md)
def records() -> list[SampleRecord]:
    return [
        rec("timed-out-once", attempt(0, 600, "timeout"), attempt(601, 300)),  # 901 s end to end, 300 s answering
        rec("errored-once", attempt(0, 1, "server_error"), attempt(2, 4)),  # 6 s, 4 s
        rec("twice-timed-out", attempt(0, 600, "timeout"), attempt(601, 600, "timeout"), attempt(1202, 10)),
        rec("one-go", attempt(0, 2)),
        rec("gave-up", attempt(0, 600, "timeout"), attempt(601, 600, "timeout"), error_class="timeout"),
        rec("old-journal", latency_s=3.0),  # no log: one attempt, end to end = its latency
    ]


def test_attempt_level_timeouts_and_errors_are_counted_when_a_later_attempt_succeeds() -> None:
    rel = reliability(records())
    # attempts: 2 + 2 + 3 + 1 + 2 + 1 (the old journal's, known to be its one answer)
    assert rel["attempts_counted"] == 11
    assert rel["attempt_timeouts"] == 1 + 2 + 2 and rel["attempt_errors"] == 1
    assert rel["attempt_error_counts"] == {"server_error": 1, "timeout": 5}
    assert rel["attempt_timeout_rate"] == pytest.approx(5 / 11)
    # the per-sample figures are as before: one sample timed out in the end, four were retried
    assert rel["timeout_rate"] == pytest.approx(1 / 6) and rel["retry_rate"] == pytest.approx(4 / 6)
    assert rel["success_rate"] == pytest.approx(5 / 6)


def test_latency_reads_end_to_end_and_the_answering_attempt_separately() -> None:
    perf = performance_metrics(records())
    # successful samples: end to end 901, 6, 1212, 2, 3 s; answering attempt 300, 4, 10, 2, 3 s
    assert perf["end_to_end_ms"]["max"] == 1_212_000 and perf["end_to_end_ms"]["p50"] == 6_000
    assert perf["latency_ms"]["max"] == 300_000 and perf["latency_ms"]["p50"] == 4_000
    assert perf["end_to_end_ms"]["count"] == perf["latency_ms"]["count"] == 5
    # every attempt, the failed ones and the final failure's included
    assert perf["attempt_latency_ms"]["count"] == 11 and perf["attempt_latency_ms"]["max"] == 600_000
    assert perf["sla_compliance"]["p95_under_2s"] is False
    assert [(r["sample_id"], r["attempts"], r["outcomes"]) for r in perf["retried_samples"]] == [
        ("timed-out-once", 2, ["timeout", "ok"]),
        ("errored-once", 2, ["server_error", "ok"]),
        ("twice-timed-out", 3, ["timeout", "timeout", "ok"]),
        ("gave-up", 2, ["timeout", "timeout"]),
    ]
