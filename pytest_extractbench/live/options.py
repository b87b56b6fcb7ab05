"""Settings of live runs (a server, the embedded llama-server, or a replayed journal): one frozen dataclass.

Kept apart from :mod:`.pipeline` so that reading options never imports the HTTP client.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.redact import redact_url
from ..core.urls import check_base_url

STRUCTURED_OUTPUT_MODES = ("json_schema", "json_object", "guided_json", "none")
DEFAULT_SLOTS = 4  # parallel slots of an embedded llama-server
DEFAULT_CONCURRENCY_PER_URL = 8  # requests in flight per --extractbench-base-url
DEFAULT_TIMEOUT_S = 120.0  # one request attempt to a model server
# The embedded server runs a small model on this machine's CPU: with 4 slots sharing 2 busy cores a slot
# decodes ~7-10 tokens/s, so an answer at the largest default budget (2048 tokens) takes ~300 s; its
# timeout leaves room for that, so a slow CPU model is measured rather than timed out and retried.
EMBEDDED_TIMEOUT_S = 600.0


def parse_structured_output(value: str) -> str:
    """One of :data:`STRUCTURED_OUTPUT_MODES`."""
    if value not in STRUCTURED_OUTPUT_MODES:
        raise argparse.ArgumentTypeError(
            f"unknown structured-output mode {value!r}; choose one of {', '.join(STRUCTURED_OUTPUT_MODES)}"
        )
    return value


def parse_base_url(value: str) -> str:
    """An http(s) URL of an OpenAI-compatible API (``http://host:8000/v1``): :func:`check_base_url` for argparse."""
    try:
        return check_base_url(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


@dataclass(frozen=True)
class LiveOptions:
    """How to reach the model, how to decode, and how to keep, reuse or replay responses."""

    base_urls: tuple[str, ...] = ()
    structured_output: str = "json_schema"
    concurrency: int | None = None  # None: the embedded server's slots, else 8 per base URL
    temperature: float = 0.0
    max_tokens: int | None = None  # None: derived from each sample's schema
    decoding_seed: int = 42
    timeout_s: float = 120.0
    retries: int = 3
    stream: bool = False  # stream answers: time to first token and generation time are measured
    system_prompt: Path | None = None
    user_prompt: Path | None = None
    resume: Path | None = None
    replay: Path | None = None
    record: Path | None = None  # write the run's answers to DIR/cassette.jsonl (cassette.py)
    cache: bool = False  # reuse answers of earlier runs (opt-in: by default every run asks)
    no_cache: bool = False
    slots: int = DEFAULT_SLOTS
    context: int | None = None  # tokens per embedded slot; None: sized to the prompts (context.py)
    prompt_budget: int | str = "auto"  # prompt tokens in flight per model: "auto", "off" or a number (schedule.py)
    extractor: str | None = None  # MODULE:FUNCTION answering instead of a server (live/extractor.py)
    heartbeat_s: float = 60.0  # no item finished for this long: say what is in flight (live/inflight.py); 0: never

    @property
    def embedded(self) -> bool:
        """True when the plugin must start llama-server itself (no URL, no extractor, nothing to replay)."""
        return not self.base_urls and self.replay is None and self.extractor is None

    @property
    def reuses_answers(self) -> bool:
        """Answers of earlier runs may be reused: asked for explicitly, and not vetoed by no_cache."""
        return self.cache and not self.no_cache

    def default_concurrency(self, workers: int = 1) -> int:
        """Requests in flight per server group in one process; under xdist the session's share of one worker."""
        if self.base_urls:
            default = len(self.base_urls) * DEFAULT_CONCURRENCY_PER_URL
        else:  # a Python extractor gets as many calls in flight as one server would
            default = DEFAULT_CONCURRENCY_PER_URL if self.extractor else self.slots
        total = self.concurrency or default
        return max(1, -(-total // max(1, workers)))

    def to_dict(self) -> dict[str, Any]:
        """For metrics.json and baselines: no credentials (URLs lose user info and query)."""
        return {
            "base_urls": [redact_url(url) for url in self.base_urls],
            "structured_output": self.structured_output,
            "concurrency": self.concurrency,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "decoding_seed": self.decoding_seed,
            "timeout_s": self.timeout_s,
            "retries": self.retries,
            "stream": self.stream,
            "system_prompt": str(self.system_prompt) if self.system_prompt else None,
            "user_prompt": str(self.user_prompt) if self.user_prompt else None,
            "resume": str(self.resume) if self.resume else None,
            "replay": str(self.replay) if self.replay else None,
            "record": str(self.record) if self.record else None,
            "cache": self.cache,
            "no_cache": self.no_cache,
            "slots": self.slots,
            "context": self.context,
            "prompt_budget": self.prompt_budget,
            "extractor": self.extractor,
        }
