"""A wall-clock budget for scoring one sample, that stops the work when it is spent.

Two mechanisms, so that an overrun is not just labelled but ended:

- cooperative: the scoring loops call :func:`check` (one clock read) and give up with
  :class:`ScoringTimeout` once the item's budget is spent;
- enforced: a watchdog thread raises :class:`ScoringTimeout` inside the scoring thread when its
  deadline passes (CPython's ``PyThreadState_SetAsyncExc``: the exception arrives at the next bytecode),
  and again every :data:`REPEAT_S` while that thread is still in its budget block. This stops work that
  never calls :func:`check`: a validator's quadratic loop, a custom comparator, a library that swallows
  ``Exception``. :class:`ScoringTimeout` is a ``BaseException`` for the same reason. A single long C call
  (a regex match, bounded by the regex engine itself, see :mod:`.schema`) ends before it arrives.

The caller turns it into the sample's ``scoring_error``; the run goes on.
"""

from __future__ import annotations

import ctypes
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

ITEM_BUDGET_S = 60.0
"""Wall-clock budget for scoring one pytest item (read at each item, so a test can lower it)."""

_deadline: ContextVar[float | None] = ContextVar("extractbench_scoring_deadline", default=None)
_clock = time.monotonic


REPEAT_S = 0.5
"""How often the watchdog raises again in a thread still scoring past its deadline (one raise can be caught)."""


class ScoringTimeout(BaseException):
    """Scoring one sample took longer than its budget (a ``BaseException``: ``except Exception`` in a library
    or a plugin must not swallow it and go on)."""


class _Watchdog:
    """One daemon thread that raises :class:`ScoringTimeout` in every thread whose scoring deadline passed."""

    def __init__(self) -> None:
        # Scoring threads take the lock itself, never the Condition: a raise can arrive in a scoring thread at any
        # bytecode, and one arriving inside Condition.__enter__ (Python code, after its lock was taken) left the
        # lock held by that thread for good, the watchdog stuck waiting for it and every other thread's budget
        # block waiting to start. ``with`` on the C lock takes it and arms its release in one instruction.
        self._lock = threading.RLock()
        self._wake = threading.Condition(self._lock)
        self._blocks: dict[int, list[float | int | bool]] = {}  # token -> [thread id, next raise at, raised]
        self._next_token = 0
        self._waiting_until = float("inf")
        self._thread: threading.Thread | None = None

    def token(self) -> int:
        """A new block's token, given before the block is watched: the caller holds it before a raise can come."""
        with self._lock:
            self._next_token += 1
            return self._next_token

    def enter(self, token: int, deadline: float) -> None:
        with self._lock:
            self._blocks[token] = [threading.get_ident(), deadline, False]
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="extractbench-scoring-watchdog", daemon=True)
                self._thread.start()
            elif deadline < self._waiting_until:  # the usual case (same budget, later deadline) wakes nobody
                self._wake.notify()

    def leave(self, token: int) -> None:
        """End the block for good (call until it returns: a raise may arrive while leaving)."""
        with self._lock:
            block = self._blocks.pop(token, None)
            if block is not None and block[2]:  # a raise the thread has not met yet must not surface after the block
                _raise_in(int(block[0]), None)

    def _run(self) -> None:
        with self._wake:
            while True:
                now = _clock()
                for block in self._blocks.values():
                    if block[1] <= now:
                        _raise_in(int(block[0]), ScoringTimeout)
                        block[1], block[2] = now + REPEAT_S, True
                self._waiting_until = min((float(b[1]) for b in self._blocks.values()), default=float("inf"))
                self._wake.wait(None if self._waiting_until == float("inf") else max(0.0, self._waiting_until - now))


def _raise_in(thread_id: int, exc: type[BaseException] | None) -> None:
    """Raise ``exc`` in the thread at its next bytecode (None: cancel a raise not yet met)."""
    set_async_exc = getattr(getattr(ctypes, "pythonapi", None), "PyThreadState_SetAsyncExc", None)
    if set_async_exc is not None:  # CPython; elsewhere the cooperative checks alone stop the work
        set_async_exc(ctypes.c_ulong(thread_id), None if exc is None else ctypes.py_object(exc))


_watchdog = _Watchdog()


@contextmanager
def time_budget(seconds: float | None) -> Iterator[None]:
    """Scoring inside this block raises :class:`ScoringTimeout` after ``seconds`` (None: no limit), whether or
    not it calls :func:`check`."""
    deadline = None if seconds is None else _clock() + seconds
    token = _deadline.set(deadline)
    # The block is watched only inside the try: a deadline already passed can bring the watchdog's raise before
    # the next statement, and a block watched but never left would get a raise every REPEAT_S for good.
    watch = None if deadline is None else (_watchdog.token(), deadline)
    try:
        if watch is not None:
            _watchdog.enter(*watch)
        yield
    finally:
        while watch is not None:
            try:
                _watchdog.leave(watch[0])
                watch = None
            except ScoringTimeout:  # raised just as the block ends: it ends anyway
                pass
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
