"""The scoring budget stops the work, not just labels it.

A plugin that spins for ever, swallowing ``Exception`` on the way, used to keep the session busy long after
its item was marked ``scoring_error``; the watchdog raises :class:`ScoringTimeout` (a ``BaseException``) in
the scoring thread, again and again until the block ends, and never after it.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path

import pytest

from _checks import assert_accounted
from pytest_extractbench.scoring import budget

SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}}
ROWS = [
    {"id": "a-1", "text": "Ann", "schema": SCHEMA, "expected": {"name": "Ann"}},
    {"id": "b-2", "text": "Bo", "schema": SCHEMA, "expected": {"name": "Bo"}},
]
ESCAPE_S = 60.0  # a loop that has not been stopped by then never will be: the test fails instead of hanging


def spin_swallowing_exceptions() -> None:
    """Pure Python work that never calls budget.check() and swallows every Exception."""
    give_up = time.monotonic() + ESCAPE_S
    while time.monotonic() < give_up:
        try:
            sum(range(1000))
        except Exception:  # noqa: BLE001 - what a careless plugin does
            pass
    pytest.fail("the budget did not stop the work")


@pytest.mark.slow
def test_a_spinning_plugin_is_stopped_and_the_session_goes_on(pytester: pytest.Pytester) -> None:
    pytester.makeconftest("""
        import time
        from pytest_extractbench.scoring import budget, register_post_processor

        budget.ITEM_BUDGET_S = 1.0

        def spin(fields, options):
            if any(f.expected == "Bo" for f in fields):
                give_up = time.monotonic() + 60
                while time.monotonic() < give_up:
                    try:
                        sum(range(1000))
                    except Exception:
                        pass
                raise SystemExit("never stopped")
            return fields

        register_post_processor("spin", spin, overwrite=True)
    """)
    (pytester.path / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    preds = [{"id": r["id"], "output": r["expected"]} for r in ROWS]
    (pytester.path / "preds.jsonl").write_text("".join(json.dumps(p) + "\n" for p in preds), encoding="utf-8")
    started = time.monotonic()
    result = pytester.runpytest_subprocess(
        "-p",
        "no:randomly",
        "--extractbench",
        "--extractbench-sla",
        "none",
        "--extractbench-dataset",
        "data.jsonl",
        "--extractbench-predictions",
        "preds.jsonl",
        "--extractbench-output",
        "out",
        "--extractbench-post-process",
        "spin",
        timeout=120,
    )
    elapsed = time.monotonic() - started
    text = result.stdout.str()
    result.assert_outcomes(passed=1, failed=1)
    assert "scoring took longer than 1 s" in text and "never stopped" not in text
    assert elapsed < ESCAPE_S  # stopped at the budget, not when the plugin gave up on its own
    assert_accounted(pytester.path / "out", 2)
    metrics = json.loads((Path(pytester.path) / "out" / "metrics.json").read_text())["models"]["predictions"]
    assert metrics["scoring_errors"] == ["b-2"]


def test_work_that_never_checks_is_interrupted() -> None:
    started = time.monotonic()
    with pytest.raises(budget.ScoringTimeout), budget.time_budget(0.2):
        spin_swallowing_exceptions()
    assert time.monotonic() - started < ESCAPE_S


def test_an_interruption_is_not_an_exception_a_library_can_swallow() -> None:
    assert not issubclass(budget.ScoringTimeout, Exception)


def test_no_interruption_arrives_after_the_block(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(budget, "REPEAT_S", 0.01)
    # blocks that end right around their deadline: the race between the watchdog and the end of the block
    for n in range(60):
        try:
            with budget.time_budget(0.002 * (n % 6)):
                end = time.monotonic() + 0.002 * (n % 7)
                while time.monotonic() < end:
                    pass
        except budget.ScoringTimeout:
            pass
    # outside every block: a second of pure Python work must run undisturbed
    end = time.monotonic() + 1.0
    while time.monotonic() < end:
        sum(range(100))


def test_a_block_whose_deadline_passed_before_it_began_is_left_like_any_other() -> None:
    # a budget of 0 brings the watchdog's raise at once, maybe before the block's first statement: the block must be
    # left all the same, for one left watched gets a raise every REPEAT_S for the rest of the process
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # the two threads take turns at nearly every bytecode: the race comes up
    try:
        for _ in range(3000):
            try:
                with budget.time_budget(0.0):
                    pass
            except budget.ScoringTimeout:
                pass
    finally:
        sys.setswitchinterval(interval)
    end = time.monotonic() + 2 * budget.REPEAT_S + 0.2
    while time.monotonic() < end:
        sum(range(100))


def _overrun_in_a_thread() -> tuple[threading.Thread, dict[str, object]]:
    """A started thread whose 0.2 s block overruns while swallowing what it can; ``outcome["worker"]`` is
    "stopped" once the budget has stopped it (a daemon, so a watchdog that never fires cannot hang the session)."""
    outcome: dict[str, object] = {}

    def worker() -> None:
        try:
            with budget.time_budget(0.2):
                spin_swallowing_exceptions()
        except budget.ScoringTimeout:
            outcome["worker"] = "stopped"

    thread = threading.Thread(target=worker, daemon=True)
    thread.start()
    return thread, outcome


def test_an_overrun_in_one_thread_leaves_the_others_alone() -> None:
    thread, outcome = _overrun_in_a_thread()
    with budget.time_budget(30.0):  # the main thread scores too, well within its own budget
        end = time.monotonic() + 1.0
        while time.monotonic() < end:
            sum(range(100))
    thread.join(ESCAPE_S)
    assert outcome == {"worker": "stopped"}


def test_a_block_without_a_budget_is_never_interrupted() -> None:
    with budget.time_budget(None):
        end = time.monotonic() + 0.5
        while time.monotonic() < end:
            sum(range(100))


def test_raises_arriving_while_blocks_end_leave_other_threads_their_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    # Thousands of blocks overrun by a hair, the watchdog raising again every half millisecond: some raises arrive
    # while the block is being left. One that arrived inside the watchdog's lock acquisition used to leave the lock
    # held by this thread, so the watchdog never raised again and another thread's block never started.
    monkeypatch.setattr(budget, "REPEAT_S", 0.0005)
    for _ in range(1500):
        try:
            with budget.time_budget(0.0005):
                end = time.monotonic() + 0.002
                while time.monotonic() < end:
                    sum(range(50))
        except budget.ScoringTimeout:
            pass
    monkeypatch.setattr(budget, "REPEAT_S", 0.5)
    thread, outcome = _overrun_in_a_thread()
    thread.join(ESCAPE_S)
    assert outcome == {"worker": "stopped"}
