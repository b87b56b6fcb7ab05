"""Hostile outputs: --help, run directories, reports and every text sink (terminal, summary.md, logs).

Each case builds its hostile input in tmp_path and runs the real plugin (pytester, in-process or as
a subprocess), then asserts what applies: a clear message naming the path, id or check at fault,
the run completing (or refusing before any item ran), every sample asked accounted for, and no
byte a terminal would act on reaching the output.
"""

from __future__ import annotations

import json
import logging
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from faultserver import Fault, FaultServer
from hypothesis import given
from hypothesis import strategies as st

from _checks import assert_accounted, assert_clean_terminal
from pytest_extractbench.cli import COMMANDS
from pytest_extractbench.config.settings import OPTIONS
from pytest_extractbench.core import textsafe
from pytest_extractbench.core.rundir import LOCK_FILE, RunDirError, RunLock, claim_new, prepare

SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
    "required": ["name"],
}
FAST = ("-p", "no:randomly", "--extractbench-resamples", "100", "--extractbench-sla", "none")
USAGE_ERROR = 4

# What an attacker puts in a name: CSI colour, OSC window title with BEL, a one-byte C1 CSI,
# carriage return (rewrites the line), backspace, DEL, a right-to-left override.
HOSTILE = {
    "csi": "x\x1b[31mRED\x1b[0m",
    "osc-title": "x\x1b]0;pwned\x07y",
    "c1-csi": "x\x9b31my",
    "carriage-return": "ok\rFAKE PASS",
    "backspace": "ab\x08\x08XY",
    "delete": "a\x7fb",
    "bidi": "abc\u202edcba",
}


def sample(sample_id: str, n: int = 1, expected: Any = None) -> dict[str, Any]:
    return {
        "id": sample_id,
        "text": f"P{n} is {n}.",
        "schema": SCHEMA,
        "expected": expected if expected is not None else {"name": f"P{n}", "age": n},
    }


def write_jsonl(path: Path, rows: list[Any]) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


def offline(
    pytester: pytest.Pytester,
    samples: list[dict[str, Any]],
    outputs: dict[str, Any] | None = None,
    *args: str,
    out: str = "out",
    model: str | None = None,
    subprocess: bool = False,
) -> pytest.RunResult:
    """A benchmark run over ``samples`` scoring ``outputs`` (sample id -> JSON value; default: the gold)."""
    write_jsonl(pytester.path / "data.jsonl", samples)
    found = outputs if outputs is not None else {s["id"]: s["expected"] for s in samples if isinstance(s, dict)}
    rows = [{"id": i, "output": json.dumps(o), **({"model": model} if model else {})} for i, o in found.items()]
    write_jsonl(pytester.path / "preds.jsonl", rows)
    argv = [
        *FAST,
        "--extractbench",
        "--extractbench-dataset",
        "data.jsonl",
        "--extractbench-predictions",
        "preds.jsonl",
        *(("--extractbench-output", out) if out else ()),
        *args,
    ]
    return pytester.runpytest_subprocess(*argv) if subprocess else pytester.runpytest(*argv)


def terminal(result: pytest.RunResult) -> str:
    return result.stdout.str() + "\n" + result.stderr.str()


def two_samples() -> list[dict[str, Any]]:
    return [sample("s1", 1), sample("s2", 2)]


# ---------------------------------------------------------------------------------- pytest --help


@pytest.fixture(scope="module")
def help_text(tmp_path_factory: pytest.TempPathFactory) -> str:
    """``pytest --help`` in a project that has nothing to do with the plugin, the plugin installed."""
    where = tmp_path_factory.mktemp("plain-project")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--help"], cwd=where, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Traceback" not in done.stderr and "INTERNALERROR" not in done.stdout
    return done.stdout


@pytest.mark.slow  # a fresh interpreter each: the plugin as a plain `pytest` loads it
@pytest.mark.parametrize("shows", [["--help"], ["--markers"], ["--collect-only", "-q"]])
def test_showing_something_leaves_no_run_directory(tmp_path: Path, shows: list[str]) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--extractbench", *shows],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert list(tmp_path.iterdir()) == []  # no .extractbench/runs/<stamp> with a lock file in it


@pytest.mark.slow
@pytest.mark.parametrize("spec", OPTIONS, ids=lambda spec: spec.option)
def test_every_option_help_renders(help_text: str, spec: Any) -> None:
    # argparse %-formats help: a bare % (as in "field_f1_partial:-2%") used to crash every `pytest --help`
    flat = " ".join(help_text.split())
    assert spec.option in help_text
    assert " ".join(spec.help.split()) in flat, f"help of {spec.option} is not shown as written"
    assert spec.ini in help_text  # the ini mirror is listed too


def test_help_shows_a_literal_percent(help_text: str) -> None:
    flat = " ".join(help_text.split())
    assert "field_f1_partial:-2%" in flat and "%%" not in flat


@pytest.mark.slow
@pytest.mark.parametrize("command", [c.name for c in COMMANDS])
def test_every_cli_subcommand_help_renders(command: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pytest_extractbench", command, "--help"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "usage: extractbench " + command in done.stdout


# ----------------------------------------------------------------------------- output paths


def _read_only_dir(tmp_path: Path) -> Path:
    """An empty directory this process cannot write into (root ignores modes: fall back to sysfs)."""
    path = tmp_path / "read-only"
    path.mkdir()
    path.chmod(0o555)
    if not os.access(path, os.W_OK):
        return path
    for candidate in (Path("/sys/kernel/software_nodes"), Path("/sys/kernel/iommu_groups")):
        try:
            if candidate.is_dir() and not any(candidate.iterdir()):
                os.close(os.open(candidate / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644))
        except OSError:
            return candidate
    pytest.skip("no read-only directory available to this user")


def _uncreatable(tmp_path: Path) -> Path:
    """A directory that cannot be created (its parent is read-only)."""
    return _read_only_dir(tmp_path) / "run"


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (lambda tmp: (tmp / "afile").write_text("x") and tmp / "afile", "is a file, not a directory"),
        (lambda tmp: (tmp / "afile").write_text("x") and tmp / "afile" / "run", "afile is a file, not a directory"),
        (_read_only_dir, "is not writable"),
        (_uncreatable, "cannot be created"),
    ],
    ids=["output-is-a-file", "output-under-a-file", "output-read-only", "output-parent-read-only"],
)
def test_unusable_output_path_is_refused_before_any_item_runs(
    pytester: pytest.Pytester, tmp_path: Path, make: Any, expected: str
) -> None:
    target = make(tmp_path)
    result = offline(pytester, two_samples(), None, out=str(target))
    assert result.ret == USAGE_ERROR
    message = result.stderr.str()
    assert expected in message and str(target) in message
    assert "passed" not in result.stdout.str() and "INTERNALERROR" not in terminal(result)
    assert_clean_terminal(terminal(result))


def test_non_empty_output_is_refused_and_left_untouched(pytester: pytest.Pytester) -> None:
    out = pytester.path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine", encoding="utf-8")
    result = offline(pytester, two_samples())
    assert result.ret == USAGE_ERROR
    assert "is not empty" in result.stderr.str() and "--extractbench-resume" in result.stderr.str()
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"]


def test_earlier_run_in_output_is_refused_not_overwritten(pytester: pytest.Pytester) -> None:
    first = offline(pytester, two_samples())
    assert first.ret == 0
    before = (pytester.path / "out" / "samples.jsonl").read_bytes()
    second = offline(pytester, two_samples(), {"s1": {"name": "X"}, "s2": {"name": "Y"}})
    assert second.ret == USAGE_ERROR and "from an earlier run" in second.stderr.str()
    assert (pytester.path / "out" / "samples.jsonl").read_bytes() == before


def test_empty_existing_output_is_accepted(pytester: pytest.Pytester) -> None:
    (pytester.path / "out").mkdir()
    result = offline(pytester, two_samples())
    assert result.ret == 0
    assert_accounted(pytester.path / "out", 2)


def test_collect_only_may_look_at_an_earlier_run(pytester: pytest.Pytester) -> None:
    assert offline(pytester, two_samples()).ret == 0
    before = sorted(p.name for p in (pytester.path / "out").iterdir())
    result = offline(pytester, two_samples(), None, "--collect-only", "-q")
    assert result.ret == 0
    assert sorted(p.name for p in (pytester.path / "out").iterdir()) == before


@pytest.mark.parametrize("folder", ["missing", "empty", "not-a-run"])
def test_resume_into_a_folder_that_is_not_a_run_is_refused(pytester: pytest.Pytester, folder: str) -> None:
    target = pytester.path / folder
    if folder != "missing":
        target.mkdir()
    if folder == "not-a-run":
        (target / "holiday.jpg").write_bytes(b"\xff\xd8")
    result = offline(pytester, two_samples(), None, "--extractbench-resume", folder, out="")
    assert result.ret == USAGE_ERROR
    assert str(target) in result.stderr.str()
    expected = "no such run directory" if folder == "missing" else "not an extractbench run directory"
    assert expected in result.stderr.str()
    if folder != "missing":
        assert not (target / "metrics.json").exists() and not (target / "samples.jsonl").exists()


def test_resume_of_a_killed_run_is_not_blocked_by_its_lock_file(pytester: pytest.Pytester) -> None:
    # kill -9 leaves the lock file behind, but not the lock: the kernel released it with the process
    run = pytester.path / "killed"
    run.mkdir()
    (run / LOCK_FILE).write_text("pid 999999 on elsewhere\n")
    result = offline(pytester, two_samples(), None, "--extractbench-resume", "killed", out="")
    assert result.ret == 0, terminal(result)
    assert_accounted(run, 2)


def test_a_directory_in_use_by_another_session_is_refused(pytester: pytest.Pytester) -> None:
    run = pytester.path / "busy"
    run.mkdir()
    (run / "responses.jsonl").write_text("")
    holder = RunLock(run)  # another live session: a real flock on the lock file, from another descriptor
    holder.acquire()
    try:
        result = offline(pytester, two_samples(), None, "--extractbench-resume", "busy", out="")
    finally:
        holder.release()
    assert result.ret == USAGE_ERROR
    assert "in use by another session" in result.stderr.str() and f"pid {os.getpid()}" in result.stderr.str()
    assert (run / "responses.jsonl").read_text() == "" and not (run / "metrics.json").exists()


def test_two_sessions_started_together_get_two_directories(tmp_path: Path) -> None:
    base = tmp_path / "runs" / "20261124-061500"
    first, second, third = claim_new(base), claim_new(base), claim_new(base)
    assert [p.name for p in (first, second, third)] == [base.name, f"{base.name}-2", f"{base.name}-3"]


def test_the_lock_is_released_when_the_session_ends(pytester: pytest.Pytester) -> None:
    assert offline(pytester, two_samples()).ret == 0
    lock = RunLock(pytester.path / "out")
    lock.acquire()  # would raise if the finished session still held it
    lock.release()
    with pytest.raises(RunDirError, match="not empty"):
        prepare(pytester.path / "out", what="--extractbench-output")


@pytest.fixture
def live_server() -> Any:
    with FaultServer(default=Fault.ok(content={"name": "P1", "age": 1})) as server:
        yield server


def test_reusing_a_live_runs_directory_does_not_append_to_its_journal(
    pytester: pytest.Pytester, live_server: FaultServer
) -> None:
    write_jsonl(pytester.path / "data.jsonl", two_samples())
    argv = [
        *FAST,
        "--extractbench",
        "--extractbench-dataset",
        "data.jsonl",
        "--extractbench-output",
        "live",
        "--extractbench-base-url",
        live_server.url,
        "--model",
        "test-model",
        "--extractbench-no-cache",
    ]
    assert pytester.runpytest(*argv).ret in (0, 1)
    journal = (pytester.path / "live" / "responses.jsonl").read_bytes()
    assert journal.count(b"\n") == 2
    again = pytester.runpytest(*argv)
    assert again.ret == USAGE_ERROR and "--extractbench-resume" in again.stderr.str()
    assert (pytester.path / "live" / "responses.jsonl").read_bytes() == journal
    assert len(live_server.requests) == 2  # the refused session sent nothing
    assert_accounted(pytester.path / "live", 2)


# ------------------------------------------------------------------------------------ reports


def test_report_html_is_written_when_the_dataset_has_problems(pytester: pytest.Pytester) -> None:
    rows = [sample("s1", 1), "{not json", sample("s2", 2), {"id": "s3", "text": "t", "schema": SCHEMA}]
    result = offline(pytester, rows, {"s1": {"name": "P1", "age": 1}, "s2": {"name": "P2", "age": 2}})
    out = pytester.path / "out"
    assert result.ret == 0, terminal(result)
    assert "report not written" not in result.stdout.str()
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "data.jsonl:line 2" in html  # the problem's file and line
    assert_accounted(out, 2)
    assert_clean_terminal(terminal(result))


@pytest.mark.slow
def test_extractbench_report_renders_a_run_with_problems(pytester: pytest.Pytester) -> None:
    offline(pytester, [sample("s1", 1), "{not json"], {"s1": {"name": "P1", "age": 1}}, "--extractbench-no-html-report")
    out = pytester.path / "out"
    assert not (out / "report.html").exists()
    done = subprocess.run(
        [sys.executable, "-m", "pytest_extractbench", "report", "--results-dir", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "data.jsonl:line 2" in (out / "report.html").read_text(encoding="utf-8")


@pytest.mark.slow
@pytest.mark.parametrize("html", [True, False], ids=["rewritten", "turned-off"])
def test_no_stale_report_beside_new_metrics(pytester: pytest.Pytester, html: bool) -> None:
    assert offline(pytester, two_samples()).ret == 0
    out = pytester.path / "out"
    for name in ("report.html", "summary.md", "metrics.csv", "samples.csv"):
        (out / name).write_text("STALE FROM AN EARLIER RUN", encoding="utf-8")
    args = ["--extractbench-resume", "out"] + ([] if html else ["--extractbench-no-html-report"])
    assert offline(pytester, two_samples(), None, *args, out="").ret == 0
    assert "STALE" not in (out / "summary.md").read_text(encoding="utf-8")
    if html:
        assert "STALE" not in (out / "report.html").read_text(encoding="utf-8")
    else:
        assert not (out / "report.html").exists()


@pytest.mark.slow
@pytest.mark.parametrize("sample_id", ["a\\xZZ", "n\\N", "trailing\\", "u\\u12", "c:\\temp\\x"])
def test_backslash_sample_ids_with_pytest_html(pytester: pytest.Pytester, sample_id: str) -> None:
    samples = [sample(sample_id, 1), sample("plain", 2)]
    outputs = {sample_id: {"name": "wrong", "age": 1}, "plain": {"name": "P2", "age": 2}}
    result = offline(pytester, samples, outputs, "--html", "page.html", "--extractbench-sample-min-eqs", "0.99")
    assert result.ret == 1, terminal(result)  # one failing sample, and no INTERNALERROR
    assert "INTERNALERROR" not in terminal(result)
    assert (pytester.path / "page.html").is_file()
    result.assert_outcomes(passed=1, failed=1)
    assert_accounted(pytester.path / "out", 2)


def _nan_baseline(pytester: pytest.Pytester, value: float) -> None:
    """Save a baseline from a perfect run, then spoil its per-sample EQS values."""
    assert offline(pytester, two_samples(), None, "--extractbench-save", "base", out="first").ret == 0
    path = next((pytester.path / ".extractbench" / "baselines").glob("*_base.json"))
    document = json.loads(path.read_text())
    for entry in document["models"].values():
        for snapshot in entry["samples"]:
            snapshot["row"]["eqs"] = value
    path.write_text(json.dumps(document))  # json writes NaN / Infinity, as a hand-edited file may hold


@pytest.mark.parametrize("value", [float("nan"), float("inf")], ids=["nan", "infinity"])
def test_a_baseline_that_is_not_a_number_fails_the_gate(pytester: pytest.Pytester, value: float) -> None:
    _nan_baseline(pytester, value)
    worse = {"s1": {"name": "nobody"}, "s2": {"name": "none"}}
    result = offline(
        pytester,
        two_samples(),
        worse,
        "--extractbench-compare",
        "base",
        "--extractbench-compare-fail",
        "eqs:-0.02",
        out="second",
    )
    text = result.stdout.str()
    if result.ret == USAGE_ERROR:  # a baseline reader that refuses the file outright is as good: it names it
        assert "_base.json" in result.stderr.str()
        return
    assert result.ret == 1, text
    assert "COULD NOT BE MEASURED model 'predictions': extraction_quality_score" in text
    assert "regression gate: FAILED" in text and "regression gate: passed" not in text
    comparison = json.loads((pytester.path / "second" / "metrics.json").read_text())["baseline_comparison"]
    assert comparison["passed"] is False
    assert comparison["models"]["predictions"]["verdict"] == "not comparable"


def test_a_nan_baseline_without_checks_says_not_comparable(pytester: pytest.Pytester) -> None:
    _nan_baseline(pytester, float("nan"))
    result = offline(pytester, two_samples(), None, "--extractbench-compare", "base", out="second")
    if result.ret == USAGE_ERROR:  # refused by the baseline reader, naming the file
        assert "_base.json" in result.stderr.str()
        return
    assert "verdict NOT COMPARABLE" in result.stdout.str()
    assert "report not written" not in result.stdout.str()


# --------------------------------------------------------------------- escape injection at sinks


@pytest.mark.parametrize("name", HOSTILE, ids=list(HOSTILE))
def test_hostile_sample_ids_never_reach_the_terminal(pytester: pytest.Pytester, name: str) -> None:
    hostile = HOSTILE[name]
    samples = [sample(hostile, 1), sample("plain", 2)]
    outputs = {hostile: {"name": "wrong"}, "plain": {"name": "P2", "age": 2}}
    result = offline(pytester, samples, outputs, "-v", "-rA", "--extractbench-sample-min-eqs", "0.99")
    assert result.ret == 1
    text = terminal(result)
    assert_clean_terminal(text)
    assert textsafe.terminal(hostile) in text  # shown, made visible: the user can still find the sample
    assert "\u202e" not in text
    assert_accounted(pytester.path / "out", 2)
    summary = (pytester.path / "out" / "summary.md").read_text(encoding="utf-8")
    assert_clean_terminal(summary)


@pytest.mark.parametrize("name", ["csi", "osc-title", "c1-csi", "bidi"])
def test_hostile_model_names_never_reach_the_terminal_or_summary(pytester: pytest.Pytester, name: str) -> None:
    model = HOSTILE[name] + " @octo-org/admins"
    result = offline(pytester, two_samples(), None, "-v", model=model)
    assert result.ret == 0, terminal(result)
    assert_clean_terminal(terminal(result))
    assert_accounted(pytester.path / "out", 2, model=model)
    summary = (pytester.path / "out" / "summary.md").read_text(encoding="utf-8")
    assert_clean_terminal(summary)
    assert "@octo-org" not in summary and "@&#8203;octo-org/admins" in summary  # no notification to a team


@pytest.mark.parametrize("where", ["output-key", "gold-key", "output-value"])
def test_hostile_keys_and_values_in_failure_explanations(pytester: pytest.Pytester, where: str) -> None:
    evil = "k\x1b]8;;http://evil.example\x07link\x1b]8;;\x07\x9b2J"
    gold = {"name": "P1", "age": 1}
    output: dict[str, Any] = {"name": "P1", "age": 1}
    if where == "output-key":
        output[evil] = 1
    elif where == "gold-key":
        gold[evil] = "x"
    else:
        output["name"] = evil
    samples = [sample("s1", 1, gold)]
    result = offline(pytester, samples, {"s1": output}, "--extractbench-sample-min-eqs", "0.999")
    assert result.ret == 1, terminal(result)
    text = terminal(result)
    assert_clean_terminal(text)
    assert "]8;;http://evil.example" in text and "\x1b]8" not in text  # the field is named, inert
    assert_accounted(pytester.path / "out", 1)


def test_a_huge_model_output_key_is_clipped(pytester: pytest.Pytester) -> None:
    key = "K" * 200_000
    result = offline(
        pytester, [sample("s1", 1)], {"s1": {"name": "P1", "age": 1, key: 1}}, "--extractbench-sample-min-eqs", "0.999"
    )
    text = terminal(result)
    assert result.ret == 1
    assert "K" * 5000 not in text and len(text) < 100_000
    assert_accounted(pytester.path / "out", 1)


@pytest.mark.parametrize("size", [2_000, 1_000_000], ids=["2k", "1MB"])
@pytest.mark.parametrize("xdist", [False, pytest.param(True, marks=pytest.mark.slow)], ids=["single", "xdist"])
def test_an_invalid_dataset_line_is_neither_echoed_whole_nor_raw(
    pytester: pytest.Pytester, size: int, xdist: bool
) -> None:
    bad = "{\x1b[2J\x1b]0;owned\x07" + "A" * size  # not JSON, full of escapes, long
    args = ("-n", "2") if xdist else ()
    result = offline(pytester, [sample("s1", 1), bad, sample("s2", 2)], None, *args, subprocess=xdist)
    text = terminal(result)
    assert result.ret == 0, text[-3000:]
    assert_clean_terminal(text)
    assert "A" * 3000 not in text  # clipped wherever it is quoted
    assert "data.jsonl:line 2" in text  # still says where
    assert_accounted(pytester.path / "out", 2)


def test_hostile_server_error_messages_are_inert(pytester: pytest.Pytester) -> None:
    message = "quota\x1b[2J\x1b]0;owned\x07 exceeded \x9b6n" + "!" * 10_000
    with FaultServer(default=Fault.bad_request(message)) as server:
        write_jsonl(pytester.path / "data.jsonl", two_samples())
        result = pytester.runpytest(
            *FAST,
            "--extractbench",
            "--extractbench-dataset",
            "data.jsonl",
            "--extractbench-output",
            "out",
            "--extractbench-base-url",
            server.url,
            "--model",
            "test-model",
            "--extractbench-retries",
            "0",
            "-rA",
        )
    text = terminal(result)
    assert result.ret == 1
    assert_clean_terminal(text)
    assert "!" * 3000 not in text
    assert "quota\\x1b[2J" in text
    assert_accounted(pytester.path / "out", 2)


def test_hostile_names_in_usage_errors_are_inert(pytester: pytest.Pytester) -> None:
    out = pytester.path / "out"
    out.mkdir()
    (out / "x\x1b]0;owned\x07.txt").write_text("")
    result = offline(pytester, two_samples())
    assert result.ret == USAGE_ERROR
    assert_clean_terminal(terminal(result))
    assert "\\x1b]0;owned\\x07" in result.stderr.str()


def test_log_records_are_made_safe(caplog: pytest.LogCaptureFixture) -> None:
    log = textsafe.get_logger("pytest_extractbench.report.html")
    with caplog.at_level(logging.WARNING, logger="pytest_extractbench"):
        log.warning("chart %s failed: %s", "c\x1b[31m", "boom\r\x9b")
        try:
            raise ValueError("bad\x1b]0;t\x07")
        except ValueError:
            log.exception("writing %s failed", "report\x07")
    assert_clean_terminal(caplog.text)
    assert "chart c\\x1b[31m failed: boom\\x0d\\x9b" in caplog.text
    assert "ValueError: bad\\x1b]0;t\\x07" in caplog.text


@pytest.mark.slow
def test_cli_messages_are_inert(tmp_path: Path) -> None:
    bad = write_jsonl(tmp_path / "d.jsonl", [sample("s\x1b[31m1"), "{\x1b]0;x\x07" + "B" * 50_000])
    done = subprocess.run(
        [sys.executable, "-m", "pytest_extractbench", "dataset-stats", str(bad)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert_clean_terminal(done.stdout + done.stderr)
    assert "B" * 3000 not in done.stdout


# ------------------------------------------------------------------------------ the sanitizer


@given(st.text(), st.integers(min_value=1, max_value=400))
def test_sanitized_text_is_inert_and_bounded(text: str, limit: int) -> None:
    shown = textsafe.terminal(text, limit)
    assert len(shown) <= limit
    assert_clean_terminal(shown)
    assert not re.search(r"[\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]", shown)
    if len(text) <= limit and all(" " <= c <= "~" for c in text):
        assert shown == text  # plain text passes unchanged


@given(st.text())
def test_markdown_text_is_inert(text: str) -> None:
    shown = textsafe.markdown(text)
    assert_clean_terminal(shown)
    assert "<" not in shown and ">" not in shown and "\n" not in shown
    assert not re.search(r"@(?!&#8203;)[\w-]", shown)  # every @mention broken
    assert not re.search(r"(?<!\\)[`*_\[\]|~]", shown)  # inline syntax escaped
