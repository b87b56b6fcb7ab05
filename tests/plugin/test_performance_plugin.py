"""Performance metrics through pytest: offline runs say "not measured"; live runs against a real
loopback server (tests/faultserver.py) reach metrics.json, the terminal summary and the SLA gate."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from faultserver import Fault, FaultServer
from scipy.stats import spearmanr

from pytest_extractbench.core.rundoc import iter_samples

SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
    "required": ["name"],
}
SAMPLES = [
    {
        "id": f"s{i}",
        "text": f"Record s{i}: Person {i} is {20 + i} years old." + " filler" * i,
        "schema": SCHEMA,
        "expected": {"name": f"Person {i}", "age": 20 + i},
    }
    for i in range(4)
]


def sample_of(body: dict[str, Any]) -> int:
    text = " ".join(str(m.get("content")) for m in body["messages"] if m.get("role") == "user")
    return int(re.search(r"Record s(\d)", text).group(1))


def gold_answer(body: dict[str, Any]) -> Any:
    return SAMPLES[sample_of(body)]["expected"]


def plan(rules: dict[int, Any]) -> Any:
    """Server plan by sample number: ``rules[n](attempt)`` gives the fault (None: answer the gold)."""
    seen: Counter[int] = Counter()

    def choose(index: int, body: dict[str, Any]) -> Fault | None:
        n = sample_of(body)
        attempt, seen[n] = seen[n], seen[n] + 1
        return rules[n](attempt) if n in rules else None

    return choose


@pytest.fixture
def server(fault_server: FaultServer) -> FaultServer:
    fault_server.answer = gold_answer
    return fault_server


def write_jsonl(path: Path, rows: list) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


@pytest.fixture
def data(pytester: pytest.Pytester) -> Path:
    path = pytester.path / "data.jsonl"
    write_jsonl(path, SAMPLES)
    return path


def live_run(pytester: pytest.Pytester, server: FaultServer, *args: str) -> tuple[pytest.RunResult, dict]:
    result = pytester.runpytest(
        "-p",
        "no:randomly",
        "--extractbench",
        "--model",
        "test-model",
        "--extractbench-base-url",
        server.url,
        "--extractbench-dataset",
        "data.jsonl",
        "--extractbench-output",
        "out",
        "--extractbench-no-cache",
        *args,
    )
    metrics = json.loads((pytester.path / "out" / "metrics.json").read_text())
    return result, metrics["models"]["test-model"]


def test_offline_run_reports_performance_as_not_measured(pytester: pytest.Pytester, data: Path) -> None:
    write_jsonl(pytester.path / "preds.jsonl", [{"id": s["id"], "output": s["expected"]} for s in SAMPLES])
    result = pytester.runpytest(
        "--extractbench",
        "--extractbench-dataset",
        "data.jsonl",
        "--extractbench-predictions",
        "preds.jsonl",
        "--extractbench-output",
        "out",
        "--extractbench-price-input",
        "1.0",
        "--extractbench-price-output",
        "2.0",
    )
    result.assert_outcomes(passed=4)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["*performance*not measured: no request was sent to a server*", "*SLA minimum: passed"])
    model = json.loads((pytester.path / "out" / "metrics.json").read_text())["models"]["predictions"]
    perf = model["performance"]
    assert perf["measured"] is False
    assert perf["latency_ms"]["p95"] is None and perf["reliability"]["success_rate"] is None
    assert perf["cost"] == {
        "available": False,
        "price_input_per_1k": 1.0,
        "price_output_per_1k": 2.0,
        "reason": "no token usage recorded",
    }
    checks = {c["label"]: c for c in model["sla"]["checks"]}
    assert checks["p95_latency_ms"]["passed"] is None and checks["success_rate"]["passed"] is None


@pytest.mark.slow
def test_a_slow_p95_fails_the_session_with_one_line(pytester: pytest.Pytester, data: Path, server: FaultServer) -> None:
    # latency grows with the sample number, as does the text length
    server.plan = plan({n: (lambda a, d=delay: Fault.ok(delay=d)) for n, delay in ((1, 0.1), (2, 0.2), (3, 1.6))})
    # excellence: p95 <= 1000 ms; the gold answers pass every other threshold
    result, model = live_run(
        pytester,
        server,
        "--extractbench-sla",
        "excellence",
        "--extractbench-price-input",
        "0.5",
        "--extractbench-price-output",
        "1.5",
    )
    result.assert_outcomes(passed=4)  # every sample is fine; the run as a whole is too slow
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "*latency*p50 * ms*p95 * ms*p99 * ms*(mean *, max *; 4 timed, 0 cached)",
            "*throughput*req/s*samples/min*tokens/s*fields/s",
            "*tokens*mean prompt*cost $*",
            "*reliability*success 100.0%*timeout 0.0%*",
            "*SLA excellence: FAILED",
            "*p95_latency_ms = * (needs <= 1000): missed",
            "*recommendation:*",
        ]
    )
    missed = result.stdout.str().split("SLA excellence: FAILED", 1)[1].split("recommendation")[0]
    assert missed.count(": missed") == 1
    perf = model["performance"]
    # Lower bounds from the server's own delays (0, 0.1, 0.2 and 1.6 s): a request takes at least as long
    # as the server holds it, however loaded the machine. The rest is order: p50 is the median of the
    # recorded latencies, below s3's, which is the maximum.
    recorded = list(iter_samples(pytester.path / "out" / "samples.jsonl"))
    latency_ms = {r["sample_id"]: 1000 * r["response"]["latency_s"] for r in recorded}
    assert len(latency_ms) == 4
    for sid, delay_ms in (("s0", 0), ("s1", 100), ("s2", 200), ("s3", 1600)):
        assert latency_ms[sid] >= delay_ms, sid
    ordered = sorted(latency_ms.values())
    assert perf["latency_ms"]["max"] == pytest.approx(max(latency_ms.values())) and perf["latency_ms"]["max"] >= 1600
    assert model["latency_p95_ms"] > 1000
    assert perf["latency_ms"]["p50"] == pytest.approx((ordered[1] + ordered[2]) / 2)
    assert perf["latency_ms"]["p50"] >= 150  # the two middle delays' mean at least
    assert perf["latency_ms"]["p50"] < model["latency_p95_ms"] <= perf["latency_ms"]["max"]
    corr = perf["latency_correlation"]
    # the text grows with the sample number: Spearman's rho of the recorded latencies against it
    chars = [len(SAMPLES[int(sid[1:])]["text"]) for sid in latency_ms]
    expected_rho = spearmanr(chars, list(latency_ms.values())).statistic
    assert (corr["input_chars"]["rho"], corr["input_chars"]["n"]) == (pytest.approx(expected_rho), 4)
    assert corr["schema_fields"]["note"] == "constant input"
    assert perf["throughput"]["wall_time_s"] >= 1.6
    tokens = perf["tokens"]
    assert tokens["prompt"]["count"] == tokens["completion"]["count"] == 4
    assert model["estimated_cost_usd"] == pytest.approx(
        tokens["prompt"]["sum"] * 0.5 / 1000 + tokens["completion"]["sum"] * 1.5 / 1000
    )
    assert model["sla"]["passed"] is False


def test_failed_and_retried_requests_set_the_reliability_rates(
    pytester: pytest.Pytester, data: Path, server: FaultServer
) -> None:
    server.plan = plan(
        {
            2: lambda attempt: Fault.status(503) if attempt == 0 else None,  # the retry succeeds
            3: lambda attempt: Fault.status(500),  # fails every attempt
        }
    )
    result, model = live_run(pytester, server, "--extractbench-retries", "1")
    result.assert_outcomes(passed=3, failed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        ["*errors*server_error 1", "*SLA minimum: FAILED", "*success_rate = 0.750 (needs >= 0.990): missed"]
    )
    rel = model["performance"]["reliability"]
    assert (rel["success_rate"], rel["retry_rate"], rel["timeout_rate"]) == (0.75, 0.5, 0.0)
    assert rel["retried_successes"] == 1
    assert rel["reliability_score"] == pytest.approx((3 - 0.5) / 4)
    assert rel["error_counts"]["server_error"] == 1 and sum(rel["error_counts"].values()) == 1
    assert model["performance"]["latency_ms"]["count"] == 3  # the failed request is not a latency


@pytest.mark.slow
def test_xdist_workers_give_the_same_counts(pytester: pytest.Pytester, data: Path, server: FaultServer) -> None:
    server.plan = plan({1: lambda attempt: Fault.length()})
    _, single = live_run(pytester, server, "-p", "no:xdist")
    _, parallel = live_run(pytester, server, "-n", "2")
    for key in ("reliability", "tokens", "requests"):
        assert parallel["performance"][key] == single["performance"][key], key
    assert single["performance"]["reliability"]["truncation_rate"] == 0.25
    # text_chars comes from the process that ran the item
    assert parallel["performance"]["latency_correlation"]["input_chars"]["n"] == 3


@pytest.mark.slow
def test_retried_samples_count_every_attempt_and_the_gates_read_end_to_end(
    pytester: pytest.Pytester, data: Path, server: FaultServer
) -> None:
    # s0 times out once (1 s budget, the server holds it 5 s), s1 gets a 500 once, s2 answers slowly in one go
    server.plan = plan(
        {
            0: lambda a: Fault.slow(5.0) if a == 0 else None,
            1: lambda a: Fault.status(500, "the GPU fell over") if a == 0 else None,
            2: lambda a: Fault.ok(delay=0.3),
        }
    )
    result, model = live_run(
        pytester,
        server,
        "--extractbench-timeout",
        "1",
        "--extractbench-sla",
        "none",
        "--extractbench-require",
        "latency_p95_ms<=1",
    )
    result.assert_outcomes(passed=4)
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # the requirement, not a sample
    line = "2 samples needed 2 attempts: s0, s1; failed attempts: server_error 1, timeout 1"
    result.stdout.fnmatch_lines([f"*attempts*{line}*"])
    summary = (pytester.path / "out" / "summary.md").read_text()
    assert "- **Attempts**: " + line.replace("_", "\\_") in summary
    perf, rel = model["performance"], model["performance"]["reliability"]
    # attempt level: 6 attempts, one timeout and one server error though every sample succeeded in the end
    assert (rel["attempts_counted"], rel["attempt_timeouts"], rel["attempt_errors"]) == (6, 1, 1)
    assert rel["attempt_error_counts"] == {"server_error": 1, "timeout": 1}
    assert (rel["timeout_rate"], rel["success_rate"], rel["retry_rate"]) == (0.0, 1.0, 0.5)
    records = {r["sample_id"]: r["response"] for r in iter_samples(pytester.path / "out" / "samples.jsonl")}
    assert [a["outcome"] for a in records["s0"]["attempt_log"]] == ["timeout", "ok"]
    assert [a["outcome"] for a in records["s1"]["attempt_log"]] == ["server_error", "ok"]
    s0 = records["s0"]
    assert s0["attempt_log"][0]["latency_s"] >= 1.0 and s0["end_to_end_s"] >= 1.0 + s0["latency_s"]
    assert records["s2"]["end_to_end_s"] == records["s2"]["latency_s"] >= 0.3
    # the SLA figure and the requirement read end to end; the answering attempt's p95 is kept beside it
    assert model["latency_p95_ms"] == perf["end_to_end_ms"]["p95"] >= perf["latency_ms"]["p95"]
    assert perf["end_to_end_ms"]["max"] == pytest.approx(1000 * max(r["end_to_end_s"] for r in records.values()))
    assert perf["end_to_end_ms"]["max"] >= 1000
    assert perf["attempt_latency_ms"]["count"] == 6
    [check] = model["requirements"]["checks"]
    assert (check["metric"], check["value"], check["passed"]) == ("latency_p95_ms", model["latency_p95_ms"], False)
    # the terminal's latency line is the gated figure too
    p95 = perf["end_to_end_ms"]["p95"]
    result.stdout.fnmatch_lines([f"*latency*p95 {p95:,.0f} ms*(mean *, max *; 4 timed, 0 cached)"])
