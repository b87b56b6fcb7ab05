"""End to end on the embedded llama-server (gemma3-270m): the tool-call track through the tools API.

The model is a 270M base model: whether it calls the right function is not what is tested here,
but that tools reach the server through its tool-capable chat template, that every answer comes
back, is read and scored, and that the run's metrics add up.
"""

from __future__ import annotations

import json

import pytest

from pytest_extractbench.core.rundoc import iter_samples

MODEL = "gemma3-270m"  # its tool-capable chat template is ours (server.py): that is what is tested

pytestmark = [pytest.mark.llm, pytest.mark.slow, pytest.mark.usefixtures("local_extra")]

SAMPLES = ("weather-paris", "triangle-area", "abstain-capital")


def test_toolcall_track_on_the_embedded_server(pytester: pytest.Pytester) -> None:
    pytester.makeconftest("""
        import json
        def pytest_extractbench_request_done(config, model, sample_id, response):
            with open("requests.log", "a") as f:
                f.write(json.dumps({"sample": sample_id, "error": response.error_class,
                                    "prompt_tokens": response.usage.get("prompt_tokens")}) + "\\n")
    """)
    result = pytester.runpytest(
        "-p",
        "no:randomly",
        "--extractbench",
        "--extractbench-track",
        "toolcall",
        "-k",
        " or ".join(SAMPLES),
        "--model",
        MODEL,
        "--extractbench-output",
        "out",
        "--extractbench-max-tokens",
        "48",
        "--extractbench-slots",
        "1",
        "--extractbench-no-cache",
        "--extractbench-timeout",
        "300",
    )
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) + outcomes.get("failed", 0) == 3, result.stdout.str()[-3000:]
    requests = [json.loads(line) for line in (pytester.path / "requests.log").read_text().splitlines()]
    assert sorted(r["sample"] for r in requests) == sorted(SAMPLES)
    assert all(r["error"] in (None, "truncated") for r in requests), requests
    # the functions are in the prompt (the tool-capable template renders them): far more than the question's tokens
    assert all(r["prompt_tokens"] > 100 for r in requests), requests
    found = json.loads((pytester.path / "out" / "metrics.json").read_text())
    assert found["track"] == "toolcall" and found["run"]["live"]["mode"] == "embedded"
    section = found["models"][MODEL]["toolcall"]
    assert section["num_samples"] == 3 and section["abstention"]["samples"] == 1
    rows = list(iter_samples(pytester.path / "out" / "samples.jsonl"))
    assert len(rows) == 3 and all(r["response"]["content"] is not None or r["response"]["tool_calls"] for r in rows)
    assert found["models"][MODEL]["passed_samples"] == sum(r["passed"] for r in rows)
