"""Dataset-level aggregation, EQS breakdown, SLA tiers and the decision tree."""

from __future__ import annotations

import pytest

from pytest_extractbench import (
    SampleRecord,
    ScoringOptions,
    evaluate_sla,
    model_metrics,
    recommendation,
    score_sample,
)
from pytest_extractbench.analysis.bands import eqs_band
from pytest_extractbench.analysis.performance import NOT_MEASURED
from pytest_extractbench.gating.sla import sla_passed

OPTIONS = ScoringOptions()


def record(sample_id: str, output, expected, schema=None, model: str = "m") -> SampleRecord:
    return SampleRecord(
        model=model, sample_id=sample_id, score=score_sample(output, expected, schema, sample_id=sample_id)
    )


def test_micro_macro_and_weighted_differ_as_the_spec_defines() -> None:
    # s1: 1 field, exact.  s2: 4 fields, 1 exact + 3 missed.
    s1 = record("s1", {"a": "x"}, {"a": "x"})
    s2 = record("s2", {"a": "x"}, {"a": "x", "b": "y", "c": "z", "d": "w"})
    metrics = model_metrics([s2, s1], OPTIONS)
    # micro: tp 2, predicted 2, expected 5 -> P 1, R 0.4, F1 = 2*0.4/1.4
    assert metrics["field_recall_strict"] == pytest.approx(0.4)
    assert metrics["field_f1_strict"] == pytest.approx(0.8 / 1.4)
    # macro: mean of per-sample F1: s1 = 1, s2 = 2*1*0.25/1.25 = 0.4
    assert metrics["aggregation"]["macro"]["f1_strict"] == pytest.approx(0.7)
    # weighted by expected fields (1 and 4): (1*1 + 4*0.4) / 5
    assert metrics["aggregation"]["weighted"]["f1_strict"] == pytest.approx(2.6 / 5)
    assert metrics["aggregation"]["micro"]["f1_strict"] == metrics["field_f1_strict"]
    assert metrics["field_omission_rate"] == pytest.approx(3 / 5)
    assert metrics["match_categories"] == {"exact": 2, "partial": 0, "incorrect": 0, "missed": 3, "spurious": 0}
    assert metrics["num_samples"] == 2


def test_eqs_is_the_mean_of_sample_eqs_and_its_components_add_up() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}
    records = [
        record("good", {"a": "x"}, {"a": "x"}, schema),
        record("bad", "not json", {"a": "x"}, schema),
        record("invalid", {"b": "x"}, {"a": "x"}, schema),
    ]
    metrics = model_metrics(records, OPTIONS)
    # good: 1.0; bad: 0.0; invalid: only the hallucination component, 0.15 * (1 - 1/1) = 0
    assert metrics["extraction_quality_score"] == pytest.approx(1 / 3)
    weights = OPTIONS.eqs_weights
    rebuilt = sum(getattr(weights, name) * value for name, value in metrics["eqs_components"].items())
    assert rebuilt == pytest.approx(metrics["extraction_quality_score"])
    assert metrics["schema_validity_rate"] == pytest.approx(1 / 3)
    assert metrics["json_valid_rate"] == pytest.approx(2 / 3)
    assert metrics["exact_match_rate"] == pytest.approx(1 / 3)
    assert metrics["exact_match_rate_valid"] == 1.0
    assert {s["sample_id"] for s in metrics["invalid_samples"]} == {"bad", "invalid"}


def test_type_confusion_and_score_bins() -> None:
    schema = {"type": "object", "properties": {"n": {"type": ["integer", "string"]}, "s": {"type": "string"}}}
    metrics = model_metrics([record("s", {"n": "7", "s": "abcd wxyz"}, {"n": 7, "s": "abcd efgh"}, schema)], OPTIONS)
    assert metrics["type_confusion"] == {"number": {"string": 1}, "string": {"string": 1}}
    assert metrics["type_accuracy"] == pytest.approx(0.5)
    # n scores 1.0 (excellent), s scores 0.4167 (poor: [0.40, 0.60))
    assert metrics["composite_score_distribution"] == {"very_poor": 0, "poor": 1, "fair": 0, "good": 0, "excellent": 1}


def test_aggregation_does_not_depend_on_record_order() -> None:
    records = [record(f"s{i}", {"a": "x" * i, "b": i}, {"a": "x" * (i + 1), "b": i + 1}) for i in range(1, 20)]
    assert model_metrics(records, OPTIONS) == model_metrics(list(reversed(records)), OPTIONS)


@pytest.mark.parametrize(
    ("eqs", "hallucination", "expected"),
    [
        (0.95, 0.01, "Deploy without human review"),
        (0.95, 0.03, "Deploy with spot-check human review"),
        (0.85, 0.01, "Deploy with spot-check human review"),
        (0.75, 0.06, "Deploy with mandatory human review"),
        (0.75, 0.10, "Not recommended for production - needs improvement"),
        (0.65, 0.00, "Not recommended for production - needs improvement"),
    ],
)
def test_decision_tree(eqs: float, hallucination: float, expected: str) -> None:
    assert recommendation(eqs, hallucination) == expected


@pytest.mark.parametrize(("eqs", "word"), [(0.9, "Excellent"), (0.75, "Good"), (0.6, "Moderate"), (0.59, "Poor")])
def test_eqs_bands(eqs: float, word: str) -> None:
    assert eqs_band(eqs).startswith(word)


def test_sla_tiers_check_each_threshold_and_skip_what_was_not_measured() -> None:
    metrics = {
        "extraction_quality_score": 0.80,
        "schema_validity_rate": 0.97,
        "field_f1_partial": 0.75,
        "hallucination_rate": 0.04,
        # an offline run: latency and success rate do not apply (a run that says nothing of them could not
        # measure them, and fails)
        "performance": {"note": NOT_MEASURED},
    }
    minimum = evaluate_sla(metrics, "minimum")
    assert sla_passed(minimum)
    assert not sla_passed(evaluate_sla({k: v for k, v in metrics.items() if k != "performance"}, "minimum"))
    assert [c.metric for c in minimum if c.passed is None] == ["latency_p95_ms", "success_rate"]
    target = evaluate_sla(metrics, "target")
    missed = {c.metric: c for c in target if c.passed is False}
    assert set(missed) == {"extraction_quality_score", "schema_validity_rate", "field_f1_partial"}
    assert missed["extraction_quality_score"].describe() == "eqs = 0.800 (needs >= 0.850): missed"
    assert not sla_passed(target)
    assert evaluate_sla(metrics, "none") == []
    # hallucination is a maximum: exactly at the threshold passes
    assert sla_passed(evaluate_sla(dict(metrics, hallucination_rate=0.10), "minimum"))
    assert not sla_passed(evaluate_sla(dict(metrics, hallucination_rate=0.11), "minimum"))
    with pytest.raises(ValueError, match="unknown SLA tier"):
        evaluate_sla(metrics, "gold")


@pytest.mark.parametrize("count", [0, 1, 5])
def test_the_headline_numbers_alone_are_those_of_the_whole_accuracy_section(count: int) -> None:
    from pytest_extractbench.analysis.metrics import BIN_METRICS, accuracy_section, headline_accuracy

    schema = {"type": "object", "properties": {"a": {"type": "string"}, "n": {"type": "integer"}}}
    outputs = [{"a": "x", "n": 1}, {"a": "y"}, '{"a": 3}', "not json", {"a": "x", "n": 2, "z": 0}]
    records = [record(f"s{i}", outputs[i], {"a": "x", "n": 1}, schema) for i in range(count)]
    whole, headline = accuracy_section(records, OPTIONS), headline_accuracy(records)
    assert {"num_samples", *BIN_METRICS} <= set(headline) < set(whole)
    assert headline == {key: whole[key] for key in headline}
