"""Not measured is not passed: a threshold on a metric that a failed component should have produced fails the
gate, naming the cause, in the terminal, metrics.json, summary.md, report.html and the JUnit XML.

Real loopback servers fail on purpose: a judge that answers 500, garbage or nothing (stopped), an embeddings
endpoint that is missing, broken or answers HTML, a streaming server that never sends a first token. Thresholds
that do not apply to a run (latency offline, time to first token without streaming) are skipped, not failed.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

import pytest
from faultserver import Fault, FaultServer

from _checks import assert_clean_terminal
from _net import serve_in_thread
from pytest_extractbench.live import verdict_cache

SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}, "city": {"type": "string"}}}
SAMPLES = [
    {"id": f"s{i}", "text": f"P{i} lives in Oslo.", "schema": SCHEMA, "expected": {"name": f"P{i}", "city": "Oslo"}}
    for i in range(3)
]
UNMEASURED = "could not be measured"
MODEL = "test-model"  # the model the fault server serves


@pytest.fixture
def project(pytester: pytest.Pytester, semantic_cache_dir: Path) -> pytest.Pytester:
    verdict_cache.clear_memory()  # these runs are in-process: no grade or vector may come from an earlier test
    pytester.path.joinpath("data.jsonl").write_text("".join(json.dumps(s) + "\n" for s in SAMPLES))
    pytester.path.joinpath("preds.jsonl").write_text(
        "".join(json.dumps({"id": s["id"], "output": json.dumps(s["expected"])}) + "\n" for s in SAMPLES)
    )
    return pytester


def bench(pytester: pytest.Pytester, *args: str, sla: str = "none", out: str = "out") -> pytest.RunResult:
    return pytester.runpytest(
        "-p",
        "no:randomly",
        "--extractbench",
        "--extractbench-dataset",
        "data.jsonl",
        "--extractbench-output",
        out,
        "--extractbench-sla",
        sla,
        "--extractbench-resamples",
        "100",
        "--junitxml",
        "junit.xml",
        *args,
    )


def offline(pytester: pytest.Pytester, *args: str, sla: str = "none", out: str = "out") -> pytest.RunResult:
    return bench(pytester, "--extractbench-predictions", "preds.jsonl", *args, sla=sla, out=out)


def artifacts(pytester: pytest.Pytester, run: str = "out") -> dict[str, str]:
    out = pytester.path / run
    return {name: (out / name).read_text(encoding="utf-8") for name in ("summary.md", "report.html", "metrics.json")}


def required_check(pytester: pytest.Pytester, model: str = "predictions") -> dict[str, Any]:
    document = json.loads((pytester.path / "out" / "metrics.json").read_text(encoding="utf-8"))
    (check,) = document["models"][model]["requirements"]["checks"]
    return check


def junit_failures(pytester: pytest.Pytester) -> list[str]:
    tree = ElementTree.parse(pytester.path / "junit.xml")
    return [failure.get("message", "") + (failure.text or "") for failure in tree.iter("failure")]


def assert_gate_fails_for(
    pytester: pytest.Pytester, result: pytest.RunResult, cause: str, model: str = "predictions"
) -> None:
    """The gate failed because the threshold could not be measured, and every sink says so with the cause."""
    assert result.ret == 1, result.stdout.str()
    check = required_check(pytester, model)
    assert check["outcome"] == UNMEASURED and check["passed"] is False and cause in check["reason"]
    text = result.stdout.str()
    assert_clean_terminal(text)
    assert f"{UNMEASURED}: " in text and cause in text
    assert "exit code 1 means a threshold could not be measured" in text
    files = artifacts(pytester)
    assert "**Gate: FAILED**" in files["summary.md"] and UNMEASURED in files["summary.md"]
    assert UNMEASURED in files["report.html"] and cause in files["report.html"]
    assert any(UNMEASURED in message and cause in message for message in junit_failures(pytester))


# -- the judge ----------------------------------------------------------------------------------


JUDGE_FAULTS = {
    "http500": Fault.status(500, "judge exploded"),
    "http401": Fault.status(401, "bad key"),
    "html": Fault.non_json(),
    "no-grades": Fault.ok("no grades here"),
}


@pytest.mark.slow
@pytest.mark.parametrize("fault", JUDGE_FAULTS.values(), ids=JUDGE_FAULTS.keys())
def test_a_judge_that_answers_nothing_usable_fails_a_required_judge_threshold(
    project: pytest.Pytester, fault_server: FaultServer, fault: Fault
) -> None:
    fault_server.default = fault
    result = offline(
        project,
        "--extractbench-judge",
        "judge-7b",
        "--extractbench-judge-url",
        fault_server.url,
        "--extractbench-require",
        "judge_score>=0.5",
    )
    assert_gate_fails_for(project, result, "the LLM judge failed on 3 of 3 sample(s)")


def test_a_judge_server_that_is_down_fails_the_gate(project: pytest.Pytester, fault_server: FaultServer) -> None:
    url = fault_server.url
    fault_server.stop()
    result = offline(
        project,
        "--extractbench-judge",
        "judge-7b",
        "--extractbench-judge-url",
        url,
        "--extractbench-require",
        "judge_score>=0.5",
    )
    assert_gate_fails_for(project, result, "the LLM judge failed on 3 of 3 sample(s)")


def test_a_judge_that_fails_on_some_samples_does_not_pass_on_the_rest(
    project: pytest.Pytester, fault_server: FaultServer
) -> None:
    # one batch graded (all 7), the next refused: the mean over the graded ones would read as a pass
    fault_server.enqueue(
        Fault.ok({"grades": [{"id": 1, "reasoning": "same", "score": 7}, {"id": 2, "reasoning": "same", "score": 7}]})
    )
    fault_server.default = Fault.status(400, "refused")
    result = offline(
        project,
        "--extractbench-judge",
        "judge-7b",
        "--extractbench-judge-url",
        fault_server.url,
        "--extractbench-require",
        "judge_score>=0.5",
    )
    check = required_check(project)
    assert check["value"] == pytest.approx(1.0)  # what the graded samples say
    assert_gate_fails_for(project, result, "the LLM judge failed on 1 of 3 sample(s)")


def test_warn_lets_an_unmeasured_threshold_pass_and_the_summary_says_so_first(
    project: pytest.Pytester, fault_server: FaultServer
) -> None:
    fault_server.default = Fault.status(500, "judge exploded")
    result = offline(
        project,
        "--extractbench-judge",
        "judge-7b",
        "--extractbench-judge-url",
        fault_server.url,
        "--extractbench-require",
        "judge_score>=0.5",
        "--extractbench-unmeasured",
        "warn",
    )
    assert result.ret == 0, result.stdout.str()
    check = required_check(project)
    assert check["outcome"] == UNMEASURED and check["passed"] is None
    assert "warning: 1 threshold(s) could not be measured and were let pass" in result.stdout.str()
    summary = artifacts(project)["summary.md"]
    first = summary.index("**Warning**: 1 threshold(s) could not be measured")
    assert first < summary.index("**Gate: passed**")
    assert "Warning: 1 threshold(s) could not be measured" in artifacts(project)["report.html"]
    assert junit_failures(project) == []
    properties = ElementTree.parse(project.path / "junit.xml").iter("property")
    assert any(p.get("name") == "extractbench_warning" and UNMEASURED in p.get("value", "") for p in properties)


def test_the_policy_is_read_from_the_config_file_too(project: pytest.Pytester, fault_server: FaultServer) -> None:
    fault_server.default = Fault.status(500, "judge exploded")
    project.path.joinpath("bench.yaml").write_text("metrics:\n  unmeasured: warn\n  require: ['judge_score>=0.5']\n")
    result = offline(
        project,
        "--extractbench-judge",
        "judge-7b",
        "--extractbench-judge-url",
        fault_server.url,
        "--extractbench-config",
        "bench.yaml",
    )
    assert result.ret == 0 and required_check(project)["outcome"] == UNMEASURED


# -- the embeddings ------------------------------------------------------------------------------------


class _Embeddings(BaseHTTPRequestHandler):
    """/v1/embeddings answered as the server's ``mode`` says: a 500, HTML with status 200, or no vectors."""

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        mode = self.server.mode  # type: ignore[attr-defined]
        status, body, kind = {
            "http500": (500, b'{"error": {"message": "embedder exploded"}}', "application/json"),
            "html": (200, b"<html>502 Bad Gateway</html>", "text/html"),
            "empty": (200, b'{"object": "list", "data": [], "model": "e"}', "application/json"),
        }[mode]
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def embeddings_server() -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Embeddings)
    serve_in_thread(server)
    yield server
    server.shutdown()
    server.server_close()


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["http500", "html", "empty"])
def test_an_unusable_embeddings_server_fails_a_required_similarity(
    project: pytest.Pytester, embeddings_server: ThreadingHTTPServer, mode: str
) -> None:
    embeddings_server.mode = mode  # type: ignore[attr-defined]
    url = f"http://127.0.0.1:{embeddings_server.server_address[1]}/v1"
    result = offline(project, "--extractbench-semantic", url, "--extractbench-require", "semantic_similarity>=0.5")
    assert_gate_fails_for(project, result, "the embeddings backend")


def test_an_embeddings_endpoint_that_is_missing_fails_the_gate(
    project: pytest.Pytester, fault_server: FaultServer
) -> None:
    # the fault server knows only chat completions: /v1/embeddings is a 404
    result = offline(
        project, "--extractbench-semantic", fault_server.url, "--extractbench-require", "semantic_similarity>=0.5"
    )
    assert_gate_fails_for(project, result, "the embeddings backend failed on 3 of 3 sample(s)")


# -- what does not apply to a run -------------------------------------------------------------------------


def test_latency_in_an_offline_run_is_not_applicable_and_passes(project: pytest.Pytester) -> None:
    # the tier's latency and success-rate thresholds do not apply either: the outputs are the gold
    result = offline(project, "--extractbench-require", "latency_p95_ms<=1000", sla="minimum")
    assert result.ret == 0, result.stdout.str()
    check = required_check(project)
    assert check["outcome"] == "not applicable" and "offline" in check["reason"]
    document = json.loads((project.path / "out" / "metrics.json").read_text(encoding="utf-8"))
    outcomes = {c["metric"]: c["outcome"] for c in document["models"]["predictions"]["sla"]["checks"]}
    assert outcomes["latency_p95_ms"] == outcomes["success_rate"] == "not applicable"
    assert outcomes["extraction_quality_score"] == "held"
    assert "every threshold held (2 not applicable to this run)" in artifacts(project)["summary.md"]


def test_a_judge_threshold_without_a_judge_is_not_applicable(project: pytest.Pytester) -> None:
    result = offline(project, "--extractbench-require", "judge_score>=0.5")
    assert result.ret == 0
    check = required_check(project)
    assert check["outcome"] == "not applicable" and "--extractbench-judge" in check["reason"]


# -- time to first token -----------------------------------------------------------------------------------


def _whole_answer(content: Any) -> Fault:
    """A server that ignores "stream": the whole completion at once, so no first token is ever timed."""
    body = {
        "id": "x",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": json.dumps(content)}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 5, "completion_tokens": 5, "total_tokens": 10},
    }
    return Fault.raw(json.dumps(body).encode())


def live(pytester: pytest.Pytester, url: str, *args: str, sla: str = "none") -> pytest.RunResult:
    return bench(pytester, "--extractbench-base-url", url, "--model", MODEL, "--extractbench-no-cache", *args, sla=sla)


def test_a_streaming_server_that_never_sends_a_first_token_fails_a_ttft_threshold(
    project: pytest.Pytester, fault_server: FaultServer
) -> None:
    fault_server.default = _whole_answer({"name": "P0", "city": "Oslo"})
    result = live(
        project, fault_server.url, "--extractbench-stream", "--extractbench-require", "time_to_first_token_p95_ms<=5000"
    )
    assert_gate_fails_for(project, result, "no streamed answer sent a first token", MODEL)


def test_ttft_without_streaming_is_not_applicable(project: pytest.Pytester, fault_server: FaultServer) -> None:
    result = live(project, fault_server.url, "--extractbench-require", "time_to_first_token_p95_ms<=5000")
    assert result.ret == 0, result.stdout.str()
    check = required_check(project, MODEL)
    assert check["outcome"] == "not applicable" and "--extractbench-stream" in check["reason"]


def test_a_streamed_first_token_is_measured_and_holds(project: pytest.Pytester, fault_server: FaultServer) -> None:
    result = live(
        project, fault_server.url, "--extractbench-stream", "--extractbench-require", "time_to_first_token_p95_ms<=5000"
    )
    assert result.ret == 0, result.stdout.str()
    assert required_check(project, MODEL)["outcome"] == "held"


def test_a_server_that_answers_nothing_fails_the_tier_latency_as_unmeasured(
    project: pytest.Pytester, fault_server: FaultServer
) -> None:
    fault_server.default = Fault.status(400, "no")
    result = live(project, fault_server.url, "--extractbench-retries", "0", sla="minimum")
    assert result.ret == 1
    document = json.loads((project.path / "out" / "metrics.json").read_text(encoding="utf-8"))
    outcomes = {c["metric"]: c["outcome"] for c in document["models"][MODEL]["sla"]["checks"]}
    assert outcomes["latency_p95_ms"] == UNMEASURED
    assert outcomes["success_rate"] == "missed"  # 0 of 3 requests succeeded: measured, and missed
