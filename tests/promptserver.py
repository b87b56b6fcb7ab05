"""A loopback OpenAI-compatible server that reads prompts at a fixed speed shared by the requests in flight.

It stands in for llama-server on a small CPU: ``tokens_per_s`` of prompt reading divided evenly among the
requests it is reading (processor sharing), a prompt of N characters being N/4 tokens. An answer carries
llama-server's ``timings`` (prompt_n, prompt_ms) and a minimal instance of the request's schema. A client that
gives up (its timeout) drops its connection; the server notices and stops reading that prompt, as llama-server
cancels a task whose connection closed. It records what it saw:

    with PromptSpeedServer(tokens_per_s=4000) as server:       # server.url ends in /v1
        ...
        server.finished, server.abandoned                      # requests answered / given up by the client
        server.peak_tokens                                     # largest sum of the prompts it was reading at once
"""

from __future__ import annotations

import json
import select
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from faultserver import default_answer

from _net import serve_in_thread

CHARS_PER_TOKEN = 4
_TICK_S = 0.005


class PromptSpeedServer:
    def __init__(self, tokens_per_s: float, model: str = "test-model") -> None:
        self.tokens_per_s = tokens_per_s
        self.model = model
        self._lock = threading.Lock()
        self._remaining: dict[int, float] = {}
        self._size: dict[int, float] = {}
        self._ids = iter(range(1_000_000))
        self.finished = 0
        self.abandoned = 0
        self.peak_tokens = 0.0
        self._stop = threading.Event()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

            def _json(self, code: int, data: Any) -> None:
                payload = json.dumps(data).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    self._json(200, {"object": "list", "data": [{"id": owner.model, "object": "model"}]})
                else:
                    self._json(200, {"status": "ok"})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                chars = sum(len(m.get("content") or "") for m in body.get("messages", []))
                tokens = max(1.0, chars / CHARS_PER_TOKEN)
                started = time.monotonic()
                if not owner._read(tokens, self.connection):
                    self.close_connection = True
                    return
                took_ms = (time.monotonic() - started) * 1000
                answer = json.dumps(default_answer(body))
                self._json(
                    200,
                    {
                        "id": "x",
                        "object": "chat.completion",
                        "created": 0,
                        "model": owner.model,
                        "choices": [
                            {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": answer}}
                        ],
                        "usage": {
                            "prompt_tokens": int(tokens),
                            "completion_tokens": 5,
                            "total_tokens": int(tokens) + 5,
                        },
                        "timings": {
                            "prompt_n": int(tokens),
                            "prompt_ms": took_ms,
                            "predicted_n": 5,
                            "predicted_ms": 1.0,
                        },
                    },
                )

        self._http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._http.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._http.server_address[1]}/v1"

    def _read(self, tokens: float, connection: Any) -> bool:
        """Wait while the prompt is read at a shared speed; False when the client went away first."""
        with self._lock:
            key = next(self._ids)
            self._remaining[key] = self._size[key] = tokens
        try:
            while True:
                with self._lock:
                    if self._remaining[key] <= 0:
                        self.finished += 1
                        return True
                readable, _, _ = select.select([connection], [], [], _TICK_S)
                if readable and not connection.recv(1, 0x2):  # MSG_PEEK: b"" once the client closed
                    with self._lock:
                        self.abandoned += 1
                    return False
        finally:
            with self._lock:
                self._remaining.pop(key, None)
                self._size.pop(key, None)

    def _tick(self) -> None:
        last = time.monotonic()
        while not self._stop.wait(_TICK_S):
            now = time.monotonic()
            with self._lock:
                reading = [k for k, left in self._remaining.items() if left > 0]
                self.peak_tokens = max(self.peak_tokens, sum(self._size[k] for k in reading))
                for k in reading:
                    self._remaining[k] -= self.tokens_per_s * (now - last) / len(reading)
            last = now

    def __enter__(self) -> PromptSpeedServer:
        serve_in_thread(self._http)
        threading.Thread(target=self._tick, daemon=True).start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        self._http.shutdown()
        self._http.server_close()
