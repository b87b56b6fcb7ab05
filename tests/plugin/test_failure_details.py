"""Thousands of failing samples: pytest's FAILURES section details the first N and its short summary lists them,
one line each says how many more there are and where; every count, the exit code and JUnit keep them all."""

from __future__ import annotations

import json
import re
from pathlib import Path
from xml.etree import ElementTree

import pytest
from benchrun import OFFLINE_ARGS, BenchRun

from pytest_extractbench.core.rundoc import iter_samples

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
SAMPLES = [{"id": f"s{i:03d}", "text": f"n is {i}", "schema": SCHEMA, "expected": {"n": i}} for i in range(30)]
# every odd sample answers with the wrong type (schema-invalid, so the item fails); even ones are exact
OUTPUTS = [{"id": s["id"], "output": json.dumps({"n": str(i) if i % 2 else i})} for i, s in enumerate(SAMPLES)]
FAILED_IDS = [s["id"] for i, s in enumerate(SAMPLES) if i % 2]


ARGS = (
    *OFFLINE_ARGS,
    "test_plain.py",
)


@pytest.fixture(autouse=True)
def _inputs(run: BenchRun) -> None:
    run.write_jsonl("data.jsonl", SAMPLES)
    run.write_jsonl("preds.jsonl", OUTPUTS)
    run.pytester.makepyfile(test_plain="def test_plain_failure():\n    assert 1 == 2\n")


def detailed(result: pytest.RunResult) -> list[str]:
    """Sample ids with a section in the FAILURES block."""
    return re.findall(r"^_+ predictions on sample (\S+) _+$", result.stdout.str(), flags=re.M)


def listed(result: pytest.RunResult) -> list[str]:
    """Sample ids with a FAILED line in the short summary."""
    return re.findall(r"^FAILED data\.jsonl::extractbench\[predictions-(\S+)\]", result.stdout.str(), flags=re.M)


def test_past_the_limit_one_line_stands_for_the_rest_and_nothing_is_lost(
    run: BenchRun, pytester: pytest.Pytester
) -> None:
    result = run(*ARGS, "--extractbench-failure-details", "4", "--junitxml", "junit.xml")
    assert detailed(result) == FAILED_IDS[:4]
    out = result.stdout.str()
    sections, summary = out.split("short test summary")
    assert "test_plain_failure" in sections and "FAILED test_plain.py::test_plain_failure" in summary  # never held
    held = len(FAILED_IDS) - 4
    result.stdout.fnmatch_lines([f"... {held} more failed samples not detailed here; *out*samples.jsonl*"])
    # the short summary lists the detailed ones, then one line for the rest
    assert listed(result) == FAILED_IDS[:4]
    result.stdout.fnmatch_lines(
        [
            f"FAILED data.jsonl::extractbench[[]predictions-{FAILED_IDS[3]}[]]*",
            f"... {held} more failed samples not listed here (each is in *out*samples.jsonl and the JUnit XML*",
        ]
    )
    # the counts, the exit code and JUnit still see every failure
    result.assert_outcomes(failed=len(FAILED_IDS) + 1, passed=len(SAMPLES) - len(FAILED_IDS))
    assert sorted(failure_texts(pytester.path / "junit.xml")) == FAILED_IDS
    rows = list(iter_samples(pytester.path / "out" / "samples.jsonl"))
    assert sorted(r["sample_id"] for r in rows if not r["passed"]) == FAILED_IDS


def test_under_the_limit_every_failure_is_detailed(run: BenchRun) -> None:
    result = run(*ARGS, "--extractbench-failure-details", str(len(FAILED_IDS)))
    assert detailed(result) == FAILED_IDS and listed(result) == FAILED_IDS
    assert "more failed samples not" not in result.stdout.str()


def test_the_default_limit_and_the_ini_key(run: BenchRun, pytester: pytest.Pytester) -> None:
    assert len(detailed(run(*ARGS))) == min(20, len(FAILED_IDS))
    pytester.makeini("[pytest]\nextractbench_failure_details = 2\n")
    assert detailed(run(*ARGS)) == FAILED_IDS[:2]


def test_no_tracebacks_details_nothing_and_still_lists_only_the_first(run: BenchRun) -> None:
    result = run(*ARGS, "--extractbench-failure-details", "1", "--tb=no")
    assert detailed(result) == [] and "more failed samples not detailed" not in result.stdout.str()
    assert listed(result) == FAILED_IDS[:1]
    result.stdout.fnmatch_lines([f"... {len(FAILED_IDS) - 1} more failed samples not listed here*"])
    result.assert_outcomes(failed=len(FAILED_IDS) + 1, passed=len(SAMPLES) - len(FAILED_IDS))


def test_a_short_summary_without_failures_gets_no_line_for_them(run: BenchRun) -> None:
    result = run(*ARGS, "--extractbench-failure-details", "1", "-rN")
    assert listed(result) == [] and "more failed samples not listed" not in result.stdout.str()
    result.assert_outcomes(failed=len(FAILED_IDS) + 1, passed=len(SAMPLES) - len(FAILED_IDS))


def test_a_negative_limit_is_refused(run: BenchRun) -> None:
    result = run(*ARGS, "--extractbench-failure-details", "-1")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "--extractbench-failure-details" in result.stderr.str() + result.stdout.str()


def failure_texts(path: Path) -> dict[str, str]:
    """Sample id -> the failure text pytest kept for it, from the JUnit XML."""
    found = {}
    for case in ElementTree.parse(path).iter("testcase"):
        failure = case.find("failure")
        match = re.fullmatch(r"extractbench\[predictions-(\S+)\]", case.get("name", ""))
        if failure is not None and match:
            found[match.group(1)] = failure.text or ""
    return found


@pytest.mark.parametrize("xdist", [(), pytest.param(("-n", "2"), marks=pytest.mark.slow)], ids=["one process", "xdist"])
def test_past_the_limit_a_failure_keeps_only_its_one_line_reason(
    run: BenchRun, pytester: pytest.Pytester, xdist: tuple
) -> None:
    result = run(*ARGS, "--extractbench-failure-details", "4", "--junitxml", "junit.xml", *xdist)
    texts = failure_texts(pytester.path / "junit.xml")
    assert sorted(texts) == FAILED_IDS
    reason = "(model 'predictions'): output violates the schema (1 error(s))"
    for sample_id, text in texts.items():
        assert text.startswith(f"sample '{sample_id}' {reason}")
    # each process details its first 4 failures: whichever the FAILURES section shows are among them
    explained = [sample_id for sample_id, text in texts.items() if "\n  schema: $.n: " in text]
    assert 4 <= len(explained) <= 8 if xdist else explained == FAILED_IDS[:4]
    assert set(detailed(result)) <= set(explained)
    assert all(texts[sample_id] == f"sample '{sample_id}' {reason}" for sample_id in set(texts) - set(explained))
    sections = result.stdout.str().split("short test summary")[0]
    assert len(detailed(result)) == 4 and sections.count("  schema: $.n: ") == 4
