"""The async request layer: one chat completion per sample against an OpenAI-compatible server.

It turns a sample into messages (the spec's prompt templates, 3.3), asks for structured output in
the server's dialect (3.2), retries transient faults with backoff (3.4) and returns a
`ModelResponse` whatever happens: server faults are data, never exceptions (DESIGN decision 5).
The official ``openai`` package does the HTTP; its own retries are off because ours classify and
count every attempt. No pytest import: the pipeline, the CLI and notebooks share this module.

    config = ClientConfig("http://127.0.0.1:8000/v1", api_key=api_key_from_env())
    run_check(config, ["my-model"])                       # one clear error before the run starts
    async with ExtractionClient(config) as client:
        response = await client.extract("my-model", build_messages(text, schema), schema)
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import email.utils
import hashlib
import json
import math
import os
import random
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence
from urllib.parse import urlsplit

from ..core import jsonio
from ..core import textsafe
from ..core.redact import redact_url
from .max_tokens import MAX_BUDGET, max_tokens_for_schema
from .options import STRUCTURED_OUTPUT_MODES, LiveOptions, check_base_url
from ..core.redact import redact_credentials
from ..dataset.responses import ModelResponse, clean_usage
from ..scoring import MISSING

if TYPE_CHECKING:
    import openai

__all__ = [
    "API_KEY_ENV_VARS",
    "DEFAULT_TEMPLATES",
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
    "model_schema",
    "run_check",
    "structured_output_fields",
]

log = textsafe.get_logger(__name__)

#: Where the API key comes from, first non-empty wins (DESIGN decision 8: environment only).
API_KEY_ENV_VARS = ("EXTRACTBENCH_API_KEY", "OPENAI_API_KEY")
#: json_schema: OpenAI/vLLM/llama-server ``response_format``; json_object: llama.cpp's
#: ``{"type": "json_object", "schema": ...}``; guided_json: vLLM's extra body; none: prompt only.
#: llama-server and others accept any key; the openai package insists on one.
_NO_KEY = "no-key"
_LOOPBACK = {"127.0.0.1", "localhost", "::1"}
_MESSAGE_LIMIT = 500
def api_key_from_env(environ: Mapping[str, str] | None = None) -> str | None:
    """The API key from EXTRACTBENCH_API_KEY, else OPENAI_API_KEY, else None."""
    env = os.environ if environ is None else environ
    for name in API_KEY_ENV_VARS:
        value = env.get(name, "").strip()
        if value:
            return value
    return None


def check_api_key(key: str | None) -> None:
    """Raise ``ValueError`` (never quoting the key) when an HTTP header cannot carry it: non-ASCII,
    whitespace or control characters. Else every request would fail with an error that shows it."""
    if key and not all(33 <= ord(ch) <= 126 for ch in key):
        raise ValueError(
            f"the API key (from {API_KEY_ENV_VARS[0]} or {API_KEY_ENV_VARS[1]}) holds characters an HTTP header "
            "cannot carry (non-ASCII, spaces or control characters); check the variable's value"
        )


# ----------------------------------------------------------------------------------------------
# configuration


@dataclass(frozen=True)
class ClientConfig:
    """How to talk to one server (defaults: spec 3.1-3.4). The API key never appears in repr."""

    base_url: str
    api_key: str | None = field(default=None, repr=False)
    structured_output: str = "json_schema"
    temperature: float = 0.0
    max_tokens: int | None = None  # None: derived from each request's schema (budget.max_tokens_for_schema)
    seed: int | None = 42
    timeout_s: float = 60.0
    retries: int = 3  # retries after the first attempt, for timeouts, connection errors, 429 and 5xx
    backoff_base_s: float = 0.5  # delay before retry k is base * 2**(k-1), capped, with jitter
    backoff_max_s: float = 30.0
    jitter: float = 0.25  # each backoff delay is scaled by a uniform factor in [1 - jitter, 1 + jitter]
    retry_after_max_s: float = 60.0  # a server's Retry-After is honoured up to this many seconds
    strict: bool = True  # json_schema's "strict" flag
    schema_name: str = "extraction_result"

    def __post_init__(self) -> None:
        check_base_url(self.base_url)  # one clear ValueError, credentials never quoted
        check_api_key(self.api_key)
        if self.structured_output not in STRUCTURED_OUTPUT_MODES:
            raise ValueError(
                f"structured_output must be one of {', '.join(STRUCTURED_OUTPUT_MODES)}, got {self.structured_output!r}"
            )
        checks = {
            "temperature": self.temperature >= 0 and math.isfinite(self.temperature),
            "max_tokens": self.max_tokens is None or self.max_tokens >= 1,
            "timeout_s": self.timeout_s > 0 and math.isfinite(self.timeout_s),
            "retries": self.retries >= 0,
            "backoff_base_s": self.backoff_base_s >= 0,
            "backoff_max_s": self.backoff_max_s >= 0,
            "jitter": 0 <= self.jitter <= 1,
            "retry_after_max_s": self.retry_after_max_s >= 0,
        }
        for name, valid in checks.items():
            if not valid:
                raise ValueError(f"{name} is out of range: {getattr(self, name)!r}")

    def decoding_params(self) -> dict[str, Any]:
        """Everything in this config that changes the model's answer (the cache key's ``params``)."""
        return {
            "structured_output": self.structured_output,
            "strict": self.strict if self.structured_output == "json_schema" else None,
            "schema_name": self.schema_name if self.structured_output == "json_schema" else None,
            "temperature": float(self.temperature),
            "max_tokens": "schema" if self.max_tokens is None else int(self.max_tokens),
            "seed": self.seed,
        }


# ----------------------------------------------------------------------------------------------
# prompts

DEFAULT_SYSTEM_PROMPT = (
    "You are a precise data extraction assistant. Extract information from the provided text according "
    "to the given JSON schema. Only extract information explicitly stated in the text. If information for "
    "a field is not present, omit the field or use null as appropriate."
)
DEFAULT_USER_PROMPT = (
    "Text:\n{text}\n\nExtract information according to this JSON schema:\n{schema}\n\n"
    "Output valid JSON matching the schema exactly."
)
_PLACEHOLDERS = ("{text}", "{schema}")


class PromptTemplateError(ValueError):
    """A prompt template file is unreadable or lacks a placeholder; the message names the file."""


@dataclass(frozen=True)
class PromptTemplates:
    """The system and user templates (spec 3.3). ``{text}`` and ``{schema}`` are replaced; any other
    brace stays as written, so templates may show JSON examples. ``{text}`` must be in the user
    template and ``{schema}`` in either; an empty system template sends no system message."""

    system: str = DEFAULT_SYSTEM_PROMPT
    user: str = DEFAULT_USER_PROMPT
    system_source: str | None = field(default=None, compare=False)  # file names, for error messages
    user_source: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        user = self.user_source or "the user prompt template"
        if "{text}" not in self.user:
            raise PromptTemplateError(f"{user} lacks the {{text}} placeholder where the document goes")
        if "{schema}" not in self.user and "{schema}" not in self.system:
            where = user if self.system_source is None else f"{user} (nor {self.system_source})"
            raise PromptTemplateError(f"{where} lacks the {{schema}} placeholder where the JSON schema goes")

    @classmethod
    def from_files(
        cls, system_path: str | os.PathLike[str] | None = None, user_path: str | os.PathLike[str] | None = None
    ) -> PromptTemplates:
        """Templates read from UTF-8 files; a path left out keeps the spec's default."""
        system, system_source = _read_template(system_path, "system", DEFAULT_SYSTEM_PROMPT)
        user, user_source = _read_template(user_path, "user", DEFAULT_USER_PROMPT)
        return cls(system, user, system_source, user_source)

    def render(self, text: str, schema: Any) -> list[dict[str, str]]:
        """The chat messages for one document and schema."""
        values = {"{text}": text, "{schema}": json.dumps(model_schema(schema), indent=2, ensure_ascii=False)}
        messages = []
        system = _fill(self.system, values)
        if system.strip():
            messages.append({"role": "system", "content": system})
        messages.append({"role": "user", "content": _fill(self.user, values)})
        return messages


DEFAULT_TEMPLATES = PromptTemplates()


def _read_template(path: str | os.PathLike[str] | None, role: str, default: str) -> tuple[str, str | None]:
    if path is None:
        return default, None
    where = f"{role} prompt template {os.fspath(path)}"
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise PromptTemplateError(f"cannot read the {where}: {reason}") from None
    return text.rstrip("\r\n"), where


def _fill(template: str, values: Mapping[str, str]) -> str:
    """Replace placeholders in one pass, so a document that contains "{schema}" stays as it is."""
    out, i = [], 0
    while i < len(template):
        for key, value in values.items():
            if template.startswith(key, i):
                out.append(value)
                i += len(key)
                break
        else:
            j = template.find("{", i + 1)
            j = len(template) if j < 0 else j
            out.append(template[i:j])
            i = j
    return "".join(out)


def build_messages(text: str, schema: Any, templates: PromptTemplates = DEFAULT_TEMPLATES) -> list[dict[str, str]]:
    """The chat messages that ask for `schema` to be filled from `text`."""
    return templates.render(text, schema)


# Keywords whose values are schemas, or maps/lists of schemas: the walk follows them only, so a
# property *named* "x-eval-..." and data under "enum"/"default"/"examples" stay untouched.
_SUBSCHEMA = ("items", "additionalProperties", "not", "if", "then", "else", "contains", "propertyNames",
              "additionalItems", "unevaluatedItems", "unevaluatedProperties")  # fmt: skip
_SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")


def model_schema(schema: Any) -> Any:
    """The schema as the model sees it: a copy without the benchmark's ``x-eval-*`` keywords."""
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if isinstance(key, str) and key.startswith("x-eval-"):
            continue
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            value = {name: model_schema(sub) for name, sub in value.items()}
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            value = [model_schema(sub) for sub in value]
        elif key in _SUBSCHEMA:
            value = [model_schema(sub) for sub in value] if isinstance(value, list) else model_schema(value)
        out[key] = value
    return out


def cache_key(model: str, messages: Sequence[Mapping[str, Any]], schema: Any, params: Mapping[str, Any]) -> str:
    """sha256 of the canonical JSON of what determines the answer: model, messages, schema (without
    x-eval keys) and decoding params (`ClientConfig.decoding_params`). Not the server or the key."""
    payload = {
        "v": 1,
        "model": model,
        "messages": list(messages),
        "schema": model_schema(schema),
        "params": dict(params),
    }
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def structured_output_fields(
    mode: str, schema: Any, *, name: str = "extraction_result", strict: bool = True
) -> dict[str, Any]:
    """The request fields that constrain the output to `schema` in `mode`'s dialect."""
    schema = model_schema(schema)
    if mode == "json_schema":
        json_schema = {"name": name, "schema": schema, "strict": strict}
        return {"response_format": {"type": "json_schema", "json_schema": json_schema}}
    if mode == "json_object":
        return {"response_format": {"type": "json_object", "schema": schema}}
    if mode == "guided_json":
        return {"extra_body": {"guided_json": schema, "structured_outputs": {"json": schema}}}
    if mode == "none":
        return {}
    raise ValueError(f"unknown structured output mode {mode!r}; one of {', '.join(STRUCTURED_OUTPUT_MODES)}")


# ----------------------------------------------------------------------------------------------
# the client


class ConnectionCheckError(RuntimeError):
    """The server is unreachable, refuses the key, or does not serve the model (one line)."""


@dataclass
class _Retry:
    """A transient failure of one attempt."""

    error_class: str
    error: str
    retry_after: float | None = None


class ExtractionClient:
    """Async requests to one OpenAI-compatible server. Use ``async with`` (or `aclose`) inside the
    event loop that makes the requests; the underlying HTTP pool belongs to that loop."""

    def __init__(self, config: ClientConfig, *, rng: random.Random | None = None) -> None:
        import openai  # 0.35 s: only when a live run needs it

        self.config = config
        self._openai = openai
        self._rng = rng or random.Random()
        http_client = None
        if urlsplit(config.base_url).hostname in _LOOPBACK:
            # a CI's HTTP(S)_PROXY must not capture loopback servers
            http_client = openai.DefaultAsyncHttpxClient(trust_env=False)
        self._client = openai.AsyncOpenAI(
            base_url=config.base_url,
            api_key=config.api_key or _NO_KEY,
            max_retries=0,
            timeout=config.timeout_s,
            http_client=http_client,
        )

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
        await self._client.close()

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
        response = ModelResponse(started_at=time.time())
        while True:
            response.attempts += 1
            outcome = await self._attempt(model, messages, fields, response)
            if not isinstance(outcome, _Retry):
                break
            if response.attempts > cfg.retries:
                response.error_class, response.error = outcome.error_class, outcome.error
                break
            delay = self._delay(response.attempts, outcome.retry_after)
            log.debug("retry %d of %s in %.2fs: %s", response.attempts, model, delay, outcome.error)
            await asyncio.sleep(delay)
        response.finished_at = time.time()
        return response

    async def _attempt(
        self, model: str, messages: Sequence[Mapping[str, Any]], fields: dict[str, Any], response: ModelResponse
    ) -> _Retry | None:
        """Send once; fill `response` on a final outcome, or say why to retry."""
        openai = self._openai
        t0 = time.perf_counter()

        async def send() -> bytes:
            raw = await self._client.chat.completions.with_raw_response.create(
                model=model, messages=list(messages), **fields
            )
            return raw.content

        try:
            # the timeout bounds the whole attempt, not each read: a server that drips one byte a
            # second would otherwise keep the request alive for ever
            body = await asyncio.wait_for(send(), self.config.timeout_s)
        except (openai.APITimeoutError, asyncio.TimeoutError):
            return _Retry("timeout", f"no complete answer within {self.config.timeout_s:g}s")
        except openai.APIConnectionError as exc:
            return _Retry("connection", self._redact(_connection_reason(exc)))
        except openai.APIStatusError as exc:
            message = self._redact(f"HTTP {exc.status_code}: {_server_message(exc)}")
            if exc.status_code == 429:
                return _Retry("rate_limited", message, _retry_after(exc.response.headers))
            if exc.status_code >= 500:
                return _Retry("server_error", message, _retry_after(exc.response.headers))
            fit = context_exceeded(exc.body, _server_message(exc))
            if fit is not None:
                response.error_class, response.context = "context_exceeded", fit
                response.error = f"{_describe_fit(fit)}: {message}"
                return None
            response.error_class, response.error = "request_error", message
            return None
        except openai.OpenAIError as exc:  # e.g. a response the package itself cannot read
            response.error_class = "bad_response"
            response.error = self._redact(_one_line(f"{type(exc).__name__}: {exc}"))
            return None
        latency = time.perf_counter() - t0
        try:
            problem = _fill_completion(response, body, fields.get("max_tokens", self.config.max_tokens))
        except Exception as exc:  # noqa: BLE001 - whatever a body holds, the sample keeps an outcome
            problem = f"the client could not read the server's answer: {type(exc).__name__}: {_one_line(str(exc), 200)}"
        if problem is not None:
            # a 200 whose body is not a chat completion (cut short, an HTML error page from a proxy,
            # nested beyond reading): transient as often as not, so asked again like a 5xx
            _clear(response)
            return _Retry("bad_response", self._redact(problem))
        response.latency_s = latency
        self._redact_response(response)
        return None

    def _delay(self, retry: int, retry_after: float | None) -> float:
        cfg = self.config
        if retry_after is not None:
            # the server said when; a little extra jitter keeps many clients from returning in lockstep
            return min(retry_after, cfg.retry_after_max_s) + self._rng.uniform(0, cfg.jitter * cfg.backoff_base_s)
        base = min(cfg.backoff_max_s, cfg.backoff_base_s * 2 ** (retry - 1))
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
        """GET /models once. Returns the served model ids (None when the server has no /models);
        raises `ConnectionCheckError` with one clear line when the server is unreachable, refuses
        the key, or does not serve `model`."""
        openai = self._openai
        url = redact_url(self.config.base_url)
        wanted = [model] if isinstance(model, str) else list(model or ())

        async def send() -> bytes:
            raw = await self._client.models.with_raw_response.list()
            return raw.content

        try:
            body = await asyncio.wait_for(send(), self.config.timeout_s)
        except (openai.APITimeoutError, asyncio.TimeoutError):
            raise ConnectionCheckError(
                f"cannot reach the model server at {url}: no complete answer within {self.config.timeout_s:g}s"
            ) from None
        except openai.APIConnectionError as exc:
            raise ConnectionCheckError(
                f"cannot reach the model server at {url}: {self._redact(_connection_reason(exc))}"
            ) from None
        except openai.APIStatusError as exc:
            message = self._redact(_server_message(exc))
            if exc.status_code == 404:
                return None  # not every server lists its models
            if exc.status_code in (401, 403):
                hint = "check" if self.config.api_key else "no API key is set; set"
                raise ConnectionCheckError(
                    f"the model server at {url} refused the API key (HTTP {exc.status_code}: {message}); "
                    f"{hint} {API_KEY_ENV_VARS[0]} (or {API_KEY_ENV_VARS[1]})"
                ) from None
            raise ConnectionCheckError(
                f"the model server at {url} answered GET /models with HTTP {exc.status_code}: {message}"
            ) from None
        data, problem = _parse_body(body)
        try:
            if problem is not None:
                raise ValueError(problem)
            served = [str(entry["id"]) for entry in data["data"]]
        except (ValueError, KeyError, TypeError):
            raise ConnectionCheckError(
                f"the model server at {url} answered GET /models with something that is not a model list: "
                f"{self._redact(_one_line(body[:2000].decode('utf-8', 'replace')))!r}"
            ) from None
        missing = [name for name in wanted if name not in served]
        if missing:
            names = ", ".join(repr(name) for name in missing)
            offer = ", ".join(served) if served else "nothing"
            raise ConnectionCheckError(f"the model server at {url} does not serve {names}; it serves: {offer}")
        return served


def run_check(config: ClientConfig, models: Iterable[str]) -> list[str] | None:
    """The connection check from synchronous code (session start, CLI); raises `ConnectionCheckError`."""
    names = list(models)

    async def go() -> list[str] | None:
        async with ExtractionClient(config) as client:
            return await client.check(names)

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(go())
    with concurrent.futures.ThreadPoolExecutor(1) as pool:  # called from inside a running loop
        return pool.submit(asyncio.run, go()).result()


# ----------------------------------------------------------------------------------------------
# reading answers


def _one_line(text: str, limit: int = _MESSAGE_LIMIT) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _server_message(exc: openai.APIStatusError) -> str:
    """The server's own words: error.message of an OpenAI-style body, else detail/message, else text."""
    body = exc.body
    if isinstance(body, dict):
        for key in ("message", "detail", "error"):
            value = body.get(key)
            if isinstance(value, str) and value:
                return _one_line(value)
            if isinstance(value, dict) and isinstance(value.get("message"), str):
                return _one_line(value["message"])
    if isinstance(body, str) and body:
        return _one_line(body)
    try:
        text = exc.response.text
    except Exception:  # the body may be unreadable
        text = ""
    return _one_line(text) or exc.response.reason_phrase or "no message"


# How servers say that a prompt does not fit the context: llama-server ("request (4531 tokens) exceeds
# the available context size (4096 tokens)", type exceed_context_size_error), vLLM and OpenAI ("This
# model's maximum context length is N tokens. However, you requested M tokens ..." / "your messages
# resulted in M tokens" / "your request has M input tokens", code context_length_exceeded).
_CONTEXT_MARKERS = ("exceeds the available context size", "maximum context length", "context_length_exceeded",
                    "exceed_context_size_error")  # fmt: skip
# the messages' own count first: vLLM's "requested M tokens (P in the messages, C in the completion)"
_CONTEXT_PROMPT = (re.compile(r"(\d+) in the messages"),
                   re.compile(r"request \((\d+) tokens\)|(?:requested|resulted in|request has) (\d+) (?:input )?tokens"))
_CONTEXT_LIMIT = (re.compile(r"context size \((\d+) tokens\)|maximum context length is (\d+)"),)


def context_exceeded(body: Any, message: str) -> dict[str, int | None] | None:
    """``{"prompt_tokens", "limit"}`` (each None when the server did not say) when a 4xx answer says
    the prompt does not fit the model's context; None for any other request error."""
    fields = body if isinstance(body, dict) else {}
    words = " ".join(str(fields.get(k, "")) for k in ("type", "code")) + " " + message
    if not any(marker in words.lower() for marker in _CONTEXT_MARKERS):
        return None

    def first(patterns: tuple[re.Pattern[str], ...], key: str) -> int | None:
        value = fields.get(key)  # llama-server says it in fields too
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        for pattern in patterns:
            found = pattern.search(message)
            if found:
                return int(next(g for g in found.groups() if g))
        return None

    return {"prompt_tokens": first(_CONTEXT_PROMPT, "n_prompt_tokens"), "limit": first(_CONTEXT_LIMIT, "n_ctx")}


def _describe_fit(fit: dict[str, int | None]) -> str:
    tokens, limit = fit.get("prompt_tokens"), fit.get("limit")
    size = f" ({tokens} tokens)" if tokens is not None else ""
    room = f" ({limit} tokens)" if limit is not None else ""
    return f"the prompt{size} does not fit the model's context{room}"


def _connection_reason(exc: openai.APIConnectionError) -> str:
    cause = exc.__cause__
    if cause is None:
        return exc.message
    detail = str(cause) or type(cause).__name__
    return _one_line(f"{type(cause).__name__}: {detail}")


def _retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date)."""
    value = headers.get("retry-after-ms")
    if value:
        try:
            seconds = float(value) / 1000
            return seconds if math.isfinite(seconds) and seconds >= 0 else None
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            seconds = email.utils.parsedate_to_datetime(value).timestamp() - time.time()
        except (TypeError, ValueError, IndexError):
            return None
    return max(0.0, seconds) if math.isfinite(seconds) else None


def _parse_body(body: bytes) -> tuple[Any, str | None]:
    """(JSON value, None), or (None, what is wrong with the body) in words for the error message."""
    try:
        return jsonio.loads(body), None
    except jsonio.JsonInputError as exc:
        if exc.message.startswith("a number is too large"):
            return None, f"the server sent a body with an integer too long to read ({len(body)} bytes)"
        if exc.message.startswith("nested too deeply"):
            return None, f"the server sent a body nested more than {jsonio.MAX_DEPTH} levels deep ({len(body)} bytes)"
        kind = "a truncated JSON body" if body.lstrip()[:1] in (b"{", b"[") else "a body that is not JSON"
        return None, f"the server sent {kind}: {_one_line(body[:2000].decode('utf-8', 'replace'), 200)!r}"


def _clear(response: ModelResponse) -> None:
    """Forget what a failed attempt had read, so a retry starts clean."""
    response.content, response.finish_reason, response.usage = MISSING, None, {}
    response.tool_calls = response.logprobs = response.choices = None
    response.error_class = response.error = None


def _fill_completion(response: ModelResponse, body: bytes, max_tokens: Any) -> str | None:
    """Read a 200 body into `response`; return what is wrong when it is not a chat completion."""
    data, problem = _parse_body(body)
    if problem is not None:
        return problem
    choices = data.get("choices") if isinstance(data, dict) else None
    if not isinstance(choices, list) or not choices or not all(isinstance(c, dict) for c in choices):
        return f"the server's answer has no choices: {_one_line(body[:2000].decode('utf-8', 'replace'), 200)!r}"
    first = _read_choice(choices[0])
    response.content = first["content"]
    response.finish_reason = first["finish_reason"]
    response.tool_calls = first.get("tool_calls")
    response.logprobs = first.get("logprobs")
    if len(choices) > 1:
        response.choices = [_read_choice(c) for c in choices]
    # odd counts (1e400, NaN, a list, negative) are left out: the answer itself is still scored
    response.usage = clean_usage(data.get("usage"), keys=("prompt_tokens", "completion_tokens", "total_tokens"))
    if response.finish_reason == "length":
        response.error_class = "truncated"
        response.error = f"the output hit max_tokens ({max_tokens}) and was cut off"
    return None


def _read_choice(choice: dict[str, Any]) -> dict[str, Any]:
    message = choice.get("message") if isinstance(choice.get("message"), dict) else {}
    content = message.get("content")
    out: dict[str, Any] = {
        "content": content if isinstance(content, str) else ("" if content is None else json.dumps(content)),
        "finish_reason": choice["finish_reason"] if isinstance(choice.get("finish_reason"), str) else None,
    }
    calls = message.get("tool_calls")
    if isinstance(calls, list) and calls:
        out["tool_calls"] = [_read_tool_call(call) for call in calls if isinstance(call, dict)]
    logprobs = choice.get("logprobs")
    if isinstance(logprobs, dict) and isinstance(logprobs.get("content"), list):
        out["logprobs"] = [
            {"token": item.get("token"), "logprob": item.get("logprob")}
            for item in logprobs["content"]
            if isinstance(item, dict)
        ]
    return out


def _read_tool_call(call: dict[str, Any]) -> dict[str, Any]:
    function = call.get("function") if isinstance(call.get("function"), dict) else {}
    arguments = function.get("arguments")
    if isinstance(arguments, str):
        try:
            arguments = jsonio.loads(arguments)
        except jsonio.JsonInputError:
            pass  # kept as the raw string: invalid arguments are the tool-call track's finding
    return {"name": function.get("name"), "arguments": arguments}


def client_config(live: LiveOptions, base_url: str, api_key: str | None) -> ClientConfig:
    """The client settings for one server URL."""
    return ClientConfig(
        base_url=base_url,
        api_key=api_key,
        structured_output=live.structured_output,
        temperature=live.temperature,
        max_tokens=live.max_tokens,
        seed=live.decoding_seed,
        timeout_s=live.timeout_s,
        retries=live.retries,
    )
