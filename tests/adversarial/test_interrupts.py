"""A run stopped by SIGTERM (a CI job cancelled, a container stopped) or SIGINT (Ctrl-C) mid-run, then finished
with ``--extractbench-resume``: nothing lost, nothing duplicated. Every answer received before the signal is
reused, never asked again; what was in flight is asked once more; the journal holds one answer per sample,
and samples.jsonl and metrics.json count each sample once.

Real processes and real signals: pytest runs in a subprocess, and the signal is sent once answers are arriving.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from _checks import assert_accounted
from _net import refused
from pytest_extractbench.core.rundoc import iter_samples

SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
    "required": ["name"],
}
SAMPLES = [
    {
        "id": f"s{i:02d}",
        "text": f"Person {i} is {20 + i}.",
        "schema": SCHEMA,
        "expected": {"name": f"Person {i}", "age": 20 + i},
    }
    for i in range(12)
]

# Slow while ./slow exists, so that the signal lands mid-run; every call is logged to calls.log.
EXTRACTOR = """
import os, re, time

HERE = os.path.dirname(os.path.abspath(__file__))

def extract(sample):
    with open(os.path.join(HERE, "calls.log"), "a") as log:
        log.write(sample.id + "\\n")
    if os.path.exists(os.path.join(HERE, "slow")):
        time.sleep(0.4)
    name, age = re.match(r"(Person \\d+) is (\\d+)", sample.text).groups()
    return {"name": name, "age": int(age)}
"""


def lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").split() if path.exists() else []


def journal(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "responses.jsonl").read_text(encoding="utf-8").splitlines() if line]


def answered(rows: list[dict]) -> Counter[str]:
    """Answers (reusable responses) per sample id."""
    return Counter(
        row["sample_id"]
        for row in rows
        if row["response"].get("error_class") in (None, "truncated") and row["response"].get("content") is not None
    )


def interrupt_mid_run(root: Path, args: list[str], sig: signal.Signals, ready: callable) -> tuple[int, str]:
    """Start pytest in `root`, wait until `ready()`, send `sig`; the exit code and the terminal's text."""
    output = root / "interrupted.txt"
    with output.open("w") as sink:
        proc = subprocess.Popen(
            [sys.executable, "-m", "pytest", "-p", "no:randomly", "-p", "no:cacheprovider", *args],
            cwd=root,
            stdout=sink,
            stderr=subprocess.STDOUT,
            # a background job's ignored SIGINT (or SIGTERM) is inherited: give the run the defaults
            preexec_fn=_default_signals,
        )
        try:
            deadline = time.monotonic() + 600
            while not ready():
                assert proc.poll() is None, f"the run ended before the signal:\n{output.read_text()}"
                assert time.monotonic() < deadline, "the run never got going"
                time.sleep(0.05)
            proc.send_signal(sig)
            code = proc.wait(timeout=300)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    return code, output.read_text(encoding="utf-8", errors="replace")


def _default_signals() -> None:
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_DFL)


def base_args(*extra: str) -> list[str]:
    return [
        "--extractbench",
        "--extractbench-dataset",
        "data.jsonl",
        "--extractbench-sla",
        "none",
        "--extractbench-output",
        "out",
        "--extractbench-no-cache",
        "--extractbench-no-html-report",
        *extra,
    ]


@pytest.mark.slow
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_run_stopped_by_a_signal_resumes_losing_and_duplicating_nothing(
    pytester: pytest.Pytester, sig: signal.Signals
) -> None:
    root = pytester.path
    (root / "data.jsonl").write_text("".join(json.dumps(s) + "\n" for s in SAMPLES), encoding="utf-8")
    (root / "slowx.py").write_text(EXTRACTOR, encoding="utf-8")
    (root / "slow").touch()
    args = base_args("--extractbench-extractor", "slowx:extract", "--extractbench-concurrency", "1")

    code, text = interrupt_mid_run(root, args, sig, lambda: len(lines(root / "calls.log")) >= 5)
    # stopped like Ctrl-C (exit 2), not killed: it says how to finish
    assert code == pytest.ExitCode.INTERRUPTED, text
    assert "finish the run with --extractbench-resume" in text and "Traceback" not in text
    out = root / "out"
    before = journal(out)
    kept = answered(before)
    assert 0 < len(kept) < len(SAMPLES) and max(kept.values()) == 1
    asked_before = len(lines(root / "calls.log"))

    (root / "slow").unlink()
    resumed = pytester.runpytest_subprocess(*args, "--extractbench-resume", "out", timeout=300)
    resumed.assert_outcomes(passed=len(SAMPLES))
    # only what had no answer is asked again; each answered sample once in the journal
    asked_again = lines(root / "calls.log")[asked_before:]
    assert sorted(asked_again) == sorted({s["id"] for s in SAMPLES} - set(kept))
    after = journal(out)
    assert after[: len(before)] == before  # the journal is only appended to
    assert answered(after) == Counter({s["id"]: 1 for s in SAMPLES})
    assert_accounted(out, len(SAMPLES))
    records = list(iter_samples(out / "samples.jsonl"))
    assert all(r["score"]["eqs"] == pytest.approx(1.0) for r in records)


# -- the embedded server -----------------------------------------------------------------------------


@pytest.mark.llm
@pytest.mark.slow
def test_an_embedded_server_run_stopped_by_sigterm_resumes_losing_and_duplicating_nothing(
    pytester: pytest.Pytester,
) -> None:
    from pytest_extractbench.live.backends.llama_models import MissingExtraError, resolve_model
    from pytest_extractbench.live.backends.llama_process import find_llama_server

    try:
        find_llama_server()
        resolve_model("gemma3-270m")
    except MissingExtraError as exc:
        if os.environ.get("CI"):
            pytest.fail(f"CI must install the local extra: {exc}")
        pytest.skip(str(exc))
    root = pytester.path
    (root / "data.jsonl").write_text("".join(json.dumps(s) + "\n" for s in SAMPLES[:6]), encoding="utf-8")
    args = base_args("--model", "gemma3-270m", "--extractbench-slots", "1", "--extractbench-max-tokens", "64")
    out = root / "out"

    code, text = interrupt_mid_run(
        root, args, signal.SIGTERM, lambda: (out / "responses.jsonl").exists() and len(journal(out)) >= 2
    )
    assert code == pytest.ExitCode.INTERRUPTED, text
    before = journal(out)
    kept = answered(before)
    assert 0 < len(kept) < 6 and max(kept.values()) == 1
    # the server was stopped with the session, not left running
    live = json.loads((out / "metrics.json").read_text())["run"]["live"]
    assert live["base_urls"] and all(refused(url) for url in live["base_urls"])

    resumed = pytester.runpytest_subprocess(*args, "--extractbench-resume", "out", timeout=1200)
    outcomes = resumed.parseoutcomes()
    assert outcomes.get("passed", 0) + outcomes.get("failed", 0) == 6, resumed.stdout.str()
    after = journal(out)
    assert after[: len(before)] == before
    # every answer received before the signal was reused: each sample has exactly one answer in the journal
    assert answered(after) == Counter({s["id"]: 1 for s in SAMPLES[:6]})
    assert_accounted(out, 6)


# -- a journal cut mid-line --------------------------------------------------------------------------


@given(cut=st.integers(min_value=1, max_value=200))
def test_an_answer_appended_after_a_torn_line_is_kept(tmp_path_factory: pytest.TempPathFactory, cut: int) -> None:
    # a crash or a full disk can leave the journal's last line cut anywhere; the resumed run appends after it
    from pytest_extractbench.dataset.responses import ModelResponse
    from pytest_extractbench.live.journal import JOURNAL_FILE, Journal, latest_responses, reusable_by_key

    run_dir = tmp_path_factory.mktemp("run")
    first = Journal(run_dir)
    first.append("m", "s1", "k1", ModelResponse(content='{"name": "Ada"}'))
    first.append("m", "s2", "k2", ModelResponse(content='{"name": "Bob"}'))
    first.close()
    path = run_dir / JOURNAL_FILE
    data = path.read_bytes()
    last_start = data.rindex(b"\n", 0, len(data) - 1) + 1
    path.write_bytes(data[: last_start + min(cut, len(data) - last_start - 2)])  # s2's line, torn before its end

    resumed = Journal(run_dir)
    resumed.append("m", "s3", "k3", ModelResponse(content='{"name": "Cy"}'))
    resumed.close()
    assert set(reusable_by_key(run_dir)) == {"k1", "k3"}
    assert latest_responses(run_dir)[("m", "s3")][1].content == '{"name": "Cy"}'
