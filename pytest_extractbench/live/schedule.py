"""Which waiting request goes out next: a budget of prompt tokens in flight, so long prompts finish on slow servers.

A server shares its prompt processing among the requests in flight. Four 10,000-token prompts on a CPU that reads
45 tokens/s each get a quarter of it and need 15 minutes: every attempt times out, and the retries start over.
One at a time, each needs under 4 minutes. So a route admits requests by count (its concurrency, as before) and by
prompt tokens: the tokens in flight stay within what the server reads, at its measured speed, in half an
attempt's timeout (the other half is left for generating the answer and for sharing the server).

* **The speed** is read from the servers' own timings (llama-server reports ``prompt_n`` and ``prompt_ms``;
  vLLM and OpenAI report none, and then only the count limit applies). Until one answer has reported it, prompts
  of :data:`LONG_PROMPT_TOKENS` or more go one at a time; short prompts are never held back by an unknown speed.
* **A prompt's size** is estimated from its characters, at the characters per token the server's answers
  showed (3 until then: English prose is nearer 4, JSON schemas nearer 3, so the first guesses err long).
* **The order** is first come, first served, with backfilling: while the request at the head of the queue waits
  for room, later requests that fit the room left may pass it, for at most half a timeout; after that nothing
  passes, the requests in flight drain, and the head goes. Short documents are not stuck behind a long one, and
  a long one is not passed forever. A prompt larger than the whole budget goes when nothing else is in flight.
  Until the first answer, the shortest of the next waiting prompts goes first, and a long prompt waits for that
  answer while anything is in flight: it tells the speed the long ones are sized by.
* **An attempt's time** is the timeout, or, when its prompt alone needs more than half of it at the measured
  speed, twice that reading time (at most :data:`MAX_STRETCH` timeouts). A prompt known to need 15 minutes on
  this server is not cut at 10 and read again; a hung server is still caught. Only the ``auto`` budget does this:
  with a fixed budget or ``off`` the timeout is strict.

Pure asyncio; no HTTP. ``PromptBudget(limit=4, timeout_s=600).admit(chars)`` is an async context manager.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import operator
import statistics
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

__all__ = ["ATTEMPT_TIMEOUT", "LONG_PROMPT_TOKENS", "PromptBudget", "PromptSpeed", "prompt_chars"]

#: Set around one request by whoever schedules it (the pipeline, from its :class:`PromptBudget`): the seconds each
#: of its attempts gets, asked again before each attempt (a retry may know the server's speed when the first did
#: not). Unset: the client's configured timeout. A context variable, so the tracks' request paths need not pass it.
ATTEMPT_TIMEOUT: ContextVar[Callable[[], float] | None] = ContextVar("extractbench_attempt_timeout", default=None)
#: Before the server's prompt speed is known, prompts estimated at this many tokens or more go one at a time.
LONG_PROMPT_TOKENS = 2048
#: Share of an attempt's timeout the prompts in flight may take to read, at the measured speed.
TIMEOUT_SHARE = 0.5
#: Before the first answer, a long prompt waits this long for the run's other requests to queue beside it.
GATHER_S = 0.05
#: Before the first answer, the shortest of this many waiting requests goes first.
SHORTEST_OF = 64
#: An attempt sized by its prompt gets at most this many timeouts.
MAX_STRETCH = 6.0
#: Characters per token assumed until the server's answers show the real ratio (low: sizes err long).
DEFAULT_CHARS_PER_TOKEN = 3.0
# Prompts shorter than this say little about the server's prompt speed (fixed costs dominate).
_MIN_MEASURED_TOKENS = 64
# Speeds and ratios are taken from this many latest answers (the machine's load changes during a run).
_WINDOW = 16


def prompt_chars(messages: Sequence[Mapping[str, Any]]) -> int:
    """The characters of a request's messages (text parts of multi-part contents included)."""
    total = 0
    for message in messages:
        content = message.get("content")
        if isinstance(content, str):
            total += len(content)
        elif isinstance(content, Sequence):
            total += sum(len(part.get("text") or "") for part in content if isinstance(part, Mapping))
    return total


class PromptSpeed:
    """A server's prompt-reading speed (tokens/s) and characters per token, from its answers' timings."""

    def __init__(self) -> None:
        self._speeds: deque[float] = deque(maxlen=_WINDOW)
        self._ratios: deque[float] = deque(maxlen=_WINDOW)
        self.answers = 0  # answers seen, with or without timings

    def observe(self, chars: int, timings: Mapping[str, float] | None, image_tokens: int = 0) -> None:
        """One answer: ``chars`` of prompt text beside ``image_tokens`` (estimated: context.image_tokens), and the
        server's ``timings`` (None when it reports none). The characters per token are the text's alone."""
        self.answers += 1
        if not timings:
            return
        read, cached, ms = timings.get("prompt_n"), timings.get("cache_n", 0.0), timings.get("prompt_ms")
        if read is None or ms is None:
            return
        text_tokens = read + cached - image_tokens
        if text_tokens >= _MIN_MEASURED_TOKENS and chars > 0:
            self._ratios.append(chars / text_tokens)
        if read >= _MIN_MEASURED_TOKENS and ms > 0:
            # read while sharing the server with others: lower than alone, so the budget errs small
            self._speeds.append(read * 1000.0 / ms)

    @property
    def tokens_per_s(self) -> float | None:
        """The fastest recent reading (the one least slowed by sharing), or None before any."""
        return max(self._speeds) if self._speeds else None

    @property
    def chars_per_token(self) -> float:
        return statistics.median(self._ratios) if self._ratios else DEFAULT_CHARS_PER_TOKEN


@dataclass
class _Waiter:
    tokens: float
    since: float
    ready: asyncio.Future[None]
    held: bool = False  # waited while a request slot was free: its prompt did not fit yet
    moved: bool = False  # put ahead of earlier requests (shortest first, before the speed is known)


@dataclass
class BudgetStats:
    """What the budget did, for metrics.json: how many requests waited for room and for how long."""

    held: int = 0  # requests that waited although a request slot was free: their prompt did not fit yet
    passed: int = 0  # requests admitted ahead of an earlier, longer one (backfilling, or shortest first)
    longest_wait_s: float = 0.0
    largest_tokens: float = 0.0
    stretched: int = 0  # attempts given longer than the timeout for their prompt's reading time
    longest_attempt_s: float = 0.0  # the longest time an attempt was given


class PromptBudget:
    """Admission of one route's requests by count (``limit``) and by estimated prompt tokens in flight.

    ``tokens``: ``"auto"`` (the measured speed times half of ``timeout_s``), a fixed number of tokens, or ``"off"``
    (count only: first come, first served, as a semaphore).
    """

    def __init__(
        self, limit: int, timeout_s: float, tokens: int | str = "auto", speed: PromptSpeed | None = None
    ) -> None:
        self.limit = max(1, limit)
        self.timeout_s = timeout_s
        self.mode: int | str | None = None if tokens == "off" else tokens
        self.speed = speed or PromptSpeed()
        self.stats = BudgetStats()
        self._queue: deque[_Waiter] = deque()  # waiting, in arrival order (a cancelled one removes itself)
        self._count = 0
        self._tokens = 0.0
        self._long = 0  # prompts of LONG_PROMPT_TOKENS or more in flight (used before a speed is known)

    @property
    def capacity(self) -> float | None:
        """Prompt tokens that may be in flight; None when only the count limits (or no speed is known yet)."""
        if self.mode is None:
            return None
        if isinstance(self.mode, int):
            return float(self.mode)
        speed = self.speed.tokens_per_s
        return None if speed is None else speed * self.timeout_s * TIMEOUT_SHARE

    def estimate(self, chars: int, image_tokens: int = 0) -> float:
        """A prompt's tokens, estimated from its text's characters, plus its images' tokens."""
        return chars / self.speed.chars_per_token + image_tokens

    def attempt_timeout(self, chars: int, image_tokens: int = 0) -> float:
        """Seconds one attempt of this prompt gets: the timeout, or twice the prompt's reading time at the measured
        speed where that is longer (``auto`` budget only; at most :data:`MAX_STRETCH` timeouts)."""
        speed = self.speed.tokens_per_s
        if self.mode != "auto" or speed is None:
            return self.timeout_s
        needed = self.estimate(chars, image_tokens) / speed / TIMEOUT_SHARE
        if needed <= self.timeout_s:
            return self.timeout_s
        given = min(needed, self.timeout_s * MAX_STRETCH)
        self.stats.stretched += 1
        self.stats.longest_attempt_s = max(self.stats.longest_attempt_s, given)
        return given

    @contextlib.asynccontextmanager
    async def admit(self, chars: int, image_tokens: int = 0) -> AsyncIterator[float]:
        """Wait for room for a prompt of ``chars`` characters of text and ``image_tokens`` of images; yields the
        seconds waited."""
        loop = asyncio.get_running_loop()
        tokens = self.estimate(chars, image_tokens) if self.mode is not None else 0.0
        waiter = _Waiter(tokens, loop.time(), loop.create_future())
        self._queue.append(waiter)
        try:
            if tokens >= LONG_PROMPT_TOKENS and self._sizing() and not self.speed.answers:
                # the run's first requests arrive one task at a time: a moment lets shorter ones queue beside it
                await asyncio.sleep(GATHER_S)
            self._dispatch()
            await waiter.ready
        except BaseException:
            if waiter in self._queue:
                self._queue.remove(waiter)
            elif waiter.ready.done() and not waiter.ready.cancelled():
                self._release(waiter)  # admitted in the same instant it was cancelled
            self._dispatch()
            raise
        waited = loop.time() - waiter.since
        self._note(waiter, waited)
        try:
            yield waited
        finally:
            self._release(waiter)
            self._dispatch()

    # -- inside the loop thread ------------------------------------------------------------------

    def _fits(self, tokens: float) -> bool:
        if self._count >= self.limit:
            return False
        capacity = self.capacity
        if capacity is not None:
            return self._count == 0 or self._tokens + tokens <= capacity
        if self.mode == "auto" and tokens >= LONG_PROMPT_TOKENS:
            # speed unknown: long prompts one at a time, and none beside the first requests until one answers
            return self._long == 0 and (self._count == 0 or self.speed.answers > 0)
        return True

    def _sizing(self) -> bool:
        """The ``auto`` budget before the server's speed is known."""
        return self.mode == "auto" and self.speed.tokens_per_s is None

    def _shortest_first(self) -> None:
        """Before the first answer, when a long prompt heads the queue, the shortest of the next few waiting goes
        first: it answers soonest and its answer sizes the rest. (Only the next few: a run queues every request at
        once, and a scan of thousands on each arrival would cost seconds.)"""
        if len(self._queue) < 2 or self.speed.answers or not self._sizing():
            return
        if self._queue[0].tokens < LONG_PROMPT_TOKENS:
            return
        shortest = min(itertools.islice(self._queue, SHORTEST_OF), key=operator.attrgetter("tokens"))
        if shortest is not self._queue[0]:
            self._queue.remove(shortest)
            self._queue.appendleft(shortest)
            shortest.moved = True

    def _start(self, waiter: _Waiter) -> None:
        """``waiter``, already out of the queue, is admitted; unless its request was cancelled while it waited (a
        Ctrl-C cancels the future at once, its handler runs a step later): then it is only dropped, since setting
        a cancelled future's result would raise in the request whose release is admitting it."""
        if waiter.ready.done():
            return
        self._count += 1
        self._tokens += waiter.tokens
        self._long += waiter.tokens >= LONG_PROMPT_TOKENS
        waiter.ready.set_result(None)

    def _release(self, waiter: _Waiter) -> None:
        self._count -= 1
        # nothing in flight is exactly 0 tokens (float sums of estimates drift)
        self._tokens = max(0.0, self._tokens - waiter.tokens) if self._count else 0.0
        self._long -= waiter.tokens >= LONG_PROMPT_TOKENS

    def _dispatch(self) -> None:
        """Admit the head while it fits; then, unless it has waited half a timeout, later ones that fit."""
        self._shortest_first()
        while self._queue and self._fits(self._queue[0].tokens):
            waiter = self._queue.popleft()
            self.stats.passed += waiter.moved
            self._start(waiter)
            self._shortest_first()
        if not self._queue or self._count >= self.limit:
            return
        head = self._queue[0]
        head.held = True
        if asyncio.get_running_loop().time() - head.since >= self.timeout_s * TIMEOUT_SHARE:
            return  # the head has been passed long enough: the rest wait behind it
        for waiter in list(self._queue)[1:]:
            if self._count >= self.limit:
                break
            if self._fits(waiter.tokens):
                self.stats.passed += 1
                self._queue.remove(waiter)
                self._start(waiter)
            else:
                waiter.held = True

    def _note(self, waiter: _Waiter, waited: float) -> None:
        stats = self.stats
        stats.largest_tokens = max(stats.largest_tokens, waiter.tokens)
        if waiter.held:
            stats.held += 1
            stats.longest_wait_s = max(stats.longest_wait_s, waited)

    def describe(self) -> dict[str, Any]:
        """For metrics.json's ``run.live.prompt_budget``."""
        capacity = self.capacity
        speed = self.speed.tokens_per_s
        return {
            "mode": "off" if self.mode is None else self.mode,
            "tokens_in_flight_limit": round(capacity) if capacity is not None else None,
            "prompt_tokens_per_s": round(speed, 1) if speed is not None else None,
            "chars_per_token": round(self.speed.chars_per_token, 2),
            "held": self.stats.held,
            "passed_ahead": self.stats.passed,
            "longest_wait_s": round(self.stats.longest_wait_s, 3),
            "largest_prompt_tokens": round(self.stats.largest_tokens),
            "stretched_attempts": self.stats.stretched,
            "longest_attempt_timeout_s": round(self.stats.longest_attempt_s, 1) if self.stats.stretched else None,
        }
