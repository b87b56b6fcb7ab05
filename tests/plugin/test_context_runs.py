"""Documents that do not fit the served model's context, and throughput that tells the truth, through pytest.

The server is tests/faultserver.py on loopback, answering some samples as llama-server and vLLM do
when the prompt exceeds the context (HTTP 400), the others with their gold.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from benchrun import BenchRun
from faultserver import Fault, FaultServer

from pytest_extractbench.core.rundoc import iter_samples

SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
LLAMA = {
    "error": {
        "code": 400,
        "type": "exceed_context_size_error",
        "n_prompt_tokens": 40123,
        "n_ctx": 32768,
        "message": "request (40123 tokens) exceeds the available context size (32768 tokens), try increasing it",
    }
}
VLLM = {
    "object": "error",
    "type": "BadRequestError",
    "code": 400,
    "message": "This model's maximum context length is 8192 tokens. However, you requested 9500 tokens (9000 in "
    "the messages, 500 in the completion). Please reduce the length of the messages or completion.",
}


def write_data(pytester: pytest.Pytester, n: int) -> None:
    rows = [
        {"id": f"s{i}", "text": f"Record s{i}: the name is P{i}.", "schema": SCHEMA, "expected": {"name": f"P{i}"}}
        for i in range(n)
    ]
    (pytester.path / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def sample_of(body: dict[str, Any]) -> int:
    text = " ".join(str(m.get("content")) for m in body["messages"] if m.get("role") == "user")
    return int(re.search(r"Record s(\d+)", text).group(1))


ARGS = ("--extractbench-dataset", "data.jsonl", "--extractbench-sla", "minimum", "--model", "test-model")


@pytest.mark.slow
def test_samples_beyond_the_context_are_counted_listed_and_fail_the_gate(
    run: BenchRun, pytester: pytest.Pytester, fault_server: FaultServer
) -> None:
    write_data(pytester, 6)
    fault_server.answer = lambda body: {"name": f"P{sample_of(body)}"}
    fault_server.plan = lambda i, body: {1: Fault.error_body(400, LLAMA), 4: Fault.error_body(400, VLLM)}.get(
        sample_of(body)
    )
    result = run(*ARGS, "--extractbench-base-url", fault_server.url)
    result.assert_outcomes(passed=4, failed=2)
    assert fault_server.counts["http400"] == 2 and len(fault_server.requests) == 6  # not retried
    result.stdout.fnmatch_lines(
        [
            "*sample 's1'*no output (context_exceeded): the prompt (40123 tokens) does not fit the model's context "
            "(32768 tokens): HTTP 400: request (40123 tokens) exceeds*",
            "2 sample(s) did not fit the model's context (context_exceeded): s1 (40123 tokens > 32768), "
            "s4 (9000 tokens > 8192)",
            "*errors              context_exceeded 2",
            "*SLA minimum: FAILED",
            "*success_rate = 0.667 (needs >= 0.990): missed",
        ]
    )
    document = json.loads((pytester.path / "out" / "metrics.json").read_text())
    reliability = document["models"]["test-model"]["performance"]["reliability"]
    assert reliability["error_counts"]["context_exceeded"] == 2 and reliability["total_requests"] == 6
    assert reliability["context_exceeded_rate"] == pytest.approx(2 / 6)
    rows = {r["sample_id"]: r for r in iter_samples(pytester.path / "out" / "samples.jsonl")}
    assert rows["s4"]["response"]["context"] == {"prompt_tokens": 9000, "limit": 8192}
    summary_md = (pytester.path / "out" / "summary.md").read_text()
    assert "- **Did not fit the model's context**: 2 sample(s) (`context_exceeded`)" in summary_md
    assert "**Context**" not in summary_md  # a server URL: the plugin chose no context
    assert result.ret == pytest.ExitCode.TESTS_FAILED


def test_throughput_is_not_measured_when_nothing_succeeded(
    run: BenchRun, pytester: pytest.Pytester, fault_server: FaultServer
) -> None:
    # The first run of the issue: every document refused at once by the server.
    write_data(pytester, 3)
    fault_server.default = Fault.error_body(400, LLAMA)
    result = run(*ARGS, "--extractbench-base-url", fault_server.url)
    result.assert_outcomes(failed=3)
    result.stdout.fnmatch_lines(["*throughput          not measured: no request succeeded"])
    assert "req/s" not in result.stdout.str()
    thr = json.loads((pytester.path / "out" / "metrics.json").read_text())["models"]["test-model"]["performance"][
        "throughput"
    ]
    assert thr["requests_per_s"] is None and thr["samples_per_min"] is None


def test_throughput_figures_agree_on_a_partly_failing_run(
    run: BenchRun, pytester: pytest.Pytester, fault_server: FaultServer
) -> None:
    write_data(pytester, 8)
    fault_server.answer = lambda body: {"name": f"P{sample_of(body)}"}
    # half the documents do not fit; the others take 0.2 s each
    fault_server.plan = lambda i, body: Fault.error_body(400, LLAMA) if sample_of(body) % 2 else Fault.ok(delay=0.2)
    run(*ARGS, "--extractbench-base-url", fault_server.url)
    thr = json.loads((pytester.path / "out" / "metrics.json").read_text())["models"]["test-model"]["performance"][
        "throughput"
    ]
    assert thr["samples_per_min"] == pytest.approx(60 * thr["requests_per_s"])
    assert thr["requests_per_s"] == pytest.approx(4 / thr["busy_time_s"])  # the 4 answered, over the busy time
