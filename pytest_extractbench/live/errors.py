"""Server errors as data: one place that turns what went wrong into an error class of ``ERROR_CLASSES``.

Every way an answer can fail ends up here, so the client, the connection check and the pipeline name
failures the same way (DESIGN decision 5: errors are data, never exceptions):

=============================================  =====================  ==========
what happened                                  error class            retried
=============================================  =====================  ==========
no complete answer within the timeout          ``timeout``            yes
refused / reset / dropped connection           ``connection``         yes
HTTP 429                                       ``rate_limited``       yes (Retry-After honoured)
HTTP 5xx                                       ``server_error``       yes (Retry-After honoured)
a 4xx saying the prompt does not fit           ``context_exceeded``   no
any other 4xx                                  ``request_error``      no
a 200 that is not a chat completion            ``bad_response``       yes
``finish_reason == "length"``                  ``truncated``          no
the client itself failed (a defect)            ``client_error``       no
=============================================  =====================  ==========

A :class:`Transient` outcome is asked again (the client's retries, then the pipeline's failover to
another replica); a :class:`Failure` is final. Messages are one line and never hold the API key.
"""

from __future__ import annotations

import asyncio
import email.utils
import math
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..core import jsonio
from ..dataset.responses import ModelResponse

if TYPE_CHECKING:
    import openai

__all__ = [
    "RETRIED",
    "Failure",
    "Transient",
    "bad_body",
    "classify",
    "classify_status",
    "client_error",
    "connection_reason",
    "context_exceeded",
    "describe_fit",
    "one_line",
    "parse_body",
    "retry_after",
    "server_message",
    "truncation",
]

_MESSAGE_LIMIT = 500
#: The classes asked again: by the client (its retries), then by the pipeline (another replica).
RETRIED = ("connection", "timeout", "server_error", "rate_limited", "bad_response")


@dataclass
class Transient:
    """A failure another attempt may not have: retried, and recorded only when the retries run out."""

    error_class: str
    error: str
    retry_after: float | None = None  # what the server asked for, in seconds


@dataclass
class Failure:
    """A final failure: recorded as it is."""

    error_class: str
    error: str
    context: dict[str, int | None] | None = None  # context_exceeded: {"prompt_tokens", "limit"}


def classify_status(status: int, body: Any, message: str, headers: Mapping[str, str]) -> Transient | Failure:
    """An HTTP error status: ``message`` is the server's own words (``server_message``)."""
    text = f"HTTP {status}: {message}"
    if status == 429:
        return Transient("rate_limited", text, retry_after(headers))
    if status >= 500:
        return Transient("server_error", text, retry_after(headers))
    fit = context_exceeded(body, message)
    if fit is not None:
        return Failure("context_exceeded", f"{describe_fit(fit)}: {text}", fit)
    return Failure("request_error", text)


def classify(exc: BaseException, *, timeout_s: float) -> Transient | Failure | None:
    """What an exception of one request means; None when it is not the server's doing (re-raise it).

    Messages are not yet redacted: the caller, who knows the key, does that.
    """
    import openai  # only live runs get here, and they have imported it already

    if isinstance(exc, (openai.APITimeoutError, asyncio.TimeoutError)):
        return Transient("timeout", f"no complete answer within {timeout_s:g}s")
    if isinstance(exc, openai.APIConnectionError):
        return Transient("connection", connection_reason(exc))
    if isinstance(exc, openai.APIStatusError):
        return classify_status(exc.status_code, exc.body, server_message(exc), exc.response.headers)
    if isinstance(exc, openai.OpenAIError):  # e.g. a response the package cannot read, an error event mid-stream
        return bad_body(one_line(f"{type(exc).__name__}: {exc}"))
    return None


def bad_body(problem: str) -> Transient:
    """A 200 whose body is not a chat completion (cut short, an HTML error page from a proxy, nested
    beyond reading): transient as often as not, so asked again like a 5xx."""
    return Transient("bad_response", problem)


def truncation(finish_reason: str | None, max_tokens: Any) -> Failure | None:
    """The output hit max_tokens: the answer is kept (and scored), and the sample counted as truncated."""
    if finish_reason != "length":
        return None
    return Failure("truncated", f"the output hit max_tokens ({max_tokens}) and was cut off")


def client_error(what: str, exc: BaseException, previous: ModelResponse | None = None) -> ModelResponse:
    """The outcome of a pair whose answer the client failed on: counted as ``client_error``, never dropped."""
    response = ModelResponse(
        error_class="client_error", error=f"the client {what}: {type(exc).__name__}: {str(exc)[:300]}"
    )
    if previous is not None:
        response.attempts, response.latency_s = previous.attempts, previous.latency_s
        response.started_at, response.finished_at = previous.started_at, previous.finished_at
        response.end_to_end_s, response.attempt_log = previous.end_to_end_s, previous.attempt_log
    return response


# ----------------------------------------------------------------------------------------------
# reading what the server said


def one_line(text: str, limit: int = _MESSAGE_LIMIT) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def server_message(exc: openai.APIStatusError) -> str:
    """The server's own words: error.message of an OpenAI-style body, else detail/message, else text."""
    body = exc.body
    if isinstance(body, dict):
        for key in ("message", "detail", "error"):
            value = body.get(key)
            if isinstance(value, str) and value:
                return one_line(value)
            if isinstance(value, dict) and isinstance(value.get("message"), str):
                return one_line(value["message"])
    if isinstance(body, str) and body:
        return one_line(body)
    try:
        text = exc.response.text
    except Exception:  # noqa: BLE001 - the body may be unreadable
        text = ""
    return one_line(text) or exc.response.reason_phrase or "no message"


# How servers say that a prompt does not fit the context: llama-server ("request (4531 tokens) exceeds
# the available context size (4096 tokens)", type exceed_context_size_error), vLLM and OpenAI ("This
# model's maximum context length is N tokens. However, you requested M tokens ..." / "your messages
# resulted in M tokens" / "your request has M input tokens", code context_length_exceeded).
_CONTEXT_MARKERS = (
    "exceeds the available context size",
    "maximum context length",
    "context_length_exceeded",
    "exceed_context_size_error",
)
# the messages' own count first: vLLM's "requested M tokens (P in the messages, C in the completion)"
_CONTEXT_PROMPT = (
    re.compile(r"(\d+) in the messages"),
    re.compile(r"request \((\d+) tokens\)|(?:requested|resulted in|request has) (\d+) (?:input )?tokens"),
)
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


def describe_fit(fit: dict[str, int | None]) -> str:
    tokens, limit = fit.get("prompt_tokens"), fit.get("limit")
    size = f" ({tokens} tokens)" if tokens is not None else ""
    room = f" ({limit} tokens)" if limit is not None else ""
    return f"the prompt{size} does not fit the model's context{room}"


def connection_reason(exc: openai.APIConnectionError) -> str:
    cause = exc.__cause__
    if cause is None:
        return exc.message
    detail = str(cause) or type(cause).__name__
    return one_line(f"{type(cause).__name__}: {detail}")


def retry_after(headers: Mapping[str, str]) -> float | None:
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


def parse_body(body: bytes) -> tuple[Any, str | None]:
    """(JSON value, None), or (None, what is wrong with the body) in words for the error message."""
    try:
        return jsonio.loads(body), None
    except jsonio.JsonInputError as exc:
        if exc.message.startswith("a number is too large"):
            return None, f"the server sent a body with an integer too long to read ({len(body)} bytes)"
        if exc.message.startswith("nested too deeply"):
            return None, f"the server sent a body nested more than {jsonio.MAX_DEPTH} levels deep ({len(body)} bytes)"
        kind = "a truncated JSON body" if body.lstrip()[:1] in (b"{", b"[") else "a body that is not JSON"
        return None, f"the server sent {kind}: {one_line(body[:2000].decode('utf-8', 'replace'), 200)!r}"
