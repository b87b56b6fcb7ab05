"""Exit codes that mean what they say (every row of docs/reference/exit-codes.md), -x counting items, node ids that
rerun their item, and the samples' markers in ``pytest --markers``. Real pytester runs on predictions files."""

from __future__ import annotations

import json
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

FLAT = {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}}, "required": ["name"]}
SAMPLES = [
    {
        "id": f"s{n}",
        "topic": "medical" if n % 2 else "retail",
        "text": f"P{n}, {n}.",
        "schema": FLAT,
        "expected": {"name": f"P{n}", "age": n},
    }
    for n in range(4)
]
PERFECT = [{"id": s["id"], "output": s["expected"]} for s in SAMPLES]
ONE_BROKEN = [p if p["id"] != "s1" else {"id": "s1", "output": "not json"} for p in PERFECT]
TWO_BROKEN = [
    p if p["id"] not in ("s1", "s2") else {"id": p["id"], "output": "{}" if p["id"] == "s2" else "no"} for p in PERFECT
]


def write_jsonl(path: Path, rows: list) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


@pytest.fixture
def data(pytester: pytest.Pytester) -> Path:
    write_jsonl(pytester.path / "data.jsonl", SAMPLES)
    return pytester.path / "data.jsonl"


def run(pytester: pytest.Pytester, predictions: list, *args: str, out: str = "out") -> pytest.RunResult:
    write_jsonl(pytester.path / "preds.jsonl", predictions)
    shutil.rmtree(pytester.path / out, ignore_errors=True)
    return pytester.runpytest(
        "-p",
        "no:randomly",
        "--extractbench",
        "--extractbench-dataset",
        "data.jsonl",
        "--extractbench-predictions",
        "preds.jsonl",
        "--extractbench-output",
        out,
        *args,
    )


def closing(result: pytest.RunResult) -> list[str]:
    return [line for line in result.stdout.lines if re.match(r"exit code \d+: ", line)]


# -- the exit codes table, row by row --------------------------------------------------------------


def test_0_every_item_passed_and_every_gate_held(pytester: pytest.Pytester, data: Path) -> None:
    result = run(pytester, PERFECT)
    assert result.ret == pytest.ExitCode.OK and closing(result) == []


def test_1_items_failed_names_them_by_class_even_without_a_gate(pytester: pytest.Pytester, data: Path) -> None:
    result = run(pytester, TWO_BROKEN, "--extractbench-sla", "none")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert closing(result) == ["exit code 1: 2 item(s) failed (1 parse_failure, 1 schema_failure)"]


def test_1_a_gate_failed(pytester: pytest.Pytester, data: Path) -> None:
    result = run(pytester, ONE_BROKEN, "--extractbench-sla", "excellence")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert closing(result) == ["exit code 1: 1 item(s) failed (1 parse_failure); a gate failed (listed above)"]


def test_0_report_only_reports_failed_items_without_failing(pytester: pytest.Pytester, data: Path) -> None:
    result = run(pytester, TWO_BROKEN, "--extractbench-sla", "none", "--extractbench-report-only")
    assert result.ret == pytest.ExitCode.OK
    result.assert_outcomes(passed=2, failed=2)  # the items still say what failed
    assert closing(result) == [
        "exit code 0: report-only run (--extractbench-report-only): 2 item(s) failed "
        "(1 parse_failure, 1 schema_failure); every gate asked for held"
    ]


def test_1_report_only_still_fails_on_a_gate_asked_for(pytester: pytest.Pytester, data: Path) -> None:
    result = run(pytester, ONE_BROKEN, "--extractbench-sla", "excellence", "--extractbench-report-only")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert closing(result) == ["exit code 1: a gate failed (listed above)"]


# answers slowly, logging each call, so that Ctrl-C lands mid-run
SLOW_EXTRACTOR = """
import os, time

def extract(sample):
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "calls.log"), "a") as log:
        log.write(sample.id + "\\n")
    time.sleep(0.5)
    return {"name": "P" + sample.id[1:], "age": int(sample.id[1:])}
"""


@pytest.mark.slow
def test_2_interrupted_by_ctrl_c(pytester: pytest.Pytester) -> None:
    write_jsonl(pytester.path / "data.jsonl", [dict(SAMPLES[0], id=f"s{n}") for n in range(20)])
    (pytester.path / "slowx.py").write_text(SLOW_EXTRACTOR, encoding="utf-8")
    calls = pytester.path / "calls.log"
    with (pytester.path / "terminal.txt").open("w") as sink:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "pytest",
                "-p",
                "no:randomly",
                "-p",
                "no:cacheprovider",
                "--extractbench",
                "--extractbench-dataset",
                "data.jsonl",
                "--extractbench-output",
                "out",
                "--extractbench-extractor",
                "slowx:extract",
                "--extractbench-concurrency",
                "1",
            ],
            cwd=pytester.path,
            stdout=sink,
            stderr=subprocess.STDOUT,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        try:
            deadline = time.monotonic() + 120
            while not (calls.exists() and len(calls.read_text().split()) >= 2):
                assert proc.poll() is None and time.monotonic() < deadline, (pytester.path / "terminal.txt").read_text()
                time.sleep(0.05)
            proc.send_signal(signal.SIGINT)
            code = proc.wait(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    text = (pytester.path / "terminal.txt").read_text()
    assert code == pytest.ExitCode.INTERRUPTED, text
    assert "KeyboardInterrupt" in text  # pytest's own line
    assert len(calls.read_text().split()) < 20  # it stopped: the remaining samples were never asked
    # the closing line says why the exit code is not 0, whatever the gate said of the samples scored before
    assert [line for line in text.splitlines() if re.match(r"exit code \d+: ", line)] == [
        "exit code 2: interrupted before every item ran"
    ], text


@pytest.mark.slow
def test_4_a_usage_error_stops_before_any_item(pytester: pytest.Pytester, data: Path) -> None:
    result = run(pytester, PERFECT, "--extractbench-dataset", "missing.jsonl")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "passed" not in result.stdout.str()


def test_5_no_item_selected(pytester: pytest.Pytester, data: Path) -> None:
    assert run(pytester, PERFECT, "-k", "no-such-sample").ret == pytest.ExitCode.NO_TESTS_COLLECTED


# -- -x counts items, not gates --------------------------------------------------------------------


def test_x_stops_after_one_failed_item_and_says_one(pytester: pytest.Pytester, data: Path) -> None:
    result = run(pytester, ONE_BROKEN, "-x", "--extractbench-sla", "excellence")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert "stopping after 1 failures" in result.stdout.str()
    assert "stopping after 2 failures" not in result.stdout.str()


# -- node ids and markers --------------------------------------------------------------------------


@pytest.mark.slow
def test_the_node_id_of_a_failed_line_reruns_that_item(pytester: pytest.Pytester, data: Path) -> None:
    first = run(pytester, TWO_BROKEN, "--extractbench-sla", "none")
    failed = sorted(
        re.match(r"FAILED (\S+)", line).group(1) for line in first.stdout.lines if line.startswith("FAILED ")
    )
    assert failed == ["data.jsonl::extractbench[predictions-s1]", "data.jsonl::extractbench[predictions-s2]"]
    again = run(pytester, TWO_BROKEN, "--extractbench-sla", "none", failed[0], "-v", out="again")
    again.assert_outcomes(failed=1)
    assert [line for line in again.stdout.lines if "::extractbench[" in line and "FAILED" in line][0].startswith(
        f"{failed[0]} FAILED"
    )
    assert "1 failed, 3 deselected" in again.stdout.str()
    unknown = run(pytester, PERFECT, "data.jsonl::extractbench[predictions-nope]", out="third")
    assert unknown.ret == pytest.ExitCode.USAGE_ERROR
    assert "no item 'data.jsonl::extractbench[predictions-nope]' in this run" in unknown.stderr.str()


def test_topic_and_complexity_markers_are_listed_by_pytest_markers(pytester: pytest.Pytester, data: Path) -> None:
    result = pytester.runpytest("--markers", "--extractbench", "--extractbench-dataset", "data.jsonl")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(
        [
            "@pytest.mark.medical: extractbench samples of one topic",
            "@pytest.mark.retail: extractbench samples of one topic",
            "@pytest.mark.simple: extractbench samples of one schema complexity bin",
        ],
        consecutive=False,
    )
    plain = pytester.runpytest("--markers")
    assert "@pytest.mark.medical" not in plain.stdout.str()
