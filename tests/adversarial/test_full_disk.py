"""A full disk, unwritable values and re-encoded journals: writing never loses what was measured.

The disk is a real, small tmpfs (the tests need root to mount one, else they skip), filled at session end
just before the run directory is written, so every final write meets ENOSPC: the session names the file
and the reason in one line, leaves no temporary file, keeps the journal and exits non-zero; freed, the run
finishes with --extractbench-resume without asking the model again. A 4,000-digit integer in a gold value
is written and read back digit for digit; one past Python's limit fails the file, naming sample and path.
"""

from __future__ import annotations

import json
import os
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from faultserver import FaultServer

from _checks import assert_accounted, assert_clean_terminal
from pytest_extractbench import load_run
from pytest_extractbench.cli import main
from pytest_extractbench.core import files

SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}, "n": {"type": "integer"}}}
N = 4
MODEL = "test-model"
FILLER = "filler.bin"
BIG = int("7" * 4000)

# Fills the disk holding the run directory just before the plugin writes it (a hook wrapper runs first).
FILL_AT_END = """
import os, pytest
from pathlib import Path

@pytest.hookimpl(hookwrapper=True)
def pytest_sessionfinish(session):
    with open(os.environ["FILL_DISK"], "wb", buffering=0) as handle:
        try:
            while handle.write(b"\\0" * 4096):
                pass
        except OSError:
            pass
    yield
"""


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 4 MB tmpfs of its own, unmounted afterwards."""
    mount = tmp_path / f"disk-{uuid.uuid4().hex[:8]}"
    mount.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mount)], capture_output=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode(errors='replace').strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def write_inputs(path: Path, gold: Any = None) -> None:
    rows = [
        {
            "id": f"s{i}",
            "text": f"Record s{i}: P{i} is {i}.",
            "schema": SCHEMA,
            "expected": {"name": f"P{i}", "n": i if gold is None or i else gold},
        }
        for i in range(N)
    ]
    preds = [{"id": r["id"], "output": r["expected"]} for r in rows]
    (path / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (path / "preds.jsonl").write_text("".join(json.dumps(r) + "\n" for r in preds), encoding="utf-8")


def answer(body: Any) -> Any:
    text = body["messages"][-1]["content"]
    n = int(text.split("Record s", 1)[1].split(":", 1)[0])
    return {"name": f"P{n}", "n": n}


def bench(pytester: pytest.Pytester, out: Path, *args: str) -> pytest.RunResult:
    return pytester.runpytest(
        "-p",
        "no:randomly",
        "--extractbench",
        "--extractbench-sla",
        "none",
        "--extractbench-dataset",
        "data.jsonl",
        "--extractbench-output",
        str(out),
        *args,
    )


def fill(path: Path) -> None:
    """Write zeros to ``path`` until the disk is full."""
    with open(path, "wb", buffering=0) as handle:
        try:
            while handle.write(b"\0" * 4096):
                pass
        except OSError:
            pass


def no_temporary_files(root: Path) -> None:
    left = [p.name for p in root.rglob("*") if p.name.endswith(".tmp")]
    assert not left, f"temporary files left behind: {left}"


# -- a full disk at the end of the session --------------------------------------------------------------------


def test_a_full_disk_names_the_file_leaves_no_temporary_file_and_fails_the_session(
    pytester: pytest.Pytester, small_disk: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_inputs(pytester.path)
    pytester.makeconftest(FILL_AT_END)
    monkeypatch.setenv("FILL_DISK", str(small_disk / FILLER))
    out = small_disk / "out"
    result = bench(pytester, out, "--extractbench-predictions", "preds.jsonl")
    text = result.stdout.str() + result.stderr.str()
    assert result.ret == pytest.ExitCode.INTERNAL_ERROR, text
    result.stdout.fnmatch_lines([f"error: {out / 'samples.jsonl'}: not written: No space left on device"])
    assert "Traceback" not in text and "OSError" not in text
    assert not (out / "samples.jsonl").exists()
    no_temporary_files(small_disk)
    assert_clean_terminal(result.stdout.str())


def test_the_journal_survives_a_full_disk_and_resume_finishes_without_asking_again(
    pytester: pytest.Pytester, small_disk: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_inputs(pytester.path)
    out = small_disk / "out"
    conftest = pytester.makeconftest(FILL_AT_END)
    monkeypatch.setenv("FILL_DISK", str(small_disk / FILLER))
    with FaultServer(answer=answer) as server:
        live = ("--extractbench-base-url", server.url, "--model", MODEL, "--extractbench-no-cache")
        full = bench(pytester, out, *live)
        assert full.ret == pytest.ExitCode.INTERNAL_ERROR, full.stdout.str()
        full.stdout.fnmatch_lines(
            [
                "error: *samples.jsonl: not written: No space left on device",
                f"every answer is kept in {out / 'responses.jsonl'}*--extractbench-resume {out}*",
            ]
        )
        journal = [json.loads(line) for line in (out / "responses.jsonl").read_text().splitlines()]
        assert sorted(entry["sample_id"] for entry in journal) == [f"s{i}" for i in range(N)]
        asked = len(server.requests)
        no_temporary_files(small_disk)
        # space again: the resumed run writes everything from the journal, the server is not asked again
        conftest.unlink()
        (small_disk / FILLER).unlink()
        resumed = bench(pytester, out, *live, "--extractbench-resume", str(out))
        assert resumed.ret == pytest.ExitCode.OK, resumed.stdout.str()
        assert len(server.requests) == asked
    assert_accounted(out, N)
    assert {p.name for p in out.iterdir()} >= {"metrics.json", "samples.jsonl", "report.html", "samples.csv"}


def test_an_atomic_write_that_meets_a_full_disk_keeps_the_previous_file(small_disk: Path) -> None:
    target = small_disk / "metrics.json"
    files.write_json(target, {"old": True})
    fill(small_disk / FILLER)
    with pytest.raises(files.OutputWriteError) as info:
        files.write_json(target, {"new": "x" * 100_000})
    assert str(info.value) == f"{target}: not written: No space left on device"
    assert json.loads(target.read_text()) == {"old": True}
    no_temporary_files(small_disk)


def test_reports_refused_by_the_disk_are_named_as_refused(small_disk: Path) -> None:
    from pytest_extractbench.report.outputs import ReportOptions, write_reports

    os.chmod(small_disk, 0o555)  # the directory refuses new files: as a full disk refuses new blocks
    try:
        if os.access(small_disk, os.W_OK) and os.geteuid() == 0:
            subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], check=True)
        written, errors, refused = write_reports(small_disk, {"models": {}}, lambda: iter(()), ReportOptions())
    finally:
        subprocess.run(["mount", "-o", "remount,rw", str(small_disk)], capture_output=True)
        os.chmod(small_disk, 0o755)
    assert not written
    assert refused and all(": not written: Read-only file system" in r for r in refused), (refused, errors)
    no_temporary_files(small_disk)


# -- values: what is written is read back -----------------------------------------------------------------------


def test_a_4000_digit_gold_integer_is_written_and_read_back_digit_for_digit(pytester: pytest.Pytester) -> None:
    write_inputs(pytester.path, gold=BIG)
    out = pytester.path / "out"
    result = bench(pytester, out, "--extractbench-predictions", "preds.jsonl")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    assert "report not written" not in result.stdout.str()
    assert {"report.html", "summary.md", "samples.csv", "metrics.csv"} <= {p.name for p in out.iterdir()}
    run = load_run(out)
    (first,) = [r for r in run.records if r.sample_id == "s0"]
    (field,) = [f for f in first.score.fields if f.path == "n"]
    assert field.expected == BIG and field.category == "exact"
    assert_accounted(out, N)


def test_a_value_past_the_digit_limit_fails_the_file_naming_sample_and_path(tmp_path: Path) -> None:
    rows = [{"sample_id": "ok", "x": 1}, {"sample_id": "huge", "response": {"parsed": {"items": [0, 10**5000]}}}]
    with pytest.raises(files.OutputWriteError) as info:
        files.write_jsonl(tmp_path / "samples.jsonl", rows)
    message = str(info.value)
    assert "sample 'huge'" in message and "$.response.parsed.items[1]" in message and "4,300 digits" in message
    assert not list(tmp_path.iterdir())  # neither the file nor a temporary one


@pytest.mark.slow
def test_an_extractor_returning_a_huge_integer_is_accounted_for(tmp_path: Path) -> None:
    from pytest_extractbench import evaluate

    write_inputs(tmp_path)
    result = evaluate(
        tmp_path / "data.jsonl",
        extractor=lambda sample: {"name": "P0", "n": 10**5000},
        model="huge",
        output=tmp_path / "out",
        rootdir=tmp_path,
        sla="none",
    )
    out = tmp_path / "out"
    assert not result.write_errors, result.write_errors
    assert_accounted(out, N)
    assert len(load_run(out).records) == N


# -- journals re-encoded by an editor -------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("encoding", ["utf-16", "utf-32", "utf-8-sig"])
def test_a_journal_saved_with_a_byte_order_mark_is_still_resumed(pytester: pytest.Pytester, encoding: str) -> None:
    write_inputs(pytester.path)
    out = pytester.path / "out"
    with FaultServer(answer=answer) as server:
        live = ("--extractbench-base-url", server.url, "--model", MODEL, "--extractbench-no-cache")
        assert bench(pytester, out, *live).ret == pytest.ExitCode.OK
        journal = out / "responses.jsonl"
        journal.write_bytes(journal.read_text(encoding="utf-8").encode(encoding))
        for name in ("metrics.json", "samples.jsonl"):
            (out / name).unlink()
        asked = len(server.requests)
        resumed = bench(pytester, out, *live, "--extractbench-resume", str(out))
        assert resumed.ret == pytest.ExitCode.OK, resumed.stdout.str()
        assert len(server.requests) == asked  # every recorded answer was reused, none came back as missing
    assert_accounted(out, N)
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["models"][MODEL]["schema_validity_rate"] == 1.0


# -- extractbench report on pathological run directories -------------------------------------------------------


def run_dir_with(tmp_path: Path, metrics: bytes) -> Path:
    run = tmp_path / "run"
    run.mkdir()
    (run / "metrics.json").write_bytes(metrics)
    (run / "samples.jsonl").write_text("")
    return run


@pytest.mark.parametrize(
    "metrics, words",
    [
        (b'{"models": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "nested too deeply"),
        (b'{"models": {"m": {"x": ' + b'{"a": ' * 5000 + b"1" + b"}" * 5000 + b"}}}", "nested too deeply"),
        (b'{"models": {"m": ' + b"9" * 5000 + b"}}", "too large to read"),
        (b"\xff\xfe{\x00}\x00", "UTF-16"),
        (b'{"models": [1, 2', "not valid JSON"),
    ],
)
def test_report_refuses_a_pathological_metrics_json_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], metrics: bytes, words: str
) -> None:
    run = run_dir_with(tmp_path, metrics)
    assert main(["report", "--results-dir", str(run)]) == 2
    err = capsys.readouterr().err
    assert words in err and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert not (run / "report.html").exists()


def test_report_refuses_a_huge_metrics_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from pytest_extractbench.core import jsonio

    monkeypatch.setattr(jsonio, "MAX_FILE_BYTES", 1000)
    run = run_dir_with(tmp_path, b'{"models": {}, "pad": "' + b"x" * 5000 + b'"}')
    assert main(["report", "--results-dir", str(run)]) == 2
    assert "at most 1,000 are read" in capsys.readouterr().err


def test_report_refuses_a_deep_samples_line_naming_the_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = run_dir_with(tmp_path, b'{"format_version": 2, "models": {}}')
    (run / "samples.jsonl").write_text('{"model": "m", "sample_id": "a"}\n{"x": ' + "[" * 5000 + "]" * 5000 + "}\n")
    code = main(["report", "--results-dir", str(run)])
    err = capsys.readouterr().err
    assert code == 2 and "samples.jsonl:2" in err and "nested too deeply" in err and "Traceback" not in err


# -- the journal itself meets the full disk ---------------------------------------------------------------------


def test_a_journal_that_meets_a_full_disk_stops_cleanly_and_the_answer_is_kept(small_disk: Path) -> None:
    from pytest_extractbench.dataset.responses import ModelResponse
    from pytest_extractbench.live.journal import Journal, read_journal

    journal = Journal(small_disk)
    journal.append(MODEL, "s0", "k0", ModelResponse(content='{"name": "P0"}'))
    fill(small_disk / FILLER)
    big = ModelResponse(content="x" * 200_000)  # more than the last free bytes: the write fails part-way
    journal.append(MODEL, "s1", "k1", big)  # no exception: the answer still goes to its item
    assert journal.error is not None and "No space left on device" in journal.error
    journal.append(MODEL, "s2", "k2", ModelResponse(content="{}"))  # stopped: nothing more is written
    journal.close()
    (small_disk / FILLER).unlink()
    # resumed later: a line torn by the full disk is ended, so the next answer is not glued to it
    again = Journal(small_disk)
    again.append(MODEL, "s3", "k3", ModelResponse(content='{"name": "P3"}'))
    again.close()
    assert [e["sample_id"] for e in read_journal(small_disk)] == ["s0", "s3"]
