"""A run where nothing finishes for a while says what is in flight (--extractbench-heartbeat), against a real slow
server on loopback and a slow Python extractor; every sample is still scored, and no line is printed when the
option is 0 or pytest is quiet."""

from __future__ import annotations

import re
from typing import Any

import pytest
from benchrun import BenchRun
from faultserver import Fault, FaultServer

pytestmark = pytest.mark.slow  # each run waits on answers that take a second (the parts: tests/unit/test_inflight.py)

SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
ROWS = [{"id": f"s{n}", "text": f"Name: P{n}", "schema": SCHEMA, "expected": {"name": f"P{n}"}} for n in range(3)]


def _right_name(body: dict[str, Any]) -> dict[str, str]:
    text = " ".join(str(m.get("content")) for m in body["messages"] if m.get("role") == "user")
    found = re.search(r"Name: (P\d)", text)
    return {"name": found.group(1) if found else "?"}


QUIET = re.compile(
    r"extractbench: no item finished for ([\d.]+)s \((\d)/3 done\); (\d) requests? sent \(oldest ([\d.]+)s\)"
)


def _quiet_lines(result: pytest.RunResult) -> list[re.Match[str]]:
    return [m for line in result.outlines if (m := QUIET.search(line))]


def test_a_slow_server_gets_a_line_while_its_requests_are_out(run: BenchRun, fault_server: FaultServer) -> None:
    fault_server.default, fault_server.answer = Fault.slow(1.6), _right_name
    args = (
        "--extractbench-base-url",
        fault_server.url,
        "--model",
        "test-model",
        "--extractbench-sla",
        "none",
        "--extractbench-concurrency",
        "1",
        "--extractbench-timeout",
        "30",
    )
    # in its own process: there pytest captures what is written while an item runs, as in a user's run
    result = run(
        "--extractbench-dataset",
        "data.jsonl",
        *args,
        "--extractbench-heartbeat",
        "0.5",
        files={"data.jsonl": ROWS},
        subprocess=True,
    )
    result.assert_outcomes(passed=3)
    lines = _quiet_lines(result)
    assert lines, result.stdout.str()
    for match in lines:
        quiet_s, oldest_s = float(match[1]), float(match[4])
        done, sent = int(match[2]), int(match[3])
        assert sent == 1  # one request at a time; the others wait (they may have been sent already)
        assert 0 <= done <= 2 and oldest_s <= quiet_s + 1.0
    assert len(run.records()) == 3


def test_no_line_when_the_option_is_0_or_pytest_is_quiet(run: BenchRun, fault_server: FaultServer) -> None:
    fault_server.default, fault_server.answer = Fault.slow(1.0), _right_name
    args = (
        "--extractbench-dataset",
        "data.jsonl",
        "--extractbench-base-url",
        fault_server.url,
        "--model",
        "test-model",
        "--extractbench-sla",
        "none",
        "--extractbench-concurrency",
        "1",
    )
    off = run(*args, "--extractbench-heartbeat", "0", files={"data.jsonl": ROWS})
    quiet = run(*args, "--extractbench-heartbeat", "0.3", "-q", out="quiet")
    for result in (off, quiet):
        assert not _quiet_lines(result) and "no item finished" not in result.stdout.str()
        result.assert_outcomes(passed=3)


def test_a_slow_extractor_gets_the_line_too(run: BenchRun, pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        slowextract="import time\n\ndef extract(sample):\n    time.sleep(1.2)\n    return {'name': sample.text.split()[-1]}\n"
    )
    result = run(
        "--extractbench-dataset",
        "data.jsonl",
        "--extractbench-extractor",
        "slowextract:extract",
        "--extractbench-concurrency",
        "1",
        "--extractbench-sla",
        "none",
        "--extractbench-heartbeat",
        "0.4",
        files={"data.jsonl": ROWS},
    )
    result.assert_outcomes(passed=3)
    assert _quiet_lines(result), result.stdout.str()
