"""Hostile servers and URLs: nothing hangs, nothing is lost, nothing leaks.

Every case runs against a real loopback server (tests/faultserver.py) misbehaving on purpose:
bodies that drip one byte at a time, nest 5,000 deep, carry usage 1e400/NaN/a list, echo the
request's headers (the API key with them), or come back truncated or as HTML with status 200.
Whole runs go through pytest (pytester) and assert what every hostile case must: the run
completes, every sample asked is accounted for, no secret reaches any artifact, the terminal
gets no escape byte, and each problem is named in words.
"""

from __future__ import annotations

import asyncio
import json
import re
import socket
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from faultserver import Fault, FaultServer

from _checks import assert_accounted, assert_clean_terminal, assert_no_secret
from pytest_extractbench.core.redact import redact_credentials
from pytest_extractbench.core.rundoc import iter_samples
from pytest_extractbench.dataset.responses import ERROR_CLASSES, ModelResponse
from pytest_extractbench.live.client import ClientConfig, ExtractionClient, build_messages, run_check
from pytest_extractbench.live.connection import check_connection
from pytest_extractbench.live.journal import response_from_dict
from pytest_extractbench.scoring import MISSING

SECRET = "sk-hostile-7Qf2Lx9SECRET"  # the API key a hostile server tries to get recorded
PASSWORD = "hunter2-Zq8v"
SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
    "required": ["name", "age"],
}
GOOD = {"name": "Ada", "age": 36}
MODEL = "test-model"


# -- helpers ------------------------------------------------------------------------------------


def cfg(server: FaultServer, **overrides: Any) -> ClientConfig:
    values: dict[str, Any] = {"timeout_s": 5.0, "retries": 1, "backoff_base_s": 0.01, "backoff_max_s": 0.02}
    values.update(overrides)
    return ClientConfig(server.url, **values)


def extract(config: ClientConfig) -> ModelResponse:
    async def go() -> ModelResponse:
        async with ExtractionClient(config) as client:
            return await client.extract(MODEL, build_messages("Ada is 36.", SCHEMA), SCHEMA)

    return asyncio.run(go())


def sample_number(body: Any) -> int:
    text = " ".join(str(m.get("content")) for m in body["messages"] if m.get("role") == "user")
    return int(re.search(r"Record s(\d\d)", text).group(1))


def answer(body: Any) -> Any:
    n = sample_number(body)
    return {"name": f"P{n}", "age": n}


def write_data(path: Path, n: int) -> None:
    rows = [
        {
            "id": f"s{i:02d}",
            "text": f"Record s{i:02d}: P{i} is {i} years old.",
            "schema": SCHEMA,
            "expected": {"name": f"P{i}", "age": i},
        }
        for i in range(n)
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


def bench(pytester: pytest.Pytester, url: str, *args: str, sla: str = "none") -> pytest.RunResult:
    return pytester.runpytest(
        "-p",
        "no:randomly",
        "--extractbench",
        "--extractbench-dataset",
        "data.jsonl",
        "--extractbench-output",
        "out",
        "--extractbench-sla",
        sla,
        "--extractbench-base-url",
        url,
        "--model",
        MODEL,
        *args,
    )


def rows(run_dir: Path, name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run_dir / name).read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture
def server() -> Any:
    with FaultServer(answer=answer) as srv:
        yield srv


@pytest.fixture
def api_key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("EXTRACTBENCH_API_KEY", SECRET)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    return SECRET


# -- a budget per attempt: a dripping server cannot hold a request ------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("retries", [0, 2])
def test_a_server_dripping_one_byte_at_a_time_is_cut_off_by_the_attempt_budget(retries: int) -> None:
    # ~300 bytes at 0.2 s each would take 60 s; every single read is quick, so only a budget per
    # attempt (not per read) ends it. The budget is 3 s, not 1: on a loaded machine the server's thread may
    # not even have read a request within 1 s, and then there is no drip to cut off.
    with FaultServer(default=Fault.drip(0.2, GOOD)) as srv:
        response = extract(cfg(srv, timeout_s=3.0, retries=retries))
        # the server's side, not a clock (a loaded machine stretches every wall time): each attempt hung up
        # while the body was still trickling out; the server notices at its next write, 0.2 s later
        deadline = time.monotonic() + 60
        while len(srv.hung_up) < retries + 1 and time.monotonic() < deadline:
            time.sleep(0.05)
    assert response.error_class == "timeout" and response.content is MISSING
    assert response.attempts == retries + 1 == len(srv.requests)
    assert "no complete answer within 3s" in response.error
    assert len(srv.hung_up) == retries + 1
    assert all(sent < total for sent, total in srv.hung_up), srv.hung_up


def test_a_drip_that_finishes_within_the_budget_is_an_answer() -> None:
    with FaultServer(default=Fault.drip(0.001, GOOD)) as srv:
        response = extract(cfg(srv, timeout_s=20.0))
    assert response.ok and json.loads(response.content) == GOOD


def test_the_connection_check_has_the_same_budget() -> None:
    from pytest_extractbench.live.client import ConnectionCheckError

    with FaultServer(models_fault=Fault.drip(0.1)) as srv, pytest.raises(ConnectionCheckError) as info:
        run_check(cfg(srv, timeout_s=1.0), [MODEL])
    assert "no complete answer within 1s" in str(info.value)


def test_test_connection_is_bounded_by_its_timeout_as_a_whole() -> None:
    with FaultServer(models_fault=Fault.drip(0.1)) as srv:
        t0 = time.monotonic()
        result = check_connection(srv.url, MODEL, timeout=1.0)
        elapsed = time.monotonic() - t0
    assert not result.ok and "no complete answer within 1s" in result.message
    assert elapsed < 5


# -- 200 bodies that are not completions: retried, then classed ---------------------------------

DEEP = "[" * 5000 + "]" * 5000
BAD_BODIES = {
    "truncated": (Fault.truncated(), "truncated JSON body"),
    "truncated_cut_connection": (Fault.truncated(cut_connection=True), None),  # a transport error or a cut body
    "html": (Fault.non_json(), "not JSON"),
    "html_error_page": (Fault.raw("<!doctype html><h1>Bad gateway</h1>", content_type="text/html"), "not JSON"),
    "empty": (Fault.raw(b""), "not JSON"),
    "not_utf8": (Fault.raw(b"\xff\xfe{\x00"), "not JSON"),
    "no_choices": (Fault.raw('{"object": "chat.completion", "choices": []}'), "no choices"),
    "json_list": (Fault.raw("[1, 2, 3]"), "no choices"),
    "nested_5000_deep": (Fault.deep(5000), "nested"),
    "nested_300_deep": (Fault.deep(300), "nested more than"),
    "choices_5000_deep": (Fault.raw('{"choices": ' + DEEP + "}"), "nested"),
    "int_6000_digits": (Fault.raw('{"choices": [], "n": ' + "9" * 6000 + "}"), "integer too long"),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(BAD_BODIES))
def test_a_bad_200_body_is_retried_and_the_retry_is_kept(name: str) -> None:
    fault, _ = BAD_BODIES[name]
    with FaultServer(faults=[fault], default=Fault.ok(GOOD)) as srv:
        response = extract(cfg(srv))
    assert response.ok, response.error
    assert json.loads(response.content) == GOOD and response.attempts == 2 == len(srv.requests)


@pytest.mark.slow
@pytest.mark.parametrize("name", list(BAD_BODIES))
def test_a_bad_200_body_that_persists_is_a_bad_response_that_says_why(name: str) -> None:
    fault, words = BAD_BODIES[name]
    with FaultServer(default=fault) as srv:
        response = extract(cfg(srv, retries=1))
    assert response.attempts == 2 == len(srv.requests)
    assert response.content is MISSING and response.usage == {} and response.tool_calls is None
    if words is None:  # the connection was cut: either reading is a fair account
        assert response.error_class in ("bad_response", "connection")
    else:
        assert response.error_class == "bad_response" and words in response.error
    assert len(response.error) < 700  # a bad 50 MB body is not echoed whole
    json.dumps(response.as_dict())  # recordable as it is


def test_a_huge_html_body_is_not_echoed_whole() -> None:
    page = "<html>" + "x" * 3_000_000 + "</html>"
    with FaultServer(default=Fault.raw(page, content_type="text/html")) as srv:
        response = extract(cfg(srv, retries=0))
    assert response.error_class == "bad_response" and len(response.error) < 400


# -- odd usage: the answer is kept and scored, the odd counts left out --------------------------

ODD_USAGE = {
    "1e400": ("1e400", {}),
    "nan": ("NaN", {}),
    "list": ("[1, 2, 3]", {}),
    "string": ('"many"', {}),
    "null": ("null", {}),
    "counts_1e400_nan": ('{"prompt_tokens": 1e400, "completion_tokens": NaN, "total_tokens": 7}', {"total_tokens": 7}),
    "counts_negative_bool": (
        '{"prompt_tokens": -3, "completion_tokens": true, "total_tokens": 9}',
        {"total_tokens": 9},
    ),
    "counts_nested": (
        '{"prompt_tokens": {"a": 1}, "completion_tokens": [4], "total_tokens": 2.0}',
        {"total_tokens": 2},
    ),
    "counts_infinity": (
        '{"prompt_tokens": Infinity, "completion_tokens": -Infinity, "total_tokens": 5}',
        {"total_tokens": 5},
    ),
}


@pytest.mark.parametrize("name", list(ODD_USAGE))
def test_odd_usage_keeps_the_answer_and_drops_only_the_odd_counts(name: str) -> None:
    raw, expected = ODD_USAGE[name]
    with FaultServer(default=Fault.usage(raw, GOOD)) as srv:
        response = extract(cfg(srv))
    assert response.ok and json.loads(response.content) == GOOD
    assert response.usage == expected
    # what the journal writes reads back the same
    assert response_from_dict(json.loads(json.dumps(response.as_dict()))).usage == expected


# -- journal entries written by hand or by another tool ------------------------------------------

ODD_ENTRIES = {
    "usage_list": {"usage": [1, 2, 3]},
    "usage_string": {"usage": "lots"},
    "usage_nan_counts": {"usage": {"prompt_tokens": float("nan"), "completion_tokens": 1e308 * 10}},
    "attempts_text": {"attempts": "three", "latency_s": "fast", "cached": "yes"},
    "latency_nan": {"latency_s": float("nan"), "started_at": float("inf")},
    "choices_dict": {"choices": {"0": "x"}, "tool_calls": "none", "finish_reason": 7},
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(ODD_ENTRIES))
def test_a_replayed_journal_with_odd_fields_is_scored_and_accounted(pytester: pytest.Pytester, name: str) -> None:
    write_data(pytester.path / "data.jsonl", 3)
    recorded = pytester.path / "recorded"
    recorded.mkdir()
    lines = []
    for i in range(3):
        response = {"content": json.dumps({"name": f"P{i}", "age": i}), "attempts": 1, "latency_s": 0.1}
        if i == 1:
            response.update(ODD_ENTRIES[name])
        lines.append(json.dumps({"model": MODEL, "sample_id": f"s{i:02d}", "key": f"k{i}", "response": response}))
    (recorded / "responses.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = pytester.runpytest(
        "-p",
        "no:randomly",
        "--extractbench",
        "--extractbench-dataset",
        "data.jsonl",
        "--extractbench-output",
        "out",
        "--extractbench-sla",
        "none",
        "--extractbench-replay",
        "recorded",
        "--model",
        MODEL,
    )
    result.assert_outcomes(passed=3)
    assert_accounted(pytester.path / "out", 3)
    assert "INTERNALERROR" not in result.stdout.str() and "Traceback" not in result.stdout.str()


# -- secrets: credentials in URLs, keys echoed by servers ----------------------------------------


@pytest.mark.parametrize("status", [200, 400, 500])
def test_a_server_echoing_the_request_headers_never_gets_the_key_recorded(status: int, api_key: str) -> None:
    with FaultServer(default=Fault.echo_headers(status)) as srv:
        response = extract(cfg(srv, api_key=api_key, retries=0))
    sent = {name.lower(): value for name, value in srv.headers[0].items()}
    assert sent["authorization"] == f"Bearer {api_key}"  # it was sent, and echoed back
    recorded = json.dumps(response.as_dict())
    assert api_key not in recorded and "Bearer sk-" not in recorded
    if status == 200:
        assert response.ok and "authorization" in response.content.lower()  # the rest of the answer is kept
    else:
        assert response.error_class == ("request_error" if status == 400 else "server_error")
        assert "***" in response.error


CREDENTIAL_SHAPES = {
    "bearer_header": ("echo: Authorization: Bearer abc123def456ghi", "abc123def456ghi"),
    "basic_header": ('{"authorization": "Basic dXNlcjpodW50ZXIyLVpxOHY="}', "dXNlcjpodW50ZXIyLVpxOHY="),
    "x_api_key": ("x-api-key=zz99yy88xx77", "zz99yy88xx77"),
    "openai_style_key": ("invalid key sk-proj-AbC123xyz987", "AbC123xyz987"),
    "url_userinfo": (f"could not reach http://bob:{PASSWORD}@10.0.0.1/v1", PASSWORD),
    "password_field": (f"config dump: password={PASSWORD}; retries=3", PASSWORD),
    "json_escaped": ('"headers": "{\\"Authorization\\": \\"Bearer q1w2e3r4t5y6\\"}"', "q1w2e3r4t5y6"),
}


@pytest.mark.parametrize("name", list(CREDENTIAL_SHAPES))
def test_credential_shaped_text_in_server_messages_is_masked(name: str) -> None:
    text, secret = CREDENTIAL_SHAPES[name]
    masked = redact_credentials(text)
    assert secret not in masked and "***" in masked


@pytest.mark.parametrize("text", ["Basic authentication is not enabled", "the token expired", "model not found: x"])
def test_plain_server_messages_stay_readable(text: str) -> None:
    assert redact_credentials(text) == text


def test_a_server_message_with_another_credential_is_masked_in_the_response(api_key: str) -> None:
    message = f"upstream said: Authorization: Basic dXNlcjpwYXNz999 and url http://u:{PASSWORD}@x/v1"
    with FaultServer(default=Fault.status(400, message)) as srv:
        response = extract(cfg(srv, api_key=api_key))
    assert response.error_class == "request_error"
    assert PASSWORD not in response.error and "dXNlcjpwYXNz999" not in response.error


BAD_URLS = {
    "port_99999": ("http://127.0.0.1:99999/v1", "Port out of range"),
    "port_0": ("http://127.0.0.1:0/v1", "port 0"),
    "ipv6_unclosed": ("http://[::1/v1", "Invalid IPv6 URL"),
    "ipv6_garbage": ("http://[not-an-ip]:8000/v1", "not a valid URL"),
    "userinfo": (f"http://admin:{PASSWORD}@127.0.0.1:8000/v1", "credentials"),
    "user_only": ("http://admin@127.0.0.1:8000/v1", "credentials"),
    "no_host": ("http:///v1", "no host"),
    "scheme": ("ftp://127.0.0.1/v1", "http:// or https://"),
    "control_chars": ("http://127.0.0.1:8000/v1\x1b[31m", "control characters"),
}


@pytest.mark.parametrize("name", list(BAD_URLS))
def test_a_bad_base_url_is_one_clear_error_for_the_client(name: str) -> None:
    url, words = BAD_URLS[name]
    with pytest.raises(ValueError) as info:
        ClientConfig(url)
    assert words in str(info.value) and PASSWORD not in str(info.value)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["port_99999", "ipv6_unclosed", "userinfo", "control_chars"])
@pytest.mark.parametrize("where", ["option", "environment"])
def test_a_bad_base_url_stops_the_run_with_one_line(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, name: str, where: str
) -> None:
    url, words = BAD_URLS[name]
    write_data(pytester.path / "data.jsonl", 2)
    args = [
        "-p",
        "no:randomly",
        "--extractbench",
        "--extractbench-dataset",
        "data.jsonl",
        "--model",
        MODEL,
        "--extractbench-output",
        "out",
    ]
    if where == "option":
        args += ["--extractbench-base-url", url]
    else:
        monkeypatch.setenv("EXTRACTBENCH_BASE_URL", url)
    result = pytester.runpytest(*args)
    text = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert words in text and "Traceback" not in text and "INTERNALERROR" not in text
    assert PASSWORD not in text
    assert "\x1b" not in text


def test_credentials_in_the_url_are_never_sent_as_basic_auth(pytester: pytest.Pytester, server: FaultServer) -> None:
    write_data(pytester.path / "data.jsonl", 2)
    url = server.url.replace("http://", f"http://admin:{PASSWORD}@")
    result = bench(pytester, url)
    assert result.ret == pytest.ExitCode.USAGE_ERROR and "credentials" in result.stderr.str()
    assert server.headers == [] and server.counts["models"] == 0  # nothing was sent at all
    assert PASSWORD not in result.stdout.str() + result.stderr.str()


@pytest.mark.parametrize("name", ["userinfo", "user_only", "port_99999", "ipv6_unclosed"])
def test_test_connection_refuses_bad_urls_before_resolving_any_name(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    resolved: list[Any] = []
    real = socket.getaddrinfo

    def spy(host: Any, *args: Any, **kwargs: Any) -> Any:
        resolved.append(host)
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", spy)
    url, words = BAD_URLS[name]
    result = check_connection(url, MODEL, timeout=2)
    assert not result.ok and words in result.message
    assert resolved == [] and PASSWORD not in result.message


def test_test_connection_masks_an_echoed_key(api_key: str) -> None:
    with FaultServer(models_fault=Fault.echo_headers(401)) as srv:
        result = check_connection(srv.url, MODEL, timeout=5)
    assert not result.ok and api_key not in result.message


def test_the_connection_check_masks_an_echoed_key(api_key: str) -> None:
    from pytest_extractbench.live.client import ConnectionCheckError

    with FaultServer(models_fault=Fault.echo_headers(403)) as srv, pytest.raises(ConnectionCheckError) as info:
        run_check(cfg(srv, api_key=api_key), [MODEL])
    assert api_key not in str(info.value) and "refused the API key" in str(info.value)


# -- whole runs: every sample accounted for, whatever half the answers look like -----------------

HOSTILE_MODES = {
    "drip": (Fault.drip(0.05), "timeout"),
    "nested_5000_deep": (Fault.deep(5000), "bad_response"),
    "usage_1e400": (Fault.usage("1e400"), None),
    "usage_nan": (Fault.usage('{"prompt_tokens": NaN, "completion_tokens": 1e400}'), None),
    "usage_list": (Fault.usage("[1, 2]"), None),
    "truncated": (Fault.truncated(), "bad_response"),
    "html": (Fault.non_json(), "bad_response"),
    "echo_headers_400": (Fault.echo_headers(400), "request_error"),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(HOSTILE_MODES))
def test_a_run_with_half_its_answers_hostile_accounts_for_every_sample(
    pytester: pytest.Pytester, server: FaultServer, api_key: str, name: str
) -> None:
    fault, error_class = HOSTILE_MODES[name]
    n = 6
    write_data(pytester.path / "data.jsonl", n)
    server.plan = lambda index, body: fault if sample_number(body) % 2 else None
    result = bench(pytester, server.url, "--extractbench-retries", "1", "--extractbench-timeout", "1", sla="minimum")
    run_dir = pytester.path / "out"
    text = result.stdout.str() + result.stderr.str()
    assert "INTERNALERROR" not in text and "Traceback" not in text
    assert_accounted(run_dir, n)
    assert_clean_terminal(text)
    assert_no_secret([api_key], run_dir, texts=[text])
    journaled = rows(run_dir, "responses.jsonl")
    assert sorted(j["sample_id"] for j in journaled) == [f"s{i:02d}" for i in range(n)]  # every answer journaled
    found = {r["sample_id"]: r["response"] for r in iter_samples(run_dir / "samples.jsonl")}
    classes = {sid: found[sid]["error_class"] for sid in found}
    assert classes == {f"s{i:02d}": (error_class if i % 2 else None) for i in range(n)}
    model = json.loads((run_dir / "metrics.json").read_text(encoding="utf-8"))["models"][MODEL]
    assert model["num_samples"] == n
    if error_class is None:  # odd usage only: the answers are good and scored as such
        result.assert_outcomes(passed=n)
        assert all(
            set(found[f"s{i:02d}"]["usage"]) <= {"prompt_tokens", "completion_tokens", "total_tokens"} for i in range(n)
        )
    else:  # half the samples have no answer: they count against the run, which cannot pass its SLA
        result.assert_outcomes(passed=n // 2, failed=n // 2)
        assert error_class in ERROR_CLASSES
        assert "SLA passed" not in text and "Deploy without human review" not in text
        assert result.ret == pytest.ExitCode.TESTS_FAILED


@pytest.mark.slow
def test_bad_200_bodies_in_a_mixed_run_are_retried_and_nothing_is_lost(
    pytester: pytest.Pytester, server: FaultServer
) -> None:
    # 30 samples, 9 of which get a truncated, HTML or cut-short 200 first: all 30 end valid
    n = 30
    write_data(pytester.path / "data.jsonl", n)
    first = {0: Fault.truncated(), 1: Fault.non_json(), 2: Fault.truncated(cut_connection=True)}
    seen: Counter[int] = Counter()

    def plan(index: int, body: Any) -> Fault | None:
        k = sample_number(body)
        seen[k] += 1
        return first[k % 3] if k % 10 < 3 and seen[k] == 1 else None

    server.plan = plan
    result = bench(pytester, server.url, "--extractbench-retries", "2")
    result.assert_outcomes(passed=n)
    assert_accounted(pytester.path / "out", n)
    attempts = {
        r["sample_id"]: r["response"]["attempts"] for r in iter_samples(pytester.path / "out" / "samples.jsonl")
    }
    assert sum(1 for a in attempts.values() if a == 2) == 9 and sum(attempts.values()) == n + 9


def test_an_answer_the_client_fails_on_is_journaled_as_a_client_error(tmp_path: Path) -> None:
    """A defect inside the request path (here: the send itself raises) still gives the pair an
    outcome, journaled before the item sees it: the sample is counted, never dropped."""
    from pytest_extractbench.dataset.samples import Sample
    from pytest_extractbench.live.endpoints import Route
    from pytest_extractbench.live.options import LiveOptions
    from pytest_extractbench.live.pipeline import LiveSource, load_templates

    class Broken(LiveSource):
        async def _send(self, client: Any, served_model: str, request: Any) -> ModelResponse:
            raise RecursionError("maximum recursion depth exceeded while decoding a JSON array")

    live = LiveOptions(base_urls=("http://127.0.0.1:9/v1",))
    source = Broken(
        live,
        lambda: {MODEL: Route(live.base_urls, MODEL)},
        run_dir=tmp_path,
        cache_dir=None,
        concurrency=2,
        api_key=None,
        templates=load_templates(live, tmp_path),
    )
    samples = [Sample(id=f"s{i}", text="t", schema=SCHEMA, expected=GOOD) for i in range(3)]
    try:
        source.prepare([(MODEL, s) for s in samples])
        got = [source.response(MODEL, s) for s in samples]
    finally:
        source.close()
    assert [r.error_class for r in got] == ["client_error"] * 3
    assert "RecursionError" in got[0].error
    journaled = rows(tmp_path, "responses.jsonl")
    assert sorted(j["sample_id"] for j in journaled) == ["s0", "s1", "s2"]
    assert {j["response"]["error_class"] for j in journaled} == {"client_error"}


@pytest.mark.parametrize("depth", [990, 5000])
def test_tool_call_arguments_nested_beyond_reading_stay_the_raw_string(depth: int) -> None:
    arguments = "[" * depth + "]" * depth
    with FaultServer(default=Fault.ok(tool_calls=[{"name": "lookup", "arguments": arguments}])) as srv:
        response = extract(cfg(srv))
    assert response.error_class is None and response.tool_calls == [{"name": "lookup", "arguments": arguments}]
    json.dumps(response.as_dict())  # the journal can write it


@pytest.mark.slow
def test_a_resumed_journal_whose_usage_is_a_list_is_reused(pytester: pytest.Pytester, server: FaultServer) -> None:
    write_data(pytester.path / "data.jsonl", 4)
    bench(pytester, server.url, "--extractbench-no-cache").assert_outcomes(passed=4)
    journal = pytester.path / "out" / "responses.jsonl"
    entries = rows(pytester.path / "out", "responses.jsonl")
    for entry in entries:
        entry["response"]["usage"] = [1, 2, 3]
    journal.write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    asked = len(server.requests)
    result = bench(pytester, server.url, "--extractbench-no-cache", "--extractbench-resume", "out")
    result.assert_outcomes(passed=4)
    assert len(server.requests) == asked  # every answer came from the journal
    assert_accounted(pytester.path / "out", 4)


def test_model_output_nested_990_deep_is_journaled_before_it_is_scored(
    pytester: pytest.Pytester, server: FaultServer
) -> None:
    write_data(pytester.path / "data.jsonl", 4)
    server.plan = lambda index, body: Fault.deep(990, where="content") if sample_number(body) % 2 else None
    bench(pytester, server.url, "--extractbench-retries", "0")
    journaled = {j["sample_id"]: j["response"] for j in rows(pytester.path / "out", "responses.jsonl")}
    assert sorted(journaled) == ["s00", "s01", "s02", "s03"]
    assert journaled["s01"]["content"] == "[" * 990 + "]" * 990 and journaled["s01"]["error_class"] is None


def test_model_output_nested_990_deep_is_accounted(pytester: pytest.Pytester, server: FaultServer) -> None:
    write_data(pytester.path / "data.jsonl", 4)
    server.plan = lambda index, body: Fault.deep(990, where="content") if sample_number(body) % 2 else None
    result = bench(pytester, server.url, "--extractbench-retries", "0", sla="minimum")
    text = result.stdout.str()
    assert_accounted(pytester.path / "out", 4)
    assert "Traceback" not in text and "SLA passed" not in text and "Deploy without human review" not in text


@pytest.mark.parametrize(
    ("option", "value", "words"),
    [
        ("--extractbench-timeout", "inf", "a number of seconds > 0 and <= 86400"),
        ("--extractbench-timeout", "1e300", "a number of seconds > 0 and <= 86400"),
        ("--extractbench-temperature", "inf", "a finite non-negative number"),
        ("--extractbench-retries", "1000000000", "a whole number from 0 to 100"),
    ],
)
def test_live_options_that_would_never_end_are_refused(
    pytester: pytest.Pytester, server: FaultServer, option: str, value: str, words: str
) -> None:
    write_data(pytester.path / "data.jsonl", 2)
    result = bench(pytester, server.url, option, value)
    assert result.ret == pytest.ExitCode.USAGE_ERROR and words in result.stderr.str()
    assert server.requests == []


@pytest.mark.parametrize("key", ["sk-clé-Zq8vSECRET", "sk-Zq8v\nX-Injected: SECRET", "sk-Zq8v SECRET"])
def test_an_api_key_no_header_can_carry_stops_the_run_without_showing_it(
    pytester: pytest.Pytester, server: FaultServer, monkeypatch: pytest.MonkeyPatch, key: str
) -> None:
    monkeypatch.setenv("EXTRACTBENCH_API_KEY", key)
    write_data(pytester.path / "data.jsonl", 2)
    result = bench(pytester, server.url)
    text = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR and "characters an HTTP header cannot carry" in text
    assert "SECRET" not in text and server.headers == []
    outcome = check_connection(server.url, MODEL, timeout=2)
    assert not outcome.ok and "cannot carry" in outcome.message and "SECRET" not in outcome.message


@pytest.mark.parametrize("where", ["tool_call_arguments", "tool_call_name"])
def test_a_key_echoed_inside_tool_calls_is_masked(api_key: str, where: str) -> None:
    call = (
        {"name": "lookup", "arguments": {"auth": api_key}}
        if where == "tool_call_arguments"
        else {"name": f"call-{api_key}", "arguments": {}}
    )
    with FaultServer(default=Fault.ok(tool_calls=[call])) as srv:
        response = extract(cfg(srv, api_key=api_key))
    assert response.error_class is None and response.tool_calls
    assert api_key not in json.dumps(response.as_dict()) and "***" in json.dumps(response.tool_calls)


def test_credentials_in_a_config_file_url_are_refused_without_being_shown(pytester: pytest.Pytester) -> None:
    write_data(pytester.path / "data.jsonl", 2)
    (pytester.path / "bench.yaml").write_text(f'model:\n  base_url: "http://admin:{PASSWORD}@127.0.0.1:9/v1"\n')
    result = pytester.runpytest(
        "-p",
        "no:randomly",
        "--extractbench",
        "--extractbench-dataset",
        "data.jsonl",
        "--extractbench-config",
        "bench.yaml",
        "--model",
        MODEL,
    )
    text = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR and "bench.yaml" in text and "model.base_url" in text
    assert "credentials" in text and PASSWORD not in text
