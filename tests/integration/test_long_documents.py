"""Long documents on the real embedded server: the context is sized to them, and one beyond the model's
trained context is classed ``context_exceeded``, not a generic request error.

Contracts of about 8k and 12k tokens and one of about 36k (gemma3-270m was trained for 32k),
generated at test time (tests/longdocs.py). Prompt processing of the 20k tokens that fit takes
40-60 s on two idle cores (far longer on a loaded machine, hence the long request timeout).
"""

from __future__ import annotations

import json

import pytest
from longdocs import write_dataset

from pytest_extractbench.live.backends.llama_models import DEFAULT_EMBEDDED_MODEL

pytestmark = [pytest.mark.llm, pytest.mark.slow, pytest.mark.usefixtures("local_extra")]

SIZES = {"nda-8k": 8000, "nda-12k": 12000, "nda-36k": 36000}
MAX_TOKENS = 128


def test_long_documents_get_a_context_that_holds_them(pytester: pytest.Pytester) -> None:
    write_dataset(pytester.path / "docs.jsonl", SIZES)
    result = pytester.runpytest_subprocess(
        "-p", "no:randomly", "--extractbench", "--extractbench-dataset", "docs.jsonl", "--extractbench-output", "out",
        "--extractbench-sla", "none", "--extractbench-no-cache", "--extractbench-slots", "2",
        "--extractbench-max-tokens", str(MAX_TOKENS), "--extractbench-timeout", "1800", "-p", "no:xdist",
        timeout=3600,
    )  # fmt: skip
    document = json.loads((pytester.path / "out" / "metrics.json").read_text())
    rows = {r["sample_id"]: r for r in map(json.loads, (pytester.path / "out" / "samples.jsonl").read_text().splitlines())}
    assert sorted(rows) == sorted(SIZES)
    # every document that can fit was answered
    for sid in ("nda-8k", "nda-12k"):
        response = rows[sid]["response"]
        assert response["error_class"] in (None, "truncated") and response["content"], response
    # the one beyond the trained context was refused and classed as such, with its size and the limit
    refused = rows["nda-36k"]["response"]
    assert refused["error_class"] == "context_exceeded", refused
    facts = document["run"]["live"]["embedded"][DEFAULT_EMBEDDED_MODEL]
    plan = facts["context"]
    assert plan["trained_context"] == 32768 and plan["source"] == "prompts" and plan["prompts_counted"] == 3
    assert refused["context"]["prompt_tokens"] > 32768 and refused["context"]["limit"] == plan["ctx_per_slot"]
    assert [entry["sample_id"] for entry in plan["too_long"]] == ["nda-36k"]
    assert plan["too_long"][0]["prompt_tokens"] == refused["context"]["prompt_tokens"]  # our count = the server's
    # the tokenizer's counts are the server's: the longest prompt that fits is nda-12k, as its usage says
    assert plan["longest_prompt_sample"] == "nda-12k"
    assert plan["longest_prompt_tokens"] == rows["nda-12k"]["response"]["usage"]["prompt_tokens"]
    assert plan["longest_prompt_tokens"] + MAX_TOKENS <= plan["ctx_per_slot"] < 32768
    assert facts["slots"] == 2 and facts["ctx_per_slot"] == plan["ctx_per_slot"] and facts["peak_rss_bytes"] > 0
    reliability = document["models"][DEFAULT_EMBEDDED_MODEL]["performance"]["reliability"]
    assert reliability["error_counts"]["context_exceeded"] == 1 and reliability["error_counts"]["request_error"] == 0
    result.stdout.fnmatch_lines([
        f"embedded {DEFAULT_EMBEDDED_MODEL}: {plan['ctx_per_slot']} tokens of context per slot x 2 slot(s) "
        f"(longest prompt {plan['longest_prompt_tokens']} tokens (sample 'nda-12k')*; llama-server peak RSS * MB",
        f"1 sample(s) did not fit the model's context (context_exceeded): nda-36k "
        f"({refused['context']['prompt_tokens']} tokens > {plan['ctx_per_slot']})",
    ])  # fmt: skip
    summary_md = (pytester.path / "out" / "summary.md").read_text()
    assert f"- **Context**: {plan['ctx_per_slot']} tokens of context per slot x 2 slot(s) (longest prompt " in summary_md
    assert "- **Did not fit the model's context**: 1 sample(s) (`context_exceeded`)" in summary_md
