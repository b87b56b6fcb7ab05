"""SIGTERM stops a benchmark run the way Ctrl-C does.

CI runners, container stops and ``timeout`` send SIGTERM, whose default ends the process on the spot: no
partial report, nothing said about how to finish. Raised as KeyboardInterrupt instead, it goes through
pytest's own interrupt path: requests in flight are cancelled, every answer received stays in the journal,
the partial run directory is written, the embedded server is stopped, the exit code is 2, and a rerun with
``--extractbench-resume`` asks only what is missing. A second SIGTERM ends the process at once.
"""

from __future__ import annotations

import signal
import threading
from types import FrameType
from typing import Any


class TerminateAsInterrupt:
    """Installs the SIGTERM handler for the session (controller, main thread), and restores the old one."""

    def __init__(self) -> None:
        self._installed = False

    def install(self) -> None:
        # a handler someone else installed (a test harness, a supervisor library) is theirs: leave it
        if (
            threading.current_thread() is not threading.main_thread()
            or signal.getsignal(signal.SIGTERM) != signal.SIG_DFL
        ):
            return
        signal.signal(signal.SIGTERM, _interrupt)
        self._installed = True

    def uninstall(self) -> None:
        if self._installed and signal.getsignal(signal.SIGTERM) is _interrupt:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
        self._installed = False


def _interrupt(signum: int, frame: FrameType | None) -> Any:
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # asked twice: stop now
    raise KeyboardInterrupt("SIGTERM")
