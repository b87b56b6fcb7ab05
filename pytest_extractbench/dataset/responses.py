"""What a model returned for one sample, and the seam that produces it (offline file or live server)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any, Protocol

from ..scoring import MISSING
from .samples import Sample

# Why a response has no usable content. Parse and schema failures are not here: they are
# properties of the content, found by the scoring core (SampleScore.json_valid / schema_valid).
ERROR_CLASSES = (
    "missing",  # offline: no prediction row for the sample
    "timeout",  # no answer within the per-request timeout (after retries)
    "connection",  # refused / reset / dropped connection (after retries)
    "rate_limited",  # 429 after every retry
    "server_error",  # 5xx after every retry
    "request_error",  # 4xx other than 429: not retried, the server's message is kept
    "context_exceeded",  # a 4xx saying the prompt does not fit the model's context (see `context`)
    "truncated",  # finish_reason "length": the output hit max_tokens
    # a body that is not a valid chat completion (non-JSON, truncated, no choices, too deep), after retries
    "bad_response",
    "client_error",  # the answer could not be read or recorded (a defect): the sample is still accounted for
    "replay_miss",  # --extractbench-replay of a cassette that holds no answer for this sample (cassette.py)
    # a Python extractor (--extractbench-extractor, evaluate(extractor=)) raised or returned no text/dict
    "extractor_error",
)


SERVER_TIMINGS = ("prompt_ms", "predicted_ms", "prompt_n", "predicted_n", "cache_n")


def clean_timings(timings: Any) -> dict[str, float] | None:
    """The server-side timings a server reports (llama-server's ``timings`` object), finite and non-negative;
    None when there are none."""
    if not isinstance(timings, Mapping):
        return None
    out = {
        name: float(value)
        for name in SERVER_TIMINGS
        if isinstance(value := timings.get(name), (int, float))
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value >= 0
    }
    return out or None


def clean_usage(usage: Any, keys: Sequence[str] | None = None) -> dict[str, int]:
    """Token counts that are finite, non-negative numbers, as ints; anything else (1e400, NaN, a
    list, a string, true) is left out rather than crash a reader: usage informs, the answer counts."""
    if not isinstance(usage, Mapping):
        return {}
    out: dict[str, int] = {}
    for name in usage if keys is None else keys:
        value = usage.get(name)
        if not isinstance(name, str) or isinstance(value, bool) or not isinstance(value, (int, float)):
            continue
        if isinstance(value, float) and not math.isfinite(value):
            continue
        if value >= 0:
            out[name] = int(value)
    return out


@dataclass(slots=True)  # one per sample and model, held for the whole run: no per-instance __dict__
class ModelResponse:
    """One model answer; errors are data (DESIGN decision 5), never exceptions."""

    content: Any = MISSING  # raw text, or an already-parsed JSON value from a predictions file
    error_class: str | None = None  # one of ERROR_CLASSES
    error: str | None = None
    latency_s: float | None = None
    usage: dict[str, int] = field(default_factory=dict)
    finish_reason: str | None = None
    attempts: int = 0
    cached: bool = False
    started_at: float | None = None  # epoch seconds when the first attempt was sent
    finished_at: float | None = None  # epoch seconds when the final answer (or error) arrived
    # Optional, live runs only (client.py):
    tool_calls: list[dict[str, Any]] | None = None  # [{"name", "arguments"}]; arguments parsed when JSON
    logprobs: list[dict[str, Any]] | None = None  # [{"token", "logprob"}] of the content, when returned
    choices: list[dict[str, Any]] | None = None  # every choice when n > 1: [{"content", "finish_reason", ...}]
    context: dict[str, int | None] | None = None  # context_exceeded: {"prompt_tokens", "limit"} as the server said
    # where the time went, live runs only: the server's own timings (llama-server's ``timings``: prompt_ms,
    # predicted_ms, prompt_n, predicted_n) and how long the request waited for a free slot in our client
    timings: dict[str, float] | None = None
    wait_s: float | None = None
    first_token_s: float | None = None  # streamed answers: seconds from sending to the first content
    # every attempt, live runs only: seconds from the first attempt's start to the final answer or error (what the
    # SLA reads; ``latency_s`` is the answering attempt's alone), and each attempt's start (seconds after the
    # first's), latency and outcome ("ok" or an error class), with the error's words for failed ones
    end_to_end_s: float | None = None
    attempt_log: list[dict[str, Any]] | None = None
    # where a live answer came from: {"source": asked|cache|journal|replay, "by": server|embedded|extractor,
    # "where": URL without credentials or the extractor's name, "at": when it was received (ISO, UTC)}
    origin: dict[str, str] | None = None

    @property
    def ok(self) -> bool:
        return self.content is not MISSING and self.error_class is None

    def as_dict(self) -> dict[str, Any]:
        """JSON-able form; a missing output is ``null``.

        Containers are copied one level deep, which is as deep as this class builds them; the content is
        shared, never copied: it is the largest part, and nothing changes it after the answer arrives
        (``dataclasses.asdict`` copied every output tree once more for each item)."""
        data = {name: _copied(getattr(self, name)) for name in _RESPONSE_FIELDS}
        data["content"] = None if self.content is MISSING else self.content
        if self.origin is None:  # answers read from a predictions file: their file says where they came from
            del data["origin"]
        return data


_RESPONSE_FIELDS = tuple(f.name for f in fields(ModelResponse))


def _copied(value: Any) -> Any:
    if type(value) is dict:
        return dict(value)
    if type(value) is list:
        return [dict(v) if type(v) is dict else v for v in value]
    return value


class OutputSource(Protocol):
    """Produces model outputs for (model, sample) pairs."""

    def prepare(self, work: Sequence[tuple[str, Sample]]) -> None:
        """Called once with every pair this process will run, before the first item (prefetch here)."""

    def response(self, model: str, sample: Sample) -> ModelResponse:
        """The output for one pair; blocks until it is available."""
        ...

    def close(self) -> None:
        """Release servers, threads and files."""
