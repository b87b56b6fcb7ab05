"""What empty or unusable output earns under the EQS formula, as docs/metrics.md states it."""

from __future__ import annotations

import pytest

from pytest_extractbench.scoring import score_sample

OBJECT = {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}, "required": ["a"]}
GOLD = {"a": "x", "b": 2}


@pytest.mark.parametrize("output", ["not json", '{"a": ', ""])
def test_output_that_is_not_json_earns_nothing(output: str) -> None:
    assert score_sample(output, GOLD, OBJECT).eqs == 0.0


@pytest.mark.parametrize("output", ["null", "{}", "[]"])
def test_json_predicting_no_field_keeps_only_the_no_hallucination_term(output: str) -> None:
    # schema-invalid (validity 0), no field found (F1 0), no field typed on invalid output (type accuracy 0),
    # nothing spurious (hallucination 0): 0.15 * 1
    assert score_sample(output, GOLD, OBJECT).eqs == pytest.approx(0.15)


def test_null_that_the_schema_accepts_earns_validity_and_type_accuracy_too() -> None:
    nullable = {**OBJECT, "type": ["object", "null"], "required": []}
    # 0.15 validity + 0.50 * 0 + 0.20 * 1 (nothing to type on valid output) + 0.15 * 1
    assert score_sample("null", GOLD, nullable).eqs == pytest.approx(0.50)
