"""Tracks, repeats and calibration on the live path, against a real OpenAI-compatible server on loopback."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from typing import Any

import pytest
from faultserver import Fault, FaultServer

from pytest_extractbench.core.rundoc import iter_samples


def bench(pytester: pytest.Pytester, url: str, *args: str) -> pytest.RunResult:
    shutil.rmtree(pytester.path / "out", ignore_errors=True)  # each call is a new run, which needs an empty directory
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
        *args,
    )


def metrics(pytester: pytest.Pytester) -> dict[str, Any]:
    return json.loads((pytester.path / "out" / "metrics.json").read_text())


def user_text(body: dict[str, Any]) -> str:
    return " ".join(str(m.get("content")) for m in body["messages"] if m.get("role") == "user")


@pytest.mark.slow
@pytest.mark.parametrize("stream", [(), ("--extractbench-stream",)], ids=["plain", "streamed"])
def test_toolcall_track_sends_tools_and_scores_tool_calls(
    pytester: pytest.Pytester, fault_server: FaultServer, stream: tuple[str, ...]
) -> None:
    # streamed, the tool calls arrive in parts (name, then the arguments in two pieces) and score the same
    def plan(index: int, body: dict[str, Any]) -> Fault | None:
        text = user_text(body)
        if "Paris" in text:
            return Fault.ok("", tool_calls=[{"name": "get_weather", "arguments": {"city": "Paris"}}])
        if "triangle" in text:  # the server sees the safe name; the track maps it back to math.triangle_area
            return Fault.ok("", tool_calls=[{"name": "math_triangle_area", "arguments": '{"base": 10, "height": 6}'}])
        return Fault.ok("I would rather not call anything.")

    fault_server.plan = plan
    result = bench(
        pytester, fault_server.url, "--extractbench-track", "toolcall", "-k", "paris or triangle or poem", *stream
    )
    result.assert_outcomes(passed=2, failed=1)
    bodies = fault_server.requests
    assert all(b.get("stream") is (True if stream else None) for b in bodies)
    assert len(bodies) == 3
    assert all(b["tools"] and b["tool_choice"] == "auto" and "response_format" not in b for b in bodies)
    names = {t["function"]["name"] for b in bodies for t in b["tools"]}
    assert "math_triangle_area" in names and "math.triangle_area" not in names
    section = metrics(pytester)["models"]["test-model"]["toolcall"]
    assert section["name_match_rate"] == 1.0
    assert section["arguments"] == {"tp": 2, "fp": 1, "fn": 1}  # city and base right; height 6 instead of 5
    assert section["abstention"]["accuracy"] == 1.0
    rows = {r["sample_id"]: r for r in iter_samples(pytester.path / "out" / "samples.jsonl")}
    assert rows["triangle-area"]["response"]["tool_calls"][0]["name"] == "math_triangle_area"
    assert rows["triangle-area"]["result"]["predicted"][0]["name"] == "math.triangle_area"


@pytest.mark.slow
def test_generate_and_repair_use_the_structured_output_mode(
    pytester: pytest.Pytester, fault_server: FaultServer
) -> None:
    fault_server.answer = lambda body: {"name": "Ada Lovelace", "age": 36}
    bench(pytester, fault_server.url, "--extractbench-track", "repair", "-k", "person-trailing").assert_outcomes(
        passed=1
    )
    (body,) = fault_server.requests
    assert body["response_format"]["type"] == "json_schema"
    assert '{"name": "Ada Lovelace", "age": 36,}' in user_text(body)  # the broken document
    fault_server.reset()
    bench(
        pytester,
        fault_server.url,
        "--extractbench-track",
        "generate",
        "-k",
        "person",
        "--extractbench-structured-output",
        "none",
    ).assert_outcomes(passed=1)
    (body,) = fault_server.requests
    assert "response_format" not in body and '"maximum": 150' in user_text(body)


DATA = [
    {
        "id": f"s{i}",
        "text": f"Item {i} costs {i} dollars.",
        "expected": {"name": f"item {i}", "price": i},
        "schema": {"type": "object", "properties": {"name": {"type": "string"}, "price": {"type": "number"}}},
    }
    for i in range(3)
]


@pytest.mark.slow
def test_repeats_send_one_request_per_run_with_their_own_seeds(
    pytester: pytest.Pytester, fault_server: FaultServer
) -> None:
    (pytester.path / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in DATA))

    def answer(body: dict[str, Any]) -> Any:
        i = int(user_text(body).split("Item ")[1][0])
        return {"name": f"item {i}", "price": i + (body["seed"] % 2) * 0.5}  # odd seeds answer half a dollar more

    fault_server.answer = answer
    result = bench(
        pytester,
        fault_server.url,
        "--extractbench-dataset",
        "data.jsonl",
        "--extractbench-repeats",
        "4",
        "--extractbench-temperature",
        "0.7",
        "--extractbench-sla",
        "none",
        "--extractbench-calibration",
    )
    result.assert_outcomes(passed=3)
    assert len(fault_server.requests) == 12
    seeds = Counter(b["seed"] for b in fault_server.requests)
    assert seeds == {42: 3, 43: 3, 44: 3, 45: 3}
    assert all(b["logprobs"] is True and b["temperature"] == 0.7 for b in fault_server.requests)
    found = metrics(pytester)["models"]["test-model"]
    assert found["consistency"]["exact_match_consistency"] == 0.5
    assert found["consistency"]["field_level_consistency"] == 0.75  # name always agrees, price half the time
    assert found["consistency"]["value_variance"] == pytest.approx(0.25)
    assert found["calibration"]["fields"] == 6  # the fault server's logprobs cover name and price of each sample
    journal = [json.loads(line) for line in (pytester.path / "out" / "responses.jsonl").open()]
    assert sorted(r["sample_id"] for r in journal if r["sample_id"].startswith("s0")) == [
        "s0",
        "s0#run1",
        "s0#run2",
        "s0#run3",
    ]
