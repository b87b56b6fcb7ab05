"""The async request layer: one chat completion per sample against an OpenAI-compatible server.

It asks for structured output in the server's dialect (dialects.py), retries transient faults with
backoff and returns a `ModelResponse` whatever happens: server faults are data, never exceptions
(DESIGN decision 5); errors.py names them. The official ``openai`` package does the HTTP over an
injectable async httpx client (transport.py); its own retries are off because ours classify and
count every attempt. No pytest import: the pipeline, the CLI and notebooks share this module.

    config = ClientConfig("http://127.0.0.1:8000/v1", api_key=api_key_from_env())
    run_check(config, ["my-model"])                       # one clear error before the run starts
    async with ExtractionClient(config) as client:        # or ExtractionClient(config, http_client=...)
        response = await client.extract("my-model", build_messages(text, schema), schema)

The names of prompts.py, dialects.py, transport.py and connection.py are importable from here too.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import random
import sys
import time
from collections.abc import Coroutine, Iterable, Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar, cast

from ..core import textsafe
from ..core.errors import ExtractbenchError
from ..core.redact import redact_credentials, redact_url
from ..dataset.responses import ModelResponse
from .completions import clear, fill_completion
from .connection import ConnectionCheckError, check_models, run_check
from .dialects import cache_key, model_schema, structured_output_fields
from .errors import Failure, Transient, bad_body, classify, one_line
from .max_tokens import MAX_BUDGET, max_tokens_for_schema
from .options import STRUCTURED_OUTPUT_MODES
from .prompts import (
    DEFAULT_SYSTEM_PROMPT,
    DEFAULT_TEMPLATES,
    DEFAULT_USER_PROMPT,
    PromptTemplateError,
    PromptTemplates,
    build_messages,
)
from .schedule import ATTEMPT_TIMEOUT, MAX_STRETCH
from .slots import SlotWatch, http_probe, slots_url
from .transport import (
    API_KEY_ENV_VARS,
    ClientConfig,
    HttpClientFactory,
    api_key_from_env,
    check_api_key,
    client_config,
    open_openai,
)

__all__ = [
    "API_KEY_ENV_VARS",
    "DEFAULT_SYSTEM_PROMPT",
    "DEFAULT_TEMPLATES",
    "DEFAULT_USER_PROMPT",
    "STRUCTURED_OUTPUT_MODES",
    "ClientConfig",
    "ConnectionCheckError",
    "ExtractionClient",
    "PromptTemplateError",
    "PromptTemplates",
    "api_key_from_env",
    "build_messages",
    "cache_key",
    "check_api_key",
    "client_config",
    "model_schema",
    "run_check",
    "structured_output_fields",
]

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletionMessageParam

log = textsafe.get_logger(__name__)

#: An attempt given more time because the server is still reading a prompt gets at least this much at a time.
MIN_EXTENSION_S = 1.0
_Outcome = TypeVar("_Outcome", bound="Transient | Failure")


class _BadStream(ExtractbenchError):
    """A streamed answer whose events are not a chat completion's chunks: a bad body, asked again."""


def _transport_error() -> type[BaseException]:
    """The transport errors of the httpx package under the SDK (``httpx2`` or ``httpx``, by SDK version)."""
    import openai

    base = openai.DefaultAsyncHttpxClient.__mro__[1]
    return sys.modules[base.__module__.split(".")[0]].TransportError  # type: ignore[no-any-return]  # a module's attribute


class ExtractionClient:
    """Async requests to one OpenAI-compatible server. Use ``async with`` (or `aclose`) inside the
    event loop that makes the requests; the underlying HTTP pool belongs to that loop.

    ``http_client`` (an async httpx client the SDK accepts) carries the requests instead of the default one and stays
    open after `aclose` (its owner closes it); ``http_client_factory`` makes one per client, closed with it.
    """

    def __init__(
        self,
        config: ClientConfig,
        *,
        rng: random.Random | None = None,
        http_client: Any | None = None,
        http_client_factory: HttpClientFactory | None = None,
        slots: int | None = None,
    ) -> None:
        self.config = config
        self._rng = rng or random.Random()
        self._client = open_openai(config, http_client=http_client, http_client_factory=http_client_factory)
        self._owns_http = http_client is None
        self._probe_http: Any = None
        self.slot_watch: SlotWatch | None = None
        if slots:  # a llama-server this plugin started with that many slots (slots.py)
            import openai

            self._probe_http = openai.DefaultAsyncHttpxClient(trust_env=False)
            headers = {"Authorization": f"Bearer {config.api_key}"} if config.api_key else None
            probe = http_probe(slots_url(config.base_url), self._probe_http, headers)
            self.slot_watch = SlotWatch(slots, probe, max_wait_s=config.timeout_s)

    def __repr__(self) -> str:
        cfg = self.config
        return f"<ExtractionClient {redact_url(cfg.base_url)} structured_output={cfg.structured_output}>"

    async def __aenter__(self) -> ExtractionClient:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the HTTP client this client made (an injected ``http_client`` belongs to its owner)."""
        if self._owns_http:
            await self._client.close()
        if self._probe_http is not None:
            await self._probe_http.aclose()

    def cache_key(self, model: str, messages: Sequence[Mapping[str, Any]], schema: Any) -> str:
        """`cache_key` with this client's decoding parameters."""
        return cache_key(model, messages, schema, self.config.decoding_params())

    # -- requests --------------------------------------------------------------------------------

    async def extract(self, model: str, messages: Sequence[Mapping[str, Any]], schema: Any) -> ModelResponse:
        """One structured-output completion; never raises for server faults."""
        cfg = self.config
        fields = structured_output_fields(cfg.structured_output, schema, name=cfg.schema_name, strict=cfg.strict)
        if cfg.max_tokens is None:
            fields["max_tokens"] = max_tokens_for_schema(schema)
        return await self.complete(model, messages, **fields)

    async def complete(self, model: str, messages: Sequence[Mapping[str, Any]], **request_fields: Any) -> ModelResponse:
        """One chat completion with retries. `request_fields` go to ``chat.completions.create`` (tools,
        logprobs, n, response_format, extra_body, ...) and override the config's temperature,
        max_tokens and seed. Never raises for server faults."""
        cfg = self.config
        fields: dict[str, Any] = {"temperature": cfg.temperature, "max_tokens": cfg.max_tokens or MAX_BUDGET}
        if cfg.seed is not None:
            fields["seed"] = cfg.seed
        fields.update(request_fields)
        response = ModelResponse(started_at=time.time(), attempt_log=[])
        clock: list[float] = []  # each attempt's start (perf_counter)
        watch = self.slot_watch
        while True:
            response.attempts += 1
            waited = await watch.wait_for_slot(retrying=response.attempts > 1) if watch is not None else 0.0
            clock.append(time.perf_counter())
            outcome = None
            if watch is not None:
                watch.sent()
            try:
                outcome = await self._attempt(model, messages, fields, response)
            finally:
                if watch is not None:
                    watch.finished(timed_out=isinstance(outcome, Transient) and outcome.error_class == "timeout")
            if waited and response.attempt_log:
                response.attempt_log[-1]["slot_wait_s"] = waited
            if not isinstance(outcome, Transient):
                break
            if response.attempts > cfg.retries:
                response.error_class, response.error = outcome.error_class, outcome.error
                break
            delay = self._delay(response.attempts, outcome.retry_after)
            log.debug("retry %d of %s in %.2fs: %s", response.attempts, model, delay, outcome.error)
            await asyncio.sleep(delay)
        response.finished_at = time.time()
        _timed_attempts(response, clock)
        return response

    async def _attempt(
        self, model: str, messages: Sequence[Mapping[str, Any]], fields: dict[str, Any], response: ModelResponse
    ) -> Transient | None:
        """Send once; fill `response` on a final outcome, or say why to retry."""
        t0 = time.perf_counter()
        sized = ATTEMPT_TIMEOUT.get()
        timeout = self.config.timeout_s if sized is None else sized()
        timeout = timeout if timeout == self.config.timeout_s else round(timeout, 1)
        # the SDK's own timeout (reads, connecting) must not cut an attempt given longer: set to the most it may get
        longest = max(timeout, self.config.timeout_s * MAX_STRETCH) if self.slot_watch is not None else timeout
        sent = {**fields, "timeout": longest} if longest != self.config.timeout_s else fields

        async def send() -> bytes:
            if self.config.stream and (fields.get("n") or 1) == 1:
                return await self._streamed(model, messages, sent, t0, response)
            raw = await self._client.chat.completions.with_raw_response.create(
                model=model, messages=_sdk_messages(messages), **sent
            )
            body: bytes = raw.content  # Any to mypy: **fields (stream among them) matches several overloads
            return body

        attempts = response.attempt_log if response.attempt_log is not None else []
        given = [timeout]
        try:
            # the timeout bounds the whole attempt, not each read: a server that drips one byte a
            # second would otherwise keep the request alive for ever
            body = await self._within(send(), given)
        except _BadStream as exc:
            clear(response)
            return _logged(attempts, t0, bad_body(self._redact(str(exc))), None, self._sized(given[0]))
        except Exception as exc:
            timeout = given[0]  # the time the attempt had, more if the server was still reading its prompt
            outcome = classify(exc, timeout_s=timeout)
            if outcome is None:
                raise
            outcome.error = self._redact(outcome.error)
            if isinstance(outcome, Transient):
                return _logged(attempts, t0, outcome, None, self._sized(timeout))
            response.error_class, response.error = outcome.error_class, outcome.error
            response.context = outcome.context
            _logged(attempts, t0, outcome, None, self._sized(timeout))
            return None
        latency = time.perf_counter() - t0
        timeout = given[0]
        try:
            problem = fill_completion(response, body, fields.get("max_tokens", self.config.max_tokens))
        except Exception as exc:  # noqa: BLE001 - whatever a body holds, the sample keeps an outcome
            problem = f"the client could not read the server's answer: {type(exc).__name__}: {one_line(str(exc), 200)}"
        if problem is not None:
            clear(response)
            return _logged(attempts, t0, bad_body(self._redact(problem)), latency, self._sized(timeout))
        response.latency_s = latency
        self._redact_response(response)
        attempts.append({"outcome": response.error_class or "ok", "latency_s": latency, **self._sized(timeout)})
        return None

    async def _within(self, work: Coroutine[Any, Any, bytes], given: list[float]) -> bytes:
        """``work`` within ``given[0]`` seconds, as ``asyncio.wait_for``; on a llama-server this plugin started, more
        while its ``/slots`` says a slot is still reading a prompt (a long prompt on a busy CPU reads slower than any
        estimate), up to six timeouts in all, with ``given[0]`` raised to the time given. A server that stops
        answering ``/slots``, or is writing rather than reading, gets no more."""
        watch = self.slot_watch
        if watch is None:
            return await asyncio.wait_for(work, given[0])
        task = asyncio.ensure_future(work)
        limit = max(given[0], self.config.timeout_s * MAX_STRETCH)
        start = time.perf_counter()
        try:
            done, _ = await asyncio.wait({task}, timeout=given[0])
            while not done and given[0] < limit:
                more = min(max(given[0] / 4, MIN_EXTENSION_S), limit - given[0])
                # llama-server answers /slots only between batches: it gets the extension's length to say, and the
                # answer itself may land meanwhile
                look = asyncio.ensure_future(watch.reading(more))
                either: set[asyncio.Future[Any]] = {task, look}
                done, _ = await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
                elapsed = time.perf_counter() - start
                if task in done:
                    look.cancel()
                    given[0] = max(given[0], math.ceil(elapsed * 10) / 10)
                    break
                if not look.result():
                    raise asyncio.TimeoutError
                given[0] = round(min(limit, elapsed + more), 1)
                done, _ = await asyncio.wait({task}, timeout=max(0.0, given[0] - elapsed))
            if not done:
                raise asyncio.TimeoutError
            return task.result()
        finally:
            if not task.done():
                task.cancel()  # closes the connection, which tells the server to stop

    def _sized(self, timeout: float) -> dict[str, float]:
        """An attempt given other than the configured timeout says how long it had."""
        return {} if timeout == self.config.timeout_s else {"timeout_s": timeout}

    async def _streamed(
        self,
        model: str,
        messages: Sequence[Mapping[str, Any]],
        fields: dict[str, Any],
        t0: float,
        response: ModelResponse,
    ) -> bytes:
        """One streamed completion, put back together as the body a plain request would have had (so one reader
        checks both); the time to the first content or tool-call chunk goes to ``response.first_token_s``."""
        import openai

        stream = await self._client.chat.completions.create(
            model=model, messages=_sdk_messages(messages), stream=True, stream_options={"include_usage": True}, **fields
        )
        if "text/event-stream" not in stream.response.headers.get("content-type", ""):
            # a server or proxy that ignores "stream" answers whole: read it as such (as events it would read as
            # no event at all, and the answer would be lost as an empty output)
            whole: bytes = await stream.response.aread()
            return whole
        text: list[str] = []
        calls: dict[int, dict[str, Any]] = {}
        logprobs: list[Any] = []
        finish = usage = timings = None
        response.first_token_s = None
        chunks = 0
        try:
            async for chunk in stream:
                chunks += 1
                data = chunk.model_dump(
                    exclude_none=True, warnings=False
                )  # keeps fields the SDK does not know (llama-server's timings)
                usage = data.get("usage") or usage
                timings = data.get("timings") or timings
                for choice in data.get("choices") or ():
                    delta = choice.get("delta") or {}
                    if (delta.get("content") or delta.get("tool_calls")) and response.first_token_s is None:
                        response.first_token_s = time.perf_counter() - t0
                    text.append(delta.get("content") or "")
                    for call in delta.get("tool_calls") or ():
                        slot = calls.setdefault(
                            call.get("index", 0), {"type": "function", "function": {"name": "", "arguments": ""}}
                        )
                        function = call.get("function") or {}
                        slot["function"]["name"] += function.get("name") or ""
                        slot["function"]["arguments"] += function.get("arguments") or ""
                    logprobs.extend((choice.get("logprobs") or {}).get("content") or ())
                    finish = choice.get("finish_reason") or finish
            content = "".join(text)
        except Exception as exc:
            with contextlib.suppress(Exception):  # release the connection now, not when collected
                await stream.close()
            if isinstance(exc, _transport_error()):  # the SDK wraps these only while sending, not while reading
                raise openai.APIConnectionError(message=str(exc), request=stream.response.request) from exc
            if isinstance(exc, openai.OpenAIError):  # e.g. an error event: errors.classify names it
                raise
            raise _BadStream(
                f"the server sent a malformed event stream: {type(exc).__name__}: {one_line(str(exc), 200)}"
            ) from None
        if not chunks:
            raise _BadStream("the server sent an event stream with no chunk in it")
        if finish is None:
            raise _BadStream(
                f"the server's event stream ended after {chunks} chunk(s) without a finish_reason: cut short"
            )
        message: dict[str, Any] = {"role": "assistant", "content": content or (None if calls else "")}
        if calls:
            message["tool_calls"] = [calls[i] for i in sorted(calls)]
        choice = {
            "index": 0,
            "message": message,
            "finish_reason": finish,
            **({"logprobs": {"content": logprobs}} if logprobs else {}),
        }
        body = {"choices": [choice], **({"usage": usage} if usage else {}), **({"timings": timings} if timings else {})}
        return json.dumps(body).encode()

    def _delay(self, retry: int, retry_after: float | None) -> float:
        cfg = self.config
        if retry_after is not None:
            # the server said when; a little extra jitter keeps many clients from returning in lockstep
            return min(retry_after, cfg.retry_after_max_s) + self._rng.uniform(0, cfg.jitter * cfg.backoff_base_s)
        base = min(cfg.backoff_max_s, cfg.backoff_base_s * 2.0 ** (retry - 1))
        return max(0.0, base * self._rng.uniform(1 - cfg.jitter, 1 + cfg.jitter))

    def _redact(self, text: str) -> str:
        """A server's or the transport's message without the API key or anything credential-shaped."""
        return redact_credentials(text, (self.config.api_key,))

    def _redact_response(self, response: ModelResponse) -> None:
        """The API key, should a server echo it, never reaches what is recorded. Only the exact key:
        the model's output is otherwise kept as sent (it is what gets scored)."""
        key = self.config.api_key
        if response.error:
            response.error = self._redact(response.error)
        if not key:
            return
        if isinstance(response.content, str) and key in response.content:
            response.content = response.content.replace(key, "***")
        escaped = json.dumps(key)[1:-1]  # the key as it appears inside JSON text
        for name in ("tool_calls", "logprobs", "choices"):
            value = getattr(response, name)
            text = json.dumps(value, default=str) if value is not None else ""
            if escaped in text:
                setattr(response, name, json.loads(text.replace(escaped, "***")))

    # -- connection check ------------------------------------------------------------------------

    async def check(self, model: str | Iterable[str] | None = None) -> list[str] | None:
        """`connection.check_models` over this client's HTTP client."""
        return await check_models(self._client, self.config, model)


def _sdk_messages(messages: Sequence[Mapping[str, Any]]) -> list[ChatCompletionMessageParam]:
    """The messages as the SDK types them: built by prompts.py (or given by a user) in the chat format it checks."""
    return cast("list[ChatCompletionMessageParam]", list(messages))


def _logged(
    attempts: list[dict[str, Any]],
    t0: float,
    outcome: _Outcome,
    latency: float | None = None,
    extra: Mapping[str, Any] | None = None,
) -> _Outcome:
    """Note a failed attempt (its class, latency and words, and ``extra``) and hand its outcome on."""
    took = time.perf_counter() - t0 if latency is None else latency
    attempts.append(
        {"outcome": outcome.error_class, "latency_s": took, "error": one_line(outcome.error, 200), **(extra or {})}
    )
    return outcome


def _timed_attempts(response: ModelResponse, clock: Sequence[float]) -> None:
    """Each logged attempt's start in seconds after the first's, and the end-to-end latency: from the first
    attempt's start to the end of the last (backoff delays included). With one attempt it is that attempt's latency."""
    log = response.attempt_log or []
    if len(log) != len(clock):  # an attempt raised a defect before it was logged: no figure rather than a wrong one
        response.attempt_log = log or None
        return
    response.attempt_log = log = [{"start_s": start - clock[0], **entry} for entry, start in zip(log, clock)]
    response.end_to_end_s = log[-1]["start_s"] + log[-1]["latency_s"] if log else None
