"""``extractbench test-connection``: is an OpenAI-compatible server reachable, and does it serve the model?

A single ``GET {base_url}/models`` with the standard library; the key comes from
EXTRACTBENCH_API_KEY or OPENAI_API_KEY and never appears in a message.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from dataclasses import dataclass, field

from .baseline import redact_url
from .client import api_key_from_env


@dataclass
class ConnectionResult:
    ok: bool
    message: str
    models: list[str] = field(default_factory=list)


def check_connection(base_url: str, model: str | None = None, *, timeout: float = 10.0) -> ConnectionResult:
    """List the server's models; ok when it answers (and serves ``model``, when given)."""
    request = urllib.request.Request(base_url.rstrip("/") + "/models", headers={"Accept": "application/json"})
    url = redact_url(request.full_url)  # for messages: no credentials, no query
    key = api_key_from_env()
    if key:
        request.add_header("Authorization", f"Bearer {key}")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            body = response.read()
    except urllib.error.HTTPError as exc:
        hint = " (set EXTRACTBENCH_API_KEY or OPENAI_API_KEY)" if exc.code in (401, 403) and not key else ""
        return ConnectionResult(False, f"{url}: HTTP {exc.code} {exc.reason}{hint}")
    except (urllib.error.URLError, OSError, ValueError) as exc:
        reason = getattr(exc, "reason", exc)
        return ConnectionResult(False, f"{url}: cannot connect: {reason}")
    try:
        data = json.loads(body)
        models = [str(entry["id"]) for entry in data["data"]]
    except (ValueError, KeyError, TypeError):
        return ConnectionResult(False, f"{url}: answered, but not with an OpenAI model list: {body[:200]!r}")
    if model is not None and model not in models:
        return ConnectionResult(
            False,
            f"{url}: reachable, but model {model!r} is not served (serves: {', '.join(models) or 'none'})",
            models,
        )
    return ConnectionResult(True, f"{url}: OK, {len(models)} model(s): {', '.join(models) or 'none'}", models)
