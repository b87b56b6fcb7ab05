"""Credential-shaped text removed from what servers say, before it is recorded or shown.

A server can echo the request's headers (``Authorization: Bearer ...``), a proxy can quote a URL
with ``user:pass@``, an error page can print a config dump: none of that may reach
``responses.jsonl``, ``samples.jsonl``, the reports or the terminal. The known API key is removed
exactly wherever it appears; the patterns below catch the common shapes of other secrets.
No pytest import; cheap to import.

    redact_credentials("401: got Authorization: Bearer sk-abc123456789")  ->  "401: got Authorization: ***"
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit, urlunsplit

__all__ = ["MASK", "SECRET_ENV_VARS", "env_secrets", "mask", "redact_credentials", "redact_url"]

MASK = "***"
# every environment variable a key is read from (the model server's, the judge's)
SECRET_ENV_VARS = ("EXTRACTBENCH_API_KEY", "OPENAI_API_KEY", "EXTRACTBENCH_JUDGE_API_KEY")
_SHORTEST_SECRET = 4  # a one-letter "key" would mask every such letter of every text
# lowercase fragments one of the patterns below needs: a text with none of them (and no known key) is left as is
_HINTS = ("key", "token", "auth", "secret", "pass", "cookie", "bearer", "basic", "sk-", "pk-", "rk-", "://")
_HINTED = re.compile("|".join(map(re.escape, _HINTS)))  # one scan of the lowercased text for any of them

_PATTERNS = (
    # an auth scheme followed by its token: "Bearer abc1...", "Basic dXNlcjpwYXNz" (a token has a digit or a
    # symbol, so prose such as "Basic authentication failed" stays readable; no word boundary first, so a scheme
    # glued to the text before it, "...xBearer abc1...", is still found). Before the header pattern: a header value
    # that runs into a second scheme ("Authorization: Bearer abc1|Bearer abc1") would swallow that scheme's name
    # and leave its token.
    (
        re.compile(r"(?i)(bearer|basic|token)\s+(?=[A-Za-z0-9._~+/=-]*[0-9._~+/=-])[A-Za-z0-9._~+/=-]{8,}"),
        rf"\1 {MASK}",
    ),
    # a header or setting named like a credential, whatever its value looks like
    (
        re.compile(
            r"(?i)\b((?:proxy-)?authorization|x-api-key|api[-_]?key|access[-_]?token|auth[-_]?token|"
            r"client[-_]?secret|secret|password|passwd|cookie|set-cookie)"
            r"(\\?[\"']?\s*[:=]\s*\\?[\"']?)(?:(?:bearer|basic|token)\s+)?[^\s\"'\\,;&}\]]+"
        ),
        rf"\1\2{MASK}",
    ),
    # OpenAI-style keys and other common key prefixes
    (re.compile(r"\b(sk|pk|rk)-[A-Za-z0-9_-]{8,}"), rf"\1-{MASK}"),
    # credentials in a URL: scheme://user:pass@host
    (re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@\"']+@"), rf"\1{MASK}@"),
)


def redact_credentials(text: str, known: Iterable[str | None] = ()) -> str:
    """`text` with every value of `known` (the API key) and anything credential-shaped masked."""
    for secret in known:
        if secret:
            text = text.replace(secret, MASK)
    for pattern, replacement in _PATTERNS:
        text = pattern.sub(replacement, text)
    return text


def env_secrets() -> tuple[str, ...]:
    """The keys set in :data:`SECRET_ENV_VARS` now (read each time: a test or a caller may change them)."""
    environ = os.environ
    data = getattr(environ, "_data", None)
    if type(environ) is not os._Environ or type(data) is not dict:  # a replaced os.environ: ask it as a mapping
        return tuple(value for name in SECRET_ENV_VARS if len(value := environ.get(name) or "") >= _SHORTEST_SECRET)
    # CPython's os.environ answers a missing key by raising KeyError twice (about 2 us each here): every sink masks,
    # and a run masks a few texts per item, so the process's own table is read instead, with os.environ's own
    # key encoding and value decoding (the same values os.environ.get gives)
    keys = _ENCODED_KEYS.get(environ.encodekey)
    if keys is None:
        keys = _ENCODED_KEYS[environ.encodekey] = tuple(environ.encodekey(name) for name in SECRET_ENV_VARS)
    found = [data.get(key) for key in keys]
    return tuple(
        value for raw in found if raw is not None and len(value := environ.decodevalue(raw) or "") >= _SHORTEST_SECRET
    )


_ENCODED_KEYS: dict[Any, tuple[Any, ...]] = {}  # os.environ's key encoding -> SECRET_ENV_VARS encoded by it


def mask(text: str, secrets: tuple[str, ...] | None = None) -> str:
    """``text`` with the environment's keys and anything credential-shaped masked: the one masker every sink
    calls (terminal, logs, reports, CSV, JUnit, recorded error texts). ``secrets``: :func:`env_secrets` read
    once by a caller that masks many texts in one go (a report's tens of thousands of CSV cells: reading the
    environment costs more than masking a short text); by default they are read now."""
    if secrets is None:
        secrets = env_secrets()
    if any(secret in text for secret in secrets) or _HINTED.search(text.lower()):
        return redact_credentials(text, secrets)
    return text


def redact_url(url: str) -> str:
    """A server URL without credentials, query or fragment (they can hold tokens); never raises,
    even for a URL that cannot be parsed (bad port, broken IPv6 literal): messages quote it."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        # keep what follows the last "@" of the authority, drop query and fragment
        scheme, sep, rest = str(url).partition("://")
        authority, slash, path = rest.partition("/")
        rest = authority.rpartition("@")[2] + slash + path
        return (scheme + sep + rest).split("?")[0].split("#")[0]
    if ":" in host:  # IPv6 literal
        host = f"[{host}]"
    if port:
        host = f"{host}:{port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))
