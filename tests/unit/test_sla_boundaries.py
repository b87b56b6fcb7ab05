"""SLA thresholds at their exact boundary, and the gate verdicts built from the checks."""

from pytest_extractbench.gating.gates import gate_verdicts, gated_recommendation
from pytest_extractbench.gating.sla import evaluate_sla, sla_passed, tier_thresholds


def test_a_value_exactly_at_each_threshold_passes_and_one_step_past_it_fails():
    thresholds = tier_thresholds()["minimum"]
    at = evaluate_sla(dict(thresholds), "minimum")
    assert at and all(check.passed is True for check in at)
    assert sla_passed(at)
    for check in at:
        step = -0.001 if check.direction == "min" else 0.001  # the wrong side of a minimum / a maximum
        past = evaluate_sla({**thresholds, check.metric: thresholds[check.metric] + step}, "minimum")
        missed = [c.metric for c in past if c.passed is False]
        assert missed == [check.metric]
        assert not sla_passed(past)


def test_gate_verdicts_name_the_missed_threshold_and_a_failed_gate_blocks_the_recommendation():
    thresholds = tier_thresholds()["minimum"]
    checks = evaluate_sla(dict(thresholds), "minimum")
    first = checks[0]
    step = -0.001 if first.direction == "min" else 0.001
    failing = evaluate_sla({**thresholds, first.metric: thresholds[first.metric] + step}, "minimum")
    document = {
        "models": {
            "good": {"sla": {"tier": "minimum", "checks": [c.as_dict() for c in checks]}},
            "bad": {"sla": {"tier": "minimum", "checks": [c.as_dict() for c in failing]}},
        }
    }
    good, bad = gate_verdicts(document)
    assert (good.model, good.gate, good.passed) == ("good", "sla-minimum", True)
    assert good.headline == "SLA tier 'minimum', model 'good': every threshold held"
    assert (bad.model, bad.passed) == ("bad", False)
    assert bad.headline == "SLA tier 'minimum', model 'bad': 1 threshold(s) missed"
    assert len(bad.details) == 1 and bad.details[0].endswith(": missed")
    assert gated_recommendation("deploy", []) == "deploy"
    assert gated_recommendation("deploy", ["sla-minimum-bad"]) == "Not recommended: fails sla-minimum-bad of this run"
