"""``extractbench test-connection``: is an OpenAI-compatible server reachable, and does it serve the model?

A single ``GET {base_url}/models`` with the standard library; the key comes from
EXTRACTBENCH_API_KEY or OPENAI_API_KEY and never appears in a message.
"""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass, field

from ..core.redact import redact_url
from .client import api_key_from_env, check_api_key
from .options import check_base_url
from ..core.redact import redact_credentials

MAX_BODY = 8 * 1024 * 1024  # a model list is a few kB; more is not read


@dataclass
class ConnectionResult:
    ok: bool
    message: str
    models: list[str] = field(default_factory=list)


def check_connection(base_url: str, model: str | None = None, *, timeout: float = 10.0) -> ConnectionResult:
    """List the server's models; ok when it answers (and serves ``model``, when given).

    `timeout` bounds the whole check (connect, headers and body), so a server that drips its
    answer byte by byte cannot hold the command; a URL with credentials is refused before any
    name is resolved."""
    try:
        base_url = check_base_url(base_url)
    except ValueError as exc:
        return ConnectionResult(False, f"--base-url: {exc}")
    url = redact_url(base_url + "/models")  # for messages: no credentials, no query
    key = api_key_from_env()
    try:
        check_api_key(key)
    except ValueError as exc:
        return ConnectionResult(False, str(exc))
    outcome: list[ConnectionResult] = []
    # a daemon thread with a deadline: urllib's timeout applies to each socket operation only
    worker = threading.Thread(target=lambda: outcome.append(_check(base_url, url, key, model, timeout)), daemon=True)
    worker.start()
    worker.join(timeout)
    if not outcome:
        return ConnectionResult(False, f"{url}: no complete answer within {timeout:g}s")
    result = outcome[0]
    result.message = redact_credentials(result.message, (key,))
    return result


def _check(base_url: str, url: str, key: str | None, model: str | None, timeout: float) -> ConnectionResult:
    request = urllib.request.Request(base_url + "/models", headers={"Accept": "application/json"})
    if key:
        request.add_header("Authorization", f"Bearer {key}")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            body = response.read(MAX_BODY + 1)
    except urllib.error.HTTPError as exc:
        hint = " (set EXTRACTBENCH_API_KEY or OPENAI_API_KEY)" if exc.code in (401, 403) and not key else ""
        return ConnectionResult(False, f"{url}: HTTP {exc.code} {exc.reason}{hint}")
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        return ConnectionResult(False, f"{url}: cannot connect: {reason}")
    try:
        if len(body) > MAX_BODY:
            raise ValueError("too large")
        data = json.loads(body)
        models = [str(entry["id"]) for entry in data["data"]]
    except (ValueError, KeyError, TypeError, RecursionError):
        return ConnectionResult(False, f"{url}: answered, but not with an OpenAI model list: {body[:200]!r}")
    if model is not None and model not in models:
        return ConnectionResult(
            False,
            f"{url}: reachable, but model {model!r} is not served (serves: {', '.join(models) or 'none'})",
            models,
        )
    return ConnectionResult(True, f"{url}: OK, {len(models)} model(s): {', '.join(models) or 'none'}", models)
