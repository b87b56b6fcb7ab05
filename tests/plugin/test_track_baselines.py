"""Baselines of the toolcall, generate and repair tracks through pytest, from recorded predictions: a toolcall run
saved and compared on its own figures (pass rate, accuracy, name match... with the paired tests the extraction
track's metrics get, figures worked out by hand), pass^k over repeats against a baseline, a baseline of another
track or a figure the track lacks that could not be measured (fails, or warns), and the requirement checks and the
baseline in the track's summary.md and report.html."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from typing import Any

import pytest
from benchrun import BenchRun

FUNCTION = {
    "name": "get_weather",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}
CITIES = ["Paris", "Oslo", "Rome", "Lima", "Kyiv", "Doha", "Bern", "Riga"]
DATA = [
    {
        "id": f"t{i}",
        "question": f"What is the weather in {city}?",
        "functions": [FUNCTION],
        "expected_calls": [{"get_weather": {"city": [city]}}],
    }
    for i, city in enumerate(CITIES)
]
GENERATE = [{"id": "g0", "schema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}}]


def call(city: str) -> list[dict[str, Any]]:
    return [{"name": "get_weather", "arguments": {"city": city}}]


RIGHT = [{"id": f"t{i}", "output": call(city)} for i, city in enumerate(CITIES)]
# t0-t5 ask for the wrong city (the right function, one wrong argument); t6 and t7 stay right
WRONG = [{"id": f"t{i}", "output": call("Nowhere" if i < 6 else city)} for i, city in enumerate(CITIES)]


def toolcall(run: BenchRun, predictions: list[dict[str, Any]], *args: str) -> pytest.RunResult:
    return run(
        "--extractbench-track",
        "toolcall",
        "--extractbench-dataset",
        "data.jsonl",
        "--extractbench-predictions",
        "preds.jsonl",
        "--extractbench-resamples",
        "2000",
        "--extractbench-report-only",
        *args,
        files={"data.jsonl": DATA, "preds.jsonl": predictions},
    )


def test_a_toolcall_run_is_compared_with_its_baseline_on_its_own_figures(run: BenchRun) -> None:
    saved = toolcall(run, RIGHT, "--extractbench-save", "base")
    assert saved.ret == pytest.ExitCode.OK
    (path,) = (run.path / ".extractbench" / "baselines").iterdir()
    stored = json.loads(path.read_text())
    assert stored["track"] == "toolcall"
    first = stored["models"]["predictions"]["samples"][0]
    assert (first["passed"], first["row"]["passed"], first["row"]["name_matches"], first["fields"]) == (
        True,
        1.0,
        1.0,
        [],
    )
    assert stored["models"]["predictions"]["metrics"]["accuracy"] == 1.0

    result = toolcall(
        run,
        WRONG,
        "--extractbench-compare",
        "base",
        "--extractbench-compare-fail",
        "pass_rate:-0.1",
        "--extractbench-compare-fail",
        "name_match_rate:-0.05",
        "--junitxml",
        "junit.xml",
    )
    result.assert_outcomes(passed=2, failed=6)  # report-only: the items alone would leave the exit code at 0
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    comparison = run.document()["baseline_comparison"]
    model = comparison["models"]["predictions"]
    found = model["metrics"]
    assert set(found) == {
        "pass_rate",
        "accuracy",
        "output_valid_rate",
        "valid_call_rate",
        "name_match_rate",
        "arguments_exact_match_rate",
        "arguments_f1",
    }
    # 6 of 8 pass -> fail: 1 -> 2/8; the exact permutation test over 2^8 swaps: the 4 arrangements of the two
    # unchanged samples give each extreme sum, at each end
    rate = found["pass_rate"]
    assert (rate["b"], rate["a"], rate["delta"]) == (1.0, 0.25, -0.75)
    assert rate["p_value"] == pytest.approx(2 * 4 / 2**8) and rate["significant"] is True
    # every call names the right function; arguments: tp 2, fp 6, fn 6 -> P = R = F1 = 2/8
    assert (found["name_match_rate"]["a"], found["name_match_rate"]["delta"]) == (1.0, 0.0)
    assert found["arguments_f1"]["a"] == pytest.approx(0.25) and found["arguments_f1"]["b"] == 1.0
    assert (model["verdict"], model["verdict_metric"]) == ("regressed", "pass_rate")
    assert model["buckets"]["counts"]["regressed"] == 6 and model["buckets"]["counts"]["unchanged"] == 2
    assert model["buckets"]["samples"]["regressed"] == [f"t{i}" for i in range(6)]
    checks = {c["metric"]: c for c in comparison["checks"]}
    assert (checks["pass_rate"]["outcome"], checks["pass_rate"]["failed"]) == ("missed", True)
    assert (checks["name_match_rate"]["outcome"], checks["name_match_rate"]["failed"]) == ("held", False)

    out = result.stdout.str()
    assert "REGRESSION model 'predictions': pass_rate 1.000 -> 0.250 (delta -0.750" in out
    assert "samples (regressed: pass -> fail): 6 regressed, 0 fixed, 0 still failing, 2 unchanged" in out
    assert "regression gate: FAILED" in out
    result.stdout.fnmatch_lines(["*6 failed, 2 passed*1 gate failed*"])  # pytest may count warnings between
    summary = (run.path / "out" / "summary.md").read_text()
    assert "**Gate: FAILED** (1 of 1 failed)" in summary
    assert "regression against the baseline, model 'predictions': 1 of 2 check(s) failed" in summary
    assert "predictions **REGRESSED**: samples passed 1.000 -> 0.250 (-0.750" in summary
    assert "## Against the baseline" in summary and "| Arguments F1 | 1.000 | 0.250 | -0.750 (worse) |" in summary
    assert "Regressed samples (pass -> fail): t0, t1, t2, t3, t4, t5." in summary
    report = (run.path / "out" / "report.html").read_text()
    assert 'id="gate"' in report and 'id="baseline"' in report and "REGRESSED" in report
    # each testcase's bucket in the JUnit XML, the suite's counts once
    suite = ET.parse(run.path / "junit.xml").getroot().find("testsuite")
    assert suite is not None
    buckets = {
        case.get("name", "").split("-", 1)[1].rstrip("]"): prop.get("value")
        for case in suite.iter("testcase")
        for prop in case.iter("property")
        if prop.get("name") == "extractbench_bucket"
    }
    assert buckets == {f"t{i}": "regressed" if i < 6 else "unchanged" for i in range(8)}
    assert [p.get("value") for p in suite.iter("property") if p.get("name") == "extractbench_buckets"] == [
        "predictions: 6 regressed, 0 fixed, 0 still failing, 2 unchanged, 0 new, 0 removed, 0 changed"
    ]

    # the same answers again: nothing moved, the gate holds
    same = toolcall(run, RIGHT, "--extractbench-compare", "base", "--extractbench-compare-fail", "pass_rate:-0.1")
    assert same.ret == pytest.ExitCode.OK
    assert run.document()["baseline_comparison"]["models"]["predictions"]["verdict"] == "neutral"


def test_a_baseline_of_another_track_or_a_figure_the_track_lacks_could_not_be_measured(run: BenchRun) -> None:
    toolcall(run, RIGHT, "--extractbench-save", "base")
    args = (
        "--extractbench-track",
        "generate",
        "--extractbench-dataset",
        "gen.jsonl",
        "--extractbench-predictions",
        "gen-preds.jsonl",
        "--extractbench-compare",
        "base",
        "--extractbench-compare-fail",
        "pass_rate:-0.1",
    )
    files = {"gen.jsonl": GENERATE, "gen-preds.jsonl": [{"id": "g0", "output": {"n": 1}}]}
    result = run(*args, files=files)
    result.assert_outcomes(passed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # a check nothing could measure never passes
    comparison = run.document()["baseline_comparison"]
    (check,) = comparison["checks"]
    assert (check["outcome"], check["failed"]) == ("could not be measured", True)
    assert "saved from a toolcall run and this is a generate run" in check["message"]
    assert comparison["models"] == {}
    warned = run(*args, "--extractbench-unmeasured", "warn", files=files)
    assert warned.ret == pytest.ExitCode.OK
    summary = (run.path / "out" / "summary.md").read_text()
    assert "**Warning**: 1 threshold(s) could not be measured and were let pass" in summary

    # a figure the toolcall track does not have (a repair and generate figure)
    lacking = toolcall(run, RIGHT, "--extractbench-compare", "base", "--extractbench-compare-fail", "json_valid:-0.1")
    assert lacking.ret == pytest.ExitCode.TESTS_FAILED
    (check,) = run.document()["baseline_comparison"]["checks"]
    assert check["outcome"] == "could not be measured"
    assert "the toolcall track has no json_valid_rate" in check["message"]


def test_pass_hat_k_of_a_track_against_its_baseline(run: BenchRun) -> None:
    """Recorded runs: the baseline's three runs are right on every sample; now t0-t5 go wrong in their second run
    (2 of 3 pass), so pass^3 drops from 1 to 2/8 while every item (decided by its first run) still passes."""
    steady = [{"id": f"t{i}", "outputs": [call(city)] * 3} for i, city in enumerate(CITIES)]
    flaky = [
        {"id": f"t{i}", "outputs": [call(city), call("Nowhere") if i < 6 else call(city), call(city)]}
        for i, city in enumerate(CITIES)
    ]
    toolcall(run, steady, "--extractbench-repeats", "3", "--extractbench-save", "base")
    result = toolcall(
        run,
        flaky,
        "--extractbench-repeats",
        "3",
        "--extractbench-compare",
        "base",
        "--extractbench-compare-fail",
        "pass^k:-0.1",
        "--extractbench-compare-fail",
        "pass@k:-0.05",
    )
    result.assert_outcomes(passed=8)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    model = run.document()["baseline_comparison"]["models"]["predictions"]
    hat, at = model["metrics"]["pass_hat_k"], model["metrics"]["pass_at_k"]
    assert (hat["b"], hat["a"], hat["delta"]) == (1.0, 0.25, -0.75)
    assert hat["p_value"] == pytest.approx(2 * 4 / 2**8)
    assert (at["a"], at["delta"]) == (1.0, 0.0)
    assert model["metrics"]["pass_rate"]["delta"] == 0.0  # the first runs: unchanged
    assert model["repeats"] == {"compared": True, "runs": 3, "samples": 8}
    checks = {c["metric"]: c["outcome"] for c in run.document()["baseline_comparison"]["checks"]}
    assert checks == {"pass_hat_k": "missed", "pass_at_k": "held"}


def test_a_track_summary_lists_its_requirement_checks(run: BenchRun) -> None:
    result = toolcall(
        run,
        WRONG,
        "--extractbench-require",
        "accuracy>=0.9",
        "--extractbench-require",
        "name_match_rate>=0.9",
        "--extractbench-require",
        "pass_rate>=0.5",
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    checks = {
        c["metric"]: (c["value"], c["outcome"])
        for c in run.document()["models"]["predictions"]["requirements"]["checks"]
    }
    assert checks == {"accuracy": (0.25, "missed"), "name_match_rate": (1.0, "held"), "pass_rate": (0.25, "missed")}
    summary = (run.path / "out" / "summary.md").read_text()
    assert "**Gate: FAILED** (1 of 1 failed)" in summary
    assert "- **FAILED**: required thresholds, model 'predictions': 2 threshold(s) missed" in summary
    assert "  - accuracy = 0.250 (needs &gt;= 0.900): missed" in summary  # ">" escaped for Markdown
    assert "  - pass\\_rate = 0.250 (needs &gt;= 0.500): missed" in summary  # "_" escaped too
    report = (run.path / "out" / "report.html").read_text()
    assert "required thresholds, model &#39;predictions&#39;: 2 threshold(s) missed" in report
    # a track run that asserts no gate says nothing of one
    toolcall(run, RIGHT)
    assert "Gate" not in (run.path / "out" / "summary.md").read_text()
