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
