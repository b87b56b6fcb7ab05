"""The request layer against a real misbehaving HTTP server on loopback (tests/faultserver.py)."""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from faultserver import Fault, FaultServer
from hypothesis import given
from hypothesis import strategies as st

from pytest_extractbench.dataset.responses import ERROR_CLASSES, ModelResponse
from pytest_extractbench.live.client import (
    DEFAULT_SYSTEM_PROMPT,
    ClientConfig,
    ConnectionCheckError,
    ExtractionClient,
    PromptTemplateError,
    PromptTemplates,
    api_key_from_env,
    build_messages,
    cache_key,
    model_schema,
    run_check,
)
from pytest_extractbench.scoring import MISSING

MODEL = "test-model"
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "x-eval-compare": "exact"},
        "age": {"type": "integer"},
        "tags": {"type": "array", "items": {"type": "string", "x-eval-normalize": ["lower"]}},
    },
    "required": ["name"],
}
TEXT = "John Smith is 35 years old."
SECRET = "sk-test-Zq8v1SECRETvalue"


def config(server: FaultServer, **overrides: Any) -> ClientConfig:
    """Fast retries for tests: the backoff schedule itself is tested separately."""
    values: dict[str, Any] = {"timeout_s": 5.0, "backoff_base_s": 0.01, "backoff_max_s": 0.05}
    values.update(overrides)
    return ClientConfig(server.url, **values)


def extract(cfg: ClientConfig, schema: Any = SCHEMA, text: str = TEXT) -> ModelResponse:
    async def go() -> ModelResponse:
        async with ExtractionClient(cfg) as client:
            return await client.extract(MODEL, build_messages(text, schema), schema)

    return asyncio.run(go())


def complete(cfg: ClientConfig, **fields: Any) -> ModelResponse:
    async def go() -> ModelResponse:
        async with ExtractionClient(cfg) as client:
            return await client.complete(MODEL, [{"role": "user", "content": "hi"}], **fields)

    return asyncio.run(go())


# ----------------------------------------------------------------------------------------------
# answers and faults


def test_an_ok_answer_is_recorded_in_full(fault_server: FaultServer) -> None:
    before = time.time()
    response = extract(config(fault_server))
    assert response.ok and response.error_class is None and response.error is None
    jsonschema.validate(json.loads(response.content), model_schema(SCHEMA))
    assert response.finish_reason == "stop"
    assert response.attempts == 1 and fault_server.served == ["ok"]
    usage = response.usage
    assert usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"] > 0
    assert response.latency_s is not None and response.latency_s > 0
    assert before <= response.started_at <= response.finished_at <= time.time()
    assert response.finished_at - response.started_at >= response.latency_s
    assert response.tool_calls is None and response.logprobs is None and response.choices is None
    json.dumps(response.as_dict())  # the journal can store it


def test_a_server_that_ignores_stream_still_has_its_whole_answer_read(fault_server: FaultServer) -> None:
    # a proxy or server that does not stream answers a "stream": true request with a plain JSON body
    body = {
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": '{"name": "John Smith"}'}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 30, "completion_tokens": 6, "total_tokens": 36},
        "timings": {"prompt_ms": 12.5, "predicted_ms": 40.25},
    }
    fault_server.default = Fault.raw(json.dumps(body))
    response = extract(config(fault_server, stream=True))
    assert fault_server.requests[0]["stream"] is True
    # the answer as sent, not an empty output: content, finish reason, usage and the server's timings
    assert response.ok and response.content == '{"name": "John Smith"}' and response.finish_reason == "stop"
    assert response.usage == {"prompt_tokens": 30, "completion_tokens": 6, "total_tokens": 36}
    assert response.timings == {"prompt_ms": 12.5, "predicted_ms": 40.25}
    assert response.first_token_s is None  # nothing was streamed, so no first token was timed


TRANSIENT = {
    "http500": (Fault.status(500, "the GPU fell over"), "server_error"),
    "http503": (Fault.status(503, "model is loading"), "server_error"),
    "http429": (Fault.rate_limited(retry_after=None), "rate_limited"),
    "drop": (Fault.drop(), "connection"),
    "cut_body": (Fault.truncated(cut_connection=True), "connection"),
    "slow": (Fault.slow(5.0), "timeout"),
}


def timeout_for(fault: Fault) -> float:
    """Short only where the timeout is the fault: a loaded machine must not turn other faults into timeouts."""
    return 1.0 if fault.kind == "slow" else 10.0


# the timeout fault waits out a deadline per attempt (2-3 s a test): the full suite runs it, the fast lane does not
TRANSIENT_NAMES = [pytest.param(name, marks=pytest.mark.slow) if name == "slow" else name for name in TRANSIENT]


@pytest.mark.parametrize("name", TRANSIENT_NAMES)
def test_a_transient_fault_is_retried_and_recovers(fault_server: FaultServer, name: str) -> None:
    fault, _ = TRANSIENT[name]
    fault_server.enqueue(fault, fault)
    response = extract(config(fault_server, timeout_s=timeout_for(fault)))
    assert response.ok, response.error
    assert response.attempts == 3
    assert fault_server.served == [fault.label, fault.label, "ok"]
    assert len(fault_server.requests) == 3


@pytest.mark.parametrize("name", TRANSIENT_NAMES)
def test_a_persistent_fault_exhausts_the_retries_and_is_classified(fault_server: FaultServer, name: str) -> None:
    fault, error_class = TRANSIENT[name]
    fault_server.default = fault
    response = extract(config(fault_server, timeout_s=timeout_for(fault), retries=2))
    assert response.error_class == error_class and error_class in ERROR_CLASSES
    assert response.attempts == 3 == len(fault_server.requests)
    assert fault_server.counts[fault.label] == 3
    assert response.content is MISSING and not response.ok
    assert response.latency_s is None  # no successful attempt
    assert response.error
    if fault.kind == "status" and fault.message:
        assert fault.message in response.error and str(fault.status_code) in response.error


@pytest.mark.parametrize(
    ("fault", "error_class", "words"),
    [
        (Fault.truncated(), "bad_response", "truncated JSON body"),
        (Fault.non_json(), "bad_response", "not JSON"),
        (Fault.ok("just text, no completion"), None, None),
    ],
    ids=["truncated", "non_json", "plain_text_content"],
)
def test_bodies_that_are_not_completions_are_retried_then_bad_responses(
    fault_server: FaultServer, fault: Fault, error_class: str | None, words: str | None
) -> None:
    fault_server.default = fault
    response = extract(config(fault_server, retries=1))
    assert response.error_class == error_class
    # a 200 that is not a completion (a proxy's error page, a cut body) is asked again; text content is not
    attempts = 1 if error_class is None else 2
    assert response.attempts == attempts and len(fault_server.requests) == attempts
    if words:
        assert words in response.error and response.content is MISSING
    else:  # text content is the model's problem, scored later, not a transport error
        assert response.content == "just text, no completion"


def test_finish_reason_length_is_truncated_and_keeps_the_content(fault_server: FaultServer) -> None:
    full = json.dumps({"name": "John Smith", "age": 35, "tags": ["a", "b"]})
    fault_server.enqueue(Fault.length(full))
    response = extract(config(fault_server, max_tokens=7))
    assert response.error_class == "truncated"
    assert response.finish_reason == "length"
    assert response.content == full[: len(full) // 2]
    assert "max_tokens (7)" in response.error
    assert response.attempts == 1
    assert fault_server.requests[0]["max_tokens"] == 7


@pytest.mark.parametrize("code", [400, 404, 422])
def test_request_errors_are_not_retried_and_keep_the_servers_message(fault_server: FaultServer, code: int) -> None:
    message = f"response_format.json_schema: unsupported keyword 'patternProperties' ({code})"
    fault_server.default = Fault.status(code, message)
    response = extract(config(fault_server))
    assert response.error_class == "request_error"
    assert response.attempts == 1 == len(fault_server.requests)
    assert response.error == f"HTTP {code}: {message}"


LLAMA_MESSAGE = "request (40123 tokens) exceeds the available context size (32768 tokens), try increasing it"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("fault", "tokens", "limit"),
    [
        # llama-server: the numbers in its extra fields and in the message
        (
            Fault.error_body(
                400,
                {
                    "error": {
                        "code": 400,
                        "message": LLAMA_MESSAGE,
                        "type": "exceed_context_size_error",
                        "n_prompt_tokens": 40123,
                        "n_ctx": 32768,
                    }
                },
            ),
            40123,
            32768,
        ),
        # an older llama-server: the message only
        (Fault.bad_request(LLAMA_MESSAGE), 40123, 32768),
        # vLLM, top-level error object: the messages' own tokens, not messages + completion
        (
            Fault.error_body(
                400,
                {
                    "object": "error",
                    "type": "BadRequestError",
                    "code": 400,
                    "param": None,
                    "message": "This model's maximum context length is 2048 tokens. However, you requested 2600 tokens "
                    "(2100 in the messages, 500 in the completion). Please reduce the length of the messages "
                    "or completion.",
                },
            ),
            2100,
            2048,
        ),
        # newer vLLM: the prompt fits but not with max_tokens
        (
            Fault.error_body(
                400,
                {
                    "object": "error",
                    "message": "'max_tokens' or 'max_completion_tokens' is too large: 2048. "
                    "This model's maximum context length is 4096 tokens and your request has 3000 input tokens "
                    "(2048 > 4096 - 3000).",
                    "type": "BadRequestError",
                    "code": 400,
                },
            ),
            3000,
            4096,
        ),
        # OpenAI
        (
            Fault.error_body(
                400,
                {
                    "error": {
                        "message": "This model's maximum context length is 8192 tokens. However, your "
                        "messages resulted in 9001 tokens. Please reduce the length of the messages.",
                        "type": "invalid_request_error",
                        "code": "context_length_exceeded",
                    }
                },
            ),
            9001,
            8192,
        ),
        # a proxy that says only the code
        (Fault.error_body(413, {"error": {"message": "too long", "code": "context_length_exceeded"}}), None, None),
    ],
    ids=["llama-server", "llama-server-message", "vllm", "vllm-max-tokens", "openai", "code-only"],
)
def test_a_prompt_beyond_the_context_is_context_exceeded(
    fault_server: FaultServer, fault: Fault, tokens: int | None, limit: int | None
) -> None:
    fault_server.default = fault
    response = extract(config(fault_server))
    assert response.error_class == "context_exceeded"
    assert response.context == {"prompt_tokens": tokens, "limit": limit}
    assert response.attempts == 1 == len(fault_server.requests)  # not retried: it cannot fit on a retry either
    if tokens is not None:
        assert response.error.startswith(
            f"the prompt ({tokens} tokens) does not fit the model's context ({limit} tokens)"
        )
    assert f"HTTP {fault.status_code}:" in response.error  # the server's own words are kept


def test_other_bad_requests_mentioning_tokens_stay_request_errors(fault_server: FaultServer) -> None:
    fault_server.default = Fault.bad_request("max_tokens must be at least 1, got 0")
    response = extract(config(fault_server))
    assert response.error_class == "request_error" and response.context is None


def test_retry_after_is_honoured(fault_server: FaultServer) -> None:
    fault_server.enqueue(Fault.rate_limited(retry_after=1))
    response = extract(config(fault_server))
    assert response.ok and response.attempts == 2
    first, second = fault_server.received_at
    assert second - first >= 1.0
    assert response.finished_at - response.started_at >= 1.0


def test_retry_after_is_capped(fault_server: FaultServer) -> None:
    fault_server.enqueue(Fault.rate_limited(retry_after=3600))
    response = extract(config(fault_server, retry_after_max_s=0.2))
    assert response.ok and response.attempts == 2
    first, second = fault_server.received_at
    assert 0.2 <= second - first < 60


def test_a_rate_limit_that_persists_is_rate_limited(fault_server: FaultServer) -> None:
    fault_server.default = Fault.rate_limited(retry_after=0.1)
    response = extract(config(fault_server, retries=1))
    assert response.error_class == "rate_limited"
    assert response.attempts == 2 and fault_server.counts["http429"] == 2
    assert "rate limit exceeded" in response.error


def test_backoff_grows_exponentially(fault_server: FaultServer) -> None:
    fault_server.default = Fault.status(502)
    response = extract(config(fault_server, retries=3, backoff_base_s=0.1, backoff_max_s=10, jitter=0))
    assert response.error_class == "server_error" and response.attempts == 4
    t = fault_server.received_at
    gaps = [b - a for a, b in zip(t, t[1:])]
    assert [round(g, 1) >= want for g, want in zip(gaps, (0.1, 0.2, 0.4))] == [True, True, True], gaps
    assert gaps[2] > gaps[0]


def test_backoff_is_capped(fault_server: FaultServer) -> None:
    fault_server.default = Fault.status(500)
    response = extract(config(fault_server, retries=4, backoff_base_s=0.05, backoff_max_s=0.05, jitter=0))
    assert response.attempts == 5
    t = fault_server.received_at
    assert all(0.05 <= b - a < 5 for a, b in zip(t, t[1:]))


def test_a_server_killed_and_restarted_mid_request_is_survived(fault_server: FaultServer) -> None:
    fault_server.stop()
    # On its port, a server that dies mid-request: it takes the first connection, drops it, and only then is the
    # real server started again (a timer would race the client on a loaded machine).
    dying = socket.create_server((fault_server.host, fault_server.port))

    def die_then_restart() -> None:
        connection, _ = dying.accept()
        connection.recv(65536)
        connection.close()
        dying.close()
        fault_server.start()

    restart = threading.Thread(target=die_then_restart, daemon=True)
    restart.start()
    try:
        response = extract(config(fault_server, retries=6, backoff_base_s=0.1, backoff_max_s=0.3))
    finally:
        restart.join(timeout=30)
    assert response.ok, response.error
    assert response.attempts > 1
    assert fault_server.served == ["ok"]


def test_in_flight_requests_see_a_dropped_connection_when_the_server_stops(fault_server: FaultServer) -> None:
    fault_server.default = Fault.slow(30)
    stopper = threading.Timer(0.3, fault_server.stop)
    stopper.start()
    response = extract(config(fault_server, retries=0, timeout_s=20))
    stopper.join()
    assert response.error_class == "connection"
    assert response.finished_at - response.started_at < 20


def test_concurrent_requests_are_all_accounted_for(fault_server: FaultServer) -> None:
    faults = {0: Fault.status(500), 1: Fault.drop(), 2: Fault.rate_limited(0.05), 3: Fault.bad_request("no")}
    fault_server.plan = lambda i, body: faults.get(i % 10) if i < 40 else None
    cfg = config(fault_server, retries=3)

    async def go() -> list[ModelResponse]:
        async with ExtractionClient(cfg) as client:
            jobs = [client.extract(MODEL, build_messages(f"doc {k}", SCHEMA), SCHEMA) for k in range(40)]
            return await asyncio.gather(*jobs)

    responses = asyncio.run(go())
    request_errors = [r for r in responses if r.error_class == "request_error"]
    assert len(responses) == 40
    assert len(request_errors) == fault_server.counts["http400"]
    assert all(r.ok for r in responses if r.error_class is None)
    assert sum(r.attempts for r in responses) == len(fault_server.requests)
    assert sum(r.ok for r in responses) == fault_server.counts["ok"]
    assert sum(r.attempts - 1 for r in responses) == sum(fault_server.counts[k] for k in ("http500", "drop", "http429"))


# ----------------------------------------------------------------------------------------------
# what is sent


def test_json_schema_mode_sends_a_strict_response_format_and_the_decoding_defaults(fault_server: FaultServer) -> None:
    extract(config(fault_server))
    body = fault_server.requests[0]
    assert body["model"] == MODEL
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "extraction_result", "schema": model_schema(SCHEMA), "strict": True},
    }
    # max_tokens from the schema: 1.5 x (2 + name 2+2+32 + age 2+2+6 + tags 2+2+(2 + 4 x (2+32))) = 1.5 x 190
    assert (body["temperature"], body["max_tokens"], body["seed"]) == (0.0, 285, 42)
    assert "guided_json" not in body and "structured_outputs" not in body
    assert "x-eval" not in json.dumps(body)  # benchmark keywords never reach the server
    assert [m["role"] for m in body["messages"]] == ["system", "user"]


def test_json_object_mode_sends_llama_cpps_schema_form(fault_server: FaultServer) -> None:
    extract(config(fault_server, structured_output="json_object"))
    body = fault_server.requests[0]
    assert body["response_format"] == {"type": "json_object", "schema": model_schema(SCHEMA)}
    assert "guided_json" not in body


def test_guided_json_mode_sends_vllms_extra_body(fault_server: FaultServer) -> None:
    extract(config(fault_server, structured_output="guided_json"))
    body = fault_server.requests[0]
    assert body["guided_json"] == model_schema(SCHEMA)
    assert body["structured_outputs"] == {"json": model_schema(SCHEMA)}
    assert "response_format" not in body


def test_none_mode_sends_the_prompt_only(fault_server: FaultServer) -> None:
    response = extract(config(fault_server, structured_output="none"))
    body = fault_server.requests[0]
    assert not {"response_format", "guided_json", "structured_outputs"} & set(body)
    assert json.dumps(model_schema(SCHEMA), indent=2) in body["messages"][-1]["content"]
    assert json.loads(response.content) == {"echo": body["messages"][-1]["content"]}


def test_decoding_settings_are_sent(fault_server: FaultServer) -> None:
    extract(config(fault_server, temperature=0.3, max_tokens=99, seed=None, strict=False))
    body = fault_server.requests[0]
    assert (body["temperature"], body["max_tokens"]) == (0.3, 99)
    assert "seed" not in body
    assert body["response_format"]["json_schema"]["strict"] is False


def test_complete_passes_request_fields_and_reads_tool_calls(fault_server: FaultServer) -> None:
    tools = [{"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}]
    fault_server.enqueue(
        Fault.ok(tool_calls=[{"name": "lookup", "arguments": {"city": "Oslo"}}, {"name": "bad", "arguments": "{oops"}])
    )
    response = complete(config(fault_server), tools=tools, temperature=0.7)
    body = fault_server.requests[0]
    assert body["tools"] == tools and body["temperature"] == 0.7
    assert response.ok and response.finish_reason == "tool_calls"
    assert response.tool_calls == [
        {"name": "lookup", "arguments": {"city": "Oslo"}},
        {"name": "bad", "arguments": "{oops"},  # invalid JSON arguments are kept raw
    ]


def test_complete_reads_logprobs_and_every_choice(fault_server: FaultServer) -> None:
    response = complete(config(fault_server), logprobs=True, n=3)
    body = fault_server.requests[0]
    assert body["logprobs"] is True and body["n"] == 3
    assert response.logprobs and "".join(item["token"] for item in response.logprobs) == response.content
    assert all(set(item) == {"token", "logprob"} and item["logprob"] <= 0 for item in response.logprobs)
    assert response.choices is not None and len(response.choices) == 3
    assert all(choice["content"] == response.content for choice in response.choices)


# ----------------------------------------------------------------------------------------------
# secrets


def test_the_api_key_is_sent_but_never_shown(fault_server: FaultServer) -> None:
    fault_server.api_key = SECRET
    cfg = config(fault_server, api_key=SECRET)
    ok = extract(cfg)
    assert ok.ok and fault_server.headers[0]["authorization"] == f"Bearer {SECRET}"
    fault_server.enqueue(Fault.bad_request(f"key {SECRET} has no access to this model"))
    failed = extract(cfg)
    assert failed.error_class == "request_error" and "key *** has no access" in failed.error
    records = (json.dumps(ok.as_dict()), json.dumps(failed.as_dict()))
    for shown in (repr(cfg), str(cfg), repr(ExtractionClient(cfg)), *records):
        assert SECRET not in shown


def test_a_wrong_key_is_a_request_error(fault_server: FaultServer) -> None:
    fault_server.api_key = SECRET
    response = extract(config(fault_server, api_key="wrong"))
    assert response.error_class == "request_error" and response.attempts == 1
    assert response.error.startswith("HTTP 401") and fault_server.served == ["unauthorized"]


def test_api_key_from_env_prefers_extractbench() -> None:
    assert api_key_from_env({"EXTRACTBENCH_API_KEY": "a", "OPENAI_API_KEY": "b"}) == "a"
    assert api_key_from_env({"EXTRACTBENCH_API_KEY": "  ", "OPENAI_API_KEY": "b"}) == "b"
    assert api_key_from_env({}) is None


# ----------------------------------------------------------------------------------------------
# connection check


def check(cfg: ClientConfig, models: Any) -> Any:
    async def go() -> Any:
        async with ExtractionClient(cfg) as client:
            return await client.check(models)

    return asyncio.run(go())


def test_check_passes_and_lists_the_served_models() -> None:
    with FaultServer(models=["llama-3-8b", "qwen"]) as server:
        assert check(config(server), "qwen") == ["llama-3-8b", "qwen"]
        assert run_check(config(server), ["llama-3-8b", "qwen"]) == ["llama-3-8b", "qwen"]
        assert server.counts["models"] == 2 and server.requests == []


def test_check_names_the_models_the_server_does_serve() -> None:
    with FaultServer(models=["llama-3-8b", "qwen"]) as server, pytest.raises(ConnectionCheckError) as info:
        run_check(config(server), ["qwen", "gpt-9"])
    message = str(info.value)
    assert message == f"the model server at {server.url} does not serve 'gpt-9'; it serves: llama-3-8b, qwen"


def test_check_accepts_servers_without_models_route() -> None:
    with FaultServer(models=None) as server:
        assert run_check(config(server), [MODEL]) is None


def test_check_reports_an_unreachable_server_in_one_line(fault_server: FaultServer) -> None:
    fault_server.stop()
    with pytest.raises(ConnectionCheckError) as info:
        run_check(config(fault_server), [MODEL])
    message = str(info.value)
    assert message.startswith(f"cannot reach the model server at {fault_server.url}: ")
    assert "\n" not in message


@pytest.mark.parametrize(("key", "hint"), [(None, "no API key is set; set EXTRACTBENCH_API_KEY"), ("wrong", "check")])
def test_check_reports_a_refused_key(fault_server: FaultServer, key: str | None, hint: str) -> None:
    fault_server.api_key = SECRET
    with pytest.raises(ConnectionCheckError) as info:
        run_check(config(fault_server, api_key=key), [MODEL])
    message = str(info.value)
    assert "refused the API key (HTTP 401: Incorrect API key provided.)" in message and hint in message
    assert SECRET not in message and "\n" not in message


def test_run_check_works_inside_a_running_loop(fault_server: FaultServer) -> None:
    async def go() -> Any:
        return run_check(config(fault_server), [MODEL])

    assert asyncio.run(go()) == [MODEL]


# ----------------------------------------------------------------------------------------------
# prompts, schema, cache key


def test_default_prompts_are_the_specs() -> None:
    system, user = build_messages(TEXT, {"type": "object"})
    assert system == {"role": "system", "content": DEFAULT_SYSTEM_PROMPT}
    assert user["content"] == (
        f"Text:\n{TEXT}\n\nExtract information according to this JSON schema:\n"
        '{\n  "type": "object"\n}\n\nOutput valid JSON matching the schema exactly.'
    )


def test_placeholders_are_replaced_once_and_other_braces_stay() -> None:
    templates = PromptTemplates(system="", user='Fill {schema} like {"a": 1} from:\n{text}')
    messages = build_messages("a doc that mentions {schema} and {text}", {"type": "null"}, templates)
    assert messages == [
        {
            "role": "user",
            "content": 'Fill {\n  "type": "null"\n} like {"a": 1} from:\na doc that mentions {schema} and {text}',
        }
    ]


def test_templates_from_files(tmp_path: Path) -> None:
    (tmp_path / "system.txt").write_text("Schema:\n{schema}\n", encoding="utf-8")
    (tmp_path / "user.txt").write_text("Document: {text}\n", encoding="utf-8")
    templates = PromptTemplates.from_files(tmp_path / "system.txt", tmp_path / "user.txt")
    system, user = build_messages("doc", {"type": "string"}, templates)
    assert system["content"] == 'Schema:\n{\n  "type": "string"\n}'
    assert user["content"] == "Document: doc"
    (tmp_path / "both.txt").write_text("{schema}\n---\n{text}\n\n", encoding="utf-8")
    default_system = PromptTemplates.from_files(user_path=tmp_path / "both.txt")
    assert default_system.system == DEFAULT_SYSTEM_PROMPT and default_system.user == "{schema}\n---\n{text}"


def test_template_errors_name_the_file(tmp_path: Path) -> None:
    missing = tmp_path / "nope.txt"
    with pytest.raises(PromptTemplateError, match=f"cannot read the user prompt template {missing}: No such file"):
        PromptTemplates.from_files(user_path=missing)
    no_text = tmp_path / "no_text.txt"
    no_text.write_text("Schema: {schema}", encoding="utf-8")
    with pytest.raises(PromptTemplateError, match=f"user prompt template {no_text} lacks the {{text}} placeholder"):
        PromptTemplates.from_files(user_path=no_text)
    no_schema = tmp_path / "no_schema.txt"
    no_schema.write_text("Text: {text}", encoding="utf-8")
    with pytest.raises(PromptTemplateError, match=f"{no_schema} lacks the {{schema}} placeholder"):
        PromptTemplates.from_files(user_path=no_schema)
    binary = tmp_path / "binary.txt"
    binary.write_bytes(b"\xff\xfe{text}")
    with pytest.raises(PromptTemplateError, match=f"cannot read the system prompt template {binary}"):
        PromptTemplates.from_files(system_path=binary)


def test_model_schema_drops_only_eval_keywords() -> None:
    schema = {
        "type": "object",
        "x-eval-align": "hungarian",
        "properties": {
            "x-eval-weird-name": {"type": "string", "x-eval-compare": "exact"},
            "kind": {"enum": [{"x-eval-compare": "data, not a keyword"}]},
            "items": {"type": "array", "items": {"type": "object", "x-eval-key": "sku"}},
            "either": {"anyOf": [{"type": "string", "x-eval-compare": "fuzzy"}, {"type": "null"}]},
        },
    }
    assert model_schema(schema) == {
        "type": "object",
        "properties": {
            "x-eval-weird-name": {"type": "string"},
            "kind": {"enum": [{"x-eval-compare": "data, not a keyword"}]},
            "items": {"type": "array", "items": {"type": "object"}},
            "either": {"anyOf": [{"type": "string"}, {"type": "null"}]},
        },
    }
    assert "x-eval-align" in schema  # the input is not changed


def test_cache_key_covers_what_determines_the_answer() -> None:
    messages = build_messages(TEXT, SCHEMA)
    params = ClientConfig("http://a/v1").decoding_params()
    key = cache_key(MODEL, messages, SCHEMA, params)
    assert len(key) == 64 and int(key, 16) >= 0
    reordered = {k: SCHEMA[k] for k in reversed(list(SCHEMA))}
    assert cache_key(MODEL, messages, reordered, dict(reversed(list(params.items())))) == key
    assert cache_key(MODEL, messages, model_schema(SCHEMA), params) == key  # x-eval keys do not matter
    changed = [
        cache_key("other-model", messages, SCHEMA, params),
        cache_key(MODEL, build_messages(TEXT + ".", SCHEMA), SCHEMA, params),
        cache_key(MODEL, messages, {**SCHEMA, "required": []}, params),
        *(
            cache_key(MODEL, messages, SCHEMA, ClientConfig("http://a/v1", **{name: value}).decoding_params())
            for name, value in [("temperature", 0.5), ("max_tokens", 10), ("seed", 1), ("structured_output", "none")]
        ),
    ]
    assert len(set(changed)) == len(changed) and key not in changed


def test_cache_key_ignores_server_and_key() -> None:
    messages = build_messages(TEXT, SCHEMA)
    one = ExtractionClient(ClientConfig("http://127.0.0.1:1/v1", api_key="a"))
    two = ExtractionClient(ClientConfig("https://example.org/v1", api_key="b", timeout_s=5, retries=0))
    assert one.cache_key(MODEL, messages, SCHEMA) == two.cache_key(MODEL, messages, SCHEMA)
    assert one.cache_key(MODEL, messages, SCHEMA) == cache_key(MODEL, messages, SCHEMA, one.config.decoding_params())


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("base_url", "localhost:8000", "expected an http:// or https:// URL"),
        ("structured_output", "grammar", "json_schema, json_object, guided_json, none"),
        ("timeout_s", 0, "timeout_s is out of range"),
        ("retries", -1, "retries is out of range"),
    ],
)
def test_bad_config_values_are_named(field: str, value: Any, words: str) -> None:
    values: dict[str, Any] = {"base_url": "http://127.0.0.1:8000/v1", field: value}
    with pytest.raises(ValueError, match=words.replace("(", r"\(").replace(")", r"\)")):
        ClientConfig(**values)


def test_importing_the_client_needs_neither_pytest_nor_openai() -> None:
    code = (
        "import sys, pytest_extractbench.live.client; "
        "bad = {'pytest', '_pytest', 'openai'} & set(sys.modules); assert not bad, bad"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_credentials_in_the_url_are_refused_without_being_shown(fault_server: FaultServer) -> None:
    url = fault_server.url.replace("http://", f"http://user:{SECRET}@")
    with pytest.raises(ValueError) as info:
        ClientConfig(url, timeout_s=2)
    assert SECRET not in str(info.value) and fault_server.url in str(info.value)
    assert "credentials" in str(info.value) and fault_server.requests == []


def test_a_url_query_is_not_shown_in_check_errors(fault_server: FaultServer) -> None:
    fault_server.stop()
    url = fault_server.url + f"?token={SECRET}"
    with pytest.raises(ConnectionCheckError) as info:
        run_check(ClientConfig(url, timeout_s=2), [MODEL])
    assert SECRET not in str(info.value) and f"at {fault_server.url}:" in str(info.value)
    assert SECRET not in repr(ExtractionClient(ClientConfig(url)))


@given(text=st.text(), literal=st.text(alphabet="{}abtxscheman", max_size=20))
def test_any_document_is_inserted_verbatim(text: str, literal: str) -> None:
    """Whatever braces the document or the template's literal part hold, only the placeholders change."""
    while "{text}" in literal or "{schema}" in literal:
        literal = literal.replace("{text}", "").replace("{schema}", "")
    templates = PromptTemplates(system="", user=literal + "{text}" + "\x00" + "{schema}")
    (user,) = build_messages(text, {"type": "object"}, templates)
    assert user["content"] == literal + text + "\x00" + '{\n  "type": "object"\n}'
