"""Repeats against a baseline and on every track, through pytest and a loopback OpenAI-compatible server whose
answers flip on chosen samples from one run to the next: the pass counts a baseline keeps, pass@k / pass^k deltas
and the compare-fail gate worked out by hand, an older baseline that cannot answer, and the toolcall, generate and
repair tracks' pass@k and pass^k."""

from __future__ import annotations

import json
from math import comb
from typing import Any

import pytest
from benchrun import BenchRun
from faultserver import FaultServer

SCHEMA = {
    "type": "object",
    "required": ["name", "price"],
    "properties": {"name": {"type": "string"}, "price": {"type": "number"}},
}
DATA = [
    {
        "id": f"s{i}",
        "text": f"Item {i} costs {i} dollars.",
        "schema": SCHEMA,
        "expected": {"name": f"item {i}", "price": i},
    }
    for i in range(8)
]
RUNS = 3  # run r is asked with seed 42 + r


def user_text(body: dict[str, Any]) -> str:
    return " ".join(str(m.get("content")) for m in body["messages"] if m.get("role") == "user")


def steady(body: dict[str, Any]) -> Any:
    i = int(user_text(body).split("Item ")[1][0])
    return {"name": f"item {i}", "price": i}


def flaky(body: dict[str, Any]) -> Any:
    """s0-s5 answer with no JSON in run 1 (2 of 3 runs pass); s6 and s7 stay right (3 of 3). Run 0, the one the
    items are decided by, is always right."""
    i = int(user_text(body).split("Item ")[1][0])
    return "no idea" if i < 6 and body["seed"] == 43 else steady(body)


def bench(run: BenchRun, url: str, *args: str) -> pytest.RunResult:
    return run(
        "--extractbench-base-url",
        url,
        "--model",
        "test-model",
        "--extractbench-no-cache",
        "--extractbench-dataset",
        "data.jsonl",
        "--extractbench-repeats",
        str(RUNS),
        "--extractbench-temperature",
        "0.7",
        "--extractbench-sla",
        "none",
        "--extractbench-resamples",
        "2000",
        *args,
        files={"data.jsonl": DATA},
    )


@pytest.mark.slow
def test_pass_hat_k_regression_against_a_baseline_with_counts(run: BenchRun, fault_server: FaultServer) -> None:
    fault_server.answer = steady
    assert bench(run, fault_server.url, "--extractbench-save", "base").ret == pytest.ExitCode.OK
    (path,) = (run.path / ".extractbench" / "baselines").iterdir()
    stored = json.loads(path.read_text())["models"]["test-model"]["samples"]
    assert [s["repeats"] for s in stored] == [{"runs": 3, "passed": 3}] * 8

    fault_server.reset()
    fault_server.answer = flaky
    result = bench(
        run,
        fault_server.url,
        "--extractbench-compare",
        "base",
        "--extractbench-compare-fail",
        "pass^k:-0.1",
        "--extractbench-compare-fail",
        "pass@k:-0.05",
    )
    assert len(fault_server.requests) == 8 * RUNS
    result.assert_outcomes(passed=8)  # every item's first run is right: only the gate fails
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    comparison = run.document()["baseline_comparison"]["models"]["test-model"]
    # pass^3 per sample: C(2,3)/C(3,3) = 0 on s0-s5, 1 on s6, s7 -> 2/8; the baseline's is 1 everywhere
    hat, at = comparison["metrics"]["pass_hat_k"], comparison["metrics"]["pass_at_k"]
    assert (hat["b"], hat["a"], hat["delta"]) == (1.0, 0.25, -0.75)
    # exact permutation test over the 2^8 swaps: 6 samples differ by -1 each; the 4 arrangements of the other two
    # give the same sum, at each end
    assert hat["p_value"] == pytest.approx(2 * 4 / 2**8) and hat["significant"] is True
    assert (at["b"], at["a"], at["delta"]) == (1.0, 1.0, 0.0)  # some run passes on every sample, before and after
    assert comparison["repeats"] == {"compared": True, "runs": 3, "samples": 8}
    checks = {c["metric"]: c for c in run.document()["baseline_comparison"]["checks"]}
    assert (checks["pass_hat_k"]["outcome"], checks["pass_hat_k"]["failed"]) == ("missed", True)
    assert (checks["pass_at_k"]["outcome"], checks["pass_at_k"]["failed"]) == ("held", False)
    out = result.stdout.str()
    assert "REGRESSION model 'test-model': pass_hat_k 1.000 -> 0.250" in out
    assert "note: model 'test-model': pass@3 / pass^3 compared on the 8 samples both runs ran at least 3 times" in out
    summary = (run.path / "out" / "summary.md").read_text()
    assert "pass^k" in summary and "-0.750" in summary


@pytest.mark.slow
def test_a_baseline_saved_before_counts_says_not_measured(run: BenchRun, fault_server: FaultServer) -> None:
    fault_server.answer = steady
    bench(run, fault_server.url, "--extractbench-save", "base")
    (path,) = (run.path / ".extractbench" / "baselines").iterdir()
    raw = json.loads(path.read_text())  # as format 1 wrote it: no pass counts
    raw["format_version"] = 1
    for sample in raw["models"]["test-model"]["samples"]:
        del sample["repeats"]
    path.write_text(json.dumps(raw))
    fault_server.answer = flaky
    result = bench(
        run, fault_server.url, "--extractbench-compare", "base", "--extractbench-compare-fail", "pass^k:-0.1"
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # a check nothing could measure does not pass
    (check,) = run.document()["baseline_comparison"]["checks"]
    assert (check["outcome"], check["failed"]) == ("could not be measured", True)
    assert "not measured in the baseline" in check["message"] and "baseline format 1" in check["message"]
    result.stdout.fnmatch_lines(["*COULD NOT BE MEASURED model 'test-model': not measured in the baseline*"])
    warned = bench(
        run,
        fault_server.url,
        "--extractbench-compare",
        "base",
        "--extractbench-compare-fail",
        "pass^k:-0.1",
        "--extractbench-unmeasured",
        "warn",
    )
    assert warned.ret == pytest.ExitCode.OK
    assert run.document()["baseline_comparison"]["checks"][0]["outcome"] == "could not be measured"


REPAIR = [
    {
        "id": f"r{i}",
        "kind": "trailing_comma",
        "original": {"name": f"r{i}", "age": 30 + i},
        "schema": {
            "type": "object",
            "required": ["name", "age"],
            "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
        },
    }
    for i in range(4)
]


@pytest.mark.slow
def test_repair_track_counts_passes_over_repeats(run: BenchRun, fault_server: FaultServer) -> None:
    def answer(body: dict[str, Any]) -> Any:
        """r0 changes the age in runs 1 and 3, r1 in run 2; r2 and r3 repair every time."""
        i = int(user_text(body).split('"name": "r')[1][0])
        run_index = body.get("seed", 42) - 42
        wrong = (i == 0 and run_index in (1, 3)) or (i == 1 and run_index == 2)
        return {"name": f"r{i}", "age": 30 + i + (1 if wrong else 0)}

    fault_server.answer = answer
    result = run(
        "--extractbench-base-url",
        fault_server.url,
        "--model",
        "test-model",
        "--extractbench-no-cache",
        "--extractbench-track",
        "repair",
        "--extractbench-dataset",
        "repair.jsonl",
        "--extractbench-repeats",
        "4",
        "--extractbench-temperature",
        "0.7",
        "--extractbench-require",
        "pass^k>=0.6",
        "--extractbench-require",
        "pass@k>=0.9",
        "--extractbench-require",
        "json_valid_rate>=0.9",
        files={"repair.jsonl": REPAIR},
    )
    assert len(fault_server.requests) == 4 * 4
    result.assert_outcomes(passed=4)  # run 0 decides each item, and is right everywhere
    m = run.document()["models"]["test-model"]
    # passing runs: r0 2 of 4, r1 3 of 4, r2 and r3 4 of 4
    assert m["repeats"]["pass_counts"] == {"0": 0, "1": 0, "2": 1, "3": 1, "4": 2}
    assert m["pass_at_k"] == 1.0
    assert m["pass_hat_k"] == pytest.approx((0 + 0 + 1 + 1) / 4)  # C(c,4)/C(4,4): only 4 of 4 counts
    assert m["repeats"]["pass_hat"]["2"] == pytest.approx((comb(2, 2) / 6 + comb(3, 2) / 6 + 1 + 1) / 4)
    assert [(s["sample_id"], s["passed"]) for s in m["repeats"]["flaky_sample_list"]] == [("r0", 2), ("r1", 3)]
    checks = {c["metric"]: c for c in m["requirements"]["checks"]}
    assert (checks["pass_hat_k"]["outcome"], checks["pass_at_k"]["outcome"]) == ("missed", "held")
    assert (checks["json_valid_rate"]["value"], checks["json_valid_rate"]["outcome"]) == (1.0, "held")  # its own
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    out = result.stdout.str()
    assert "repeats (4 runs)    pass@4 100.0%   pass^4 50.0%   flaky samples 2" in out
    assert "required thresholds: FAILED: pass_hat_k = 0.500 (needs >= 0.600): missed" in out
    summary = (run.path / "out" / "summary.md").read_text()
    # summary.md breaks "@" with a zero-width space (no GitHub mention)
    assert "4 (some run passes) 100.0%, pass^4 (every run passes) 50.0%; 2 of 4 samples flaky" in summary
    assert "| r0 | 2 of 4 |" in summary


TOOLCALL = [
    {
        "id": "parallel-weather",
        "outputs": [
            [{"get_weather": {"city": "Berlin"}}, {"get_weather": {"city": "Tokyo"}}],
            [{"get_weather": {"city": "Tokyo"}}, {"get_weather": {"city": "Berlin"}}],
            [{"get_weather": {"city": "Tokyo"}}],
        ],
    }
]
GENERATE = [
    {"id": "person", "outputs": [{"name": "Ada", "age": 36}, {"name": "Ada", "age": 999}, {"name": "Ada", "age": 37}]}
]


@pytest.mark.parametrize(
    ("track", "rows", "passed"),
    [("toolcall", TOOLCALL, 2), ("generate", GENERATE, 2)],
    ids=["toolcall", "generate"],
)
def test_recorded_runs_give_a_tracks_pass_counts(run: BenchRun, track: str, rows: list[Any], passed: int) -> None:
    """Recorded runs (predictions rows with "outputs"): the toolcall sample drops Berlin in its third run; the
    generated person is out of the schema's age range in its second."""
    run(
        "--extractbench-track",
        track,
        "--extractbench-predictions",
        "preds.jsonl",
        "--extractbench-repeats",
        "3",
        "-k",
        rows[0]["id"],
        files={"preds.jsonl": rows},
    )
    m = run.document()["models"]["predictions"]
    assert (m["repeats"]["samples"], m["repeats"]["runs"]) == (1, 3)
    assert m["repeats"]["flaky_sample_list"] == [{"sample_id": rows[0]["id"], "passed": passed, "runs": 3}]
    # one sample, 2 of 3 runs pass: pass@3 = 1, pass^3 = 0, pass@1 = pass^1 = 2/3, pass^2 = C(2,2)/C(3,2)
    assert (m["pass_at_k"], m["pass_hat_k"]) == (1.0, 0.0)
    assert m["repeats"]["pass_at"]["1"] == pytest.approx(2 / 3) and m["repeats"]["pass_hat"]["2"] == pytest.approx(
        1 / 3
    )
