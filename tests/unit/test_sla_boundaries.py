"""SLA thresholds at their exact boundary, and the gate verdicts built from the checks."""

from pytest_extractbench.gating.gates import gate_verdicts, gated_recommendation, unmeasured_warnings
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


def _check(metric: str, value, passed, outcome: str, reason: str = "") -> dict:
    return {"metric": metric, "label": metric, "value": value, "threshold": 0.5, "direction": "min",
            "passed": passed, "outcome": outcome, "reason": reason}  # fmt: skip


def test_an_unmeasured_threshold_fails_the_gate_or_warns_as_the_run_asked():
    held = _check("eqs", 0.6, True, "held")
    down = _check("judge_score", None, False, "could not be measured", "the judge answered nothing")
    excused = {**down, "passed": None}  # what evaluate_sla records under the "warn" policy
    failing = {"models": {"m": {"sla": {"tier": "minimum", "checks": [held, down]}}}}
    (verdict,) = gate_verdicts(failing)  # no run options: the policy is "fail"
    assert verdict.passed is False
    assert verdict.headline == "SLA tier 'minimum', model 'm': 1 threshold(s) failed (1 could not be measured)"
    assert verdict.details == ("judge_score (needs >= 0.500): could not be measured: the judge answered nothing",)
    assert verdict.warnings == ()
    warning = {
        "run": {"options": {"unmeasured": "warn"}},
        "models": {"m": {"sla": {"tier": "minimum", "checks": [held, excused]}}},
    }
    (verdict,) = gate_verdicts(warning)
    assert verdict.passed is True
    assert verdict.headline == "SLA tier 'minimum', model 'm': no threshold failed (1 held, 1 could not be measured)"
    assert verdict.warnings == ("judge_score (needs >= 0.500): could not be measured: the judge answered nothing",)
    assert unmeasured_warnings([verdict]) == [f"m: {verdict.warnings[0]}"]


def test_a_regression_check_that_could_not_be_measured_is_a_warning_unless_it_failed():
    checks = [
        {"model": "m", "metric": "eqs", "failed": False, "outcome": "held", "message": "eqs held"},
        {"model": "m", "metric": "judge", "failed": False, "outcome": "could not be measured", "message": "no judge"},
        {"model": "n", "metric": "eqs", "failed": True, "message": "eqs dropped"},  # an older file: no outcome
    ]
    m, n = gate_verdicts({"baseline_comparison": {"checks": checks}})
    assert (m.gate, m.model, m.passed) == ("regression", "m", True)
    assert (
        m.headline == "regression against the baseline, model 'm': 2 check(s) passed (1 held, 1 could not be measured)"
    )
    assert m.details == ("held: eqs held", "could not be measured: no judge")
    assert m.warnings == ("no judge",)
    assert (n.passed, n.warnings) == (False, ())
    assert n.headline == "regression against the baseline, model 'n': 1 of 1 check(s) failed"
    assert n.details == ("missed: eqs dropped",)


def test_required_thresholds_are_a_gate_of_their_own_and_a_tier_none_or_without_checks_is_none():
    held = _check("eqs", 0.6, True, "held")
    missed = _check("field_f1_partial", 0.4, False, "missed")
    document = {
        "models": {
            "off": {"sla": {"tier": "none", "checks": [held]}},
            "empty": {"sla": {"tier": "minimum", "checks": []}},
            "req": {"requirements": {"checks": [held, missed]}},
        }
    }
    (verdict,) = gate_verdicts(document)
    assert (verdict.gate, verdict.model, verdict.passed) == ("required", "req", False)
    assert verdict.name == "required-req"
    assert verdict.message == (
        "required thresholds, model 'req': 1 threshold(s) missed\nfield_f1_partial = 0.400 (needs >= 0.500): missed"
    )
