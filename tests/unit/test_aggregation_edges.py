"""Edges of aggregation, per-sample rows and gate verdicts that a wrong operator or constant would move, by hand
(the cases a mutation run of analysis/metrics.py, analysis/resampled.py and gating/gates.py found unguarded)."""

from __future__ import annotations

from pytest_extractbench import SampleRecord, ScoringOptions, model_metrics, score_sample
from pytest_extractbench.analysis import resampled
from pytest_extractbench.analysis.metrics import composite_score_distribution, eqs_distribution
from pytest_extractbench.analysis.resampled import EQS_TOLERANCE, complete_row, sample_row
from pytest_extractbench.gating.gates import gate_verdicts
from pytest_extractbench.scoring.options import StatsOptions

OPTIONS = ScoringOptions()
SCHEMA = {"type": "object", "properties": {"a": {"type": "string"}, "n": {"type": "integer"}}}
JUST_PERFECT, JUST_ZERO = 1.0 - EQS_TOLERANCE, EQS_TOLERANCE  # the tolerance's own edges count


def record(sample_id: str, output, gold, schema=None, **extra) -> SampleRecord:
    return SampleRecord(
        model="m", sample_id=sample_id, score=score_sample(output, gold, schema, sample_id=sample_id), **extra
    )


def test_perfect_and_zero_flags_at_the_edges_of_their_tolerance() -> None:
    score = score_sample({"a": "x"}, {"a": "x"})
    flags = []
    for eqs in (1.0, JUST_PERFECT, 0.5, JUST_ZERO, 0.0):
        score.eqs = eqs
        row = sample_row(score)
        flags.append((row["perfect"], row["zero_score"]))
    assert flags == [(1.0, 0.0), (1.0, 0.0), (0.0, 0.0), (0.0, 1.0), (0.0, 1.0)]
    # four samples, two perfect and one zero (a flipped comparison counts 1 or 3)
    spread = eqs_distribution([1.0, JUST_PERFECT, 0.5, JUST_ZERO])
    assert (spread["perfect_samples"], spread["zero_samples"]) == (2, 1)


def test_whole_output_scores_are_a_sum_and_a_count_in_the_row() -> None:
    score = score_sample({"a": "x"}, {"a": "x"})
    score.extras["judge_score"] = 0.5
    row = sample_row(score)
    assert (row["judge_score_sum"], row["judge_score_n"]) == (0.5, 1.0)
    assert (row["semantic_similarity_sum"], row["semantic_similarity_n"]) == (0.0, 0.0)


def test_anls_star_is_a_value_and_a_count_in_the_row_and_unmeasured_is_zero_of_zero() -> None:
    # ANLS* of "ab" against "abcd": normalized Levenshtein similarity 1 - 2/4 = 0.5
    row = sample_row(score_sample({"a": "ab"}, {"a": "abcd"}))
    assert (row["anls_star"], row["anls_star_n"]) == (0.5, 1.0)
    # not computed (--extractbench-no-anls), or a record written before ANLS* existed
    row = sample_row(score_sample({"a": "ab"}, {"a": "abcd"}, options=ScoringOptions(anls_star=False)))
    assert (row["anls_star"], row["anls_star_n"]) == (0.0, 0.0)


def test_a_row_saved_before_the_new_keys_gets_them_from_its_eqs() -> None:
    # ANLS* too: unmeasured (n 0), so a comparison with such a baseline leaves it out
    assert complete_row({"eqs": JUST_PERFECT}) == {
        "eqs": JUST_PERFECT,
        "perfect": 1.0,
        "zero_score": 0.0,
        "semantic_similarity_sum": 0.0,
        "semantic_similarity_n": 0.0,
        "judge_score_sum": 0.0,
        "judge_score_n": 0.0,
        "anls_star": 0.0,
        "anls_star_n": 0.0,
    }
    assert (complete_row({"eqs": 0.5})["perfect"], complete_row({"eqs": 0.5})["zero_score"]) == (0.0, 0.0)
    assert complete_row({"eqs": JUST_ZERO})["zero_score"] == 1.0
    assert complete_row({"eqs": 0.5, "perfect": 1.0, "judge_score_n": 1.0}) == {  # what a row has is kept
        "eqs": 0.5,
        "perfect": 1.0,
        "zero_score": 0.0,
        "semantic_similarity_sum": 0.0,
        "semantic_similarity_n": 0.0,
        "judge_score_sum": 0.0,
        "judge_score_n": 1.0,
        "anls_star": 0.0,
        "anls_star_n": 0.0,
    }


def test_no_valid_output_means_no_exact_valid_output_and_reasons_are_listed() -> None:
    records = [
        record("garbage", "not json", {"a": "x"}, SCHEMA),
        # four schema errors: the reason lists the first three
        record(
            "typed",
            {"a": 1, "n": "x", "b": 2},
            {"a": "x", "n": 1},
            {**SCHEMA, "additionalProperties": False, "required": ["a", "n", "z"]},
        ),
    ]
    metrics = model_metrics(records, OPTIONS)
    assert metrics["exact_match_rate_valid"] == 0.0
    reasons = {e["sample_id"]: e["reason"] for e in metrics["invalid_samples"]}
    assert reasons["garbage"].startswith("unparseable JSON")
    assert len(records[1].score.validation_errors) == 4 and reasons["typed"].count("; ") == 2


def test_failed_samples_are_the_ones_that_did_not_pass() -> None:
    records = [record("ok", {"a": "x"}, {"a": "x"}), record("bad", {"a": "x"}, {"a": "x"}, passed=False)]
    assert model_metrics(records, OPTIONS)["failed_samples"] == ["bad"]


def test_lenient_categories_account_for_the_same_fields() -> None:
    records = [
        record("s", {"a": "x", "b": "hello", "c": "zzz", "d": 1}, {"a": "x", "b": "hello world", "c": "q", "e": 2})
    ]
    metrics = model_metrics(records, OPTIONS)
    assert sum(metrics["match_categories_lenient"].values()) == sum(metrics["match_categories"].values()) == 5


def test_the_composite_score_spread_counts_compared_fields_only() -> None:
    only_missed = [record("s", {}, {"a": "x", "b": "y"})]
    assert sum(composite_score_distribution(only_missed).values()) == 0
    one_exact = [record("s", {"a": "x"}, {"a": "x", "b": "y"})]
    assert composite_score_distribution(one_exact)["excellent"] == 1


def test_a_bin_s_mean_latency_ignores_values_that_are_not_numbers() -> None:
    bins = {"complexity": {"complexity_bin": "simple"}}
    records = [
        record("a", {"a": "x"}, {"a": "x"}, meta=bins, response={"latency_s": 2.0}),
        record("b", {"a": "x"}, {"a": "x"}, meta=bins, response={"latency_s": True}),
        record("c", {"a": "x"}, {"a": "x"}, meta=bins, response={"latency_s": "3"}),
    ]
    assert model_metrics(records, OPTIONS)["metrics_by_complexity_bin"]["simple"]["mean_latency_s"] == 2.0


def test_gate_verdicts_only_for_gates_that_ran() -> None:
    check = {
        "metric": "extraction_quality_score",
        "label": "eqs",
        "value": 0.5,
        "threshold": 0.75,
        "direction": "min",
        "passed": False,
    }
    assert gate_verdicts({}) == [] and gate_verdicts({"models": {"m": None}}) == []
    assert gate_verdicts({"models": {"m": {"sla": {"tier": "minimum", "checks": []}}}}) == []  # nothing checked
    assert gate_verdicts({"models": {"m": {"sla": {"tier": "none", "checks": [check]}}}}) == []  # no tier asserted
    assert gate_verdicts({"models": {"m": {"requirements": None}}}) == []
    required = {
        **check,
        "metric": "judge_score",
        "label": "judge_score",
        "value": 0.9,
        "threshold": 0.8,
        "passed": True,
    }
    verdicts = gate_verdicts(
        {
            "models": {"m": {"requirements": {"passed": False, "checks": [check, required]}}},
            "baseline_comparison": {"checks": [{"model": "m", "failed": False, "message": "eqs within margin"}]},
        }
    )
    assert [(v.gate, v.passed, v.headline) for v in verdicts] == [
        ("required", False, "required thresholds, model 'm': 1 threshold(s) missed"),
        ("regression", True, "regression against the baseline, model 'm': 1 check(s) passed"),
    ]
    assert verdicts[0].details == ("eqs = 0.500 (needs >= 0.750): missed",)  # the missed one only
    assert verdicts[1].details == ("held: eqs within margin",)


def test_a_p_value_equal_to_alpha_is_not_significant() -> None:
    # Three samples, each scored perfectly by a and with a wrong value by b: the same EQS difference on every
    # sample. 2**3 = 8 <= 100 swaps, so the permutation test is exact: of the 8 swap patterns only "swap
    # nothing" reaches the observed difference, so p = 2 * 1 / 8 = 0.25 exactly. Significance needs p < alpha.
    rows_a = [sample_row(score_sample({"a": "x"}, {"a": "x"}, sample_id=f"s{i}")) for i in range(3)]
    rows_b = [sample_row(score_sample({"a": "y"}, {"a": "x"}, sample_id=f"s{i}")) for i in range(3)]
    name = "extraction_quality_score"
    for alpha, significant in ((0.25, False), (0.2501, True)):
        options = StatsOptions(resamples=100, alpha=alpha)
        delta = resampled.paired_deltas(rows_a, rows_b, options, [name])[name]
        assert delta.p_value == 0.25
        assert delta.significant is significant


def test_type_accuracy_with_no_typed_field_is_one_for_a_valid_output_and_zero_without() -> None:
    # gold {}: no field to type. A valid output ({}) leaves nothing typed wrongly: 1.0; no valid output: 0.0
    assert model_metrics([record("a", "{}", {})], OPTIONS)["type_accuracy"] == 1.0
    assert model_metrics([record("a", "not json", {})], OPTIONS)["type_accuracy"] == 0.0
