"""The session gate where CI looks: the counts line, the JUnit XML, summary.md, report.html, the recommendation."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DEMO = str(ROOT / "fixtures" / "predictions" / "demo.jsonl")  # EQS 0.974, validity 100%: meets "minimum"
WEAK = str(ROOT / "fixtures" / "predictions" / "weak.jsonl")  # validity 94.2%: misses "minimum" on validity only


def bench(pytester: pytest.Pytester, predictions: str, out: str, *args: str) -> pytest.RunResult:
    return pytester.runpytest(
        "-p",
        "no:randomly",
        "-W",
        "ignore::pytest.PytestAssertRewriteWarning",
        "--extractbench",
        "--extractbench-predictions",
        predictions,
        "--extractbench-output",
        out,
        f"--junitxml={out}.xml",
        *args,
    )


def junit(pytester: pytest.Pytester, out: str) -> tuple[ET.Element, dict[str, ET.Element]]:
    suite = ET.parse(pytester.path / f"{out}.xml").getroot().find("testsuite")
    assert suite is not None
    return suite, {case.get("name"): case for case in suite.iter("testcase")}


def test_a_run_failing_only_the_sla_says_so_in_every_output(pytester: pytest.Pytester) -> None:
    result = bench(pytester, WEAK, "weak")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert re.search(r"=+ 3 failed, 49 passed, 1 gate failed in ", result.stdout.lines[-1])
    result.assert_outcomes(passed=49, failed=3)  # the sample counts are the samples'
    suite, cases = junit(pytester, "weak")
    assert suite.get("failures") == "4" and suite.get("tests") == "53"
    failure = cases["extractbench-gate[sla-minimum-predictions]"].find("failure")
    assert failure is not None
    assert "SLA tier 'minimum', model 'predictions': 1 threshold(s) missed" in failure.get("message", "")
    assert "schema_validity = 0.942 (needs >= 0.950): missed" in failure.get("message", "")
    summary = (pytester.path / "weak" / "summary.md").read_text().splitlines()
    assert summary[2] == "**Gate: FAILED** (1 of 1 failed)"
    assert summary[4].startswith("- **FAILED**: SLA tier 'minimum'") and "schema\\_validity = 0.942" in summary[5]
    html = (pytester.path / "weak" / "report.html").read_text()
    assert html.index('<section id="gate">') < html.index('<section id="summary">')
    assert re.search(r'<h2>Gate: <span class="bad">FAILED</span></h2>', html)
    model = json.loads((pytester.path / "weak" / "metrics.json").read_text())["models"]["predictions"]
    assert model["recommendation"] == "Not recommended: fails the 'minimum' SLA tier of this run"
    assert "Deploy" not in "\n".join(summary) and "recommendation: Deploy" not in result.stdout.str()


def test_the_counts_line_names_one_gate_and_several_gates(pytester: pytest.Pytester) -> None:
    # two models, each its own gate: both miss the excellence tier, then both hold the minimum one
    result = bench(
        pytester, f"weak={WEAK}", "two", f"--extractbench-predictions=again={WEAK}", "--extractbench-sla", "excellence"
    )
    assert re.search(r"=+ 6 failed, 98 passed, 2 gates failed in ", result.stdout.lines[-1]), result.stdout.lines[-1]
    result = bench(pytester, DEMO, "held", f"--extractbench-predictions=again={DEMO}")
    assert re.search(r"=+ 104 passed, 2 gates passed in ", result.stdout.lines[-1]), result.stdout.lines[-1]


def test_a_passing_gate_is_a_passing_testcase(pytester: pytest.Pytester) -> None:
    result = bench(pytester, DEMO, "demo")
    assert result.ret == pytest.ExitCode.OK
    assert re.search(r"=+ 52 passed, 1 gate passed in ", result.stdout.lines[-1])
    suite, cases = junit(pytester, "demo")
    assert suite.get("failures") == "0"
    case = cases["extractbench-gate[sla-minimum-predictions]"]
    assert case.find("failure") is None
    assert {p.get("name"): p.get("value") for p in case.iter("property")} == {
        "extractbench_gate": "sla-minimum",
        "model": "predictions",
    }
    assert (pytester.path / "demo" / "summary.md").read_text().splitlines()[2] == "**Gate: passed** (1)"
    model = json.loads((pytester.path / "demo" / "metrics.json").read_text())["models"]["predictions"]
    assert model["recommendation"] == "Deploy without human review"


def test_no_gate_no_testcase(pytester: pytest.Pytester) -> None:
    result = bench(pytester, WEAK, "nogate", "--extractbench-sla", "none")
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # three samples failed, nothing else
    assert "gate" not in result.stdout.lines[-1]
    _, cases = junit(pytester, "nogate")
    assert not [name for name in cases if "gate" in name]
    assert (pytester.path / "nogate" / "summary.md").read_text().splitlines()[2].startswith("**Gate**: none asserted")


@pytest.mark.slow
def test_a_regression_against_the_baseline_is_its_own_failing_testcase(pytester: pytest.Pytester) -> None:
    assert bench(pytester, DEMO, "main", "--extractbench-save", "main").ret == pytest.ExitCode.OK
    result = bench(
        pytester,
        WEAK,
        "pr",
        "--extractbench-sla",
        "none",
        "--extractbench-compare",
        "main",
        "--extractbench-compare-fail",
        "eqs:-0.02",
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert re.search(r"=+ 3 failed, 49 passed, 1 gate failed in ", result.stdout.lines[-1])
    _, cases = junit(pytester, "pr")
    failure = cases["extractbench-gate[regression-predictions]"].find("failure")
    assert failure is not None
    message = failure.get("message", "")
    assert "regression against the baseline, model 'predictions': 1 of 1 check(s) failed" in message
    assert re.search(
        r"REGRESSION model 'predictions': extraction_quality_score 0\.974 -> 0\.861 \(delta -0\.114 "
        r"\[95% CI: [-+]0\.\d+, [-+]0\.\d+\], p = ",
        message,
    )
    summary = (pytester.path / "pr" / "summary.md").read_text()
    assert summary.index("**Gate: FAILED**") < summary.index("## Executive Summary")
    model = json.loads((pytester.path / "pr" / "metrics.json").read_text())["models"]["predictions"]
    assert model["recommendation"] == "Not recommended: fails the regression check against the baseline of this run"


@pytest.mark.slow
def test_under_xdist_the_controller_reports_the_gate(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest_subprocess(
        "-p",
        "no:randomly",
        "-n",
        "2",
        "--extractbench",
        "--extractbench-predictions",
        WEAK,
        "--extractbench-output",
        "x",
        "--junitxml=x.xml",
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert re.search(r"3 failed, 49 passed, 1 gate failed in ", result.stdout.lines[-1])
    suite, cases = junit(pytester, "x")
    assert (
        suite.get("failures") == "4" and cases["extractbench-gate[sla-minimum-predictions]"].find("failure") is not None
    )


@pytest.mark.slow
def test_required_thresholds_gate_the_session_on_any_metric(pytester: pytest.Pytester) -> None:
    # the demo outputs: 29 of 52 samples at EQS 1 (55.8%), so "perfect_samples>=60%" fails, while
    # "eqs>=0.9" (0.974) holds and a latency floor is not measured offline: skipped, not failed
    result = bench(
        pytester,
        DEMO,
        "req",
        "--extractbench-sla",
        "none",
        "--extractbench-require",
        "perfect_samples>=60%",
        "--extractbench-require",
        "eqs>=0.9",
        "--extractbench-require",
        "time_to_first_token_p95_ms<=800",
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "*missed 1 required threshold(s) (--extractbench-require):",
            "*perfect_sample_rate 55.8% (needs >= 60%): missed",
            "exit code 1 means a model missed a threshold this run requires*",
        ]
    )
    _, cases = junit(pytester, "req")
    failure = cases["extractbench-gate[required-predictions]"].find("failure")
    assert failure is not None and "required thresholds, model 'predictions': 1 threshold(s) missed" in failure.get(
        "message"
    )
    model = json.loads((pytester.path / "req" / "metrics.json").read_text())["models"]["predictions"]
    checks = {c["metric"]: (c["passed"], c["outcome"]) for c in model["requirements"]["checks"]}
    assert checks == {
        "perfect_sample_rate": (False, "missed"),
        "extraction_quality_score": (True, "held"),
        "time_to_first_token_p95_ms": (None, "not applicable"),
    }
    assert model["recommendation"] == "Not recommended: fails the required thresholds of this run"
    summary = (pytester.path / "req" / "summary.md").read_text()
    assert "- **FAILED**: required thresholds, model 'predictions': 1 threshold(s) missed" in summary
    # the same thresholds met: the gate passes
    met = bench(pytester, DEMO, "met", "--extractbench-sla", "none", "--extractbench-require", "perfect_samples>=50%")
    assert met.ret == pytest.ExitCode.OK
    met.stdout.fnmatch_lines(["*every required threshold held or does not apply to this run: the session gate passes."])


def test_a_requirement_on_an_unknown_metric_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = bench(pytester, DEMO, "bad", "--extractbench-require", "eqz>=0.9")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*'eqz>=0.9': unknown metric 'eqz'; known: *judge_score*"])
