"""A real, scriptable, misbehaving OpenAI-compatible HTTP server on loopback, for fault tests.

It speaks just enough of the chat-completions API (``GET /v1/models``, ``POST /v1/chat/completions``,
``GET /health``) over real sockets, and each chat request is answered by a `Fault` chosen by a plan.

Scripting API (stable: the client tests and the pipeline tests both use it)::

    from faultserver import Fault, FaultServer   # tests/ is on sys.path (conftest)

    # 1. a queue of faults, then a default for every later request
    with FaultServer(faults=[Fault.status(500), Fault.drop()], default=Fault.ok()) as srv:
        client = AsyncOpenAI(base_url=srv.url, api_key="x")      # srv.url ends in /v1
        ...
        srv.requests        # JSON bodies of the chat requests received, in arrival order
        srv.served          # the Fault.label that answered each: "ok", "http500", "http429", "drop", ...
                            # ("unauthorized" when api_key is set and the request lacked it)
        srv.counts          # Counter of those labels, plus "models" for GET /v1/models
        srv.enqueue(Fault.rate_limited(retry_after=1))            # more faults for the next requests

    # 2. a plan: any callable (request_index, body) -> Fault | None (None means `default`)
    FaultServer(plan=lambda i, body: Fault.status(503) if i % 3 == 0 else None)

    # 3. kill and restart mid-run, on the same port (in-flight requests see a dropped connection)
    srv.stop(); srv.start()      # srv.url is unchanged; srv.requests keeps counting; srv.reset() clears

Faults (constructors of the frozen dataclass `Fault`):
    Fault.ok(content=None, delay=0.0, tool_calls=None)  200 with a chat completion; `content` is a
        string or a JSON value; by default the `answer` callable's value (see below)
    Fault.status(code, message=None)  an OpenAI-style JSON error body with that HTTP status
    Fault.bad_request(message)        400 with {"error": {"message": message, ...}}
    Fault.error_body(code, body)      that HTTP status with `body` (any JSON value) as the whole response body,
        e.g. vLLM's top-level {"object": "error", "message": ...} or llama-server's extra error fields
    Fault.rate_limited(retry_after)   429 with a ``Retry-After: <seconds>`` header (None: no header)
    Fault.slow(seconds)               answers ok after `seconds` (use with a shorter client timeout)
    Fault.drop()                      reads the request, then closes the connection without a response
    Fault.truncated()                 200 whose JSON body is cut in half (Content-Length matches the cut)
    Fault.truncated(cut_connection=True)  announces the full Content-Length, sends half, closes
    Fault.non_json()                  200 with an HTML body (Content-Type text/html)
    Fault.length(content=None)        200 with finish_reason "length" and content cut in half

Hostile modes (what a broken or malicious server does):
    Fault.drip(interval=0.2)          200 whose body trickles out one byte every `interval` seconds
                                      (every read is quick; only a budget for the whole attempt ends it)
    Fault.raw(body, status=200, content_type="application/json")  exactly these bytes
    Fault.deep(depth=5000, where="body")  a chat completion carrying an array nested `depth` deep:
                                      in the body ("body"), or as the answer's content ("content")
    Fault.usage(raw_json)             an ok answer whose ``usage`` is this JSON text verbatim
                                      ("1e400", "NaN", "[1, 2]", '{"prompt_tokens": 1e400}', ...)
    Fault.echo_headers(status=200)    echoes the request's HTTP headers (Authorization included):
                                      as the answer's content with 200, as the error message otherwise

Other constructor arguments: ``models=("test-model",)`` served by ``/v1/models`` (``None``: that route
answers 404, like servers without it), ``models_fault=None`` (a drip, raw, status or echo_headers
fault for ``GET /v1/models``), ``api_key=None`` (when set, requests without
``Authorization: Bearer <api_key>`` get 401), ``answer=callable(body) -> str | JSON value`` for ok
answers (default: a minimal instance of the schema found in the request's structured-output fields,
else ``{"echo": <last user message>}``), ``host``, ``port`` (0: a free port, kept across restarts),
``slots=callable() -> JSON value`` answered at ``GET /slots`` like llama-server's slot list (``None``: 404;
``counts["slots"]`` counts the queries).

Requests with ``"stream": true`` get the ok answer as server-sent events (``Fault.ok(gap=...)`` spaces the
chunks), requests with ``"logprobs": true`` get per-token logprobs, ``"n": k`` gets k choices, and usage
counts are len(text)//4 (deterministic, not real tokens).
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

__all__ = ["Fault", "FaultServer", "minimal_instance"]

FAULT_KINDS = ("ok", "status", "slow", "drop", "truncated", "non_json", "length", "drip", "raw", "deep", "echo")


@dataclass(frozen=True)
class Fault:
    """How to answer one chat-completions request."""

    kind: str = "ok"
    status_code: int = 200
    message: str | None = None
    retry_after: float | None = None
    delay: float = 0.0
    content: Any = None  # None: use the server's `answer`
    tool_calls: tuple[dict[str, Any], ...] | None = None  # ({"name": ..., "arguments": {...} or "..."}, ...)
    cut_connection: bool = False
    body: bytes | None = None  # raw: the bytes sent
    content_type: str = "application/json"
    depth: int = 0  # deep: nesting depth; delay doubles as drip's interval
    where: str = "body"  # deep: "body" or "content"
    usage_json: str | None = None  # ok: the usage value's JSON text, verbatim
    timings: dict[str, Any] | None = None  # ok: a llama-server-style ``timings`` object in the answer
    gap: float = 0.0  # ok, streamed: seconds between the chunks of the answer

    @property
    def label(self) -> str:
        """How `FaultServer.served` and `.counts` name this fault: the kind, or ``http<code>`` for statuses."""
        http = self.kind == "status" or (self.kind == "raw" and self.status_code != 200)
        return f"http{self.status_code}" if http else self.kind

    def __post_init__(self) -> None:
        if self.kind not in FAULT_KINDS:
            raise ValueError(f"unknown fault kind {self.kind!r}; one of {FAULT_KINDS}")

    @classmethod
    def ok(
        cls,
        content: Any = None,
        *,
        delay: float = 0.0,
        tool_calls: Iterable[dict[str, Any]] | None = None,
        timings: dict[str, Any] | None = None,
        gap: float = 0.0,
    ) -> Fault:
        return cls(
            "ok",
            content=content,
            delay=delay,
            tool_calls=tuple(tool_calls) if tool_calls else None,
            timings=timings,
            gap=gap,
        )

    @classmethod
    def status(cls, code: int, message: str | None = None, *, retry_after: float | None = None) -> Fault:
        return cls("status", status_code=code, message=message, retry_after=retry_after)

    @classmethod
    def error_body(cls, code: int, body: Any) -> Fault:
        return cls.raw(json.dumps(body), status=code)

    @classmethod
    def bad_request(cls, message: str = "invalid request") -> Fault:
        return cls.status(400, message)

    @classmethod
    def rate_limited(cls, retry_after: float | None = 1.0, message: str = "rate limit exceeded") -> Fault:
        return cls.status(429, message, retry_after=retry_after)

    @classmethod
    def slow(cls, seconds: float, content: Any = None) -> Fault:
        return cls("slow", delay=seconds, content=content)

    @classmethod
    def drop(cls) -> Fault:
        return cls("drop")

    @classmethod
    def truncated(cls, *, cut_connection: bool = False) -> Fault:
        return cls("truncated", cut_connection=cut_connection)

    @classmethod
    def non_json(cls) -> Fault:
        return cls("non_json")

    @classmethod
    def length(cls, content: Any = None) -> Fault:
        return cls("length", content=content)

    @classmethod
    def drip(cls, interval: float = 0.2, content: Any = None) -> Fault:
        return cls("drip", delay=interval, content=content)

    @classmethod
    def raw(cls, body: bytes | str, status: int = 200, content_type: str = "application/json") -> Fault:
        data = body.encode() if isinstance(body, str) else body
        return cls("raw", status_code=status, body=data, content_type=content_type)

    @classmethod
    def deep(cls, depth: int = 5000, where: str = "body") -> Fault:
        if where not in ("body", "content"):
            raise ValueError("where is 'body' or 'content'")
        return cls("deep", depth=depth, where=where)

    @classmethod
    def usage(cls, raw_json: str, content: Any = None) -> Fault:
        return cls("ok", content=content, usage_json=raw_json)

    @classmethod
    def echo_headers(cls, status: int = 200) -> Fault:
        return cls("echo", status_code=status)


def minimal_instance(schema: Any) -> Any:
    """A small value valid against simple JSON Schemas (objects, arrays, scalars, enums)."""
    if not isinstance(schema, dict):
        return {}
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    for key in ("anyOf", "oneOf"):
        if schema.get(key):
            return minimal_instance(schema[key][0])
    kind = schema.get("type", "object" if "properties" in schema else None)
    if isinstance(kind, list):
        kind = next((k for k in kind if k != "null"), "null")
    if kind == "object":
        return {name: minimal_instance(sub) for name, sub in schema.get("properties", {}).items()}
    if kind == "array":
        return [minimal_instance(schema.get("items", {})) for _ in range(schema.get("minItems", 0))]
    if kind == "string":
        return "x" * max(1, schema.get("minLength", 1))
    if kind in ("integer", "number"):
        return schema.get("minimum", 0)
    if kind == "boolean":
        return False
    if kind == "null":
        return None
    return {}


def request_schema(body: dict[str, Any]) -> Any:
    """The JSON Schema a chat request constrains its output to, in any of the structured-output dialects."""
    fmt = body.get("response_format") or {}
    if isinstance(fmt, dict):
        if isinstance(fmt.get("json_schema"), dict) and "schema" in fmt["json_schema"]:
            return fmt["json_schema"]["schema"]
        if "schema" in fmt:
            return fmt["schema"]
    if "guided_json" in body:
        return body["guided_json"]
    outputs = body.get("structured_outputs")
    if isinstance(outputs, dict) and "json" in outputs:
        return outputs["json"]
    return None


def default_answer(body: dict[str, Any]) -> Any:
    schema = request_schema(body)
    if schema is not None:
        return minimal_instance(schema)
    users = [m.get("content") for m in body.get("messages", []) if isinstance(m, dict) and m.get("role") == "user"]
    return {"echo": users[-1] if users else None}


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True
    request_queue_size = 512

    def __init__(self, address: tuple[str, int], owner: FaultServer) -> None:
        self.owner = owner
        super().__init__(address, _Handler)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as real servers and httpx expect
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def setup(self) -> None:
        super().setup()
        # headers and body go out in separate writes: without this, Nagle + delayed ACK add ~40 ms
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.server.owner._track(self.connection, True)

    def finish(self) -> None:
        try:
            super().finish()
        except OSError:
            pass
        self.server.owner._track(self.connection, False)

    # -- helpers ---------------------------------------------------------------------------------

    def _send(
        self,
        code: int,
        payload: bytes,
        content_type: str = "application/json",
        headers: dict[str, str] | None = None,
        length: int | None = None,
    ) -> None:
        self.send_response(code)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload) if length is None else length))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(payload)
        self.wfile.flush()

    def _drip(self, payload: bytes, interval: float) -> None:
        """Headers at once, then the body one byte per `interval`, until done, hung up on or stopped."""
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        sent = 0
        try:
            for i in range(len(payload)):
                self.wfile.write(payload[i : i + 1])
                self.wfile.flush()
                sent += 1
                if self.server.owner._stopping.wait(interval):
                    break
        except OSError:  # the client gave up: what a bounded attempt does
            with self.server.owner._lock:
                self.server.owner.hung_up.append((sent, len(payload)))
        self._close_now()

    def _stream(self, completion: dict[str, Any], fault: Fault) -> None:
        """A streamed answer as server-sent events, as llama-server and vLLM send it: the content in three
        chunks ``fault.gap`` seconds apart, the finish reason, then usage (and timings) in a last chunk."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        choice = completion["choices"][0]
        text = choice["message"].get("content") or ""
        head = {k: completion[k] for k in ("id", "object", "created", "model")} | {"object": "chat.completion.chunk"}
        third = max(1, len(text) // 3)
        pieces = [text[:third], text[third : 2 * third], text[2 * third :]]
        events = [
            {**head, "choices": [{"index": 0, "delta": {"role": "assistant", "content": piece}, "finish_reason": None}]}
            for piece in pieces
            if piece
        ]
        for k, call in enumerate(choice["message"].get("tool_calls") or ()):  # name first, arguments in two parts
            arguments = call["function"]["arguments"]
            half = len(arguments) // 2
            events.append(
                {
                    **head,
                    "choices": [
                        {
                            "index": 0,
                            "finish_reason": None,
                            "delta": {
                                "tool_calls": [
                                    {
                                        "index": k,
                                        "id": call["id"],
                                        "type": "function",
                                        "function": {"name": call["function"]["name"], "arguments": arguments[:half]},
                                    }
                                ]
                            },
                        }
                    ],
                }
            )
            events.append(
                {
                    **head,
                    "choices": [
                        {
                            "index": 0,
                            "finish_reason": None,
                            "delta": {"tool_calls": [{"index": k, "function": {"arguments": arguments[half:]}}]},
                        }
                    ],
                }
            )
        events.append({**head, "choices": [{"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}]})
        events.append(
            {
                **head,
                "choices": [],
                "usage": completion["usage"],
                **({"timings": completion["timings"]} if "timings" in completion else {}),
            }
        )
        try:
            for n, event in enumerate(events):
                if n and fault.gap and self.server.owner._stopping.wait(fault.gap):
                    break
                self.wfile.write(b"data: " + json.dumps(event).encode() + b"\n\n")
                self.wfile.flush()
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
        except OSError:
            pass
        self._close_now()

    def _send_json(self, code: int, data: Any, headers: dict[str, str] | None = None) -> None:
        self._send(code, json.dumps(data).encode(), headers=headers)

    def _error(self, code: int, message: str, headers: dict[str, str] | None = None) -> None:
        kind = "invalid_request_error" if code < 500 else "server_error"
        self._send_json(code, {"error": {"message": message, "type": kind, "code": code}}, headers)

    def _close_now(self) -> None:
        self.close_connection = True
        try:
            self.connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass

    def _authorized(self) -> bool:
        key = self.server.owner.api_key
        if key is None or self.headers.get("Authorization") == f"Bearer {key}":
            return True
        self._error(401, "Incorrect API key provided.")
        return False

    # -- routes ----------------------------------------------------------------------------------

    def do_GET(self) -> None:
        owner = self.server.owner
        path = self.path.split("?")[0].rstrip("/")
        if path == "/health":
            self._send_json(200, {"status": "ok"})
        elif path == "/slots" and owner.slots is not None:
            owner._count("slots")
            self._send_json(200, owner.slots())
        elif path == "/v1/models" and owner.models is not None:
            owner._count("models")
            if owner.models_fault is not None and self._authorized():
                data = [{"id": m, "object": "model"} for m in owner.models]
                self._answer_models(owner.models_fault, json.dumps({"object": "list", "data": data}).encode())
            elif self._authorized():
                data = [{"id": m, "object": "model", "created": 0, "owned_by": "faultserver"} for m in owner.models]
                self._send_json(200, {"object": "list", "data": data})
        else:
            self._error(404, f"no route {path}")

    def do_POST(self) -> None:
        owner = self.server.owner
        path = self.path.split("?")[0].rstrip("/")
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if path != "/v1/chat/completions":
            self._error(404, f"no route {path}")
            return
        try:
            body = json.loads(raw)
        except ValueError:
            body = None
        key = owner.api_key
        authorized = key is None or self.headers.get("Authorization") == f"Bearer {key}"
        index, fault = owner._receive(body, dict(self.headers), authorized)
        if not self._authorized():
            return
        if not isinstance(body, dict):
            self._error(400, "the request body is not a JSON object")
            return
        self._answer(index, fault, body)

    def _answer_models(self, fault: Fault, payload: bytes) -> None:
        """GET /v1/models answered by a fault: drip, raw, status or echo_headers (others answer normally)."""
        if fault.kind == "drip":
            self._drip(payload, fault.delay)
        elif fault.kind == "raw":
            self._send(fault.status_code, fault.body or b"", fault.content_type)
        elif fault.kind in ("status", "echo"):
            message = fault.message or f"injected HTTP {fault.status_code}"
            if fault.kind == "echo":
                message = f"bad request; your headers were {json.dumps(dict(self.headers.items()))}"
            self._error(fault.status_code, message)
        else:
            self._send(200, payload)

    def _answer(self, index: int, fault: Fault, body: dict[str, Any]) -> None:
        owner = self.server.owner
        if fault.kind == "drop":
            self._close_now()
            return
        if fault.kind == "status":
            headers = {"Retry-After": f"{fault.retry_after:g}"} if fault.retry_after is not None else None
            message = fault.message or f"injected HTTP {fault.status_code}"
            self._error(fault.status_code, message, headers)
            return
        if fault.kind == "non_json":
            self._send(200, b"<html><body>502 Bad Gateway</body></html>", "text/html")
            return
        if fault.kind == "raw":
            self._send(fault.status_code, fault.body or b"", fault.content_type)
            return
        if fault.kind == "echo":
            echoed = json.dumps(dict(self.headers.items()))
            if fault.status_code != 200:
                self._error(fault.status_code, f"bad request; your headers were {echoed}")
                return
            fault = Fault.ok(echoed)
        if fault.kind == "deep":
            nested = "[" * fault.depth + "]" * fault.depth
            if fault.where == "content":
                payload = json.dumps(owner._completion(index, Fault.ok(nested), body)).encode()
            else:
                payload = json.dumps(owner._completion(index, Fault.ok(), body))[:-1].encode()
                payload += b', "x_nested": ' + nested.encode() + b"}"
            self._send(200, payload)
            return
        if fault.kind == "drip":
            self._drip(json.dumps(owner._completion(index, fault, body)).encode(), fault.delay)
            return
        if fault.delay and owner._stopping.wait(fault.delay):
            self._close_now()  # stopped while sleeping: the client sees a dropped connection
            return
        completion = owner._completion(index, fault, body)
        if body.get("stream") and fault.kind == "ok":
            self._stream(completion, fault)
            return
        if fault.usage_json is not None:
            completion["usage"] = "__USAGE__"
        payload = json.dumps(completion).encode()
        if fault.usage_json is not None:
            payload = payload.replace(b'"__USAGE__"', fault.usage_json.encode())
        if fault.kind == "truncated":
            cut = payload[: len(payload) // 2]
            self._send(200, cut, length=len(payload) if fault.cut_connection else len(cut))
            if fault.cut_connection:
                self._close_now()
            return
        self._send(200, payload)


class FaultServer:
    """See the module docstring for the scripting API."""

    def __init__(
        self,
        plan: Callable[[int, Any], Fault | None] | None = None,
        *,
        faults: Iterable[Fault] = (),
        default: Fault | None = None,
        models: Iterable[str] | None = ("test-model",),
        api_key: str | None = None,
        answer: Callable[[dict[str, Any]], Any] = default_answer,
        host: str = "127.0.0.1",
        port: int = 0,
        models_fault: Fault | None = None,
        slots: Callable[[], Any] | None = None,
    ) -> None:
        self.plan = plan
        self.slots = slots  # GET /slots answers its JSON value, as llama-server does (None: 404)
        self.models_fault = models_fault  # how GET /v1/models misbehaves (drip, raw, status, echo_headers)
        self.default = default or Fault.ok()
        self.models = tuple(models) if models is not None else None
        self.api_key = api_key
        self.answer = answer
        self.host = host
        self.port = port
        self.requests: list[Any] = []  # JSON bodies of chat requests (None when not JSON)
        self.headers: list[dict[str, str]] = []  # their HTTP headers
        self.served: list[str] = []  # the Fault.label that answered each chat request
        self.received_at: list[float] = []  # time.monotonic() at arrival
        self.hung_up: list[tuple[int, int]] = []  # drips the client hung up on: (bytes sent, body bytes)
        self.counts: Counter[str] = Counter()
        self._queue: list[Fault] = list(faults)
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._connections: set[socket.socket] = set()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- public ----------------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """The OpenAI base URL, http://127.0.0.1:PORT/v1."""
        return f"http://{self.host}:{self.port}/v1"

    @property
    def running(self) -> bool:
        return self._server is not None

    def enqueue(self, *faults: Fault) -> None:
        """Answer the next chat requests with these faults (after any already queued)."""
        with self._lock:
            self._queue.extend(faults)

    def reset(self) -> None:
        """Forget received requests, counts and queued faults."""
        with self._lock:
            self.requests.clear()
            self.headers.clear()
            self.served.clear()
            self.received_at.clear()
            self.counts.clear()
            self._queue.clear()

    def start(self) -> FaultServer:
        """Listen (again) on `port`, or on a free port the first time."""
        if self._server is not None:
            return self
        self._stopping.clear()
        deadline = time.monotonic() + 10
        while True:
            try:
                server = _Server((self.host, self.port), self)
                break
            except OSError:  # the old socket can linger briefly after a restart
                if self.port == 0 or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        self.port = server.server_address[1]
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop listening and drop every open connection, as if the server process were killed."""
        server = self._server
        if server is None:
            return
        self._stopping.set()
        server.shutdown()
        server.server_close()
        with self._lock:
            connections = list(self._connections)
        for conn in connections:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = None
        self._thread = None

    def __enter__(self) -> FaultServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = f"running at {self.url}" if self.running else "stopped"
        return f"<FaultServer {state} requests={len(self.requests)}>"

    # -- internals (called from handler threads) -------------------------------------------------

    def _track(self, conn: socket.socket, add: bool) -> None:
        with self._lock:
            (self._connections.add if add else self._connections.discard)(conn)

    def _count(self, key: str) -> None:
        with self._lock:
            self.counts[key] += 1

    def _receive(self, body: Any, headers: dict[str, str], authorized: bool = True) -> tuple[int, Fault]:
        with self._lock:
            index = len(self.requests)
            self.requests.append(body)
            self.headers.append(headers)
            self.received_at.append(time.monotonic())
            if not authorized:  # answered 401; the plan is not consulted
                self.served.append("unauthorized")
                self.counts["unauthorized"] += 1
                return index, self.default
            fault = None
            if self.plan is not None:
                fault = self.plan(index, body)
            elif self._queue:
                fault = self._queue.pop(0)
            fault = fault or self.default
            self.served.append(fault.label)
            self.counts[fault.label] += 1
            return index, fault

    def _completion(self, index: int, fault: Fault, body: dict[str, Any]) -> dict[str, Any]:
        content = fault.content if fault.content is not None else self.answer(body)
        text = content if isinstance(content, str) else json.dumps(content)
        finish = "stop"
        if fault.kind == "length":
            text, finish = text[: max(1, len(text) // 2)], "length"
        message: dict[str, Any] = {"role": "assistant", "content": text}
        if fault.tool_calls:
            calls = []
            for i, call in enumerate(fault.tool_calls):
                args = call.get("arguments", {})
                calls.append(
                    {
                        "id": f"call_{index}_{i}",
                        "type": "function",
                        "function": {
                            "name": call["name"],
                            "arguments": args if isinstance(args, str) else json.dumps(args),
                        },
                    }
                )
            message = {"role": "assistant", "content": None, "tool_calls": calls}
            finish = "tool_calls"
        choice: dict[str, Any] = {"index": 0, "message": message, "finish_reason": finish}
        if body.get("logprobs"):
            tokens = [text[i : i + 4] for i in range(0, len(text), 4)]
            choice["logprobs"] = {
                "content": [
                    {"token": t, "logprob": -0.01 * (k + 1), "bytes": list(t.encode()), "top_logprobs": []}
                    for k, t in enumerate(tokens)
                ]
            }
        n = body.get("n") or 1
        choices = [dict(choice, index=k) for k in range(int(n))]
        prompt_chars = sum(len(str(m.get("content") or "")) for m in body.get("messages", []) if isinstance(m, dict))
        prompt_tokens, completion_tokens = max(1, prompt_chars // 4), max(1, len(text) // 4)
        return {
            "id": f"chatcmpl-fault-{index}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", "test-model"),
            "choices": choices,
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
            **({"timings": fault.timings} if fault.timings is not None else {}),
        }
