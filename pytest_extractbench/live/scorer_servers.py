"""What the judge and embeddings clients share: where their key comes from, their URL check, a bounded read
of every answer and the masking of what a server says.

A judge or an embeddings server is as untrusted as the model under test: its answer is read with the
limits model answers get (a size cap and one deadline for the whole answer, the nesting limit, no
integer past Python's 4,300 digits; the callers refuse non-finite numbers where they use one), and
anything it says that is recorded (an error, a judge's reasoning) first loses the API key and anything
credential-shaped.
"""

from __future__ import annotations

import os
import time
from typing import Any

from ..core import jsonio
from ..core.errors import ExtractbenchError
from ..core.redact import redact_credentials
from ..core.urls import check_base_url
from .transport import API_KEY_ENV_VARS, open_sync_openai

__all__ = [
    "KEY_VARIABLES",
    "MAX_ANSWER_BYTES",
    "RemoteAnswerError",
    "api_key",
    "check_url",
    "masked",
    "open_client",
    "read_answer",
]

#: The judge's own variable first, then the model client's (transport.py).
KEY_VARIABLES = ("EXTRACTBENCH_JUDGE_API_KEY", *API_KEY_ENV_VARS)
#: Largest answer read from a judge or embeddings server (a batch of 1,000 1,536-float vectors is ~30 MB).
MAX_ANSWER_BYTES = 64 * 1024 * 1024
_NO_KEY = "not-needed"  # local servers ignore it; the client insists on one


class RemoteAnswerError(ExtractbenchError, ValueError):
    """A server's answer that cannot be used: too big, too slow, not JSON, or out of the limits."""


def api_key() -> str:
    """The key from the first of :data:`KEY_VARIABLES` that is set (environment only, never an option)."""
    for name in KEY_VARIABLES:
        value = os.environ.get(name, "").strip()
        if value:
            return value
    return _NO_KEY


def check_url(url: str) -> str:
    """:func:`~.options.check_base_url` for a judge or embeddings server (whose key has its own variable)."""
    return check_base_url(url, key_variables=f"{KEY_VARIABLES[0]} (or {KEY_VARIABLES[1]})")


def open_client(
    base_url: str, *, what: str, error: type[Exception], timeout: float, max_retries: int
) -> tuple[str, str, Any]:
    """``(checked base URL, key, OpenAI client)`` for a judge or embeddings server; ``error`` (the caller's
    error class) says why not: the ``openai`` package missing (the ``judge`` extra) or a bad URL."""
    try:
        import openai  # noqa: F401 - here only to name the missing extra
    except ImportError:
        raise error(f"{what} need the 'openai' package: pip install 'pytest-extractbench[judge]'") from None
    try:
        base_url = check_url(base_url)
    except ValueError as exc:
        raise error(f"{what} URL: {exc}") from None
    key = api_key()
    return base_url, key, open_sync_openai(base_url, key, timeout=timeout, max_retries=max_retries)


def masked(text: Any, key: str | None) -> str:
    """``text`` without ``key`` and anything credential-shaped, as one line."""
    return " ".join(redact_credentials(str(text), (key,)).split())


def read_answer(response: Any, *, deadline: float, limit: int | None = None) -> Any:
    """The JSON value of an SDK streaming response, read within ``deadline`` (a ``time.monotonic()`` value)
    and ``limit`` bytes (default :data:`MAX_ANSWER_BYTES`), or :class:`RemoteAnswerError` saying which
    limit it broke."""
    limit = MAX_ANSWER_BYTES if limit is None else limit
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_bytes():
        size += len(chunk)
        if size > limit:
            raise RemoteAnswerError(f"the answer is larger than {limit:,} bytes")
        if time.monotonic() > deadline:
            raise RemoteAnswerError("the answer did not arrive in time (the whole answer has one deadline)")
        chunks.append(chunk)
    try:
        # non-finite numbers are the caller's to refuse where they matter (a count of 1e400 is left out)
        return jsonio.loads(b"".join(chunks))
    except jsonio.JsonInputError as exc:
        raise RemoteAnswerError(f"the answer is not usable JSON: {exc}") from None
