"""Performance metrics through pytest: offline runs say "not measured", timed runs reach metrics.json and the gate.

Timed responses come from an output source that a conftest.py supplies through the public
``pytest_extractbench_make_source`` hook, as any user's own client would.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}}, "required": ["name"]}
SAMPLES = [
    {"id": f"s{i}", "text": f"Person {i} is {20 + i} years old." + " filler" * i, "schema": SCHEMA,
     "expected": {"name": f"Person {i}", "age": 20 + i}}
    for i in range(4)
]
CONFTEST = '''
import json
import pytest
from pytest_extractbench.responses import ModelResponse

TIMINGS = json.load(open("timings.json"))


class TimedSource:
    """Answers with the gold JSON and the latency, usage and error class that timings.json gives."""

    def prepare(self, work):
        pass

    def response(self, model, sample):
        spec = TIMINGS[sample.id]
        start = 1000.0 + spec.get("offset", 0.0)
        common = dict(latency_s=spec["latency_s"], attempts=spec.get("attempts", 1), started_at=start,
                      finished_at=start + spec["latency_s"])
        if spec.get("error_class"):
            return ModelResponse(error_class=spec["error_class"], error="injected", **common)
        usage = {"prompt_tokens": spec["prompt_tokens"], "completion_tokens": 20,
                 "total_tokens": spec["prompt_tokens"] + 20}
        return ModelResponse(content=json.dumps(sample.expected), usage=usage, finish_reason="stop", **common)

    def close(self):
        pass


@pytest.hookimpl(tryfirst=True)
def pytest_extractbench_make_source(config, bench):
    return TimedSource()
'''


def write_jsonl(path: Path, rows: list) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


@pytest.fixture
def data(pytester: pytest.Pytester) -> Path:
    path = pytester.path / "data.jsonl"
    write_jsonl(path, SAMPLES)
    return path


def timed_run(pytester: pytest.Pytester, timings: dict, *args: str) -> tuple[pytest.RunResult, dict]:
    pytester.makeconftest(CONFTEST)
    (pytester.path / "timings.json").write_text(json.dumps(timings), encoding="utf-8")
    result = pytester.runpytest(
        "--extractbench", "--model", "m", "--extractbench-dataset", "data.jsonl", "--extractbench-output", "out", *args
    )
    metrics = json.loads((pytester.path / "out" / "metrics.json").read_text())
    return result, metrics["models"]["m"]


def test_offline_run_reports_performance_as_not_measured(pytester: pytest.Pytester, data: Path) -> None:
    write_jsonl(pytester.path / "preds.jsonl", [{"id": s["id"], "output": s["expected"]} for s in SAMPLES])
    result = pytester.runpytest(
        "--extractbench", "--extractbench-dataset", "data.jsonl", "--extractbench-predictions", "preds.jsonl",
        "--extractbench-output", "out", "--extractbench-price-input", "1.0", "--extractbench-price-output", "2.0",
    )
    result.assert_outcomes(passed=4)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["*performance*not measured: no request was sent to a server*", "*SLA minimum: passed"])
    model = json.loads((pytester.path / "out" / "metrics.json").read_text())["models"]["predictions"]
    perf = model["performance"]
    assert perf["measured"] is False
    assert perf["latency_ms"]["p95"] is None and perf["reliability"]["success_rate"] is None
    assert perf["cost"] == {"available": False, "price_input_per_1k": 1.0, "price_output_per_1k": 2.0,
                            "reason": "no token usage recorded"}
    checks = {c["label"]: c for c in model["sla"]["checks"]}
    assert checks["p95_latency_ms"]["passed"] is None and checks["success_rate"]["passed"] is None


def test_slow_p95_fails_the_session_with_one_line(pytester: pytest.Pytester, data: Path) -> None:
    timings = {f"s{i}": {"latency_s": 0.2, "prompt_tokens": 100 + 10 * i, "offset": 0.1 * i} for i in range(3)}
    timings["s3"] = {"latency_s": 9.0, "prompt_tokens": 400, "offset": 0.3}
    result, model = timed_run(pytester, timings, "--extractbench-price-input", "0.5",
                              "--extractbench-price-output", "1.5")
    result.assert_outcomes(passed=4)  # every sample is fine; the run as a whole is too slow
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    # p95 of 200, 200, 200, 9000 ms: rank 2.85 -> 200 + 0.85 * 8800 = 7680
    result.stdout.fnmatch_lines([
        "*latency*p50 200 ms*p95 7680 ms*",
        "*reliability*success 100.0%*",
        "*SLA minimum: FAILED",
        "*p95_latency_ms = 7680 (needs <= 5000): MISSED",
    ])
    assert "success_rate" not in result.stdout.str().split("SLA minimum: FAILED", 1)[1].split("recommendation")[0]
    perf = model["performance"]
    assert model["latency_p95_ms"] == pytest.approx(7680)
    assert perf["throughput"]["wall_time_s"] == pytest.approx(9.3)  # 1000.0 .. 1009.3
    # ranks of input length 1, 2, 3, 4 against latency ranks 2, 2, 2, 4 (ties share a rank): 3 / sqrt(5 * 3)
    assert perf["latency_correlation"]["input_chars"]["rho"] == pytest.approx(3 / 15**0.5)
    assert perf["tokens"]["prompt"]["sum"] == 100 + 110 + 120 + 400
    # (730 * 0.5 + 80 * 1.5) / 1000
    assert model["estimated_cost_usd"] == pytest.approx(0.485)


def test_failed_requests_fail_the_success_rate_threshold(pytester: pytest.Pytester, data: Path) -> None:
    timings = {f"s{i}": {"latency_s": 0.1, "prompt_tokens": 100} for i in range(3)}
    timings["s3"] = {"latency_s": 30.0, "error_class": "timeout", "attempts": 4}
    result, model = timed_run(pytester, timings)
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(["*errors*timeout 1", "*SLA minimum: FAILED", "*success_rate = 0.750 (needs >= 0.990): MISSED"])
    rel = model["performance"]["reliability"]
    assert (rel["timeout_rate"], rel["retry_rate"], rel["success_rate"]) == (0.25, 0.25, 0.75)
    assert model["performance"]["latency_ms"]["max"] == pytest.approx(100)  # the timeout is not a latency


def test_xdist_workers_give_the_same_performance_metrics(pytester: pytest.Pytester, data: Path) -> None:
    timings = {f"s{i}": {"latency_s": 0.1 * (i + 1), "prompt_tokens": 100 + i, "offset": 0.05 * i} for i in range(3)}
    timings["s3"] = {"latency_s": 2.0, "error_class": "server_error", "attempts": 4}
    _, single = timed_run(pytester, timings)
    _, parallel = timed_run(pytester, timings, "-n", "2")
    assert parallel["performance"] == single["performance"]
    assert single["performance"]["reliability"]["error_counts"]["server_error"] == 1
    assert single["performance"]["latency_ms"]["count"] == 3
    assert single["performance"]["latency_correlation"]["input_chars"]["n"] == 3  # text_chars came from the workers
