"""`pytest --extractbench` end to end against the real embedded llama-server (the default model), with and
without xdist.

Three short bundled samples (`-k`) keep it to a few minutes on two shared cores. Needs the `local`
extra: skipped without it, except under CI (CI=true), where a missing extra is a failure.
"""

from __future__ import annotations

import json

import pytest

from _net import refused
from pytest_extractbench.live.backends.llama_models import DEFAULT_EMBEDDED_MODEL

pytestmark = [pytest.mark.llm, pytest.mark.slow, pytest.mark.usefixtures("local_extra")]

SAMPLES = ("appendix-a-1", "travel-004", "medical-004")  # the shortest texts of the bundled dataset


# the xdist run also streams its answers: the same scores, and the time to the first token
@pytest.mark.parametrize("xdist", [("-p", "no:xdist"), ("-n", "2", "--extractbench-stream")], ids=["serial", "xdist"])
def test_the_main_command_scores_bundled_samples_on_the_embedded_server(
    pytester: pytest.Pytester, xdist: tuple[str, ...]
) -> None:
    # The README's main command, narrowed to three samples, bounded output and no gate.
    result = pytester.runpytest_subprocess(
        "--extractbench",
        "-k",
        " or ".join(SAMPLES),
        "--extractbench-output",
        "out",
        "--extractbench-sla",
        "none",
        "--extractbench-max-tokens",
        "512",
        *xdist,
        timeout=1200,
    )
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) + outcomes.get("failed", 0) == 3, result.stdout.str()
    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)
    document = json.loads((pytester.path / "out" / "metrics.json").read_text())
    model = document["models"][DEFAULT_EMBEDDED_MODEL]
    assert model["num_samples"] == 3
    assert 0.0 <= model["schema_validity_rate"] <= 1.0 and 0.0 <= model["extraction_quality_score"] <= 1.0
    live = document["run"]["live"]
    assert live["mode"] == "embedded" and live["structured_output"] == "json_schema"
    assert live["timeout_s"] == 600  # the embedded server's default: a slow CPU model is measured, not timed out
    assert live["embedded"][DEFAULT_EMBEDDED_MODEL]["model_file"].endswith(".gguf")
    # Every sample got a real answer from the server: no transport error, nothing lost.
    rows = [json.loads(line) for line in (pytester.path / "out" / "responses.jsonl").read_text().splitlines()]
    assert sorted(row["sample_id"] for row in rows) == sorted(SAMPLES)
    assert all(row["response"]["error_class"] in (None, "truncated") for row in rows), rows
    assert all(row["response"]["usage"]["completion_tokens"] > 0 for row in rows)
    # llama-server reports its own timings: generation took part of each request's latency, never more
    for row in rows:
        timings, latency_ms = row["response"]["timings"], row["response"]["latency_s"] * 1000
        assert timings["predicted_n"] > 0 and 0 < timings["prompt_ms"] + timings["predicted_ms"] <= latency_ms
    breakdown = model["performance"]["latency_breakdown"]
    assert breakdown["server_timed"] == 3 and breakdown["server_generation_ms"]["count"] == 3
    streamed = "--extractbench-stream" in xdist
    assert breakdown["streamed"] == (3 if streamed else 0)
    for row in rows:
        first = row["response"]["first_token_s"]
        assert (0 < first < row["response"]["latency_s"]) if streamed else first is None
    # The controller stopped the server at session end.
    assert all(refused(url) for url in live["base_urls"])
