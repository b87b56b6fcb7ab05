"""Is it flaky: --extractbench-repeats against a loopback server whose answers change on chosen fields from one run
to the next; pass counts, pass@k, pass^k and the flaky fields checked against figures worked out by hand, in
metrics.json, metrics.csv, summary.md, the terminal and a gate on pass^k."""

from __future__ import annotations

import csv
import io
import json
import shutil
from typing import Any

import pytest
from benchrun import BenchRun
from faultserver import FaultServer

SCHEMA = {
    "type": "object",
    "required": ["name", "price"],
    "properties": {"name": {"type": "string"}, "price": {"type": "number"}, "currency": {"type": "string"}},
}
DATA = [
    {
        "id": f"s{i}",
        "text": f"Item {i} costs {i} dollars.",
        "schema": SCHEMA,
        "expected": {"name": f"item {i}", "price": i, "currency": "USD"},
    }
    for i in range(4)
]
REPEATS = 4  # run r is asked with seed 42 + r


def answer(body: dict[str, Any]) -> Any:
    """s0 is steady; s1 leaves the required price out in run 1 (schema violation: fails); s2 answers with no JSON
    in runs 0 and 2 (fails); s3 says GBP instead of USD in runs 2 and 3 (a wrong value: still passes)."""
    text = " ".join(str(m.get("content")) for m in body["messages"] if m.get("role") == "user")
    i, run = int(text.split("Item ")[1][0]), body["seed"] - 42
    gold = {"name": f"item {i}", "price": i, "currency": "USD"}
    if i == 1 and run == 1:
        return {"name": "item 1", "currency": "USD"}
    if i == 2 and run in (0, 2):
        return "sorry, I cannot answer that"
    if i == 3 and run >= 2:
        return {**gold, "currency": "GBP"}
    return gold


def bench(pytester: pytest.Pytester, url: str, *args: str) -> pytest.RunResult:
    shutil.rmtree(pytester.path / "out", ignore_errors=True)
    (pytester.path / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in DATA))
    return pytester.runpytest(
        "-p",
        "no:randomly",
        "-W",
        "ignore::pytest.PytestAssertRewriteWarning",
        "--extractbench",
        "--extractbench-base-url",
        url,
        "--model",
        "test-model",
        "--extractbench-output",
        "out",
        "--extractbench-no-cache",
        "--extractbench-dataset",
        "data.jsonl",
        "--extractbench-repeats",
        str(REPEATS),
        "--extractbench-temperature",
        "0.7",
        "--extractbench-sla",
        "none",
        *args,
    )


def test_repeats_count_passes_and_flaky_fields(pytester: pytest.Pytester, fault_server: FaultServer) -> None:
    fault_server.answer = answer
    result = bench(
        pytester, fault_server.url, "--extractbench-require", "pass^k>=0.8", "--extractbench-require", "pass@k>=0.9"
    )
    assert len(fault_server.requests) == 4 * REPEATS
    m = json.loads((pytester.path / "out" / "metrics.json").read_text())["models"]["test-model"]
    repeats = m["repeats"]
    # passing runs: s0 4, s1 3, s2 2, s3 4
    assert repeats["runs"] == REPEATS and repeats["samples"] == 4
    assert repeats["pass_counts"] == {"0": 0, "1": 0, "2": 1, "3": 1, "4": 2}
    # pass@k = 1 - C(n-c,k)/C(n,k), pass^k = C(c,k)/C(n,k), n = 4, averaged over the four samples
    assert repeats["pass_at"]["1"] == pytest.approx((4 + 3 + 2 + 4) / 16)
    assert repeats["pass_at"]["2"] == pytest.approx((1 + 1 + (1 - 1 / 6) + 1) / 4)
    assert repeats["pass_hat"]["2"] == pytest.approx((1 + 3 / 6 + 1 / 6 + 1) / 4)
    assert repeats["pass_hat"]["3"] == pytest.approx((1 + 1 / 4 + 0 + 1) / 4)
    assert m["pass_at_k"] == 1.0 and m["pass_hat_k"] == 0.5  # k = 4: s1 and s2 fail some run
    assert m["confidence_intervals"]["pass_hat_k"]["low"] <= 0.5 <= m["confidence_intervals"]["pass_hat_k"]["high"]
    assert repeats["flaky_samples"] == 2
    assert [(s["sample_id"], s["passed"]) for s in repeats["flaky_sample_list"]] == [("s2", 2), ("s1", 3)]
    # every sample's three fields were compared over its parsed runs; price flipped in s1, currency in s3
    fields = {f["field"]: f for f in repeats["flaky_fields"]}
    assert set(fields) == {"price", "currency"}
    assert (fields["price"]["flipped"], fields["price"]["occurrences"], fields["price"]["rate"]) == (1, 4, 0.25)
    assert fields["price"]["transitions"] == {"exact -> missed": 1, "missed -> exact": 1}
    assert (fields["currency"]["flipped"], fields["currency"]["rate"]) == (1, 0.25)
    assert fields["currency"]["transitions"] == {"exact -> incorrect": 1}
    # the gate on pass^k (0.5) fails the session; pass@k (1.0) holds
    checks = {c["metric"]: c for c in m["requirements"]["checks"]}
    assert checks["pass_hat_k"]["passed"] is False and checks["pass_at_k"]["passed"] is True
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    out = result.stdout.str()
    assert "repeats (4 runs)    pass@4 100.0%   pass^4 50.0%   flaky samples 2" in out
    rows = list(csv.DictReader(io.StringIO((pytester.path / "out" / "metrics.csv").read_text())))
    assert float(rows[0]["pass_hat_k"]) == 0.5 and rows[0]["pass_hat_k_ci_low"] != ""
    summary = (pytester.path / "out" / "summary.md").read_text()
    assert "### Repeats: is it flaky?" in summary and "pass^4 (every run passes) 50.0%" in summary
    assert "| price | 1 | 4 | 25.0% | exact -&gt; missed 1, missed -&gt; exact 1 |" in summary


def test_recorded_runs_answer_it_offline(run: BenchRun) -> None:
    """Predictions rows with "outputs" (one per run) give the same figures without a server: s0 passes 2 of 3
    runs (the second is no JSON), s1 all 3 with its price wrong in the last."""
    gold = [json.dumps(sample["expected"]) for sample in DATA[:2]]
    rows = [
        {"id": "s0", "outputs": [gold[0], "no json here", gold[0]]},
        {"id": "s1", "outputs": [gold[1], gold[1], json.dumps({**DATA[1]["expected"], "price": 99})]},
    ]
    run(
        "--extractbench-dataset",
        "data.jsonl",
        "--extractbench-predictions",
        "preds.jsonl",
        "--model",
        "m",
        "--extractbench-repeats",
        "3",
        "--extractbench-sla",
        "none",
        "-k",
        "s0 or s1",
        files={"data.jsonl": DATA, "preds.jsonl": rows},
    )
    m = run.document()["models"]["m"]
    # pass^3 = (C(2,3)/C(3,3) + 1) / 2 = 0.5; pass^2 = (C(2,2)/C(3,2) + 1) / 2 = 2/3; pass@3 = 1
    assert (m["pass_at_k"], m["pass_hat_k"]) == (1.0, 0.5)
    assert m["repeats"]["pass_hat"]["2"] == pytest.approx((1 / 3 + 1) / 2)
    (price,) = m["repeats"]["flaky_fields"]
    assert (price["field"], price["flipped"], price["occurrences"]) == ("price", 1, 2)
    assert price["transitions"] == {"exact -> incorrect": 1}
