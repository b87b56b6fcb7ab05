"""Keeps pytest's FAILURES section and short summary short and linear when thousands of samples fail.

For every failed report pytest's terminal reporter prints a section and scans all other reports for teardown
output, so the summary grows with failures x reports: 9,000 failed samples of 10,000 took minutes; and its short
summary prints a ``FAILED`` line per failure: 5,000 lines for 5,000 failed samples. Past the limit, sample
failures are held out of the reporter's ``failed`` list while it prints both, one line each saying how many
were left out and where they are, and put back right after, so the counts, the exit code and JUnit still see
every one. Failures of other tests are never held; every sample's result is in the run's files.
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
        # outermost wrapper: holds before the reporter's own wrapper prints the FAILURES section, and puts back
        # after its second half printed the short summary, before the counts are printed
        self._hold(terminalreporter)
        try:
            return (yield)
        finally:
            listed = "f" in getattr(terminalreporter, "reportchars", "f").lower()  # -rN lists no failure
            if self.all_failed is not None and listed and not getattr(terminalreporter, "no_summary", False):
                terminalreporter.write_line(
                    f"... {self.held:,} more failed samples not listed here (each is in {self.run_dir / SAMPLES_FILE} "
                    "and the JUnit XML; --extractbench-failure-details N lists more)"
                )
            self._put_back(terminalreporter)

    @pytest.hookimpl(specname="pytest_terminal_summary", tryfirst=True)
    def pytest_terminal_summary_after_failures(self, terminalreporter: Any) -> None:
        # (pytest registers only methods named pytest_*; specname binds this one to the hook)
        # plain hooks run after every wrapper's first half: the FAILURES section is printed by now
        if self.all_failed is not None and terminalreporter.config.option.tbstyle != "no":
            terminalreporter.write_line(
                f"... {self.held:,} more failed samples not detailed here; each one's fields, output and reason are in "
                f"{self.run_dir / SAMPLES_FILE} (--extractbench-failure-details N details more)"
            )

    def _hold(self, reporter: Any) -> None:
        failed = reporter.stats.get("failed")
        if not failed:
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
