"""Hostile streaming servers: server-sent events that are not chat-completion chunks, streams cut short or
never ending. A malformed stream is a bad body like any other (``bad_response``, asked again); a dropped
connection is ``connection``; a stream that never ends is a ``timeout``. Real loopback servers: the
scriptable fault server for the bytes, and a small raw server here for what HTTP itself must break.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from faultserver import Fault, FaultServer

from _checks import assert_accounted
from _net import serve_in_thread
from pytest_extractbench import evaluate
from pytest_extractbench.live.client import ClientConfig, ExtractionClient
from pytest_extractbench.scoring import MISSING

SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
MESSAGES = [{"role": "user", "content": "Ada"}]
HEAD = {"id": "c1", "object": "chat.completion.chunk", "created": 1, "model": "test-model"}


def event(data: Any) -> bytes:
    return b"data: " + (data if isinstance(data, bytes) else json.dumps(data).encode()) + b"\n\n"


def chunk(delta: Any, finish: str | None = None) -> bytes:
    return event({**HEAD, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})


GOOD_START = chunk({"role": "assistant", "content": '{"name": '})

MALFORMED = {
    "not-json": event(b"{not json"),
    "json-list": event([1, 2]),
    "json-string": event("chunk"),
    "choices-not-a-list": event({**HEAD, "choices": "all of them"}),
    "delta-a-list": event({**HEAD, "choices": [{"index": 0, "delta": [1]}]}),
    "content-a-number": chunk({"content": 5}, "stop"),
    "bad-utf8": b"data: \xff\xfe\n\n",
    "good-then-garbage": GOOD_START + event(b"{oops"),
    "error-event": event({"error": {"message": "the model crashed mid-answer"}}),
    "no-chunk": b"",
    "only-comments": b": keep-alive\n\n: keep-alive\n\n",
    "no-finish-reason": GOOD_START + chunk({"content": '"Ada"}'}),
}


def client(url: str, **overrides: Any) -> ExtractionClient:
    values: dict[str, Any] = {
        "stream": True,
        "retries": 1,
        "backoff_base_s": 0.01,
        "backoff_max_s": 0.02,
        "timeout_s": 10.0,
    }
    values.update(overrides)
    return ExtractionClient(ClientConfig(url, **values))


def extract(url: str, **overrides: Any) -> Any:
    async def go() -> Any:
        async with client(url, **overrides) as c:
            return await c.extract("test-model", MESSAGES, SCHEMA)

    return asyncio.run(go())


@pytest.mark.slow
@pytest.mark.parametrize("body", list(MALFORMED.values()), ids=list(MALFORMED))
def test_a_malformed_event_stream_is_a_bad_response_asked_again(body: bytes) -> None:
    stream = Fault.raw(body, content_type="text/event-stream")
    with FaultServer(faults=[stream, stream]) as server:
        response = extract(server.url)
        assert response.error_class == "bad_response", response.error
        assert response.attempts == 2 and server.counts["raw"] == 2  # retried like any other bad body
        assert response.error and "\n" not in response.error
        assert response.content is MISSING  # nothing half-read is scored


@pytest.mark.parametrize(
    "body",
    [MALFORMED["not-json"], MALFORMED["error-event"], MALFORMED["no-finish-reason"]],
    ids=["not-json", "error-event", "no-finish-reason"],
)
def test_the_retry_after_a_malformed_stream_gets_the_answer(body: bytes) -> None:
    with FaultServer(
        faults=[Fault.raw(body, content_type="text/event-stream")], default=Fault.ok({"name": "Ada"})
    ) as server:
        response = extract(server.url)
        assert response.error_class is None, response.error
        assert json.loads(response.content) == {"name": "Ada"} and response.attempts == 2


# -- a raw server for what only broken HTTP can do -------------------------------------------------------


class _RawSSE(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    mode = "cut"

    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.server.hits += 1  # type: ignore[attr-defined]
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        if self.server.mode == "cut":  # type: ignore[attr-defined]
            data = GOOD_START
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            self.wfile.write(b"40\r\n" + b"data: {")  # a chunk announced, half sent, then the connection drops
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        while not self.server.stopping.is_set():  # type: ignore[attr-defined]  # "keepalive": comments for ever
            data = b": still thinking\n\n"
            try:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                self.wfile.flush()
            except OSError:
                return
            self.server.stopping.wait(0.05)  # type: ignore[attr-defined]


@pytest.fixture
def raw_sse() -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _RawSSE)
    server.daemon_threads = True
    server.hits = 0  # type: ignore[attr-defined]
    server.stopping = threading.Event()  # type: ignore[attr-defined]
    serve_in_thread(server)
    yield server
    server.stopping.set()  # type: ignore[attr-defined]
    server.shutdown()
    server.server_close()


def url_of(server: ThreadingHTTPServer) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}/v1"


def test_a_connection_dropped_mid_stream_is_a_connection_error_asked_again(raw_sse: ThreadingHTTPServer) -> None:
    raw_sse.mode = "cut"  # type: ignore[attr-defined]
    response = extract(url_of(raw_sse))
    assert response.error_class == "connection", response.error
    assert response.attempts == 2 and raw_sse.hits == 2  # type: ignore[attr-defined]


@pytest.mark.slow
def test_a_stream_that_never_ends_is_a_timeout_within_the_attempt_budget(raw_sse: ThreadingHTTPServer) -> None:
    raw_sse.mode = "keepalive"  # type: ignore[attr-defined]
    response = extract(url_of(raw_sse), timeout_s=1.0)
    assert response.error_class == "timeout", response.error
    assert response.attempts == 2 and raw_sse.hits == 2  # type: ignore[attr-defined]


# -- a whole run ---------------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_run_against_a_server_whose_streams_break_accounts_for_every_sample(tmp_path: Path) -> None:
    rows = [{"id": f"s{i}", "text": f"Name {i}", "schema": SCHEMA, "expected": {"name": f"Name {i}"}} for i in range(4)]
    (tmp_path / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    broken = Fault.raw(MALFORMED["good-then-garbage"], content_type="text/event-stream")

    def plan(index: int, body: dict[str, Any]) -> Fault | None:
        # the sample whose prompt names "Name 2" always gets a broken stream; the others a good one
        return broken if "Name 2" in json.dumps(body.get("messages")) else None

    with FaultServer(plan=plan) as server:
        result = evaluate(
            str(tmp_path / "data.jsonl"),
            base_url=server.url,
            model="test-model",
            stream=True,
            retries=2,
            output=tmp_path / "out",
            rootdir=tmp_path,
            sla="none",
            no_cache=True,
            no_html_report=True,
        )
    assert_accounted(tmp_path / "out", 4)
    found = {r.sample_id: r.response for r in result.records}
    assert found["s2"]["error_class"] == "bad_response" and found["s2"]["attempts"] == 3
    assert all(found[s]["error_class"] is None for s in ("s0", "s1", "s3"))
