"""The one connection check: is an OpenAI-compatible server reachable, does it take the key, does it serve the models?

A single ``GET {base_url}/models`` through the same SDK client as the requests (transport.py), bounded as
a whole by the timeout, so a server that drips its answer byte by byte cannot hold it. Used by the run
before any item (``run_check``, through ``Endpoints.check``) and by ``extractbench test-connection``
(``check_connection``); both read the answer the same way:

- 200 with an OpenAI model list: ok, and every wanted model must be in it;
- **404: the server does not implement /models** (the OpenAI API lists it, but not every compatible
  server does; vLLM and llama-server do). The check passes without verifying the model names
  (``run_check`` returns None); the first request says whether the model is served. A base URL that lacks
  its ``/v1`` answers 404 too: ``test-connection`` says so, and the run's requests would fail with
  ``request_error`` HTTP 404, each naming the URL;
- 401/403: the key is refused (a hint names the variables when no key is set);
- any other status, an unreachable server, a timeout, or a body that is not a model list: fails in one line.

The key comes from EXTRACTBENCH_API_KEY or OPENAI_API_KEY and never appears in a message; a URL with
credentials is refused before any name is resolved (``ClientConfig``).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..core.errors import ExtractbenchError
from ..core.redact import redact_credentials, redact_url
from ..core.urls import check_base_url
from .errors import connection_reason, one_line, parse_body, server_message
from .transport import API_KEY_ENV_VARS, ClientConfig, HttpClientFactory, api_key_from_env, check_api_key, open_openai

if TYPE_CHECKING:
    import openai

__all__ = ["ConnectionCheckError", "ConnectionResult", "check_connection", "check_models", "run_check"]

#: The status that means "this server has no /models": the check passes unverified.
NO_MODELS_ROUTE = 404


class ConnectionCheckError(ExtractbenchError, RuntimeError):
    """The server is unreachable, refuses the key, or does not serve the model (one line)."""


async def check_models(
    http: openai.AsyncOpenAI,
    config: ClientConfig,
    models: str | Iterable[str] | None = None,
    entries: dict[str, Any] | None = None,
) -> list[str] | None:
    """GET /models once with the SDK client ``http``. Returns the served model ids (None when the server
    has no /models); raises `ConnectionCheckError` with one clear line when the server is unreachable,
    refuses the key, or does not serve one of ``models``. ``entries`` receives each served model's
    entry (id -> the object the server listed): part of the server's identity (identity.py)."""
    import openai

    url = redact_url(config.base_url)
    wanted = [models] if isinstance(models, str) else list(models or ())

    def redact(text: str) -> str:
        return redact_credentials(text, (config.api_key,))

    async def send() -> bytes:
        raw = await http.models.with_raw_response.list()
        return raw.content

    try:
        body = await asyncio.wait_for(send(), config.timeout_s)
    except (openai.APITimeoutError, asyncio.TimeoutError):
        raise ConnectionCheckError(
            f"cannot reach the model server at {url}: no complete answer within {config.timeout_s:g}s"
        ) from None
    except openai.APIConnectionError as exc:
        raise ConnectionCheckError(
            f"cannot reach the model server at {url}: {redact(connection_reason(exc))}"
        ) from None
    except openai.APIStatusError as exc:
        message = redact(server_message(exc))
        if exc.status_code == NO_MODELS_ROUTE:
            return None
        if exc.status_code in (401, 403):
            hint = "check" if config.api_key else "no API key is set; set"
            raise ConnectionCheckError(
                f"the model server at {url} refused the API key (HTTP {exc.status_code}: {message}); "
                f"{hint} {API_KEY_ENV_VARS[0]} (or {API_KEY_ENV_VARS[1]})"
            ) from None
        raise ConnectionCheckError(
            f"the model server at {url} answered GET /models with HTTP {exc.status_code}: {message}"
        ) from None
    return _served(body, wanted, url, redact, entries)


def _served(body: bytes, wanted: list[str], url: str, redact: Any, entries: dict[str, Any] | None = None) -> list[str]:
    data, problem = parse_body(body)
    try:
        if problem is not None:
            raise ValueError(problem)
        served = [str(entry["id"]) for entry in data["data"]]
    except (ValueError, KeyError, TypeError):
        raise ConnectionCheckError(
            f"the model server at {url} answered GET /models with something that is not a model list: "
            f"{redact(one_line(body[:2000].decode('utf-8', 'replace')))!r}"
        ) from None
    if entries is not None:
        entries.update({str(entry["id"]): entry for entry in data["data"] if isinstance(entry, dict)})
    missing = [name for name in wanted if name not in served]
    if missing:
        names = ", ".join(repr(name) for name in missing)
        offer = ", ".join(served) if served else "nothing"
        raise ConnectionCheckError(f"the model server at {url} does not serve {names}; it serves: {offer}")
    return served


def run_check(
    config: ClientConfig,
    models: Iterable[str],
    *,
    http_client_factory: HttpClientFactory | None = None,
    entries: dict[str, Any] | None = None,
) -> list[str] | None:
    """`check_models` from synchronous code (session start, CLI); raises `ConnectionCheckError`."""
    names = list(models)

    async def go() -> list[str] | None:
        http = open_openai(config, http_client_factory=http_client_factory)
        try:
            return await check_models(http, config, names, entries)
        finally:
            await http.close()

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(go())
    with concurrent.futures.ThreadPoolExecutor(1) as pool:  # called from inside a running loop
        return pool.submit(asyncio.run, go()).result()


@dataclass
class ConnectionResult:
    ok: bool
    message: str
    models: list[str] = field(default_factory=list)


def check_connection(base_url: str, model: str | None = None, *, timeout: float = 10.0) -> ConnectionResult:
    """``extractbench test-connection``: `run_check` with the key from the environment, as a result to print.

    ``timeout`` bounds the whole check (connect, headers and body); the check is not retried."""
    try:
        base_url = check_base_url(base_url)
    except ValueError as exc:
        return ConnectionResult(False, f"--base-url: {exc}")
    key = api_key_from_env()
    try:
        check_api_key(key)
        config = ClientConfig(base_url, api_key=key, timeout_s=timeout, retries=0)
    except ValueError as exc:
        return ConnectionResult(False, str(exc))
    url = redact_url(base_url)
    try:
        served = run_check(config, [model] if model is not None else [])
    except ConnectionCheckError as exc:
        return ConnectionResult(False, str(exc))
    if served is None:
        about = f"; model {model!r} not verified" if model is not None else ""
        return ConnectionResult(
            True,
            f"{url}: reachable, but it does not list its models (GET /models answered HTTP 404){about}; "
            "if requests answer 404 too, check that the base URL ends with /v1",
        )
    return ConnectionResult(True, f"{url}: OK, {len(served)} model(s): {', '.join(served) or 'none'}", served)
