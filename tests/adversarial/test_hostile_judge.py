"""Hostile judge and embeddings servers: whole-output scoring never loses a run and never leaks the key.

A judge or an embeddings server is as untrusted as the model under test. Every case runs against a real
loopback server answering on purpose with out-of-range numbers, huge or deeply nested bodies, an echo of
the request's headers (the API key with them) or nothing at all; the run directory is always written,
each sample is accounted for, and each failure is that sample's judge (or similarity) error, counted.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from faultserver import Fault, FaultServer

from _checks import assert_accounted, assert_clean_terminal, assert_no_secret
from _net import serve_in_thread
from pytest_extractbench.core.rundoc import iter_samples
from pytest_extractbench.live import scorer_servers
from pytest_extractbench.live.embeddings import EmbeddingError, ServerEmbedder
from pytest_extractbench.live.judge import Judge, JudgeError

SECRET = "sk-judge-Vb83kLq0SECRET"
SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}}}
N = 3
COMMON = (
    "-p",
    "no:randomly",
    "-W",
    "ignore::pytest.PytestAssertRewriteWarning",
    "--extractbench",
    "--extractbench-sla",
    "none",
    "--extractbench-dataset",
    "data.jsonl",
    "--extractbench-predictions",
    "preds.jsonl",
    "--extractbench-output",
    "out",
)


@pytest.fixture(autouse=True)
def judge_key(monkeypatch: pytest.MonkeyPatch, semantic_cache_dir: Path) -> str:
    for name in scorer_servers.KEY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("EXTRACTBENCH_JUDGE_API_KEY", SECRET)
    from pytest_extractbench.live import embeddings, judge

    judge._judges.clear()  # one client per (model, URL) and process: each test gets its own server
    embeddings._embedders.clear()
    return SECRET


def write_run_inputs(path: Path) -> None:
    samples = [
        {"id": f"s{i}", "text": f"P{i} is {i}.", "schema": SCHEMA, "expected": {"name": f"P{i}", "age": i}}
        for i in range(N)
    ]
    outputs = [{"id": f"s{i}", "output": {"name": f"P{i}", "age": i}} for i in range(N)]
    (path / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in samples), encoding="utf-8")
    (path / "preds.jsonl").write_text("".join(json.dumps(r) + "\n" for r in outputs), encoding="utf-8")


def judged_run(pytester: pytest.Pytester, judge_url: str, *args: str) -> tuple[pytest.RunResult, dict[str, Any]]:
    write_run_inputs(pytester.path)
    result = pytester.runpytest(
        *COMMON, "--extractbench-judge", "judge-model", "--extractbench-judge-url", judge_url, *args
    )
    out = pytester.path / "out"
    assert (out / "metrics.json").is_file(), result.stdout.str()
    assert_accounted(out, N)
    return result, json.loads((out / "metrics.json").read_text(encoding="utf-8"))


def every_item(grade: int, reasoning: str) -> Callable[[Any], Any]:
    """A judge's answer grading every item its request lists with ``grade``."""

    def answer(body: Any) -> Any:
        count = len(body["messages"][-1]["content"].splitlines())
        return {"grades": [{"id": n, "reasoning": reasoning, "score": grade} for n in range(1, count + 1)]}

    return answer


def judge_diagnostics(pytester: pytest.Pytester) -> list[dict[str, Any]]:
    rows = list(iter_samples(pytester.path / "out" / "samples.jsonl"))
    return [row["diagnostics"]["judge"] for row in rows]


# -- whole runs: a hostile judge answer is each sample's judge error; the run directory is written ----------


HOSTILE_GRADES = {
    "an id of 1e400": '{"grades": [{"id": 1e400, "reasoning": "r", "score": 7}]}',
    "an id of NaN": '{"grades": [{"id": NaN, "reasoning": "r", "score": 7}]}',
    "a 5,000-digit id": '{"grades": [{"id": ' + "9" * 5000 + ', "reasoning": "r", "score": 7}]}',
    "a boolean id": '{"grades": [{"id": true, "reasoning": "r", "score": 7}]}',
    "a string id": '{"grades": [{"id": "1", "reasoning": "r", "score": 7}]}',
    "a score of Infinity": '{"grades": [{"id": 1, "reasoning": "r", "score": Infinity}]}',
    "a score of 1e400": '{"grades": [{"id": 1, "reasoning": "r", "score": 1e400}]}',
    "grades nested 5,000 deep": '{"grades": ' + "[" * 5000 + "]" * 5000 + "}",
    "grades that are an object": '{"grades": {"id": 1, "score": 7}}',
    "no JSON at all": "I think they are all a 7.",
}


def test_an_out_of_range_id_from_the_judge_no_longer_loses_the_run(pytester: pytest.Pytester) -> None:
    # the judge is asked at session end, after every item scored: its answer used to raise there, and no
    # metrics.json, samples.jsonl or report was written
    with FaultServer(default=Fault.ok(content=HOSTILE_GRADES["an id of 1e400"])) as judge:
        result, metrics = judged_run(pytester, judge.url)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    assert metrics["whole_output_cost"]["judge_errors"] == N
    assert metrics["models"]["predictions"].get("judge_score") is None  # no made-up grade
    for diagnostics in judge_diagnostics(pytester):
        assert "grade" not in diagnostics and "not finite" in diagnostics["error"]
    assert (pytester.path / "out" / "report.html").is_file()
    assert_clean_terminal(result.stdout.str())


@pytest.mark.parametrize("answer", HOSTILE_GRADES.values(), ids=HOSTILE_GRADES.keys())
def test_a_hostile_judge_answer_is_each_items_judge_error(answer: str) -> None:
    with FaultServer(default=Fault.ok(content=answer)) as srv:
        verdicts = judge_at(srv.url).grade_outputs([("1", "1"), ("2", "2")], batch=2)
    assert len(verdicts) == 2 and all(isinstance(v, JudgeError) for v in verdicts), verdicts


def test_a_judge_body_nested_5000_deep_is_a_judge_error(pytester: pytest.Pytester) -> None:
    with FaultServer(default=Fault.deep(5000)) as judge:
        result, metrics = judged_run(pytester, judge.url)
    assert result.ret == pytest.ExitCode.OK
    assert metrics["whole_output_cost"]["judge_errors"] == N
    assert all("nested too deeply" in d["error"] for d in judge_diagnostics(pytester))


def test_a_judge_echoing_the_authorization_header_in_an_error_never_records_the_key(pytester: pytest.Pytester) -> None:
    with FaultServer(default=Fault.echo_headers(status=500)) as judge:
        result, metrics = judged_run(pytester, judge.url)
    assert metrics["whole_output_cost"]["judge_errors"] == N
    assert all("judge request failed" in d["error"] for d in judge_diagnostics(pytester))
    assert_no_secret([SECRET], pytester.path / "out", texts=[result.stdout.str(), result.stderr.str()])


def test_a_judge_echoing_the_key_as_its_reasoning_never_records_it(pytester: pytest.Pytester) -> None:
    with FaultServer(answer=every_item(7, f"your key is Bearer {SECRET}")) as judge:
        result, metrics = judged_run(pytester, judge.url)
    assert metrics["whole_output_cost"]["judge_errors"] == 0  # the grade itself counts
    assert all(d["grade"] == 7 and "***" in d["reasoning"] for d in judge_diagnostics(pytester))
    assert_no_secret([SECRET], pytester.path / "out", texts=[result.stdout.str()])


def test_a_good_judge_still_grades_every_sample(pytester: pytest.Pytester) -> None:
    # the control: the same run with a well-behaved judge gives every sample its grade
    with FaultServer(answer=every_item(6, "same")) as judge:
        result, metrics = judged_run(pytester, judge.url)
    assert metrics["whole_output_cost"]["judge_errors"] == 0
    assert [d["grade"] for d in judge_diagnostics(pytester)] == [6] * N


def test_an_unreachable_judge_is_counted_and_the_run_is_written(pytester: pytest.Pytester) -> None:
    with FaultServer() as judge:
        url = judge.url
    result, metrics = judged_run(pytester, url)  # the server is gone: connection refused
    assert metrics["whole_output_cost"]["judge_errors"] == N


@pytest.mark.parametrize("option", ["--extractbench-judge-url", "--extractbench-semantic"])
def test_credentials_in_a_judge_or_embeddings_url_are_refused_before_anything_runs(
    pytester: pytest.Pytester, option: str
) -> None:
    write_run_inputs(pytester.path)
    result = pytester.runpytest(
        *COMMON, "--extractbench-judge", "judge-model", option, "http://user:hunter2@127.0.0.1:9/v1"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*carries credentials (user:password@)*EXTRACTBENCH_JUDGE_API_KEY*"])
    assert "hunter2" not in result.stderr.str() + result.stdout.str()
    assert not (pytester.path / "out" / "metrics.json").exists()


# -- the clients directly: every answer is read within the limits --------------------------------------------


def judge_at(url: str, *, timeout: float = 10.0) -> Judge:
    return Judge("judge-model", url, timeout=timeout, max_retries=0)


def test_a_judge_url_with_credentials_is_refused_by_the_client_too() -> None:
    with pytest.raises(JudgeError, match="carries credentials") as info:
        judge_at("http://user:hunter2@127.0.0.1:9/v1")
    assert "hunter2" not in str(info.value)


@pytest.mark.slow
def test_a_dripping_judge_is_cut_off_by_the_answers_deadline() -> None:
    grades = {"grades": [{"id": 1, "reasoning": "r" * 200, "score": 7}]}
    with FaultServer(default=Fault.drip(0.05, grades)) as srv:
        started = time.monotonic()
        (verdict,) = judge_at(srv.url, timeout=2.0).grade_outputs([("{}", "{}")])
        elapsed = time.monotonic() - started
    assert isinstance(verdict, JudgeError) and "did not arrive in time" in str(verdict)
    assert elapsed < 30  # the drip alone would take well over a minute


def test_a_judge_answer_larger_than_the_cap_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scorer_servers, "MAX_ANSWER_BYTES", 10_000)
    grades = {"grades": [{"id": 1, "reasoning": "x" * 50_000, "score": 7}]}
    with FaultServer(default=Fault.ok(content=grades)) as srv:
        (verdict,) = judge_at(srv.url).grade_outputs([("{}", "{}")])
    assert isinstance(verdict, JudgeError) and "larger than 10,000 bytes" in str(verdict)


def test_a_missing_item_is_that_items_error_and_the_others_keep_their_grades() -> None:
    grades = {
        "grades": [
            {"id": 1, "reasoning": "a", "score": 5},
            {"id": 3, "reasoning": "c", "score": 2},
            {"id": 99, "reasoning": "no such item", "score": 7},
        ]
    }
    with FaultServer(default=Fault.ok(content=grades)) as srv:
        verdicts = judge_at(srv.url).grade_outputs([("1", "1"), ("2", "2"), ("3", "3")], batch=3)
    assert verdicts[0] == (5, "a") and verdicts[2] == (2, "c")
    assert isinstance(verdicts[1], JudgeError) and "item 2" in str(verdicts[1])


def test_token_counts_that_are_not_counts_are_left_out() -> None:
    with FaultServer(
        default=Fault.usage(
            '{"prompt_tokens": 1e400, "completion_tokens": -5}',
            content={"grades": [{"id": 1, "reasoning": "", "score": 7}]},
        )
    ) as srv:
        judge = judge_at(srv.url)
        (verdict,) = judge.grade_outputs([("{}", "{}")])
    assert verdict == (7, "")
    assert judge.prompt_tokens == 0 and judge.completion_tokens == 0


# -- embeddings ------------------------------------------------------------------------------------------------


class _Scripted(BaseHTTPRequestHandler):
    """POST /v1/embeddings answered by ``reply(body, headers) -> (status, bytes)``."""

    reply: Callable[[Any, dict[str, str]], tuple[int, bytes]]

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        status, payload = type(self).reply(body, dict(self.headers))
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


@pytest.fixture
def embeddings_server() -> Iterator[Callable[[Callable[..., tuple[int, bytes]]], str]]:
    servers: list[ThreadingHTTPServer] = []

    def start(reply: Callable[..., tuple[int, bytes]]) -> str:
        handler = type("Handler", (_Scripted,), {"reply": staticmethod(reply)})
        httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        serve_in_thread(httpd)
        servers.append(httpd)
        return f"http://127.0.0.1:{httpd.server_address[1]}/v1"

    yield start
    for httpd in servers:
        httpd.shutdown()
        httpd.server_close()


def vectors(make: Callable[[int], Any]) -> Callable[[Any, dict[str, str]], tuple[int, bytes]]:
    def reply(body: Any, headers: dict[str, str]) -> tuple[int, bytes]:
        data = [{"object": "embedding", "index": i, "embedding": make(i)} for i in range(len(body["input"]))]
        return 200, json.dumps({"object": "list", "data": data}).encode()

    return reply


def raw(text: str, status: int = 200) -> Callable[[Any, dict[str, str]], tuple[int, bytes]]:
    return lambda body, headers: (status, text.encode())


HOSTILE_EMBEDDINGS = {
    "an index out of range": raw('{"data": [{"index": 7, "embedding": [1.0]}, {"index": 1, "embedding": [1.0]}]}'),
    "an index of 1e400": raw('{"data": [{"index": 1e400, "embedding": [1.0]}, {"index": 1, "embedding": [1.0]}]}'),
    "a repeated index": raw('{"data": [{"index": 0, "embedding": [1.0]}, {"index": 0, "embedding": [1.0]}]}'),
    "a NaN component": raw('{"data": [{"index": 0, "embedding": [NaN]}, {"index": 1, "embedding": [1.0]}]}'),
    "a 1e400 component": raw('{"data": [{"index": 0, "embedding": [1e400]}, {"index": 1, "embedding": [1.0]}]}'),
    "vectors of two sizes": raw('{"data": [{"index": 0, "embedding": [1.0, 2.0]}, {"index": 1, "embedding": [1.0]}]}'),
    "one vector for two texts": raw('{"data": [{"index": 0, "embedding": [1.0]}]}'),
    "strings for numbers": raw('{"data": [{"index": 0, "embedding": ["1"]}, {"index": 1, "embedding": ["1"]}]}'),
    "a body nested 5,000 deep": raw('{"data": ' + "[" * 5000 + "]" * 5000 + "}"),
    "a 5,000-digit number": raw('{"data": [{"index": 0, "embedding": [' + "9" * 5000 + "]}]}"),
    "not JSON": raw("<html>busy</html>"),
}


@pytest.mark.parametrize("reply", HOSTILE_EMBEDDINGS.values(), ids=HOSTILE_EMBEDDINGS.keys())
def test_a_hostile_embeddings_answer_is_an_embedding_error(embeddings_server: Any, reply: Any) -> None:
    embedder = ServerEmbedder(embeddings_server(reply), "m")
    with pytest.raises(EmbeddingError):
        embedder.embed(["a", "b"])


def test_huge_but_finite_components_give_a_unit_vector(embeddings_server: Any) -> None:
    embedder = ServerEmbedder(embeddings_server(vectors(lambda i: [1e300, 1e300 * (i + 1)])), "m")
    got = embedder.embed(["a", "b"])
    assert got.shape == (2, 2)
    assert abs(float((got[0] ** 2).sum()) - 1) < 1e-5 and abs(float((got[1] ** 2).sum()) - 1) < 1e-5


def test_an_embeddings_server_echoing_the_key_never_gets_it_recorded(embeddings_server: Any) -> None:
    url = embeddings_server(lambda body, headers: (401, json.dumps({"error": {"message": str(headers)}}).encode()))
    with pytest.raises(EmbeddingError) as info:
        ServerEmbedder(url, "m").embed(["a"])
    assert "embedding request failed" in str(info.value) and SECRET not in str(info.value)


@pytest.mark.slow
def test_a_hostile_embeddings_server_in_a_run_is_each_samples_similarity_error(
    pytester: pytest.Pytester, embeddings_server: Any
) -> None:
    url = embeddings_server(lambda body, headers: (500, json.dumps({"error": str(headers)}).encode()))
    write_run_inputs(pytester.path)
    result = pytester.runpytest(*COMMON, "--extractbench-semantic", url)
    out = pytester.path / "out"
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    assert_accounted(out, N)
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    assert metrics["whole_output_cost"]["embedding_errors"] == N
    rows = list(iter_samples(out / "samples.jsonl"))
    assert all("semantic_similarity_error" in row["diagnostics"] for row in rows)
    assert_no_secret([SECRET], out, texts=[result.stdout.str()])


def test_a_judge_echoing_the_key_while_grading_semantic_fields_never_records_it(pytester: pytest.Pytester) -> None:
    # the field-level judge runs as each item is scored (x-eval-compare "semantic"): its errors are the
    # fields' errors in samples.jsonl, masked too
    schema = {"type": "object", "properties": {"city": {"type": "string", "x-eval-compare": "semantic"}}}
    rows = [{"id": f"c{i}", "text": "t", "schema": schema, "expected": {"city": "New York City"}} for i in range(N)]
    preds = [{"id": f"c{i}", "output": {"city": "NYC"}} for i in range(N)]
    (pytester.path / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (pytester.path / "preds.jsonl").write_text("".join(json.dumps(r) + "\n" for r in preds), encoding="utf-8")
    with FaultServer(default=Fault.echo_headers(status=401)) as judge:
        result = pytester.runpytest(
            *COMMON, "--extractbench-judge", "judge-model", "--extractbench-judge-url", judge.url
        )
    out = pytester.path / "out"
    assert_accounted(out, N)
    rows_out = list(iter_samples(out / "samples.jsonl"))
    errors = [f.get("error") or "" for row in rows_out for f in row["score"]["fields"] if f["path"] == "city"]
    assert len(errors) == N and all("judge request failed" in e for e in errors), errors
    assert_no_secret([SECRET], out, texts=[result.stdout.str(), result.stderr.str()])


def test_base64_vectors_are_read_as_their_floats_and_bad_base64_is_refused() -> None:
    import base64

    import numpy as np

    from pytest_extractbench.live.embeddings import EmbeddingError, vectors_of

    encoded = [base64.b64encode(np.array(v, dtype="<f4").tobytes()).decode() for v in ([1.0, 2.0], [0.5, -4.0])]
    vectors = vectors_of({"data": [{"index": i, "embedding": e} for i, e in enumerate(encoded)]}, 2)
    assert vectors.tolist() == [[1.0, 2.0], [0.5, -4.0]]
    with pytest.raises(EmbeddingError, match="not a list of numbers"):
        vectors_of({"data": [{"index": 0, "embedding": "not base64!"}]}, 1)
    with pytest.raises(EmbeddingError, match="not finite"):
        nan = base64.b64encode(np.array([np.nan], dtype="<f4").tobytes()).decode()
        vectors_of({"data": [{"index": 0, "embedding": nan}]}, 1)
