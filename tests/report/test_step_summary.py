"""summary.md as a PR comment and a GitHub Actions job summary: the 60 KB cap that says what it cut, and the append
to $GITHUB_STEP_SUMMARY (only when that variable is set)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from _runs import fixture_outputs, make_run
from benchrun import BenchRun
from hypothesis import given
from hypothesis import strategies as st

from pytest_extractbench.report import exports, step_summary
from pytest_extractbench.report.rows import read_run

SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
    "required": ["name"],
}
SAMPLES = [
    {
        "id": f"s{i}",
        "text": f"Person {i}, {20 + i}.",
        "schema": SCHEMA,
        "expected": {"name": f"Person {i}", "age": 20 + i},
    }
    for i in range(4)
]
PREDICTIONS = [
    {"id": f"s{i}", "output": json.dumps({"name": f"Person {i}", "age": 20 + i + (i == 3)})} for i in range(4)
]
ARGS = (
    "--extractbench-dataset",
    "data.jsonl",
    "--extractbench-predictions",
    "preds.jsonl",
    "--model",
    "m1",
    "--extractbench-sla",
    "none",
)
TRAILER = re.compile(
    r"\n\n\*\u2026 (\d+) more lines not shown(?: \((\d+) section\(s\): (.*?)\))?: "
    r"summary\.md is cut at "
    r"\d+ KB; see report\.html and metrics\.json in the run directory\.\*\n$"
)

line = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\n"), max_size=300)
heading = line.map(lambda text: "## " + text)


@given(lines=st.lists(st.one_of(line, heading), max_size=300), limit=st.integers(2_000, 20_000))
def test_the_cap_keeps_whole_lines_and_counts_the_ones_it_cut(lines: list[str], limit: int) -> None:
    text = "\n".join(lines)
    capped = exports.cap_summary(text, limit)
    if len(text.encode("utf-8")) <= limit:
        assert capped == text
        return
    assert len(capped.encode("utf-8")) <= limit
    found = TRAILER.search(capped)
    assert found, capped[-300:]
    kept = capped[: found.start()]
    kept_lines = kept.split("\n") if kept else []
    cut = lines[len(kept_lines) :]
    assert lines[: len(kept_lines)] == kept_lines and int(found.group(1)) == len(cut)
    cut_headings = [h.lstrip("#").strip() for h in cut if h.startswith("## ")]
    assert int(found.group(2) or 0) == len(cut_headings)


def test_a_summary_past_60_kb_is_cut_and_says_what_was_cut(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = make_run(tmp_path, {"good": fixture_outputs("demo.jsonl")})
    data = read_run(run)
    one = data.document["models"]["good"]
    document = {**data.document, "models": {f"model-{i:02d}": one for i in range(40)}, "comparison": None}
    capped = exports.summary_md(document)
    with monkeypatch.context() as patch:
        patch.setattr(exports, "cap_summary", lambda text, limit=0: text)
        whole = exports.summary_md(document)
    assert len(whole.encode("utf-8")) > exports.SUMMARY_LIMIT  # the premise: forty models do not fit
    assert len(capped.encode("utf-8")) <= exports.SUMMARY_LIMIT < 60 * 1024
    found = TRAILER.search(capped)
    assert found
    kept = capped[: found.start()].split("\n")
    assert whole.split("\n")[: len(kept)] == kept
    assert int(found.group(1)) == len(whole.split("\n")) - len(kept)
    first_cut = next(line for line in whole.split("\n")[len(kept) :] if line.startswith("## "))[3:]
    # the sections cut, counted and named from the first to the last model's
    assert found.group(3).startswith(first_cut) and found.group(3).endswith("model-39")
    assert int(found.group(2)) == 40 - int(first_cut.removeprefix("model-"))
    assert capped.startswith("# Model Evaluation Report") and "**Gate" in capped[:2000]  # the verdict leads


def test_the_run_appends_summary_md_to_the_job_summary(
    run: BenchRun, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    job = pytester.path / "step-summary.md"
    job.write_text("earlier step\n", encoding="utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(job))
    run(*ARGS, files={"data.jsonl": SAMPLES, "preds.jsonl": PREDICTIONS})
    summary = (pytester.path / "out" / "summary.md").read_text(encoding="utf-8")
    assert job.read_text(encoding="utf-8") == "earlier step\n\n" + summary.rstrip("\n") + "\n"
    run(*ARGS, out="again")  # a second run in the same job adds its own, after the first
    again = (pytester.path / "again" / "summary.md").read_text(encoding="utf-8")
    assert job.read_text(encoding="utf-8").endswith(summary.rstrip("\n") + "\n\n" + again.rstrip("\n") + "\n")


def test_without_the_variable_nothing_is_written_outside_the_run_directory(
    run: BenchRun, pytester: pytest.Pytester
) -> None:
    run.write_jsonl("data.jsonl", SAMPLES)
    run.write_jsonl("preds.jsonl", PREDICTIONS)
    before = sorted(p.name for p in pytester.path.iterdir())
    run(*ARGS)
    after = sorted(p.name for p in pytester.path.iterdir())
    assert "out" in after and set(after) - set(before) <= {"out", ".extractbench", ".pytest_cache"}


def test_a_job_summary_near_githubs_limit_gets_a_line_instead(tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("# Model Evaluation Report\n" + "x" * 5_000 + "\n", encoding="utf-8")
    job = tmp_path / "job.md"
    job.write_bytes(b"y" * (step_summary.GITHUB_LIMIT - 1_000))
    step_summary.append_step_summary(summary, {"GITHUB_STEP_SUMMARY": str(job)})
    added = job.read_bytes()[step_summary.GITHUB_LIMIT - 1_000 :].decode("utf-8")
    assert "not added" in added and str(summary) in added and "x" * 100 not in added
    assert job.stat().st_size <= step_summary.GITHUB_LIMIT
    assert step_summary.append_step_summary(summary, {}) is None  # unset: nothing
    assert step_summary.append_step_summary(summary, {"GITHUB_STEP_SUMMARY": ""}) is None
