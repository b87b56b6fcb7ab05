"""A wall-clock budget for scoring one sample, checked cooperatively.

Python cannot stop a running function from outside, so the scoring loops call :func:`check`
(cheap: one clock read) and give up with :class:`ScoringTimeout` once the item's budget is spent.
The caller turns that into the sample's ``scoring_error``; the run goes on. Regex work, the one
step that cannot call back, is bounded by the regex engine itself (see :mod:`.schema`).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

ITEM_BUDGET_S = 60.0
"""Wall-clock budget for scoring one pytest item (read at each item, so a test can lower it)."""

_deadline: ContextVar[float | None] = ContextVar("extractbench_scoring_deadline", default=None)
_clock = time.monotonic


class ScoringTimeout(Exception):
    """Scoring one sample took longer than its budget."""


@contextmanager
def time_budget(seconds: float | None) -> Iterator[None]:
    """Scoring inside this block raises :class:`ScoringTimeout` after ``seconds`` (None: no limit)."""
    token = _deadline.set(None if seconds is None else _clock() + seconds)
    try:
        yield
    finally:
        _deadline.reset(token)


def check() -> None:
    """Raise :class:`ScoringTimeout` when the current budget is spent."""
    deadline = _deadline.get()
    if deadline is not None and _clock() > deadline:
        raise ScoringTimeout("scoring took longer than its time budget")


def failure_reason(exc: BaseException) -> str:
    """One line saying why scoring a sample failed (for its ``scoring_error``)."""
    if isinstance(exc, ScoringTimeout):
        return f"scoring took longer than {ITEM_BUDGET_S:g} s"
    if isinstance(exc, RecursionError):
        return "the output is nested too deeply to score"
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text if len(text) <= 300 else text[:299] + '…'}"
