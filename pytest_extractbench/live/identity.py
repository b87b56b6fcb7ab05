"""Who answers: the identity of the server behind a model, part of every answer's cache and journal key.

A model name says little: a checkpoint redeployed under the same served name, or another server on
another port serving that name, gives other answers. The identity of a route is therefore:

- for servers given by URL: each base URL, the fields of its ``/v1/models`` entry for the served model
  (without ``created``, which vLLM and llama-server set to the time of the request) and, where the
  server has it (llama-server), the model file that ``/props`` names;
- for an embedded server: the model file it loaded (path, size, modification time), not its port,
  which changes every run.

Reading ``/props`` is best effort and bounded (a server without it simply has no such field).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from ..core import jsonio

__all__ = ["PROPS_LIMIT", "embedded_identity", "fetch_model_path", "identity_hash", "model_entry", "server_identity"]

#: Fields of a /v1/models entry that change on every request and say nothing about the weights.
VOLATILE_FIELDS = frozenset({"created"})
#: Bytes of a /props answer read at most (llama-server's holds the chat template: a few KB).
PROPS_LIMIT = 1 << 20
PROPS_TIMEOUT_S = 10.0
PROPS_CHUNK = 16384
_LOOPBACK = {"127.0.0.1", "localhost", "::1"}


def model_entry(entry: Any) -> dict[str, Any] | None:
    """The served model's /v1/models entry without its volatile fields (None when the server listed none)."""
    if not isinstance(entry, Mapping):
        return None
    return {str(k): v for k, v in entry.items() if k not in VOLATILE_FIELDS}


def fetch_model_path(base_url: str, api_key: str | None, timeout_s: float) -> str | None:
    """llama-server's ``GET /props`` ``model_path`` (the server root, beside ``/v1``); None when the
    server has no such route, answers something else, or does not answer in time."""
    root = base_url.rstrip("/")
    if root.endswith("/v1"):
        root = root[: -len("/v1")]
    request = urllib.request.Request(f"{root}/props", headers={"Accept": "application/json"})
    if api_key:
        request.add_header("Authorization", f"Bearer {api_key}")
    host = urlsplit(root).hostname or ""
    # loopback servers are reached directly, as the requests reach them (transport.py)
    handlers = [urllib.request.ProxyHandler({})] if host in _LOOPBACK else []
    budget = min(timeout_s, PROPS_TIMEOUT_S)
    deadline = time.monotonic() + budget
    try:
        with urllib.request.build_opener(*handlers).open(request, timeout=budget) as answer:
            body = b""
            # chunk by chunk against one deadline: a server that drips its answer cannot hold the run
            while len(body) <= PROPS_LIMIT and time.monotonic() < deadline:
                chunk = answer.read1(PROPS_CHUNK)
                if not chunk:
                    break
                body += chunk
            else:
                return None
        data = jsonio.loads(body)
    except (OSError, ValueError, urllib.error.URLError):
        return None
    path = data.get("model_path") if isinstance(data, dict) else None
    return path if isinstance(path, str) else None


def server_identity(url_shown: str, entry: Any, model_path: str | None) -> dict[str, Any]:
    """One given server's identity (``url_shown`` without credentials)."""
    return {"url": url_shown, "model": model_entry(entry), "model_path": model_path}


def embedded_identity(model_file: str | None) -> dict[str, Any]:
    """An embedded server's identity: the model file it loaded."""
    found: dict[str, Any] = {"model_file": model_file}
    if model_file:
        try:
            stat = os.stat(model_file)
            found.update(size=stat.st_size, mtime_ns=stat.st_mtime_ns)
        except OSError:
            pass
    return found


def identity_hash(identity: Any) -> str:
    """sha256 of the canonical JSON of an identity: equal for the same server, different otherwise."""
    canonical = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()
