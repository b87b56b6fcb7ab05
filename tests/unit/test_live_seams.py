"""The live layer's seams: server backends from a registry, an injectable HTTP client, one connection
check for the run and ``extractbench test-connection``, and one mapping of server errors to error classes."""

from __future__ import annotations

import asyncio
import importlib
import json
from pathlib import Path
from typing import Any

import openai
import pytest
from faultserver import Fault, FaultServer

from pytest_extractbench.core.errors import UsageProblem
from pytest_extractbench.dataset.responses import ERROR_CLASSES
from pytest_extractbench.live import backends
from pytest_extractbench.live.backends import BackendError, StartedServer, backend_class, make_backend
from pytest_extractbench.live.client import ClientConfig, ExtractionClient, build_messages
from pytest_extractbench.live.connection import ConnectionCheckError, check_connection, run_check
from pytest_extractbench.live.endpoints import Endpoints
from pytest_extractbench.live.errors import RETRIED, Failure, Transient, bad_body, classify_status, truncation
from pytest_extractbench.live.options import LiveOptions

# the httpx the SDK is built on (httpx2 under openai 3, httpx before): its AsyncClient is what it accepts
httpx = importlib.import_module(openai.DefaultAsyncHttpxClient.__mro__[1].__module__.partition(".")[0])
MODEL = "test-model"
SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}}


# -- backends ------------------------------------------------------------------------------------


class FaultBackend:
    """A backend whose 'server' is the loopback fault server: what a second backend module looks like."""

    default_model = MODEL
    started: list[FaultBackend] = []

    def __init__(self) -> None:
        self.server: FaultServer | None = None
        self.prompts: dict[str, Any] = {}

    def start(self, model: str, live: LiveOptions, *, log_path: Path, prompts: Any) -> StartedServer:
        if model == "broken":
            raise BackendError(f"cannot serve {model!r}")
        self.prompts = dict(prompts)
        self.server = FaultServer(models=[f"served-{model}"]).start()
        FaultBackend.started.append(self)
        return StartedServer((self.server.url,), f"served-{model}", 1, {"log": str(log_path)})

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()
            self.server = None

    def peak_rss_bytes(self) -> int | None:
        return 1234 if self.server is not None else None


@pytest.fixture
def fault_backend(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setitem(backends.BACKENDS, "fault", f"{__name__}:FaultBackend")
    FaultBackend.started = []
    return "fault"


def test_the_registry_names_the_default_backend_and_refuses_unknown_ones() -> None:
    assert backends.DEFAULT_BACKEND in backends.BACKENDS
    assert make_backend().default_model == backend_class().default_model
    with pytest.raises(BackendError, match="unknown server backend 'nope': use one of .*llama-server"):
        make_backend("nope")


def test_endpoints_start_check_and_stop_a_registered_backend(fault_backend: str, tmp_path: Path) -> None:
    live = LiveOptions()
    endpoints = Endpoints(live, ["a", "b"], backend=fault_backend)
    endpoints.start(tmp_path, lambda: {"s1": build_messages("text", SCHEMA)})
    first, second = FaultBackend.started
    assert endpoints.routes["a"].urls == (first.server.url,) and endpoints.routes["b"].served_model == "served-b"
    assert set(first.prompts) == {"s1"}  # the backend gets the prompts to size its context
    endpoints.check(None)  # each URL serves its model: a real GET /models
    facts = endpoints.facts()
    assert facts["embedded"]["a"]["log"] == str(tmp_path / "fault-a.log")
    assert facts["embedded"]["a"]["peak_rss_bytes"] == 1234
    endpoints.stop()
    assert first.server is None and second.server is None


def test_a_backend_that_cannot_start_is_a_usage_problem_and_stops_the_others(
    fault_backend: str, tmp_path: Path
) -> None:
    endpoints = Endpoints(LiveOptions(), ["a", "broken"], backend=fault_backend)
    with pytest.raises(UsageProblem, match="extractbench: cannot serve 'broken'"):
        endpoints.start(tmp_path)
    assert [backend.server for backend in FaultBackend.started] == [None]


# -- one connection check --------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize(
    ("models_fault", "models", "ok"),
    [
        (None, [MODEL], True),
        (None, ["other"], False),  # reachable, but the model is not served
        (None, None, True),  # 404 on /models: the server does not list models; passes unverified
        (Fault.status(401), [MODEL], False),
        (Fault.status(500), [MODEL], False),
        (Fault.raw(b"<html>proxy</html>"), [MODEL], False),
    ],
)
def test_the_run_and_test_connection_agree(models_fault: Fault | None, models: list[str] | None, ok: bool) -> None:
    with FaultServer(models=models, models_fault=models_fault) as srv:
        try:
            run_check(ClientConfig(srv.url, timeout_s=5), [MODEL])
            run_ok = True
        except ConnectionCheckError as exc:
            run_ok, run_message = False, str(exc)
        result = check_connection(srv.url, MODEL, timeout=5)
    assert run_ok is ok and result.ok is ok
    if not ok:
        assert result.message == run_message  # the same words in both places


def test_404_on_models_passes_unverified_and_says_so() -> None:
    with FaultServer(models=None) as srv:
        assert run_check(ClientConfig(srv.url, timeout_s=5), [MODEL]) is None
        result = check_connection(srv.url, MODEL, timeout=5)
    assert result.ok and result.models == []
    assert f"model {MODEL!r} not verified" in result.message and "ends with /v1" in result.message


def test_a_base_url_without_v1_is_found_by_the_first_request() -> None:
    """What the 404 decision costs: the check passes, and the request then names the 404 of its URL."""
    with FaultServer(models=None) as srv:
        client_config = ClientConfig(srv.url.removesuffix("/v1"), timeout_s=5, retries=0)
        assert run_check(client_config, [MODEL]) is None

        async def go() -> Any:
            async with ExtractionClient(client_config) as client:
                return await client.extract(MODEL, build_messages("Ada", SCHEMA), SCHEMA)

        response = asyncio.run(go())
    assert response.error_class == "request_error" and "HTTP 404" in response.error


# -- the injectable HTTP client ------------------------------------------------------------------


def completion(content: str) -> dict[str, Any]:
    return {
        "id": "x",
        "object": "chat.completion",
        "created": 0,
        "model": MODEL,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
    }


def test_an_injected_http_client_carries_the_requests_and_stays_open() -> None:
    seen: list[Any] = []

    def handler(request: Any) -> Any:
        seen.append(request)
        return httpx.Response(200, json=completion('{"name": "Ada"}'))

    async def go() -> Any:
        http = httpx.AsyncClient(transport=httpx.MockTransport(handler))
        async with ExtractionClient(ClientConfig("http://model.invalid/v1"), http_client=http) as client:
            response = await client.extract(MODEL, build_messages("Ada", SCHEMA), SCHEMA)
        still_open = not http.is_closed
        await http.aclose()
        return response, still_open

    response, still_open = asyncio.run(go())
    assert response.error_class is None and json.loads(response.content) == {"name": "Ada"}
    assert still_open and [str(r.url) for r in seen] == ["http://model.invalid/v1/chat/completions"]
    assert json.loads(seen[0].content)["response_format"]["type"] == "json_schema"


def test_a_factory_gets_the_config_and_its_client_is_closed_with_the_extraction_client() -> None:
    made: list[Any] = []
    configs: list[ClientConfig] = []

    def factory(config: ClientConfig) -> Any:
        configs.append(config)
        made.append(httpx.AsyncClient(transport=httpx.MockTransport(lambda r: httpx.Response(503, json={}))))
        return made[-1]

    config = ClientConfig("http://model.invalid/v1", retries=1, backoff_base_s=0)

    async def go() -> Any:
        async with ExtractionClient(config, http_client_factory=factory) as client:
            return await client.extract(MODEL, build_messages("Ada", SCHEMA), SCHEMA)

    response = asyncio.run(go())
    assert configs == [config] and made[0].is_closed
    assert response.error_class == "server_error" and response.attempts == 2


def test_an_http_client_and_a_factory_together_are_refused() -> None:
    with pytest.raises(ValueError, match="not both"):
        ExtractionClient(
            ClientConfig("http://model.invalid/v1"),
            http_client=httpx.AsyncClient(),
            http_client_factory=lambda config: httpx.AsyncClient(),
        )


# -- one mapping of server errors to error classes ------------------------------------------------


@pytest.mark.parametrize(
    ("status", "body", "message", "expected", "retried"),
    [
        (429, {}, "slow down", "rate_limited", True),
        (500, {}, "boom", "server_error", True),
        (503, {}, "loading", "server_error", True),
        (400, {}, "bad schema", "request_error", False),
        (404, {}, "no such route", "request_error", False),
        (
            400,
            {"type": "exceed_context_size_error", "n_prompt_tokens": 5000, "n_ctx": 4096},
            "request (5000 tokens) exceeds the available context size (4096 tokens)",
            "context_exceeded",
            False,
        ),
    ],
)
def test_statuses_map_to_error_classes(status: int, body: Any, message: str, expected: str, retried: bool) -> None:
    outcome = classify_status(status, body, message, {"retry-after": "2"})
    assert outcome.error_class == expected and outcome.error_class in ERROR_CLASSES
    assert isinstance(outcome, Transient) is retried and (expected in RETRIED) is retried
    assert outcome.error.endswith(f"HTTP {status}: {message}")
    if isinstance(outcome, Transient):
        assert outcome.retry_after == 2.0
    if expected == "context_exceeded":
        assert isinstance(outcome, Failure) and outcome.context == {"prompt_tokens": 5000, "limit": 4096}


def test_bodies_and_truncation_map_to_error_classes() -> None:
    assert bad_body("not JSON").error_class == "bad_response" and "bad_response" in RETRIED
    cut = truncation("length", 64)
    assert cut is not None and cut.error_class == "truncated" and "max_tokens (64)" in cut.error
    assert truncation("stop", 64) is None
    assert set(RETRIED) <= set(ERROR_CLASSES)


def test_the_pipeline_sends_through_an_injected_transport(tmp_path: Path) -> None:
    """Library users inject a transport for a whole run: every request goes through it, and is journaled."""
    from pytest_extractbench.dataset.samples import Sample
    from pytest_extractbench.live.endpoints import Route
    from pytest_extractbench.live.journal import latest_responses
    from pytest_extractbench.live.pipeline import LiveSource, load_templates

    hosts: list[str] = []

    def handler(request: Any) -> Any:
        hosts.append(request.url.host)
        return httpx.Response(200, json=completion('{"name": "Ada"}'))

    live = LiveOptions(base_urls=("http://replica.invalid/v1",))
    source = LiveSource(
        live,
        lambda: {MODEL: Route(live.base_urls, MODEL)},
        run_dir=tmp_path,
        cache_dir=None,
        concurrency=2,
        api_key=None,
        templates=load_templates(live, tmp_path),
        http_client_factory=lambda config: httpx.AsyncClient(transport=httpx.MockTransport(handler)),
    )
    samples = [Sample(id=f"s{i}", text="Ada", schema=SCHEMA, expected={"name": "Ada"}) for i in range(3)]
    try:
        source.prepare([(MODEL, s) for s in samples])
        got = [source.response(MODEL, s) for s in samples]
    finally:
        source.close()
    assert [r.error_class for r in got] == [None] * 3 and hosts == ["replica.invalid"] * 3
    assert sorted(sid for _, sid in latest_responses(tmp_path)) == ["s0", "s1", "s2"]
