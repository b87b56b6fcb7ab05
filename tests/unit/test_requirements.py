"""--extractbench-require: parsing thresholds on catalog metrics and checking them against a model's metrics."""

from __future__ import annotations

import argparse

import pytest

from pytest_extractbench.gating.requirements import evaluate_requirements, parse_requirement


@pytest.mark.parametrize(
    ("text", "metric", "direction", "threshold"),
    [
        ("judge_score>=0.8", "judge_score", "min", 0.8),
        (" eqs >= .75 ", "extraction_quality_score", "min", 0.75),  # an alias, spaces, a leading dot
        ("perfect_samples>=40%", "perfect_sample_rate", "min", 0.4),
        ("time_to_first_token_p95_ms<=8e2", "time_to_first_token_p95_ms", "max", 800.0),
    ],
)
def test_parse(text: str, metric: str, direction: str, threshold: float) -> None:
    found = parse_requirement(text)
    assert (found.metric, found.direction, found.threshold, str(found)) == (metric, direction, threshold, text.strip())


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("eqs>0.8", "expected METRIC>=VALUE or METRIC<=VALUE"),
        ("eqs>=high", "expected METRIC>=VALUE or METRIC<=VALUE"),
        ("nope<=1", "unknown metric 'nope'"),
    ],
)
def test_parse_refuses(text: str, message: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match=message):
        parse_requirement(text)


def test_checks_read_top_level_and_performance_values_and_skip_the_unmeasured() -> None:
    metrics = {
        "extraction_quality_score": 0.8,
        "judge_score": 0.5,
        "performance": {
            "latency_breakdown": {"time_to_first_token_ms": {"p95": 900.0}, "server_prompt_ms": {"p95": None}}
        },
    }
    checks = evaluate_requirements(
        metrics,
        [
            parse_requirement(t)
            for t in (
                "eqs>=0.8",  # exactly at the threshold: met
                "judge_score>=0.51",  # 0.5 < 0.51: missed
                "time_to_first_token_p95_ms<=900",  # at the ceiling: met
                "time_to_first_token_p95_ms<=899.9",  # just above it: missed
                "server_prompt_p95_ms<=100",  # the server sent no timing: could not be measured, fails
                "semantic_similarity>=0.9",  # absent, with nothing saying it does not apply: could not be measured
            )
        ],
    )
    assert [(c.metric, c.value, c.passed, c.outcome) for c in checks] == [
        ("extraction_quality_score", 0.8, True, "held"),
        ("judge_score", 0.5, False, "missed"),
        ("time_to_first_token_p95_ms", 900.0, True, "held"),
        ("time_to_first_token_p95_ms", 900.0, False, "missed"),
        ("server_prompt_p95_ms", None, False, "could not be measured"),
        ("semantic_similarity", None, False, "could not be measured"),
    ]
