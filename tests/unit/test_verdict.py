"""The closing verdict lines (verdict.py): what the model scored, which thresholds it missed, what exit 1 means."""

from __future__ import annotations

from typing import Any

from pytest_extractbench.gating.sla import evaluate_sla
from pytest_extractbench.gating.verdict import verdict_lines


def _metrics(eqs: float, p95_ms: float, **extra: Any) -> dict[str, Any]:
    return {
        "num_samples": 52,
        "extraction_quality_score": eqs,
        "eqs_band": "Moderate - needs significant oversight",
        "schema_validity_rate": 0.98,
        "field_f1_partial": 0.8,
        "hallucination_rate": 0.01,
        "latency_p95_ms": p95_ms,
        "success_rate": 1.0,
        "performance": {
            "reliability": {
                "total_requests": 52,
                "successful_requests": 50,
                "error_counts": {"timeout": 2, "truncated": 0},
            }
        },
        **extra,
    }


def test_missed_thresholds_are_listed_with_a_reason_and_exit_1_is_explained() -> None:
    metrics = {"tiny": _metrics(0.612, 8400.0)}
    lines = verdict_lines(metrics, {"tiny": evaluate_sla(metrics["tiny"], "minimum")}, "minimum")
    text = "\n".join(lines)
    assert lines[0].startswith("verdict: the benchmark worked")
    assert (
        "tiny: EQS 0.612 (Moderate), schema validity 98.0% on 52 samples; 50 of 52 requests answered (2 timeout)"
        in text
    )
    assert "missed 2 threshold(s) of the 'minimum' SLA tier" in text
    assert "eqs 0.612 (needs >= 0.75): missed: its extracted fields are often wrong or missing" in text
    assert "p95_latency_ms 8.4 s (needs <= 5 s): missed: answers take too long on this hardware" in text
    assert lines[-1].startswith("exit code 1 means the model missed the production SLA ('minimum'), not that the tool")


def test_a_model_that_meets_the_tier_and_a_run_without_a_tier() -> None:
    metrics = {"big": _metrics(0.93, 900.0)}
    lines = verdict_lines(metrics, {"big": evaluate_sla(metrics["big"], "minimum")}, "minimum")
    assert "meets every measured threshold of the 'minimum' SLA tier" in lines[2]
    assert lines[-1] == "the model meets the 'minimum' SLA tier: the session gate passes."
    ungated = verdict_lines(metrics, {"big": []}, "none")
    assert ungated[-1].startswith("no SLA tier was asserted") and not any("missed" in line for line in ungated)


def test_a_regression_is_named_as_the_reason_and_model_names_are_cleaned() -> None:
    metrics = {"evil\x1b[2J": _metrics(0.93, 900.0)}
    lines = verdict_lines(metrics, {}, "none", regressions=1, safe=lambda s: s.replace("\x1b", "\\x1b"))
    assert "\x1b" not in "".join(lines)
    assert lines[-1].startswith("exit code 1 means the run regressed against its baseline")
    assert verdict_lines({}, {}, "minimum") == []


def test_recorded_outputs_get_no_advice_about_the_model_and_one_sample_is_singular() -> None:
    recorded = _metrics(0.612, 0.0, num_samples=1)
    recorded["performance"] = {"reliability": {"total_requests": 0, "successful_requests": 0, "error_counts": {}}}
    checks = {"predictions": evaluate_sla(recorded, "minimum")}
    lines = verdict_lines({"predictions": recorded}, checks, "minimum")
    assert "schema validity 98.0% on 1 sample" in lines[1] and "requests answered" not in lines[1]
    assert lines[-1] == (
        "exit code 1 means the recorded outputs missed the production SLA ('minimum'), not that the tool failed: "
        "report without the gate with --extractbench-sla none."
    )
    assert "larger model" not in "\n".join(lines)
