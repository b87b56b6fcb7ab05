"""Answers you can trust across runs: every run asks unless told otherwise, a reused answer says so,
and the cache never answers for another server, another model file or edited extractor code.

Real loopback servers (tests/faultserver.py and a small llama-server look-alike with ``/props``), real
files and real pytester runs.
"""

from __future__ import annotations

import json
import re
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from faultserver import FaultServer

from _net import serve_in_thread
from pytest_extractbench.core.rundoc import iter_samples

SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
    "required": ["name", "age"],
}
N = 6


def sample(n: int) -> dict[str, Any]:
    return {
        "id": f"s{n:02d}",
        "text": f"Record s{n:02d}: P{n} is {n} years old.",
        "schema": SCHEMA,
        "expected": {"name": f"P{n}", "age": n},
    }


def right(body: dict[str, Any]) -> Any:
    text = " ".join(str(m.get("content")) for m in body["messages"] if m.get("role") == "user")
    n = int(re.search(r"Record s(\d\d)", text).group(1))
    return {"name": f"P{n}", "age": n}


def empty(body: dict[str, Any]) -> Any:
    return {}


@pytest.fixture
def data(pytester: pytest.Pytester) -> Path:
    path = pytester.path / "data.jsonl"
    path.write_text("".join(json.dumps(sample(n)) + "\n" for n in range(N)), encoding="utf-8")
    return path


def bench(pytester: pytest.Pytester, url: str, *args: str, out: str = "out") -> pytest.RunResult:
    return pytester.runpytest(
        "-p",
        "no:randomly",
        "--extractbench",
        "--extractbench-dataset",
        "data.jsonl",
        "--extractbench-output",
        out,
        "--extractbench-sla",
        "none",
        "--extractbench-base-url",
        url,
        "--model",
        "test-model",
        *args,
    )


def document(pytester: pytest.Pytester, out: str) -> dict[str, Any]:
    return json.loads((pytester.path / out / "metrics.json").read_text())


def origins(pytester: pytest.Pytester, out: str) -> dict[str, dict[str, Any]]:
    rows = list(iter_samples(pytester.path / out / "samples.jsonl"))
    return {row["sample_id"]: row["response"].get("origin") for row in rows}


def eqs(pytester: pytest.Pytester, out: str) -> float:
    return document(pytester, out)["models"]["test-model"]["extraction_quality_score"]


# -- every run asks ---------------------------------------------------------------------------------


@pytest.mark.slow
def test_by_default_every_run_asks_its_server(pytester: pytest.Pytester, data: Path) -> None:
    with FaultServer(answer=right) as good:
        bench(pytester, good.url, out="one").assert_outcomes(passed=N)
        bench(pytester, good.url, out="two").assert_outcomes(passed=N)
        assert len(good.requests) == 2 * N  # nothing was reused
    assert not (pytester.path / ".extractbench" / "cache").exists()
    live = document(pytester, "two")["run"]["live"]
    assert live["cache"] is False and live["answers"] == {"asked": N, "cache": 0, "journal": 0, "replay": 0, "total": N}
    assert live["mode"] == "server" and live["reused"] == []
    assert {o["source"] for o in origins(pytester, "two").values()} == {"asked"}


@pytest.mark.slow
def test_two_servers_serving_the_same_model_name_are_both_asked(pytester: pytest.Pytester, data: Path) -> None:
    # the cache is on, yet a second server answering {} under the same model name is asked, not skipped
    with FaultServer(answer=right) as good, FaultServer(answer=empty) as bad:
        bench(pytester, good.url, "--extractbench-cache", out="good").assert_outcomes(passed=N)
        bench(pytester, bad.url, "--extractbench-cache", out="bad")
        assert (len(good.requests), len(bad.requests)) == (N, N)
        assert eqs(pytester, "bad") < eqs(pytester, "good") == pytest.approx(1.0)
        # the good server's answers are still in the cache for the good server
        bench(pytester, good.url, "--extractbench-cache", out="again").assert_outcomes(passed=N)
        assert len(good.requests) == N
    assert {o["where"] for o in origins(pytester, "bad").values()} == {bad.url}


class LlamaLike:
    """A loopback server that answers like llama-server: /v1/models, /props (with the model file) and chat
    completions with a fixed answer; ``port`` reuses an address, as a redeployment would."""

    def __init__(self, model_path: str, answer: Any, port: int = 0) -> None:
        self.model_path, self.answer, self.asked = model_path, answer, 0
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _json(self, data: Any) -> None:
                body = json.dumps(data).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                if self.path.startswith("/v1/models"):
                    self._json(
                        {
                            "object": "list",
                            "data": [
                                {
                                    "id": "test-model",
                                    "object": "model",
                                    "created": __import__("time").time(),
                                    "owned_by": "llamacpp",
                                }
                            ],
                        }
                    )
                elif self.path.startswith("/props"):
                    self._json({"model_path": owner.model_path, "total_slots": 1})
                else:
                    self.send_error(404)

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                owner.asked += 1
                self._json(
                    {
                        "id": "x",
                        "object": "chat.completion",
                        "created": 0,
                        "model": "test-model",
                        "choices": [
                            {
                                "index": 0,
                                "finish_reason": "stop",
                                "message": {"role": "assistant", "content": json.dumps(owner.answer)},
                            }
                        ],
                        "usage": {"prompt_tokens": 5, "completion_tokens": 5, "total_tokens": 10},
                    }
                )

        ThreadingHTTPServer.allow_reuse_address = True
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.port = self.httpd.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.thread = serve_in_thread(self.httpd)

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.mark.slow
def test_a_checkpoint_redeployed_under_the_same_name_and_url_is_asked_again(
    pytester: pytest.Pytester, data: Path
) -> None:
    (pytester.path / "data.jsonl").write_text(json.dumps(sample(1)) + "\n", encoding="utf-8")
    first = LlamaLike("/models/v1.gguf", {"name": "P1", "age": 1})
    try:
        bench(pytester, first.url, "--extractbench-cache", out="v1").assert_outcomes(passed=1)
        bench(pytester, first.url, "--extractbench-cache", out="v1-again").assert_outcomes(passed=1)
        assert first.asked == 1  # the same server and file: the cache answers (its volatile "created" aside)
    finally:
        first.close()
    second = LlamaLike("/models/v2.gguf", {}, port=first.port)  # same URL, same model name, other weights
    try:
        bench(pytester, second.url, "--extractbench-cache", out="v2").assert_outcomes(failed=1)
        assert second.asked == 1
    finally:
        second.close()
    assert origins(pytester, "v1-again")["s01"]["source"] == "cache"
    assert origins(pytester, "v2")["s01"]["source"] == "asked"


# -- no answer source, no run ----------------------------------------------------------------------


@pytest.mark.slow
def test_a_stopped_server_stops_the_run_before_any_item(pytester: pytest.Pytester, data: Path) -> None:
    server = FaultServer(answer=right).start()
    try:
        bench(pytester, server.url, "--extractbench-cache", out="one").assert_outcomes(passed=N)
    finally:
        server.stop()
    result = bench(pytester, server.url, "--extractbench-cache", out="two")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [line for line in result.stderr.lines if line.startswith("ERROR:")]
    assert len(errors) == 1 and "cannot reach the model server" in errors[0] and server.url in errors[0], errors
    assert "passed" not in result.stdout.str() and not (pytester.path / "two" / "samples.jsonl").exists()


# -- provenance ------------------------------------------------------------------------------------


@pytest.mark.slow
def test_reused_answers_are_counted_dated_and_named_in_every_output(pytester: pytest.Pytester, data: Path) -> None:
    with FaultServer(answer=right) as server:
        bench(pytester, server.url, "--extractbench-cache", "-k", "s00 or s01 or s02", out="part")
        result = bench(pytester, server.url, "--extractbench-cache", out="whole")
        assert len(server.requests) == N
    result.assert_outcomes(passed=N)
    found = origins(pytester, "whole")
    assert sorted(o["source"] for o in found.values()) == ["asked"] * 3 + ["cache"] * 3
    assert {o["where"] for o in found.values()} == {server.url}
    assert all(re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", o["at"]) for o in found.values())
    live = document(pytester, "whole")["run"]["live"]
    assert live["answers"] == {"asked": 3, "cache": 3, "journal": 0, "replay": 0, "total": N}
    assert live["mode"] == "server" and live["cache"] is True and live["cached_responses"] == 3
    (group,) = live["reused"]
    assert (group["source"], group["where"], group["count"]) == ("cache", server.url, 3)
    day = group["first_at"][:10]
    sentence = f"3 of {N} answers reused (3 from the cache, recorded {day}, from {server.url}); 3 asked in this run"
    lines = result.stdout.lines
    header = next(i for i, line in enumerate(lines) if re.fullmatch(r"=+ extractbench =+", line))
    assert lines[header + 1] == f"REUSED ANSWERS: {sentence}"  # the section's first line
    assert f"> **Reused answers**: {sentence}" in (pytester.path / "whole" / "summary.md").read_text()
    assert sentence in (pytester.path / "whole" / "report.html").read_text()
    # a run that asked everything says nothing of reuse
    assert "Reused answers" not in (pytester.path / "part" / "summary.md").read_text()


@pytest.mark.slow
def test_a_run_answered_whole_by_the_cache_names_no_server_mode(pytester: pytest.Pytester, data: Path) -> None:
    with FaultServer(answer=right) as server:
        bench(pytester, server.url, "--extractbench-cache", out="one").assert_outcomes(passed=N)
        bench(pytester, server.url, "--extractbench-cache", out="two").assert_outcomes(passed=N)
    live = document(pytester, "two")["run"]["live"]
    assert live["mode"] == "cache" and live["answers"]["asked"] == 0 and live["answers"]["cache"] == N


# -- extractors ------------------------------------------------------------------------------------

EXTRACTOR = """
import re

def extract(sample):
    n = int(re.search(r"P(\\d+)", sample.text).group(1))
    return {BODY}
"""


@pytest.mark.slow
def test_an_edited_extractor_is_asked_again_even_with_the_cache_on(pytester: pytest.Pytester, data: Path) -> None:
    module = pytester.path / "myextract.py"
    module.write_text(EXTRACTOR.replace("{BODY}", '{"name": f"P{n}", "age": n}'), encoding="utf-8")

    def run(out: str) -> pytest.RunResult:
        return pytester.runpytest_subprocess(
            "-p",
            "no:randomly",
            "--extractbench",
            "--extractbench-dataset",
            "data.jsonl",
            "--extractbench-output",
            out,
            "--extractbench-sla",
            "none",
            "--extractbench-extractor",
            "myextract:extract",
            "--model",
            "m",
            "--extractbench-cache",
        )

    run("one").assert_outcomes(passed=N)
    run("same").assert_outcomes(passed=N)  # unchanged code: the cache answers
    assert {o["source"] for o in origins(pytester, "same").values()} == {"cache"}
    module.write_text(EXTRACTOR.replace("{BODY}", "{}"), encoding="utf-8")  # the function's body changes, not its name
    run("edited").assert_outcomes(failed=N)
    found = origins(pytester, "edited")
    assert {o["source"] for o in found.values()} == {"asked"} and {o["by"] for o in found.values()} == {"extractor"}
    assert document(pytester, "edited")["models"]["m"]["extraction_quality_score"] < 0.5


@pytest.mark.slow
def test_a_server_that_drips_its_props_cannot_hold_the_identity_check() -> None:
    import time as clock

    from faultserver import Fault

    from pytest_extractbench.live.identity import fetch_model_path

    server = LlamaLike("/m.gguf", {})
    try:
        assert fetch_model_path(server.url, None, 5.0) == "/m.gguf"
    finally:
        server.close()
    with FaultServer(models_fault=Fault.drip(interval=0.05)) as dripping:
        # FaultServer has no /props: a 404 is no model path, at once
        assert fetch_model_path(dripping.url, None, 5.0) is None
    drip = _DripServer()
    try:
        started = clock.monotonic()
        assert fetch_model_path(drip.url, None, 1.0) is None
        assert clock.monotonic() - started < 3.0
    finally:
        drip.close()


class _DripServer:
    """/props answered one byte every 0.1 s, forever (each read is quick; only a total budget ends it)."""

    def __init__(self) -> None:
        import time as clock

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                try:
                    self.wfile.write(b'{"model_path": "')
                    for _ in range(600):
                        self.wfile.write(b"a")
                        self.wfile.flush()
                        clock.sleep(0.1)
                except OSError:
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        serve_in_thread(self.httpd)

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
