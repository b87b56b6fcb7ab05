"""The scoring time budget and its watchdog, step by step and without waiting on the wall clock.

The watchdog's loop runs here in the test's own thread, on a clock the test sets and a stand-in for its
Condition whose ``wait`` records the timeout asked for and then ends the loop; the raises it would send are
recorded instead of sent. So every branch is reached in a fixed order, and no assertion depends on timing.
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Callable, Iterator
from types import SimpleNamespace
from typing import Any

import pytest

from pytest_extractbench.scoring import budget
from pytest_extractbench.scoring.budget import ScoringTimeout


class _LoopEnded(Exception):
    """Raised by the stand-in Condition to leave the watchdog's endless loop."""


class _Wake:
    """A Condition stand-in: records each ``wait`` timeout and ``notify``; ends the loop after ``waits`` waits."""

    def __init__(self, waits: int = 1) -> None:
        self.timeouts: list[float | None] = []
        self.notified = 0
        self._waits = waits

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None

    def wait(self, timeout: float | None = None) -> bool:
        self.timeouts.append(timeout)
        if len(self.timeouts) >= self._waits:
            raise _LoopEnded
        return False

    def notify(self) -> None:
        self.notified += 1


def _clock_of(*times: float) -> Callable[[], float]:
    """A clock that reads ``times`` in turn, then fails: a loop that stops waiting cannot spin for ever."""
    readings = iter(times)

    def clock() -> float:
        try:
            return next(readings)
        except StopIteration:
            raise _LoopEnded from None

    return clock


@pytest.fixture
def raised(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, type[BaseException] | None]]:
    """Every raise the watchdog sends, as (thread id, exception) instead of an actual raise."""
    sent: list[tuple[int, type[BaseException] | None]] = []
    monkeypatch.setattr(budget, "_raise_in", lambda thread_id, exc: sent.append((thread_id, exc)))
    return sent


def _run_loop(watchdog: budget._Watchdog, wake: _Wake) -> None:
    watchdog._wake = wake  # type: ignore[assignment]
    with pytest.raises(_LoopEnded):
        watchdog._run()


# --- the watchdog's loop ---


def test_the_loop_raises_in_every_block_whose_deadline_is_due_and_waits_for_the_next(
    monkeypatch: pytest.MonkeyPatch, raised: list[tuple[int, type[BaseException] | None]]
) -> None:
    watchdog = budget._Watchdog()
    # thread ids kept far from the deadlines, so reading one for the other shows
    watchdog._blocks = {1: [7001, 100.0, False], 2: [7002, 99.0, False], 3: [7003, 100.2, False]}
    monkeypatch.setattr(budget, "_clock", _clock_of(100.0))
    wake = _Wake()
    _run_loop(watchdog, wake)
    # at 100.0: block 1 is due exactly (100.0 <= 100.0), block 2 is past due, block 3 is not due (100.2 > 100.0)
    assert raised == [(7001, ScoringTimeout), (7002, ScoringTimeout)]
    # the due blocks raise again REPEAT_S = 0.5 later: 100.0 + 0.5, and are marked as raised in
    assert watchdog._blocks == {1: [7001, 100.5, True], 2: [7002, 100.5, True], 3: [7003, 100.2, False]}
    # the next due time is min(100.5, 100.5, 100.2) = 100.2, 0.2 s from now
    assert watchdog._waiting_until == 100.2
    assert wake.timeouts == [pytest.approx(0.2)]


def test_a_thread_still_in_its_block_is_raised_in_again_every_repeat(
    monkeypatch: pytest.MonkeyPatch, raised: list[tuple[int, type[BaseException] | None]]
) -> None:
    watchdog = budget._Watchdog()
    watchdog._blocks = {1: [7001, 10.0, False]}
    monkeypatch.setattr(budget, "_clock", _clock_of(10.0, 10.25, 10.5))
    wake = _Wake(waits=3)
    _run_loop(watchdog, wake)
    # 10.0: due, raise, next at 10.5, wait 0.5; 10.25: not due, wait 10.5 - 10.25 = 0.25; 10.5: due again, raise,
    # next at 11.0, wait 0.5
    assert raised == [(7001, ScoringTimeout), (7001, ScoringTimeout)]
    assert watchdog._blocks == {1: [7001, 11.0, True]}
    assert wake.timeouts == [0.5, 0.25, 0.5]


def test_a_wait_past_its_due_time_asks_for_no_time_rather_than_a_negative_one(
    monkeypatch: pytest.MonkeyPatch, raised: list[tuple[int, type[BaseException] | None]]
) -> None:
    watchdog = budget._Watchdog()
    monkeypatch.setattr(budget, "REPEAT_S", -0.25)  # the next raise lands before now: its wait is max(0.0, -0.25)
    watchdog._blocks = {1: [7001, 4.0, False]}
    monkeypatch.setattr(budget, "_clock", _clock_of(4.0))
    wake = _Wake()
    _run_loop(watchdog, wake)
    assert raised == [(7001, ScoringTimeout)]
    assert watchdog._waiting_until == 3.75  # 4.0 - 0.25
    assert wake.timeouts == [0.0]


def test_with_no_block_the_loop_waits_until_woken(
    monkeypatch: pytest.MonkeyPatch, raised: list[tuple[int, type[BaseException] | None]]
) -> None:
    watchdog = budget._Watchdog()
    monkeypatch.setattr(budget, "_clock", _clock_of(5.0))
    wake = _Wake()
    _run_loop(watchdog, wake)
    assert raised == []
    assert watchdog._waiting_until == float("inf")
    assert wake.timeouts == [None]  # no timeout at all, not a zero one that would spin


# --- entering and leaving a block ---


class _Thread:
    """A threading.Thread stand-in: records how it was made and whether it was started."""

    made: list[_Thread] = []

    def __init__(self, *, target: Callable[[], None], name: str, daemon: bool) -> None:
        self.target, self.name, self.daemon = target, name, daemon
        self.started = False
        self.alive = False
        _Thread.made.append(self)

    def start(self) -> None:
        self.started = True
        self.alive = True

    def is_alive(self) -> bool:
        return self.alive


@pytest.fixture
def threads(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[_Thread]]:
    """Threads the watchdog starts, as stand-ins (budget's own ``threading`` name only: no other code sees it)."""
    _Thread.made = []
    fake = SimpleNamespace(
        Thread=_Thread, get_ident=threading.get_ident, RLock=threading.RLock, Condition=threading.Condition
    )
    monkeypatch.setattr(budget, "threading", fake)
    yield _Thread.made
    _Thread.made = []


def _enter(watchdog: budget._Watchdog, deadline: float) -> int:
    """What ``time_budget`` does: a token first, then the block watched under it."""
    token = watchdog.token()
    watchdog.enter(token, deadline)
    return token


def test_the_first_block_starts_one_daemon_watchdog_and_counts_tokens_from_one(threads: list[_Thread]) -> None:
    watchdog = budget._Watchdog()
    assert _enter(watchdog, 5.0) == 1
    assert watchdog._blocks == {1: [threading.get_ident(), 5.0, False]}  # not raised in yet
    (thread,) = threads
    assert thread.started and thread.daemon and thread.target == watchdog._run
    assert thread.name == "extractbench-scoring-watchdog"
    watchdog._waiting_until = 5.0  # what the loop would have computed
    # a later block with a later deadline: the running watchdog is neither replaced nor woken
    watchdog._wake = wake = _Wake()  # type: ignore[assignment]
    assert _enter(watchdog, 6.0) == 2
    assert _enter(watchdog, 7.0) == 3
    assert len(threads) == 1
    assert wake.notified == 0


def test_a_block_due_before_the_watchdog_wakes_wakes_it(threads: list[_Thread]) -> None:
    watchdog = budget._Watchdog()
    _enter(watchdog, 10.0)
    watchdog._waiting_until = 10.0
    watchdog._wake = wake = _Wake()  # type: ignore[assignment]
    _enter(watchdog, 10.0)  # due at the time it already wakes at: 10.0 < 10.0 is false, no wake-up needed
    assert wake.notified == 0
    _enter(watchdog, 11.0)
    assert wake.notified == 0
    _enter(watchdog, 9.5)  # 9.5 < 10.0: it must wake to wait for less
    assert wake.notified == 1
    assert len(threads) == 1


def test_a_watchdog_thread_that_died_is_replaced(threads: list[_Thread]) -> None:
    watchdog = budget._Watchdog()
    _enter(watchdog, 10.0)
    threads[0].alive = False
    watchdog._wake = wake = _Wake()  # type: ignore[assignment]
    _enter(watchdog, 3.0)  # due first, but a dead thread cannot be woken: a new one is started instead
    assert [t.started for t in threads] == [True, True]
    assert watchdog._thread is threads[1]
    assert wake.notified == 0


def test_leaving_a_block_never_raised_in_sends_nothing(raised: list[tuple[int, type[BaseException] | None]]) -> None:
    watchdog = budget._Watchdog()
    watchdog._blocks = {4: [7004, 1.0, False], 5: [7005, 2.0, True]}
    watchdog.leave(4)
    assert raised == []
    assert watchdog._blocks == {5: [7005, 2.0, True]}
    watchdog.leave(4)  # leaving again (a raise arrived while leaving): nothing left, nothing sent
    watchdog.leave(99)
    assert raised == []


def test_leaving_a_block_raised_in_cancels_the_raise_not_yet_met(
    raised: list[tuple[int, type[BaseException] | None]],
) -> None:
    watchdog = budget._Watchdog()
    watchdog._blocks = {4: [7004, 1.0, False], 5: [7005, 2.0, True]}
    watchdog.leave(5)
    assert raised == [(7005, None)]  # the thread's id, and None: cancel
    assert watchdog._blocks == {4: [7004, 1.0, False]}


# --- sending a raise ---


def _pythonapi(calls: list[tuple[Any, Any]]) -> SimpleNamespace:
    def set_async_exc(thread_id: Any, exc: Any) -> int:
        calls.append((thread_id, exc))
        return 1

    return SimpleNamespace(
        pythonapi=SimpleNamespace(PyThreadState_SetAsyncExc=set_async_exc),
        c_ulong=ctypes.c_ulong,
        py_object=ctypes.py_object,
    )


def test_a_raise_is_sent_to_the_thread_and_a_cancel_sends_null(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[Any, Any]] = []
    monkeypatch.setattr(budget, "ctypes", _pythonapi(calls))
    budget._raise_in(123456, ScoringTimeout)
    budget._raise_in(654321, None)
    (tid1, exc1), (tid2, exc2) = calls
    assert (tid1.value, exc1.value) == (123456, ScoringTimeout)
    assert tid2.value == 654321
    assert exc2 is None


def test_without_cpythons_api_nothing_is_sent_and_nothing_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(budget, "ctypes", SimpleNamespace())  # no pythonapi at all (PyPy)
    budget._raise_in(123456, ScoringTimeout)
    monkeypatch.setattr(budget, "ctypes", SimpleNamespace(pythonapi=SimpleNamespace()))  # no SetAsyncExc in it
    budget._raise_in(123456, None)


def test_a_real_raise_reaches_the_thread_at_its_next_bytecodes() -> None:
    with pytest.raises(ScoringTimeout):
        budget._raise_in(threading.get_ident(), ScoringTimeout)
        for _ in range(1_000_000):  # the raise lands within the first few iterations; the bound only ends a failure
            pass


# --- the budget block and the cooperative check ---


class _Guard:
    """A watchdog stand-in: hands out tokens and records them; ``leave`` may raise first, as a late raise does."""

    def __init__(self, raise_on_first_leave: bool = False, raise_on_enter: bool = False) -> None:
        self.given = 0
        self.entered: list[float] = []
        self.left: list[int] = []
        self._raise_first, self._raise_on_enter = raise_on_first_leave, raise_on_enter

    def token(self) -> int:
        self.given += 1
        return 40 + self.given

    def enter(self, token: int, deadline: float) -> None:
        self.entered.append(deadline)
        if self._raise_on_enter:  # the watchdog's raise for a deadline already passed, before the block's body
            raise ScoringTimeout

    def leave(self, token: int) -> None:
        assert isinstance(token, int) and 40 < token <= 40 + self.given, "left a block that was never given a token"
        assert token not in self.left, "left a block twice after leaving it"
        if self._raise_first:
            self._raise_first = False
            raise ScoringTimeout
        self.left.append(token)


def test_a_budget_sets_the_deadline_from_now_and_leaves_its_guard_once(monkeypatch: pytest.MonkeyPatch) -> None:
    guard = _Guard()
    monkeypatch.setattr(budget, "_watchdog", guard)
    monkeypatch.setattr(budget, "_clock", lambda: 100.0)
    with budget.time_budget(5.0):
        assert budget._deadline.get() == 105.0  # 100.0 + 5.0
        assert guard.entered == [105.0] and guard.left == []
    assert guard.left == [41]
    assert budget._deadline.get() is None  # the deadline before the block is back


def test_a_raise_arriving_while_leaving_is_absorbed_and_the_leave_done_again(monkeypatch: pytest.MonkeyPatch) -> None:
    guard = _Guard(raise_on_first_leave=True)
    monkeypatch.setattr(budget, "_watchdog", guard)
    monkeypatch.setattr(budget, "_clock", lambda: 0.0)
    with budget.time_budget(1.0):
        pass
    assert guard.left == [41]


def test_a_raise_arriving_as_the_block_is_watched_still_leaves_it(monkeypatch: pytest.MonkeyPatch) -> None:
    # a block left watched would be raised in every REPEAT_S for good: the leave must come whatever enter met
    guard = _Guard(raise_on_enter=True)
    monkeypatch.setattr(budget, "_watchdog", guard)
    monkeypatch.setattr(budget, "_clock", lambda: 0.0)
    with pytest.raises(ScoringTimeout), budget.time_budget(0.0):
        pytest.fail("the body ran although the raise came first")
    assert guard.entered == [0.0] and guard.left == [41]
    assert budget._deadline.get() is None


def test_no_budget_means_no_deadline_and_no_watchdog(monkeypatch: pytest.MonkeyPatch) -> None:
    guard = _Guard()
    monkeypatch.setattr(budget, "_watchdog", guard)
    monkeypatch.setattr(budget, "_clock", lambda: 1e9)
    with budget.time_budget(None):
        assert budget._deadline.get() is None
        budget.check()  # however late it is
    assert guard.entered == [] and guard.left == []


def test_a_nested_block_gives_back_the_outer_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    guard = _Guard()
    monkeypatch.setattr(budget, "_watchdog", guard)
    monkeypatch.setattr(budget, "_clock", lambda: 10.0)
    with budget.time_budget(30.0):
        with budget.time_budget(None):
            assert budget._deadline.get() is None
        assert budget._deadline.get() == 40.0  # 10.0 + 30.0
        with budget.time_budget(2.0):
            assert budget._deadline.get() == 12.0
        assert budget._deadline.get() == 40.0
    assert guard.entered == [40.0, 12.0]
    assert guard.left == [42, 41]  # inner block first


@pytest.mark.parametrize(
    ("now", "deadline", "raises"),
    [
        (10.0, 10.0, False),  # exactly at the deadline: 10.0 > 10.0 is false, still within the budget
        (10.5, 10.0, True),  # past it
        (9.0, 10.0, False),  # before it
        (10.0, float("-inf"), True),  # a deadline already passed, whatever the clock says
        (-1e300, None, False),  # no deadline
    ],
)
def test_check_raises_only_past_a_set_deadline(
    monkeypatch: pytest.MonkeyPatch, now: float, deadline: float | None, raises: bool
) -> None:
    monkeypatch.setattr(budget, "_clock", lambda: now)
    token = budget._deadline.set(deadline)
    try:
        if raises:
            with pytest.raises(ScoringTimeout, match="longer than its time budget"):
                budget.check()
        else:
            budget.check()
    finally:
        budget._deadline.reset(token)


def test_outside_every_block_check_never_raises() -> None:
    budget.check()  # the real clock, which is well past zero


# --- why scoring failed ---


def test_failure_reasons_name_the_budget_the_nesting_or_the_error() -> None:
    assert budget.failure_reason(ScoringTimeout()) == "scoring took longer than 60 s"  # ITEM_BUDGET_S = 60.0
    assert budget.failure_reason(RecursionError("deep")) == "the output is nested too deeply to score"
    assert budget.failure_reason(ValueError("a  b\n\tc ")) == "ValueError: a b c"  # whitespace runs made one space
    assert budget.failure_reason(KeyError("k")) == "KeyError: 'k'"


def test_a_long_error_message_is_cut_to_300_characters() -> None:
    exactly = "x" * 300
    assert budget.failure_reason(ValueError(exactly)) == "ValueError: " + exactly
    longer = "y" * 301
    # 299 characters and an ellipsis: 300 in all
    assert budget.failure_reason(ValueError(longer)) == "ValueError: " + "y" * 299 + "…"
