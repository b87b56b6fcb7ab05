"""The performance and diagnostics figures a mutation run found unguarded. Every expected value is worked out by hand
in the comments."""

from __future__ import annotations

import pytest

from pytest_extractbench import SampleRecord, score_sample
from pytest_extractbench.analysis.performance import Prices, cost, outcome, output_chars

# --- performance ---


def _record(**response) -> SampleRecord:
    return SampleRecord(model="m", sample_id="s", score=score_sample({"a": "x"}, {"a": "x"}), response=response)


def test_one_price_alone_is_enough_for_a_cost() -> None:
    tokens = {"prompt": {"count": 1, "sum": 2000}, "completion": {"count": 1, "sum": 500}}
    # 2000 prompt tokens at $1 per 1,000: $2; no output price: output costs 0
    found = cost(tokens, Prices(input_per_1k=1.0), 1)
    assert (found["available"], found["estimated_cost_usd"]) == (True, pytest.approx(2.0))
    found = cost(tokens, Prices(output_per_1k=2.0), 1)  # 500 output tokens at $2 per 1,000: $1
    assert (found["available"], found["estimated_cost_usd"]) == (True, pytest.approx(1.0))


def test_a_sample_whose_scoring_failed_is_its_own_outcome() -> None:
    record = _record(content='{"a": "x"}', attempts=1)
    assert outcome(record) == "valid"
    record.scoring_error = "ScoringTimeout"
    assert outcome(record) == "scoring_error"


def test_no_output_has_no_length() -> None:
    assert output_chars(None) is None
    assert (output_chars(""), output_chars({"a": "é"})) == (0.0, 10.0)  # {"a": "é"} is 10 characters
