"""Grades, performance look-ups and the progress line: hand-computed cases."""

from __future__ import annotations

import pytest

from pytest_extractbench.core.modelsections import fill_model
from pytest_extractbench.plugin.progress import Progress
from pytest_extractbench.report import summary


@pytest.mark.parametrize(
    ("metric", "value", "expected"),
    [
        ("extraction_quality_score", 0.90, "A+"),  # excellence 0.90
        ("extraction_quality_score", 0.85, "A"),  # target 0.85
        ("extraction_quality_score", 0.80, "B"),  # minimum 0.75
        ("extraction_quality_score", 0.70, "C"),  # within one step (0.10) below minimum
        ("extraction_quality_score", 0.60, "F"),
        ("hallucination_rate", 0.02, "A+"),  # lower is better: excellence 0.02
        ("hallucination_rate", 0.05, "A"),
        ("hallucination_rate", 0.10, "B"),
        ("hallucination_rate", 0.14, "C"),  # step 0.05 above the 0.10 minimum
        ("hallucination_rate", 0.16, "F"),
        ("latency_p95_ms", 900.0, "A+"),
        ("latency_p95_ms", 9000.0, "F"),
        ("exact_match_rate", 0.66, "A"),
        ("exact_match_rate", None, "-"),
        ("json_valid_rate", 0.5, "-"),  # no tiers
    ],
)
def test_grades(metric: str, value: float | None, expected: str) -> None:
    assert summary.grade(metric, value) == expected


def test_performance_is_found_top_level_or_in_the_performance_section() -> None:
    found = summary.performance(
        {
            "latency_p95_ms": 1200.0,
            "performance": {
                "latency_ms": {"p50": 300.0},
                "reliability": {"success_rate": 0.99},
                "latency_breakdown": {"server_prompt_ms": {"p95": 80.0}},
            },
        }
    )
    assert found == {
        "latency_p50_ms": 300.0,
        "latency_p95_ms": 1200.0,
        "latency_p99_ms": None,
        "attempt_latency_p95_ms": None,
        "time_to_first_token_p95_ms": None,
        "server_prompt_p95_ms": 80.0,
        "server_generation_p95_ms": None,
        "network_queue_p95_ms": None,
        "client_wait_p95_ms": None,
        "throughput_rps": None,
        "success_rate": 0.99,
        "attempt_timeout_rate": None,
    }
    assert summary.fmt("latency_p95_ms", 1200.0) == "1.20 s" and summary.fmt("latency_p50_ms", 300.0) == "300 ms"


def test_latency_percentiles_read_end_to_end_before_the_answering_attempt() -> None:
    found = summary.performance(
        {"performance": {"latency_ms": {"p50": 300.0, "p99": 900.0}, "end_to_end_ms": {"p50": 1300.0, "p99": None}}}
    )
    # end to end where it was measured; a document written before it was (p99 here) keeps its attempt figure
    assert found["latency_p50_ms"] == 1300.0 and found["latency_p99_ms"] == 900.0


def test_strengths_weaknesses_and_steps_follow_the_metrics() -> None:
    metrics = {
        "num_samples": 10,
        "extraction_quality_score": 0.8,
        "field_precision_partial": 0.95,
        "field_recall_partial": 0.6,
        "schema_validity_rate": 0.9,
        "hallucination_rate": 0.01,
        "type_accuracy": 1.0,
        "exact_match_rate": 0.3,
        "field_f1_partial": 0.72,
        "invalid_samples": [{"sample_id": "a"}],
        "recommendation": "Deploy with mandatory human review",
    }
    s = summary.summarize("m", fill_model(metrics, "extraction"))
    assert "High precision (partial) (0.950)" in s.strengths and "Low hallucination rate (1.0%)" in s.strengths
    assert "Low recall (partial) (0.600)" in s.weaknesses and "Low schema validity (90.0%)" in s.weaknesses
    assert s.next_steps[0].startswith("Schema validity is 90.0% (1 invalid outputs)")


def test_progress_prints_at_every_tenth_and_at_the_end() -> None:
    progress = Progress()
    lines = []
    for i in range(25):
        record = {"model": "m", "score": {"eqs": 1.0 if i % 2 == 0 else 0.5, "schema_valid": i % 5 != 0}}
        line = progress.add(record, 25)
        if line:
            lines.append(line)
    assert len(lines) == 9  # 3, 6, ..., 24 and 25
    assert lines[0] == "extractbench 3/25 scored: m EQS 0.833 validity 66.7%"
    assert lines[-1] == "extractbench 25/25 scored: m EQS 0.760 validity 80.0%"


@pytest.mark.parametrize(
    ("eqs", "hallucination", "gates", "word"),
    [
        (0.80, 0.20, [], "not recommended"),  # Good by EQS, too many hallucinations
        (0.95, 0.07, [], "deploy with mandatory human review"),  # Excellent by EQS, not without review
        (0.95, 0.01, ["the SLA gate"], "not recommended: fails the SLA gate"),  # a failed gate of the run
    ],
)
def test_the_band_never_promises_more_than_the_recommendation(
    eqs: float, hallucination: float, gates: list, word: str
) -> None:
    from pytest_extractbench.analysis.bands import eqs_band, recommendation
    from pytest_extractbench.gating.gates import gated_recommendation

    advice = gated_recommendation(recommendation(eqs, hallucination), gates)
    metrics = {
        "extraction_quality_score": eqs,
        "hallucination_rate": hallucination,
        "num_samples": 10,
        "eqs_band": eqs_band(eqs),
        "recommendation": advice,
    }
    found = summary.summarize("m", fill_model(metrics, "extraction"))
    shown = found.verdict_band  # what report.html's executive summary shows beside the recommendation
    assert shown.startswith(eqs_band(eqs).split(" - ")[0]) and word in shown
    assert "suitable" not in shown and "production-ready" not in shown and found.band == eqs_band(eqs)
    assert found.recommendation == metrics["recommendation"]
    # summary.md and the terminal show the same words as report.html
    from pytest_extractbench.core import rundoc
    from pytest_extractbench.report.exports import summary_md
    from pytest_extractbench.report.terminal import metric_lines

    document = rundoc.complete({"run": {"dataset": {"name": "d"}}, "models": {"m": metrics}})
    assert f"({shown})" in summary_md(document)
    eqs_line = next(line for line in metric_lines(metrics, {}) if line.strip().startswith("EQS"))
    assert eqs_line.endswith(f"({shown})"), eqs_line


def test_a_band_the_recommendation_agrees_with_is_left_as_it_is() -> None:
    from pytest_extractbench.analysis.bands import eqs_band, recommendation

    for eqs, hallucination in ((0.95, 0.01), (0.82, 0.03), (0.5, 0.5), (0.72, 0.05)):
        metrics = {
            "extraction_quality_score": eqs,
            "num_samples": 10,
            "eqs_band": eqs_band(eqs),
            "recommendation": recommendation(eqs, hallucination),
        }
        assert summary.summarize("m", fill_model(metrics, "extraction")).verdict_band == eqs_band(eqs)


def test_prompt_budget_lines_group_thousands_and_name_the_limit() -> None:
    """Long runs wait thousands of seconds: the lines group digits as the latency line does."""
    from pytest_extractbench.report.terminal import prompt_budget_text, stretched_text

    budget = {
        "held": 11,
        "longest_wait_s": 3118.64,
        "tokens_in_flight_limit": 10439,
        "prompt_tokens_per_s": 34.8,
        "stretched_attempts": 2,
        "longest_attempt_timeout_s": 1688.2,
    }
    held = prompt_budget_text("m\x1b[31m", budget)
    assert "11 request(s) waited for room, up to 3,118.6 s" in held
    assert "at most 10,439 prompt tokens in flight (the server reads 34.8 tokens/s)" in held
    assert "\x1b" not in held and "prompt budget m\\x1b[31m:" in held  # a served name cannot recolour the terminal
    assert "2 attempt(s) given up to 1,688 s" in stretched_text("m", budget)
    unknown = prompt_budget_text("m", {"held": 1, "longest_wait_s": 2.0})
    assert "long prompts one at a time until the server reports its speed" in unknown and "reads" not in unknown
