"""The session gate as test results: each verdict becomes a report of its own, so the terminal's last line
counts it ("49 passed, 1 gate failed"), the JUnit XML holds a failing testcase with the reason, and
pytest-html lists it. Gates have their own outcome categories, so they never change the sample counts."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import pytest

from ..core import textsafe

GATE_KEY = "extractbench_gate"


def report_gates(session: pytest.Session, dataset: str, verdicts: Sequence[Any]) -> None:
    """Send each verdict through pytest_runtest_logreport as setup, call and teardown reports."""
    now = time.time()
    # --sw resumes at the last failed report: a failed gate is no place to resume from, and would hide the sample.
    # The session does not count gates either: -x/--maxfail count items ("stopping after 1 failures"), and the
    # exit code of a failed gate is set where the gate is decided (BenchSession.finish).
    manager = session.config.pluginmanager
    skipped = [plugin for plugin in (manager.get_plugin("stepwiseplugin"), session) if plugin is not None]
    logreport = manager.subset_hook_caller("pytest_runtest_logreport", skipped)
    for verdict in verdicts:
        nodeid = f"{dataset}::extractbench-gate[{textsafe.terminal(verdict.name)}]"
        location = (dataset, None, f"extractbench gate {verdict.name}")
        properties = [
            (GATE_KEY, verdict.gate),
            ("model", textsafe.terminal(verdict.model)),
            *(("extractbench_warning", textsafe.terminal(w, textsafe.LINE_LIMIT)) for w in verdict.warnings),
        ]
        for when in ("setup", "call", "teardown"):
            failed = when == "call" and not verdict.passed
            report = pytest.TestReport(
                nodeid,
                location,
                {},
                "failed" if failed else "passed",
                textsafe.text_lines(verdict.message) if failed else None,
                when,
                sections=[],
                duration=0.0,
                start=now,
                stop=now,
                user_properties=properties,
            )
            setattr(report, GATE_KEY, verdict.gate)
            logreport(report=report)


def gate_status(report: Any) -> tuple[str, str, str] | None:
    """pytest_report_teststatus for a gate's report: its own categories, so sample counts stay as they were."""
    if getattr(report, GATE_KEY, None) is None:
        return None
    if report.when != "call":
        return "", "", ""
    # no progress letter: the items' progress line is complete by now; the counts line and the summary say it
    return ("gate failed" if report.failed else "gate passed"), "", ""


def plural_gate_counts(stats: dict[str, list[Any]]) -> None:
    """pytest's counts line pluralizes only its own nouns ("2 failed" needs none): name several gates "gates"
    ("1 gate failed", "2 gates failed") before the line is written."""
    for outcome in ("failed", "passed"):
        reports = stats.get(f"gate {outcome}")
        if reports is not None and len(reports) > 1:
            stats[f"gates {outcome}"] = stats.pop(f"gate {outcome}")
