"""The quiet-run line: when no item has finished for ``--extractbench-heartbeat`` seconds, say what is in flight.

pytest prints nothing while an item waits, and a long prompt on a small CPU can keep every item waiting for many
minutes. A watcher thread on the controller prints one line per quiet period (what the line says: live/inflight.py),
until an item finishes again.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Generator
from typing import TYPE_CHECKING

import pytest

from ..core import textsafe

if TYPE_CHECKING:
    from .session import BenchSession

#: How often the watcher looks at the clock.
TICK_S = 0.25


class QuietRunWatch:
    def __init__(self, config: pytest.Config, bench: BenchSession, every_s: float) -> None:
        self.config = config
        self.bench = bench
        self.every_s = every_s
        self.done = 0
        self.total = 0
        self._last = time.monotonic()  # an item finished, the run started, or a line was printed
        self._quiet_since = self._last  # an item finished, or the run started
        self._stop = threading.Event()

    @pytest.hookimpl(wrapper=True)
    def pytest_runtestloop(self, session: pytest.Session) -> Generator[None, object, object]:
        self.total = session.testscollected
        self._last = self._quiet_since = time.monotonic()
        watcher = threading.Thread(target=self._watch, name="extractbench-quiet-run", daemon=True)
        watcher.start()
        try:
            return (yield)
        finally:
            self._stop.set()
            watcher.join(timeout=5)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "teardown":
            self.done += 1
            self._last = self._quiet_since = time.monotonic()

    def _watch(self) -> None:
        while not self._stop.wait(TICK_S):
            now = time.monotonic()
            if now - self._last < self.every_s:
                continue
            self._last = now
            try:
                line = self.bench.context.live.quiet_line(now - self._quiet_since, self.done, self.total)
            except Exception as exc:  # noqa: BLE001 - the line informs; the run must not stop for it
                line = f"extractbench: no item finished for {now - self._quiet_since:.0f}s ({type(exc).__name__})"
            if not self._stop.is_set():
                self._write(line)

    def _write(self, line: str) -> None:
        writer = self.config.pluginmanager.get_plugin("terminalreporter")
        if writer is None:
            return
        # the main thread is inside an item, where pytest captures output: step outside it, as pytest's own live
        # logging does from any thread (the item waits on its answer and prints nothing meanwhile)
        capture = self.config.pluginmanager.get_plugin("capturemanager")
        with capture.global_and_fixture_disabled() if capture is not None else contextlib.nullcontext():
            if getattr(getattr(writer, "_tw", None), "width_of_current_line", 0):
                writer.write("\n")  # after a row of progress dots
            writer.write_line(textsafe.terminal(line, textsafe.LINE_LIMIT))
