"""Long prompts on a slow server finish when the plugin admits them by prompt tokens (live/schedule.py).

The server (tests/promptserver.py) reads prompts at 4,000 tokens/s shared among the requests in flight, as a
small CPU does. Two long documents (4,000 tokens each, one second alone) asked together with short ones under
a 1.5 s timeout: with the budget off they share the server and both time out; with the default budget each is
read alone and every sample is answered.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from benchrun import BenchRun
from promptserver import PromptSpeedServer

from pytest_extractbench.core.rundoc import iter_samples

pytestmark = pytest.mark.slow  # two runs against a server that takes its time, as a CPU does

SCHEMA = {"type": "object", "properties": {"party": {"type": "string"}}, "required": ["party"]}
LONG_CHARS = 16_000  # 4,000 tokens at the server's 4 characters a token


def rows() -> list[dict[str, Any]]:
    long_text = ("The receiving party shall keep the information confidential. " * 400)[:LONG_CHARS]
    found = [{"id": f"long{i}", "text": long_text, "schema": SCHEMA, "expected": {"party": "x"}} for i in range(2)]
    return found + [
        {"id": f"short{i}", "text": f"Party: short{i}.", "schema": SCHEMA, "expected": {"party": "x"}} for i in range(4)
    ]


def bench(
    run: BenchRun, url: str, *args: str, out: str = "out", data: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    options = {"dataset": "data.jsonl", "sla": "none", "base-url": url, "timeout": "1.5", "retries": "0"}
    argv = [arg for name, value in options.items() for arg in (f"--extractbench-{name}", value)]
    result = run(
        *argv,
        "--model",
        "test-model",
        "--extractbench-concurrency",
        "4",
        *args,
        out=out,
        files={"data.jsonl": data or rows()},
    )
    pytester = run.pytester
    document = json.loads((Path(pytester.path) / out / "metrics.json").read_text(encoding="utf-8"))
    answers = [json.loads(line) for line in (Path(pytester.path) / out / "responses.jsonl").read_text().splitlines()]
    return {"result": result, "document": document, "answers": {a["sample_id"]: a["response"] for a in answers}}


def test_long_prompts_time_out_together_and_finish_one_at_a_time(run: BenchRun) -> None:
    with PromptSpeedServer(tokens_per_s=4_000) as server:
        off = bench(run, server.url, "--extractbench-prompt-budget", "off")
    timed_out = sorted(sid for sid, r in off["answers"].items() if r["error_class"] == "timeout")
    assert timed_out == ["long0", "long1"], off["answers"]  # read together, each at half speed: 2 s > 1.5 s
    assert server.peak_tokens >= 2 * LONG_CHARS / 4

    with PromptSpeedServer(tokens_per_s=4_000) as server:
        auto = bench(run, server.url, out="auto")
    assert all(r["error_class"] is None for r in auto["answers"].values()), auto["answers"]
    assert server.abandoned == 0 and server.finished == 6
    assert server.peak_tokens < 2 * LONG_CHARS / 4  # never both long prompts at once
    budget = auto["document"]["run"]["live"]["prompt_budget"]
    assert budget["setting"] == "auto"
    model = budget["by_model"]["test-model"]
    assert model["held"] >= 1  # the second long document waited for the first
    assert model["prompt_tokens_per_s"] is not None and model["prompt_tokens_per_s"] <= 4_000 * 1.2
    line = next(line for line in auto["result"].outlines if line.startswith("prompt budget test-model:"))
    assert f"{model['held']} request(s) waited for room" in line and "--extractbench-prompt-budget off" in line, line
    assert not any(line.startswith("prompt budget") for line in off["result"].outlines)
    # the wait is counted before the attempt's clock: end to end, not against the timeout
    waited = max(r["wait_s"] for r in auto["answers"].values())
    assert waited > 0.5


def test_a_fixed_budget_is_reported_and_short_prompts_still_run_together(run: BenchRun) -> None:
    with PromptSpeedServer(tokens_per_s=4_000) as server:
        found = bench(run, server.url, "--extractbench-prompt-budget", "100000")
    assert found["document"]["run"]["live"]["prompt_budget"]["setting"] == 100000
    model = found["document"]["run"]["live"]["prompt_budget"]["by_model"]["test-model"]
    assert model["tokens_in_flight_limit"] == 100000 and model["held"] == 0
    assert server.peak_tokens >= 2 * LONG_CHARS / 4  # room for both: read together (and too slowly)


def contract_rows() -> list[dict[str, Any]]:
    """One contract that takes 2 s to read alone (8,000 tokens), listed first, and two short notes."""
    text = ("The receiving party shall keep the information confidential. " * 800)[: 2 * LONG_CHARS]
    found = [{"id": "contract", "text": text, "schema": SCHEMA, "expected": {"party": "x"}}]
    return found + [
        {"id": f"note{i}", "text": f"Party: note{i}.", "schema": SCHEMA, "expected": {"party": "x"}} for i in range(2)
    ]


def test_a_prompt_that_needs_longer_than_the_timeout_gets_it_once_the_speed_is_known(run: BenchRun) -> None:
    """Timeout 1.5 s, a contract that needs 2 s: with the default budget the short notes go first, their answers
    give the server's speed, and the contract's one attempt gets twice its reading time; a fixed budget keeps the
    timeout strict and the contract times out."""

    def contract_run(*args: str, out: str) -> dict[str, Any]:
        with PromptSpeedServer(tokens_per_s=4_000) as server:
            found = bench(run, server.url, *args, out=out, data=contract_rows())
        found["server"] = server
        found["records"] = {
            r["sample_id"]: r["response"] for r in iter_samples(Path(run.pytester.path) / out / "samples.jsonl")
        }
        return found

    sized = contract_run(out="sized")
    assert all(r["error_class"] is None for r in sized["answers"].values()), sized["answers"]
    assert sized["server"].abandoned == 0
    log = sized["records"]["contract"]["attempt_log"]
    assert len(log) == 1 and log[0]["outcome"] == "ok"
    assert 1.5 < log[0]["latency_s"] < log[0]["timeout_s"] <= 6 * 1.5
    assert "timeout_s" not in sized["records"]["note0"]["attempt_log"][0]  # short prompts keep the timeout
    model = sized["document"]["run"]["live"]["prompt_budget"]["by_model"]["test-model"]
    assert model["stretched_attempts"] == 1 and model["longest_attempt_timeout_s"] == log[0]["timeout_s"]
    assert model["passed_ahead"] >= 1  # the notes went ahead of the contract listed before them
    line = next(line for line in sized["result"].outlines if "longer than the timeout" in line)
    assert line.startswith("prompt budget test-model: 1 attempt(s) given up to"), line

    strict = contract_run("--extractbench-prompt-budget", "100000", out="strict")
    assert strict["answers"]["contract"]["error_class"] == "timeout", strict["answers"]
    assert not any("longer than the timeout" in line for line in strict["result"].outlines)
