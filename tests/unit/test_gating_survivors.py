"""The gate's smaller modules (gating/outcomes.py, requirements.py, pairing.py, field_deltas.py, repeated.py,
verdict.py, buckets.py) where a mutation run found no test looking: why a metric has no value to judge, a performance
figure the run never timed, an empty baseline's pairing, per-field F1 and its order, the significance of a pass@k
delta, the closing verdict lines, and the per-sample buckets. A survivor there can turn a failed gate into a passed
one. Every value is worked out by hand in the comments."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from pytest_extractbench.analysis import catalog
from pytest_extractbench.analysis.performance import ALL_CACHED, NOT_MEASURED
from pytest_extractbench.gating import verdict
from pytest_extractbench.gating.baseline import SampleSnapshot
from pytest_extractbench.gating.buckets import (
    NEW,
    REGRESSED,
    REMOVED,
    UNCHANGED,
    Buckets,
    FieldFlip,
    SampleBucket,
    bucket_samples,
    field_flips,
    passed,
    sample_bucket,
)
from pytest_extractbench.gating.field_deltas import field_deltas, field_scores
from pytest_extractbench.gating.outcomes import (
    HELD,
    MISSED,
    NOT_APPLICABLE,
    UNMEASURED,
    Absence,
    Measuring,
    absence,
    outcome_of,
)
from pytest_extractbench.gating.pairing import pair_samples, too_few_unchanged
from pytest_extractbench.gating.repeated import RepeatComparison, paired_mean_delta, repeated_metric
from pytest_extractbench.gating.requirements import evaluate_requirements, parse_requirement
from pytest_extractbench.gating.sla import GateCheck
from pytest_extractbench.gating.verdict import partial_text, verdict_lines
from pytest_extractbench.scoring import StatsOptions

JUDGE, FIRST_TOKEN = "judge_score", "time_to_first_token_p95_ms"
NO_TIMING = Absence(UNMEASURED, "the server sent no timing for it")
NO_VALUE = Absence(UNMEASURED, "the run produced no value for it")


# -- outcomes.absence: every branch, each with its own reason ------------------------------------------------------


@pytest.mark.parametrize(
    ("metric", "metrics", "value", "measuring", "expected"),
    [
        # the run named the components it asked for, and the judge was not one: not applicable whatever the value
        (JUDGE, {}, 0.8, Measuring(asked=frozenset()), Absence(NOT_APPLICABLE, "the run did not ask for the LLM judge (--extractbench-judge)")),
        # the judge was asked for and scored: its value decides
        (JUDGE, {}, 0.8, Measuring(asked=frozenset({JUDGE})), None),
        # no failure recorded for the judge (another component's failures are not its own): its value decides
        (JUDGE, {}, 0.8, Measuring(failures={"semantic_similarity": (2, 5, "timeout")}), None),
        (JUDGE, {}, 0.8, Measuring(), None),
        # the embeddings failed on 2 of 5 samples: a mean over the other 3 is no measurement
        (
            "semantic_similarity", {}, 0.9, Measuring(failures={"semantic_similarity": (2, 5, "timeout")}),
            Absence(UNMEASURED, "the embeddings backend failed on 2 of 5 sample(s): timeout"),
        ),
        (JUDGE, {}, None, Measuring(), Absence(UNMEASURED, "the LLM judge scored no sample")),
        ("extraction_quality_score", {}, 0.7, Measuring(), None),
        ("pass_at_k", {}, None, Measuring(), Absence(UNMEASURED, "no sample was run more than once (live runs with --extractbench-repeats N, N >= 2)")),
        # a performance figure: the run's performance note says why there is no timing
        ("latency_p95_ms", {"performance": {"note": NOT_MEASURED}}, None, Measuring(), Absence(NOT_APPLICABLE, "no request was sent to a server (offline predictions carry no timings)")),
        ("latency_p95_ms", {"performance": {"note": ALL_CACHED}}, None, Measuring(), Absence(NOT_APPLICABLE, "every response came from the cache (no request was timed)")),
        ("latency_p95_ms", {"performance": {"note": "no successful timed request"}}, None, Measuring(), Absence(UNMEASURED, "no request succeeded with a timing")),
        # no note: time to first token is only measured on streamed answers (not streamed is the default)
        (FIRST_TOKEN, {"performance": {}}, None, Measuring(), Absence(NOT_APPLICABLE, "answers were not streamed (--extractbench-stream)")),
        (FIRST_TOKEN, {"performance": {}}, None, Measuring(streamed=True), Absence(UNMEASURED, "no streamed answer sent a first token (the server answered whole, or sent no content)")),
        # any other figure without a note, streamed or not, and with no performance section at all
        ("latency_p95_ms", {"performance": {}}, None, Measuring(streamed=True), NO_TIMING),
        ("latency_p95_ms", {"performance": {}}, None, Measuring(), NO_TIMING),
        ("latency_p95_ms", {}, None, Measuring(), NO_TIMING),
        # a catalog metric that is no performance figure, and a name the catalog does not know
        ("extraction_quality_score", {}, None, Measuring(), NO_VALUE),
        ("not_a_metric", {}, None, Measuring(), NO_VALUE),
    ],
)  # fmt: skip
def test_why_a_metric_cannot_decide_a_threshold(
    metric: str, metrics: dict, value: float | None, measuring: Measuring, expected: Absence | None
) -> None:
    assert absence(metric, metrics, value, measuring) == expected


@pytest.mark.parametrize(
    ("passed", "value", "outcome"),
    [(None, None, NOT_APPLICABLE), (None, 0.3, HELD), (True, 0.3, HELD), (False, 0.3, MISSED), (False, None, MISSED)],
)
def test_an_older_check_without_an_outcome_gets_one_from_passed_and_value(
    passed: bool | None, value: float | None, outcome: str
) -> None:
    assert outcome_of(passed, value) == outcome
    # what a GateCheck read from an older metrics.json fills in
    assert GateCheck("eqs", "eqs", value, 0.5, "min", passed).outcome == outcome


# -- requirements: a performance figure the run never timed is no 0 ms -----------------------------------------------


def test_a_latency_requirement_on_a_run_without_timings_fails_rather_than_holding_at_zero() -> None:
    # latency_p50_ms lives at performance.end_to_end_ms.p50 or performance.latency_ms.p50; neither section exists,
    # so there is no value (not 0 ms, which would meet <= 800) and the server sent no timing: a failed threshold
    requirement = parse_requirement("latency_p50_ms<=800")
    for metrics in ({}, {"performance": {}}, {"performance": {"end_to_end_ms": {}}}):
        (check,) = evaluate_requirements(metrics, [requirement])
        assert (check.value, check.outcome, check.passed, check.reason) == (
            None,
            UNMEASURED,
            False,
            "the server sent no timing for it",
        )
    # the second place the catalog names holds it: 700 <= 800 holds
    (check,) = evaluate_requirements({"performance": {"latency_ms": {"p50": 700}}}, [requirement])
    assert (check.value, check.outcome, check.passed) == (700.0, HELD, True)


# -- pairing: an empty baseline lost nothing -------------------------------------------------------------------------


def test_a_baseline_with_no_sample_counts_as_wholly_unchanged_and_is_not_refused() -> None:
    pairing = pair_samples({}, {"a": "h1"})
    # 0 unchanged + 0 changed + 0 removed = 0 baseline samples: the fraction is 1.0 by definition, not 0/0
    assert (pairing.baseline_total, pairing.unchanged_fraction, pairing.added) == (0, 1.0, ("a",))
    assert too_few_unchanged(pairing, 0.9) is None
    # one baseline sample, changed: 0 of 1 unchanged, under 0.9
    assert too_few_unchanged(pair_samples({"a": "h0"}, {"a": "h1"}), 0.9) is not None


# -- field_deltas: the credit rules and the order -------------------------------------------------------------------


def snapshot(valid: bool | None, *fields: tuple[str, str]) -> SampleSnapshot:
    row = {} if valid is None else {"schema_valid": float(valid)}
    return SampleSnapshot(row, tuple((path, category, 1.0) for path, category in fields))


def test_only_exact_and_partial_fields_of_a_valid_output_earn_credit() -> None:
    samples = [snapshot(True, ("x", category)) for category in ("exact", "partial", "incorrect", "missed", "spurious")]
    # credit 1 + 0.5 + 0 + 0 + 0 = 1.5; predicted: every category but missed = 4; expected: every one but spurious = 4
    # P = R = 1.5 / 4 = 0.375, so F1 = 0.375
    assert field_scores(samples) == {"x": {"f1_partial": 0.375, "expected": 4.0, "predicted": 4.0}}


def test_a_row_without_schema_validity_earns_no_credit() -> None:
    # no schema_valid: taken as invalid, so the exact field earns 0 of 1 predicted and 1 expected: P = R = F1 = 0
    assert field_scores([snapshot(None, ("x", "exact"))])["x"]["f1_partial"] == 0.0
    assert field_scores([snapshot(True, ("x", "exact"))])["x"]["f1_partial"] == 1.0


def test_field_deltas_put_the_worst_drop_first_and_fields_of_one_side_last_without_a_delta() -> None:
    # paths named against their order, so that sorting by name alone would give the reverse
    baseline = [snapshot(True, ("z", "exact"), ("y", "exact"), ("x", "missed"), ("old", "exact"))]
    current = [snapshot(True, ("z", "missed"), ("y", "exact"), ("x", "exact"), ("new", "exact"))]
    # z: 1 -> 0 (missed: 0 credit, 0 predicted, 1 expected: P = 0, R = 0), delta -1; y: 1 -> 1, delta 0;
    # x: 0 -> 1, delta +1; new and old: one side only, no delta, after every delta, then by name
    deltas = field_deltas(current, baseline)
    assert list(deltas) == ["z", "y", "x", "new", "old"]
    assert [deltas[p]["delta"] for p in deltas] == [-1.0, 0.0, 1.0, None, None]
    assert deltas["new"] == {"baseline": None, "current": 1.0, "delta": None, "expected": 1.0}
    assert deltas["old"] == {"baseline": 1.0, "current": None, "delta": None, "expected": 1.0}


# -- repeated: pass@k's comparison and the significance of its delta -------------------------------------------------


def test_only_pass_at_k_and_pass_hat_k_are_repeated_metrics() -> None:
    assert repeated_metric("eqs") is None
    assert repeated_metric("not_a_metric") is None
    found = repeated_metric(" Pass^k ")
    assert found is not None and found.name == "pass_hat_k"


def test_a_repeat_comparison_says_why_it_did_not_compare_or_nothing_when_nothing_was_repeated() -> None:
    why = RepeatComparison({}, why="not measured in the baseline")
    assert why.as_dict() == {"compared": False, "reason": "not measured in the baseline"}
    assert why.note("m") == "model 'm': pass@k / pass^k not compared: not measured in the baseline"
    nothing = RepeatComparison({})  # this run repeated no sample: no note at all
    assert nothing.note("m") is None
    compared = RepeatComparison({}, 3, ("a", "b"))
    assert compared.as_dict() == {"compared": True, "runs": 3, "samples": 2}


def test_a_pass_at_k_delta_is_significant_only_below_alpha() -> None:
    # two samples, both 1 now and 0 before: differences (1, 1). The exact permutation test swaps each pair or not
    # (4 patterns): mean differences 1, 0, 0, -1. At least as extreme as the observed 1 on the high side: 1 of 4;
    # two-sided p = 2 * 1/4 = 0.5
    at = paired_mean_delta("pass_at_k", [1.0, 1.0], [0.0, 0.0], StatsOptions(resamples=100, alpha=0.5), rng(0))
    assert (at.delta, at.p_value, at.significant) == (1.0, 0.5, False)  # p = alpha is not below it
    above = paired_mean_delta("pass_at_k", [1.0, 1.0], [0.0, 0.0], StatsOptions(resamples=100, alpha=0.6), rng(0))
    assert above.significant is True
    # identical runs: every pattern gives 0, p = 1, never significant
    same = paired_mean_delta("pass_at_k", [1.0, 0.0], [1.0, 0.0], StatsOptions(resamples=100), rng(0))
    assert (same.delta, same.p_value, same.significant) == (0.0, 1.0, False)


def rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


# -- verdict: the closing lines, one scenario per way a run can end ---------------------------------------------------


def model(eqs: float = 0.8) -> dict[str, Any]:
    # no performance section: no "requests answered" part, and no model was asked (recorded outputs)
    return {"extraction_quality_score": eqs, "eqs_band": "Good - x", "schema_validity_rate": 1.0, "num_samples": 2}


MODEL_LINE = "  m: EQS 0.800 (Good), schema validity 100.0% on 2 samples"
EQS_HELD = GateCheck("extraction_quality_score", "eqs", 0.8, 0.75, "min", True)
LATE = GateCheck("latency_p95_ms", "p95_latency_ms", None, 5000.0, "max", False, UNMEASURED, "no request timed")
LATE_WARNED = GateCheck("latency_p95_ms", "p95_latency_ms", None, 5000.0, "max", None, UNMEASURED, "no request timed")
LATE_LINE = "      p95_latency_ms (needs <= 5 s): could not be measured: no request timed"  # 5000 ms = 5 s, no value
OFFLINE = GateCheck("latency_p95_ms", "p95_latency_ms", None, 5000.0, "max", None, NOT_APPLICABLE, "offline")
JUDGE_MISSED = GateCheck(JUDGE, JUDGE, 0.6, 0.8, "min", False, MISSED)
JUDGE_HELD = GateCheck(JUDGE, JUDGE, 0.9, 0.8, "min", True, HELD)
JUDGE_DOWN = GateCheck(JUDGE, JUDGE, None, 0.8, "min", False, UNMEASURED, "the LLM judge scored no sample")
DONE = "verdict: the benchmark worked: it ran to the end and scored every model (details above)."
PASSES = "the model meets the 'minimum' SLA tier: the session gate passes."
UNMEASURED_EXIT = (
    "exit code 1 means a threshold could not be measured (the component that measures it failed, listed above): "
    "fix it, or let such thresholds warn (--extractbench-unmeasured warn)."
)
REQUIRED_EXIT = (
    "exit code 1 means a model missed a threshold this run requires (listed above), not that the tool failed."
)
NO_TIER = "no SLA tier was asserted (--extractbench-sla none)"


def test_an_unmeasured_tier_threshold_fails_with_its_own_reason_and_its_own_exit_line() -> None:
    lines = verdict_lines({"m": model()}, {"m": [EQS_HELD, LATE]}, "minimum")
    # no warning first (it failed, it was not let pass); the reason is the check's, not the catalog's "too long"
    assert lines == [
        DONE,
        MODEL_LINE,
        "    did not hold 1 threshold(s) of the 'minimum' SLA tier:",
        LATE_LINE,
        UNMEASURED_EXIT,
    ]


def test_an_unmeasured_threshold_let_pass_is_warned_about_first_and_the_gate_passes() -> None:
    lines = verdict_lines({"m": model()}, {"m": [EQS_HELD, LATE_WARNED]}, "minimum")
    assert lines == [
        "warning: 1 threshold(s) could not be measured and were let pass (--extractbench-unmeasured warn); "
        "listed below.",
        DONE,
        MODEL_LINE,
        "    did not hold 1 threshold(s) of the 'minimum' SLA tier:",
        LATE_LINE,
        PASSES,
    ]


def test_a_missed_percent_threshold_shows_percentages_and_the_catalog_reason() -> None:
    low = GateCheck("success_rate", "success_rate", 0.97, 0.99, "min", False, MISSED)
    lines = verdict_lines({"m": model()}, {"m": [low]}, "minimum")
    # 100 * 0.97 = 97.0%, 100 * 0.99 = 99 (:g)
    assert lines[3] == "      success_rate 97.0% (needs >= 99%): missed: " + catalog.get("success_rate").why_missed


def test_thresholds_that_do_not_apply_are_counted_beside_a_held_tier() -> None:
    lines = verdict_lines({"m": model()}, {"m": [EQS_HELD, OFFLINE]}, "minimum")
    assert lines == [
        DONE,
        MODEL_LINE,
        "    meets every measured threshold of the 'minimum' SLA tier (1 not applicable to this run)",
        PASSES,
    ]
    assert verdict_lines({"m": model()}, {"m": [EQS_HELD]}, "minimum")[2] == (
        "    meets every measured threshold of the 'minimum' SLA tier"
    )


def test_a_missed_required_threshold_without_a_tier_is_listed_and_explains_exit_1() -> None:
    lines = verdict_lines({"m": model()}, {}, "none", required={"m": [JUDGE_HELD, JUDGE_MISSED]})
    # only the missed one is listed; a required line has no catalog reason (the judge's reason is "")
    assert lines == [
        DONE,
        MODEL_LINE,
        "    missed 1 required threshold(s) (--extractbench-require):",
        "      judge_score 0.600 (needs >= 0.8): missed",
        REQUIRED_EXIT,
    ]


def test_an_unmeasured_required_threshold_did_not_hold_and_is_no_missed_one() -> None:
    lines = verdict_lines({"m": model()}, {}, "none", required={"m": [JUDGE_DOWN]})
    assert lines == [
        DONE,
        MODEL_LINE,
        "    did not hold 1 required threshold(s) (--extractbench-require):",
        "      judge_score (needs >= 0.8): could not be measured: the LLM judge scored no sample",
        UNMEASURED_EXIT,
    ]


def test_held_required_thresholds_pass_the_gate_with_or_without_a_tier() -> None:
    untiered = verdict_lines({"m": model()}, {}, "none", required={"m": [JUDGE_HELD]})
    assert untiered == [
        DONE,
        MODEL_LINE,
        f"{NO_TIER}; every required threshold held or does not apply to this run: the session gate passes.",
    ]
    tiered = verdict_lines({"m": model()}, {"m": [EQS_HELD]}, "minimum", required={"m": [JUDGE_HELD]})
    assert tiered[-1] == PASSES
    bare = verdict_lines({"m": model()}, {}, "none")
    assert bare[-1].startswith(f"{NO_TIER}: no threshold gates the session")


def test_a_partial_run_says_how_many_samples_the_gate_saw_per_model() -> None:
    partial = {"scored": 3, "collected": 5, "models": {"m": {"scored": 3, "collected": 5}}}
    lines = verdict_lines({"m": model()}, {"m": [EQS_HELD]}, "minimum", partial=partial)
    assert lines[:3] == [
        "verdict: a partial run: 3 of 5 samples were scored, and the gate judged only those (details above).",
        MODEL_LINE,
        "    the gate saw 3 of 5 samples (a partial run: stopped early, deselected, rerun failures only, or items "
        "without a score)",
    ]


@pytest.mark.parametrize(
    ("counts", "expected"),
    [
        (None, None),
        ({}, None),
        ({"scored": 5, "collected": 5}, None),  # saw them all
        ({"scored": 6, "collected": 5}, None),  # more scored than collected (repeats): nothing missing
        ({"scored": 4, "collected": 5}, "the gate saw 4 of 5 samples"),
    ],
)
def test_partial_text_is_none_unless_some_collected_sample_went_unscored(
    counts: dict[str, int] | None, expected: str | None
) -> None:
    found = partial_text(counts)
    if expected is None:
        assert found is None
    else:
        assert found is not None and found.startswith(f"{expected} (a partial")


def test_a_track_without_a_gate_says_what_its_metrics_cover() -> None:
    found = partial_text({"scored": 1, "collected": 2}, gated=False)
    assert found is not None and found.startswith("the metrics cover 1 of 2 samples (a partial run")


def test_a_check_without_a_value_shows_a_dash() -> None:
    assert verdict._value(JUDGE_DOWN) == "-"
    assert verdict._value(JUDGE_MISSED) == "0.600"


# -- buckets: how a flip ranks --------------------------------------------------------------------------------------


def snap(eqs: float | None, ok: bool | None, *fields: tuple[str, str]) -> SampleSnapshot:
    """A scored sample: its EQS (None: a track without EQS), whether its item passed, each field's category."""
    row = {"schema_valid": 1.0} if eqs is None else {"eqs": eqs, "schema_valid": 1.0}
    return SampleSnapshot(row, tuple((path, category, 1.0) for path, category in fields), passed=ok)


@pytest.mark.parametrize(
    ("before", "after", "worse"),
    [
        ("exact", "-", False),  # a path gone from both gold and prediction is as good as exact: no worse
        ("-", "exact", False),  # and one that appears as exact is no worse either
        ("exact", "partial", True),  # partial ranks under exact
        ("partial", "exact", False),
        ("incorrect", "missed", True),  # missed ranks under incorrect
        ("incorrect", "spurious", True),  # so does spurious
        ("missed", "spurious", False),  # the two lowest rank alike: neither is worse
        ("incorrect", "new-category", True),  # a category the ranking does not know ranks lowest
        ("new-category", "missed", False),  # and from it nothing is worse
    ],
)
def test_a_flip_is_worse_only_when_its_new_category_ranks_lower(before: str, after: str, worse: bool) -> None:
    assert FieldFlip("a", before, after).worse is worse


def test_worsened_flips_come_first_then_by_path() -> None:
    baseline = snap(1.0, True, ("a", "missed"), ("b", "exact"))
    current = snap(1.0, True, ("a", "exact"), ("b", "missed"))
    # a got better, b got worse: b first although a sorts first by name
    assert [str(f) for f in field_flips(current, baseline)] == ["b: exact -> missed", "a: missed -> exact"]


def test_a_snapshot_without_pass_fail_or_validity_did_not_pass() -> None:
    assert passed(SampleSnapshot({})) is False  # no schema_valid: taken as 0, not valid
    assert passed(SampleSnapshot({"schema_valid": 1.0})) is True
    assert passed(SampleSnapshot({"schema_valid": 1.0}, passed=False)) is False  # a kept pass/fail decides


# -- buckets: new, removed and the texts ------------------------------------------------------------------------------


def test_a_new_and_a_removed_sample_carry_only_their_own_side() -> None:
    new = sample_bucket("n", snap(0.7, True), None)
    assert new.as_dict() == {
        "sample_id": "n",
        "bucket": NEW,
        "baseline_eqs": None,
        "current_eqs": 0.7,
        "eqs_delta": None,  # no baseline EQS: no delta, not 0.7 - 0
        "baseline_passed": None,
        "current_passed": True,
        "field_flips": [],
    }
    assert new.describe() == "n"  # no "EQS before -> after" with one side missing
    removed = sample_bucket("r", None, snap(0.6, False))
    assert (removed.bucket, removed.baseline_eqs, removed.current_eqs, removed.eqs_delta) == (REMOVED, 0.6, None, None)
    assert (removed.baseline_passed, removed.current_passed) == (False, None)
    assert removed.describe() == "r"


def test_a_sample_description_names_a_lost_pass_and_at_most_two_flips() -> None:
    flips = (FieldFlip("a", "exact", "missed"), FieldFlip("b", "exact", "partial"), FieldFlip("c", "partial", "missed"))
    dropped = SampleBucket("s", REGRESSED, 0.9, 0.4, True, True, flips[:2])
    # still passing: no "pass -> fail"; two flips: both shown, no "+0 more"
    assert dropped.describe() == "s 0.900 -> 0.400 (a: exact -> missed, b: exact -> partial)"
    lost = SampleBucket("s", REGRESSED, 1.0, 0.4, True, False, flips)
    # three flips: two shown and 3 - 2 = 1 more
    assert lost.describe() == "s 1.000 -> 0.400, pass -> fail (a: exact -> missed, b: exact -> partial, +1 more)"


# -- buckets: the EQS drop at its edges ----------------------------------------------------------------------------


def test_an_eqs_drop_of_exactly_the_delta_is_no_regression() -> None:
    # before - after = (0.25 + 1e-12) - 0 is the very float delta + 1e-12 the rule compares with: not above it
    edge = 0.25 + 1e-12
    at = sample_bucket("s", snap(0.0, True), snap(edge, True), delta=0.25)
    assert at.bucket == UNCHANGED
    past = sample_bucket("s", snap(0.0, True), snap(0.26, True), delta=0.25)  # 0.26 - 0 > 0.25 + 1e-12
    assert past.bucket == REGRESSED


@pytest.mark.parametrize("before", [math.inf, -math.inf, math.nan])
def test_an_eqs_that_is_not_a_finite_number_never_counts_as_a_drop(before: float) -> None:
    # inf - 0.5 = inf would pass any delta; such a baseline value says nothing about this run
    assert sample_bucket("s", snap(0.5, True), snap(before, True)).bucket == UNCHANGED
    assert sample_bucket("s", snap(before, True), snap(0.5, True)).bucket == UNCHANGED


# -- buckets: the worst regressions first, and the tallies ------------------------------------------------------------


def test_regressions_are_ordered_lost_pass_first_then_by_eqs_drop() -> None:
    baseline = {"x": snap(0.9, True), "y": snap(0.9, True), "z": snap(None, True), "w": snap(0.5, True)}
    current = {"x": snap(0.8, False), "y": snap(0.4, True), "z": snap(None, False), "w": snap(0.6, False)}
    buckets = bucket_samples(current, baseline, delta=0.05)
    # x, z, w went from pass to fail (deltas -0.1, none: taken as 0, +0.1); y still passes, its EQS fell 0.5 > 0.05.
    # Lost passes first, each by its delta (lowest first): x (-0.1), z (0.0), w (+0.1); then y
    assert [s.sample_id for s in buckets.worst()] == ["x", "z", "w", "y"]
    assert [s.sample_id for s in buckets.worst(1)] == ["x"]
    assert buckets.counts() == {
        "regressed": 4,
        "fixed": 0,
        "still_failing": 0,
        "unchanged": 0,
        "new": 0,
        "removed": 0,
        "changed": 0,
    }


def test_flip_and_field_tallies_break_ties_by_name() -> None:
    baseline = {"p": snap(1.0, True, ("a", "partial"), ("b", "missed"), ("c", "exact"), ("d", "exact"))}
    current = {"p": snap(1.0, True, ("a", "missed"), ("b", "exact"), ("c", "incorrect"), ("d", "missed"))}
    buckets = bucket_samples(current, baseline)
    # flips, worse first then by path: a partial -> missed, c exact -> incorrect, d exact -> missed, b missed -> exact.
    # Each transition happens once: tied counts, so in name order, not in the order they were counted
    assert list(buckets.flip_counts().items()) == [
        ("exact -> incorrect", 1),
        ("exact -> missed", 1),
        ("missed -> exact", 1),
        ("partial -> missed", 1),
    ]
    # a, c, d worsened once, b improved once: the three worse ones first (tied: by name), then b
    assert list(buckets.field_counts().items()) == [
        ("a", {"worse": 1, "better": 0}),
        ("c", {"worse": 1, "better": 0}),
        ("d", {"worse": 1, "better": 0}),
        ("b", {"worse": 0, "better": 1}),
    ]


def test_an_empty_comparison_counts_zero_in_every_bucket() -> None:
    assert set(Buckets(0.05, {}).counts().values()) == {0}


def test_fields_worsened_equally_often_are_tallied_by_name_not_in_the_order_met() -> None:
    # p1 (met first) worsened z, p2 worsened a: each path 1 worse, 0 better, a tie broken by the path's name
    baseline = {"p1": snap(1.0, True, ("z", "exact")), "p2": snap(1.0, True, ("a", "exact"))}
    current = {"p1": snap(1.0, True, ("z", "missed")), "p2": snap(1.0, True, ("a", "missed"))}
    assert list(bucket_samples(current, baseline).field_counts()) == ["a", "z"]
