"""--extractbench-extractor MODULE:FUNCTION: a Python callable answers instead of a server, live-like
(requests ahead, journal, cache, resume, xdist), and every sample is accounted for whatever it does."""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

import pytest
from benchrun import BenchRun

from _require import import_or_skip
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

# Answers from the text itself (no peeking at the gold): a real, if simple, extraction. Every call is
# logged to calls.log, so the tests can count what was asked. Ages of samples 3 and 7 come back as
# strings (schema violations); sample 5 raises; sample 9's answer is a list: JSON text of a list from
# `extract` (valid JSON, violates the schema), a Python list from `extract_async` (not an answer at all).
EXTRACTOR = """
import json, os, re

def _log(sample):
    with open(os.path.join(os.path.dirname(__file__), "calls.log"), "a") as handle:
        handle.write(sample.id + "\\n")

def _answer(sample):
    name, age = re.match(r"(Person \\d+) is (\\d+)", sample.text).groups()
    if sample.id == "s05":
        raise RuntimeError("the OCR step failed")
    if sample.id == "s09":
        return [name, age]
    value = age if sample.id in ("s03", "s07") else int(age)
    return {"name": name, "age": value}

def extract(sample):
    _log(sample)
    return json.dumps(_answer(sample))

async def extract_async(sample):
    _log(sample)
    return _answer(sample)
"""


@pytest.fixture
def project(pytester: pytest.Pytester) -> Path:
    (pytester.path / "data.jsonl").write_text("".join(json.dumps(s) + "\n" for s in SAMPLES), encoding="utf-8")
    (pytester.path / "myextract.py").write_text(EXTRACTOR, encoding="utf-8")
    return pytester.path


ARGS = ("--extractbench-dataset", "data.jsonl", "--extractbench-sla", "none")


def calls(root: Path) -> list[str]:
    path = root / "calls.log"
    return path.read_text().split() if path.exists() else []


def metrics(root: Path, out: str = "out") -> dict:
    return json.loads((root / out / "metrics.json").read_text())


def records(root: Path, out: str = "out") -> dict[str, dict]:
    rows = list(iter_samples(root / out / "samples.jsonl"))
    return {row["sample_id"]: row for row in rows}


@pytest.mark.slow
@pytest.mark.parametrize("function", ["extract", "extract_async"])
def test_every_sample_is_asked_once_journaled_and_scored(run: BenchRun, project: Path, function: str) -> None:
    result = run(*ARGS, "--extractbench-extractor", f"myextract:{function}", "--extractbench-no-cache")
    # 12 items: 8 pass; s03/s07 violate the schema, s05 raised, s09 returned a list
    result.assert_outcomes(passed=8, failed=4)
    assert sorted(calls(project)) == sorted(s["id"] for s in SAMPLES)
    journal = [json.loads(line) for line in (project / "out" / "responses.jsonl").read_text().splitlines()]
    assert sorted(row["sample_id"] for row in journal) == sorted(s["id"] for s in SAMPLES)
    found = records(project)
    assert set(found) == {s["id"] for s in SAMPLES}
    assert found["s05"]["response"]["error_class"] == "extractor_error"
    assert "RuntimeError: the OCR step failed" in found["s05"]["response"]["error"]
    if function == "extract_async":
        assert found["s09"]["response"]["error_class"] == "extractor_error"
        assert "returned list" in found["s09"]["response"]["error"]
    else:
        assert found["s09"]["response"]["error_class"] is None and found["s09"]["score"]["schema_valid"] is False
    assert found["s03"]["score"]["schema_valid"] is False and found["s03"]["response"]["error_class"] is None
    model = metrics(project)["models"][function]  # the function's name is the model's
    assert model["num_samples"] == 12
    assert model["schema_validity_rate"] == pytest.approx(8 / 12)
    reliability = model["performance"]["reliability"]["outcome_counts"]
    raised = 2 if function == "extract_async" else 1
    assert reliability["extractor_error"] == raised and reliability["schema_failure"] == 4 - raised
    live = metrics(project)["run"]["live"]
    assert live["mode"] == "extractor" and live["extractor"] == f"myextract:{function}"


@pytest.mark.slow
def test_a_rerun_is_answered_by_the_cache(run: BenchRun, project: Path) -> None:
    run(*ARGS, "--extractbench-extractor", "myextract:extract", "--extractbench-cache").assert_outcomes(
        passed=8, failed=4
    )
    assert len(calls(project)) == 12
    run(*ARGS, "--extractbench-extractor", "myextract:extract", "--extractbench-cache", out="again").assert_outcomes(
        passed=8, failed=4
    )
    # only the call that raised is asked again: errors are never reused
    assert calls(project)[12:] == ["s05"]
    assert metrics(project, "again")["run"]["live"]["cached_responses"] == 11
    assert metrics(project, "again")["models"]["extract"]["extraction_quality_score"] == pytest.approx(
        metrics(project)["models"]["extract"]["extraction_quality_score"]
    )


@pytest.mark.slow
def test_resume_after_a_killed_run_asks_only_what_is_missing(run: BenchRun, project: Path) -> None:
    # the process dies in the middle of the run (no cleanup, like a kill) at the 7th call while ./die exists
    (project / "dying.py").write_text(
        EXTRACTOR
        + textwrap.dedent("""
        def extract_dying(sample):
            here = os.path.dirname(__file__)
            calls = os.path.join(here, "calls.log")
            if os.path.exists(os.path.join(here, "die")) and len(open(calls).read().split()) >= 6:
                os._exit(3)
            return extract(sample)
        """),
        encoding="utf-8",
    )
    (project / "die").touch()
    (project / "calls.log").touch()
    first = run(
        *ARGS,
        "--extractbench-extractor",
        "dying:extract_dying",
        "--model",
        "m",
        "--extractbench-no-cache",
        "--extractbench-concurrency",
        "1",
        subprocess=True,
    )  # the process dies: it must be its own
    assert first.ret == 3
    rows = [json.loads(line) for line in (project / "out" / "responses.jsonl").read_text().splitlines()]
    assert 0 < len(rows) < 12
    # answers are reused; an error (s05 raised) is asked again
    journaled = {row["sample_id"] for row in rows if row["response"]["error_class"] is None}
    before = len(calls(project))
    (project / "die").unlink()
    resumed = run(
        *ARGS,
        "--extractbench-extractor",
        "dying:extract_dying",
        "--model",
        "m",
        "--extractbench-no-cache",
        "--extractbench-resume",
        "out",
        fresh=False,
    )
    resumed.assert_outcomes(passed=8, failed=4)
    asked_again = calls(project)[before:]
    assert sorted(asked_again) == sorted({s["id"] for s in SAMPLES} - journaled)
    assert set(records(project)) == {s["id"] for s in SAMPLES}


@pytest.mark.slow
def test_two_workers_give_the_same_metrics_as_one_process(run: BenchRun, project: Path) -> None:
    import_or_skip("xdist", "pytest-xdist (the dev extra) is not installed")
    run(
        *ARGS, "--extractbench-extractor", "myextract:extract_async", "--extractbench-no-cache", out="single"
    ).assert_outcomes(passed=8, failed=4)
    run(
        *ARGS, "--extractbench-extractor", "myextract:extract_async", "--extractbench-no-cache", "-n", "2", out="two"
    ).assert_outcomes(passed=8, failed=4)
    one, two = metrics(project, "single")["models"], metrics(project, "two")["models"]
    for name in ("extraction_quality_score", "schema_validity_rate", "field_f1_partial", "hallucination_rate"):
        assert two["extract_async"][name] == pytest.approx(one["extract_async"][name])
    assert len(calls(project)) == 24  # each worker asked only its own items
    assert {k: v["score"]["eqs"] for k, v in records(project, "two").items()} == {
        k: v["score"]["eqs"] for k, v in records(project, "single").items()
    }


def test_a_file_path_spec_works(run: BenchRun, project: Path) -> None:
    (project / "pipelines").mkdir()
    shutil.copy(project / "myextract.py", project / "pipelines" / "mine.py")
    run(*ARGS, "--extractbench-extractor", "pipelines/mine.py:extract").assert_outcomes(passed=8, failed=4)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("myextract", "expected MODULE:FUNCTION"),
        ("nosuchmodule:extract", "cannot import 'nosuchmodule'"),
        ("myextract:nothing", "has no attribute 'nothing'"),
        ("myextract:json", "'json' is not callable"),
        ("missing.py:extract", "no file"),
    ],
)
def test_a_bad_spec_is_a_usage_error_naming_it(run: BenchRun, project: Path, spec: str, message: str) -> None:
    result = run(*ARGS, "--extractbench-extractor", spec)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([f"*--extractbench-extractor {spec!r}*{message}*"])
    assert calls(project) == []


def test_an_extractor_and_predictions_exclude_each_other(run: BenchRun, project: Path) -> None:
    (project / "preds.jsonl").write_text("", encoding="utf-8")
    result = run(*ARGS, "--extractbench-extractor", "myextract:extract", "--extractbench-predictions", "preds.jsonl")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*an extractor answers instead of predictions*"])
