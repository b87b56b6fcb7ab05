"""Long documents on the real embedded server: the context is sized to them, and one beyond the model's
trained context is classed ``context_exceeded``, not a generic request error.

Contracts of about 300 and 4.4k tokens and one of about 36k (gemma3-270m, the small model of the
plumbing tests, was trained for 32k), generated at test time (tests/longdocs.py). 4.4k is past the
4,096-token default, so the context must be sized to the prompts; the 36k one is only tokenized and
refused. The tokens that fit are kept few because processing them is the test's whole cost: 20k
tokens on the default model took 22 minutes beside the rest of the suite on two cores, at 10-15
prompt tokens a second (hence also the long request timeout).
"""

from __future__ import annotations

import json

import pytest
from longdocs import write_dataset

from pytest_extractbench.core.rundoc import iter_samples

pytestmark = [pytest.mark.llm, pytest.mark.slow, pytest.mark.usefixtures("local_extra")]

MODEL = "gemma3-270m"
SIZES = {"nda-short": 300, "nda-4k": 4400, "nda-36k": 36000}
MAX_TOKENS = 128


def test_long_documents_get_a_context_that_holds_them(pytester: pytest.Pytester) -> None:
    write_dataset(pytester.path / "docs.jsonl", SIZES)
    result = pytester.runpytest_subprocess(
        "-p",
        "no:randomly",
        "--extractbench",
        "--model",
        MODEL,
        "--extractbench-dataset",
        "docs.jsonl",
        "--extractbench-output",
        "out",
        "--extractbench-sla",
        "none",
        "--extractbench-no-cache",
        "--extractbench-slots",
        "2",
        "--extractbench-max-tokens",
        str(MAX_TOKENS),
        "--extractbench-timeout",
        "1800",
        "-p",
        "no:xdist",
        timeout=3600,
    )
    document = json.loads((pytester.path / "out" / "metrics.json").read_text())
    rows = {r["sample_id"]: r for r in iter_samples(pytester.path / "out" / "samples.jsonl")}
    assert sorted(rows) == sorted(SIZES)
    # every document that can fit was answered
    for sid in ("nda-short", "nda-4k"):
        response = rows[sid]["response"]
        assert response["error_class"] in (None, "truncated") and response["content"], response
    # the one beyond the trained context was refused and classed as such, with its size and the limit
    refused = rows["nda-36k"]["response"]
    assert refused["error_class"] == "context_exceeded", refused
    facts = document["run"]["live"]["embedded"][MODEL]
    plan = facts["context"]
    # the short prompt fits the default by its byte size alone: only the two that might not are tokenized
    assert plan["trained_context"] == 32768 and plan["source"] == "prompts" and plan["prompts_counted"] == 2
    assert refused["context"]["prompt_tokens"] > 32768 and refused["context"]["limit"] == plan["ctx_per_slot"]
    assert [entry["sample_id"] for entry in plan["too_long"]] == ["nda-36k"]
    assert plan["too_long"][0]["prompt_tokens"] == refused["context"]["prompt_tokens"]  # our count = the server's
    # the tokenizer's counts are the server's: the longest prompt that fits is nda-4k, as its usage says
    assert plan["longest_prompt_sample"] == "nda-4k"
    assert plan["longest_prompt_tokens"] == rows["nda-4k"]["response"]["usage"]["prompt_tokens"]
    assert 4096 < plan["longest_prompt_tokens"] + MAX_TOKENS <= plan["ctx_per_slot"] < 32768  # sized past the default
    assert facts["slots"] == 2 and facts["ctx_per_slot"] == plan["ctx_per_slot"] and facts["peak_rss_bytes"] > 0
    reliability = document["models"][MODEL]["performance"]["reliability"]
    assert reliability["error_counts"]["context_exceeded"] == 1 and reliability["error_counts"]["request_error"] == 0
    result.stdout.fnmatch_lines(
        [
            f"embedded {MODEL}: {plan['ctx_per_slot']} tokens of context per slot x 2 slot(s) "
            f"(longest prompt {plan['longest_prompt_tokens']} tokens (sample 'nda-4k')*; llama-server peak RSS * MB",
            f"1 sample(s) did not fit the model's context (context_exceeded): nda-36k "
            f"({refused['context']['prompt_tokens']} tokens > {plan['ctx_per_slot']})",
        ]
    )
    summary_md = (pytester.path / "out" / "summary.md").read_text()
    assert (
        f"- **Context**: {plan['ctx_per_slot']} tokens of context per slot x 2 slot(s) (longest prompt " in summary_md
    )
    assert "- **Did not fit the model's context**: 1 sample(s) (`context_exceeded`)" in summary_md
