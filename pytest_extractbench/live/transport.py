"""How to reach one server: its URL, the API key, timeouts and retries, and the HTTP client under the SDK.

The official ``openai`` package speaks HTTP through an async httpx client (``httpx2.AsyncClient`` under
openai 3, ``httpx.AsyncClient`` before; ``openai.DefaultAsyncHttpxClient`` is one). By default each
:class:`~.client.ExtractionClient` makes its own (ignoring HTTP(S)_PROXY for loopback servers); pass
``http_client=`` (such a client) or ``http_client_factory=`` (config -> such a client) to route requests
through your own transport: a mock transport in tests, a proxy, mTLS, a tracer.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ..core.urls import check_base_url
from .options import STRUCTURED_OUTPUT_MODES, LiveOptions

if TYPE_CHECKING:
    import openai

__all__ = [
    "API_KEY_ENV_VARS",
    "ClientConfig",
    "HttpClientFactory",
    "api_key_from_env",
    "check_api_key",
    "client_config",
    "open_openai",
    "open_sync_openai",
]

#: Where the API key comes from, first non-empty wins (DESIGN decision 8: environment only).
API_KEY_ENV_VARS = ("EXTRACTBENCH_API_KEY", "OPENAI_API_KEY")
#: llama-server and others accept any key; the openai package insists on one.
_NO_KEY = "no-key"
_LOOPBACK = {"127.0.0.1", "localhost", "::1"}
#: Makes the async httpx client for one server's config (called inside the event loop that uses it).
HttpClientFactory = Callable[["ClientConfig"], Any]


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


@dataclass(frozen=True)
class ClientConfig:
    """How to talk to one server (defaults: temperature 0 and a fixed seed, so runs repeat; 60 s per request;
    3 retries). The API key never appears in repr."""

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
    stream: bool = False  # stream single-choice answers to time the first token (not part of the cache key)

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
        stream=live.stream,
    )


def open_openai(
    config: ClientConfig, *, http_client: Any | None = None, http_client_factory: HttpClientFactory | None = None
) -> openai.AsyncOpenAI:
    """The SDK client for ``config``, over the given HTTP client, the factory's, or a default one.

    The SDK's own retries are off: the client classifies and counts every attempt (errors.py).
    """
    import openai  # 0.35 s: only when a live run needs it

    if http_client is not None and http_client_factory is not None:
        raise ValueError("give http_client or http_client_factory, not both")
    if http_client is None and http_client_factory is not None:
        http_client = http_client_factory(config)
    if http_client is None and urlsplit(config.base_url).hostname in _LOOPBACK:
        # a CI's HTTP(S)_PROXY must not capture loopback servers
        http_client = openai.DefaultAsyncHttpxClient(trust_env=False)
    return openai.AsyncOpenAI(
        base_url=config.base_url,
        api_key=config.api_key or _NO_KEY,
        max_retries=0,
        timeout=config.timeout_s,
        http_client=http_client,
    )


def open_sync_openai(base_url: str, api_key: str | None, *, timeout: float, max_retries: int) -> openai.OpenAI:
    """A blocking SDK client for the judge and embeddings servers (scoring asks them between items, not in the
    event loop), with the SDK's own ``max_retries``: their answers are grades and vectors, not measurements,
    so no attempt needs counting. Loopback servers bypass HTTP(S)_PROXY as the model's do."""
    import openai

    http_client = openai.DefaultHttpxClient(trust_env=False) if urlsplit(base_url).hostname in _LOOPBACK else None
    return openai.OpenAI(
        base_url=base_url, api_key=api_key or _NO_KEY, timeout=timeout, max_retries=max_retries, http_client=http_client
    )
