"""Keeps pytest's FAILURES section short and linear when thousands of samples fail.

For every failed report pytest's terminal reporter prints a section and scans all other reports for teardown
output, so the summary grows with failures x reports: 9,000 failed samples of 10,000 took minutes. Past the
limit, sample failures are held out of the reporter's ``failed`` list while it prints that section and put back
right after, so the ``FAILED`` lines of the short summary, the counts and the exit code still see every one.
Failures of other tests are never held; every sample's result is in the run's files.
"""

from __future__ import annotations

from typing import Any

import pytest

from ..core.files import SAMPLES_FILE


class FailureDetails:
    """Registered on the controller of a benchmark run (the terminal reporter lives there)."""

    def __init__(self, limit: int, run_dir: Any) -> None:
        self.limit = limit
        self.run_dir = run_dir
        self.all_failed: list[Any] | None = None  # pytest's own list, while a shorter one stands in for it
        self.held = 0

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_terminal_summary(self, terminalreporter: Any) -> Any:
        # outermost wrapper: runs before the reporter's own wrapper prints the FAILURES section
        self._hold(terminalreporter)
        try:
            return (yield)
        finally:
            self._put_back(terminalreporter)  # only if the plain hook below did not run

    @pytest.hookimpl(specname="pytest_terminal_summary", tryfirst=True)
    def pytest_terminal_summary_after_failures(self, terminalreporter: Any) -> None:
        # (pytest registers only methods named pytest_*; specname binds this one to the hook)
        # plain hooks run after every wrapper's first half, so the FAILURES section is printed by now and the
        # short summary (printed in the reporter's second half) sees every failure again
        if self._put_back(terminalreporter):
            terminalreporter.write_line(
                f"... {self.held} more failed samples not detailed here; each one's fields, output and reason are in "
                f"{self.run_dir / SAMPLES_FILE} (--extractbench-failure-details N details more)")

    def _hold(self, reporter: Any) -> None:
        failed = reporter.stats.get("failed")
        if not failed or reporter.config.option.tbstyle == "no":
            return
        shown, samples = [], 0
        for report in failed:
            if getattr(report, "extractbench", None) is not None:
                samples += 1
                if samples > self.limit:
                    continue
            shown.append(report)
        if len(shown) < len(failed):
            self.all_failed, self.held = failed, len(failed) - len(shown)
            reporter.stats["failed"] = shown

    def _put_back(self, reporter: Any) -> bool:
        if self.all_failed is None:
            return False
        reporter.stats["failed"], self.all_failed = self.all_failed, None
        return True
