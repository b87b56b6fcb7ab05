"""The analysis sections a mutation run found unguarded, second part: field breakdowns, dataset metrics, the track
figures and the model comparison. Every expected value is worked out by hand in the comments."""

from __future__ import annotations

import pytest

from pytest_extractbench import SampleRecord, ScoringOptions, StatsOptions, metrics_by_model, score_sample
from pytest_extractbench.analysis import breakdowns, resampled, track_metrics
from pytest_extractbench.analysis.comparison import EQS, best_by_metric, comparison_section, gap_rule, pareto
from pytest_extractbench.analysis.metrics import accuracy_section, complexity_bin_section
from pytest_extractbench.analysis.resampled import MetricDelta
from pytest_extractbench.analysis.stats import Interval
from pytest_extractbench.scoring.result import FieldResult

OPTIONS = ScoringOptions()


# --- breakdowns ---


def _field(path: str, category: str, score: float) -> FieldResult:
    kind = {"predicted_type": "string"} if category == "spurious" else {"expected_type": "string"}
    return FieldResult(path, category, score, **kind)


def _hand_scored(sample_id: str, fields: list[FieldResult], *, valid: bool) -> SampleRecord:
    record = SampleRecord(model="m", sample_id=sample_id, score=score_sample({"a": "x"}, {"a": "x"}))
    record.score.fields = fields
    record.score.schema_valid = valid
    return record


def _breakdown_records() -> list[SampleRecord]:
    # a (valid output): 2 exact, 1 partial (0.7), 2 incorrect (0.3 at the lenient threshold, and 0.2), 1 missed, 1
    # spurious. b (invalid output): 1 exact, 1 partial, 1 incorrect at 0.3, 1 missed, 1 spurious
    valid = [_field("a", "exact", 1.0), _field("a", "exact", 1.0), _field("a", "partial", 0.7)]
    valid += [_field("a", "incorrect", 0.3), _field("a", "incorrect", 0.2), _field("a", "missed", 0.0)]
    valid += [_field("a", "spurious", 0.0)]
    invalid = [_field("b", "exact", 1.0), _field("b", "partial", 0.7), _field("b", "incorrect", 0.3)]
    invalid += [_field("b", "missed", 0.0), _field("b", "spurious", 0.0)]
    return [_hand_scored("1", valid, valid=True), _hand_scored("2", invalid, valid=False)]


def test_breakdowns_credit_each_category_and_nothing_of_an_invalid_output() -> None:
    by_name = breakdowns.breakdown_section(_breakdown_records(), OPTIONS)["field_metrics_by_name"]
    a, b = by_name["a"], by_name["b"]
    # a: compared 2 + 1 + 2 = 5, expected 5 + 1 missed = 6, predicted 5 + 1 spurious = 6
    assert (a["support"], a["predicted"]) == (6, 6)
    # strict: 2 exact / 6; partial: 2 + 0.5 * 1 = 2.5 / 6; lenient: 2 exact + the partial + the incorrect at 0.3 = 4 / 6
    assert (a["precision_strict"], a["recall_strict"]) == (pytest.approx(2 / 6), pytest.approx(2 / 6))
    assert (a["precision_partial"], a["f1_partial"]) == (pytest.approx(2.5 / 6), pytest.approx(2.5 / 6))
    assert (a["precision_lenient"], a["recall_lenient"]) == (pytest.approx(4 / 6), pytest.approx(4 / 6))
    # b, invalid: its exact, partial and incorrect fields count as incorrect, its missed and spurious fields as
    # they were: expected 3 + 1 = 4, predicted 3 + 1 = 4, nothing credited in any mode
    assert (b["support"], b["predicted"]) == (4, 4)
    assert [b[f"precision_{mode}"] for mode in ("strict", "partial", "lenient")] == [0.0, 0.0, 0.0]


def test_omission_rates_count_what_was_observed_even_in_an_invalid_output() -> None:
    found = breakdowns.omission_section(_breakdown_records(), OPTIONS)["omission_analysis"]
    # a: 1 missed of 2 + 1 + 2 + 1 = 6 expected; b: 1 missed of 1 + 1 + 1 + 1 = 4
    assert found["by_field_name"] == {
        "a": {"omission_rate": 1 / 6, "missed": 1, "total_occurrences": 6},
        "b": {"omission_rate": 0.25, "missed": 1, "total_occurrences": 4},
    }
    # one type, string: 2 missed of 10
    assert found["by_field_type"] == {"string": 0.2}


def test_groups_named_by_numbers_come_first_in_numeric_order_then_the_others() -> None:
    record = _hand_scored("1", [_field(name, "exact", 1.0) for name in ("b", "10", "9", "a")], valid=True)
    by_name = breakdowns.breakdown_section([record], OPTIONS)["field_metrics_by_name"]
    assert list(by_name) == ["9", "10", "a", "b"]


# --- metrics ---


def test_scoring_errors_are_listed_only_when_some_sample_had_one() -> None:
    clean = SampleRecord(model="m", sample_id="ok", score=score_sample({"a": "x"}, {"a": "x"}))
    failed = SampleRecord(model="m", sample_id="bad", score=score_sample({"a": "x"}, {"a": "x"}), scoring_error="boom")
    assert "scoring_errors" not in accuracy_section([clean], OPTIONS)
    assert accuracy_section([clean, failed], OPTIONS)["scoring_errors"] == ["bad"]


def test_a_complexity_bin_averages_the_numeric_latencies_only() -> None:
    def binned(sample_id: str, name: str, latency) -> SampleRecord:
        return SampleRecord(
            model="m",
            sample_id=sample_id,
            score=score_sample({"a": "x"}, {"a": "x"}),
            meta={"complexity": {"complexity_bin": name}},
            response={} if latency is None else {"latency_s": latency},
        )

    records = [binned("1", "simple", 1.0), binned("2", "simple", True), binned("3", "simple", 3.0)]
    records += [binned("4", "medium", None)]
    found = complexity_bin_section(records, OPTIONS)["metrics_by_complexity_bin"]
    # a boolean is no latency: (1 + 3) / 2 = 2; the medium bin has no latency at all
    assert found["simple"]["mean_latency_s"] == 2.0
    assert found["medium"]["mean_latency_s"] is None
    assert found["complex"] == {"num_samples": 0}


# --- track_metrics ---


def test_a_toolcall_row_by_hand() -> None:
    result = {
        "arguments": {"tp": 2, "fp": 1, "fn": 2},
        "calls": 4,
        "predicted_calls": 5,
        "valid_calls": 4,
        "name_matches": 3,
        "arguments_exact": 1,
        "correct": True,
        "format_error": None,
    }
    row = track_metrics.sample_row("toolcall", result, True)
    # arguments: P = 2 / (2 + 1), R = 2 / (2 + 2) = 1/2, F1 = 2 * (2/3 * 1/2) / (2/3 + 1/2) = (2/3) / (7/6) = 4/7
    assert row["arguments_f1_sample"] == pytest.approx(4 / 7)
    # valid calls 4 of 5 predicted; names 3 and exact arguments 1 of 4 gold calls
    shares = (row["valid_call_share"], row["name_match_share"], row["arguments_exact_share"])
    assert shares == (0.8, 0.75, 0.25)
    # no call at all: every share 0 (nothing over nothing), arguments F1 1 (nothing expected, nothing predicted)
    empty = track_metrics.sample_row("toolcall", {}, False)
    assert (empty["valid_call_share"], empty["name_match_share"], empty["arguments_exact_share"]) == (0.0, 0.0, 0.0)
    assert empty["arguments_f1_sample"] == 1.0
    # tp = fp = fn = 1: P = R = 1/2, F1 = 2 * 1/4 / 1 = 1/2
    even = track_metrics.sample_row("toolcall", {"arguments": {"tp": 1, "fp": 1, "fn": 1}}, True)
    assert even["arguments_f1_sample"] == 0.5


def test_a_repair_row_by_hand() -> None:
    result = {
        "counts": {"exact": 3, "partial": 2, "incorrect": 1, "missed": 4, "spurious": 5, "note": "x"},
        "fields_equal": 7,
        "fields_expected": 10,
        "field_f1_partial": 0.5,
    }
    row = track_metrics.sample_row("repair", result, True)
    # compared 3 + 2 + 1 = 6; credit 3 + 0.5 * 2 = 4; predicted 6 + 5 spurious, expected 6 + 4 missed; 7 of 10 equal
    assert {k: row[k] for k in ("tp_partial", "predicted", "expected", "f1_partial", "field_agreement")} == {
        "tp_partial": 4.0,
        "predicted": 11.0,
        "expected": 10.0,
        "f1_partial": 0.5,
        "field_agreement": 0.7,
    }
    # nothing counted: every figure 0
    empty = track_metrics.sample_row("repair", {}, False)
    assert {k: v for k, v in empty.items() if v} == {}
    assert set(empty) == set(track_metrics.row_keys("repair"))


def test_row_keys_list_the_columns_and_per_sample_values_in_figure_order() -> None:
    assert track_metrics.row_keys("repair") == (
        "passed",
        "json_valid",
        "schema_valid",
        "exact_match",
        "tp_partial",
        "predicted",
        "expected",
        "f1_partial",
        "fields_equal",
        "fields_expected",
        "field_agreement",
    )


def test_a_track_figure_label_by_its_own_name_only() -> None:
    assert track_metrics.label("pass_rate") == "Samples passed"
    assert track_metrics.label("pass_rate", compact=True) == "passed"  # its tag
    assert track_metrics.label("accuracy", compact=True) == "accuracy"  # no tag: its short name
    assert track_metrics.label("passed") is None  # an alias
    assert track_metrics.label("no_such_figure") is None


def test_the_repair_field_f1_is_the_micro_f1_of_the_summed_counts() -> None:
    metric = track_metrics.compared("repair")["field_f1_partial"]
    # tp 3 of 4 predicted and 6 expected: P = 3/4, R = 1/2, F1 = 2 * 3/8 / (5/4) = 0.6
    assert float(metric.compute({"tp_partial": 3.0, "predicted": 4.0, "expected": 6.0})) == pytest.approx(0.6)


def test_track_rates_are_shown_as_percents_and_the_f1_figures_are_not() -> None:
    # read through compared(), the figures a baseline comparison formats
    tracks = ("toolcall", "generate", "repair")
    percent = {(track, name): m.percent for track in tracks for name, m in track_metrics.compared(track).items()}
    assert [key for key, shown in percent.items() if not shown] == [
        ("toolcall", "arguments_f1"),
        ("repair", "field_f1_partial"),
    ]


# --- comparison ---


def _eqs_record(model: str, sample_id: str, eqs: float) -> SampleRecord:
    record = SampleRecord(model=model, sample_id=sample_id, score=score_sample({"a": "x"}, {"a": "x"}))
    record.score.eqs = eqs
    return record


def test_each_pair_of_models_draws_its_own_stream_and_counts_its_unshared_samples() -> None:
    options = ScoringOptions(statistics=StatsOptions(resamples=200))
    gold_a = [0.91, 0.35, 0.77, 0.12, 0.64, 0.58, 0.99, 0.23, 0.81, 0.47, 0.69, 0.05]
    rest = [0.5, 0.2, 0.9, 0.4, 0.1, 0.3, 0.6, 0.0, 0.7, 0.15, 0.25, 0.45]
    records = [_eqs_record("a", f"s{i:02d}", v) for i, v in enumerate(gold_a)] + [_eqs_record("a", "only_a", 1.0)]
    # b and c score the same on every sample: the pairs a_vs_b and a_vs_c have the same data
    for model in ("b", "c"):
        records += [_eqs_record(model, f"s{i:02d}", v) for i, v in enumerate(rest)] + [_eqs_record(model, "own", 0.0)]
    by_model = metrics_by_model(records, options)
    found = comparison_section(by_model, records, options)["comparison"]
    ab, ac = found["pairwise"]["a_vs_b"], found["pairwise"]["a_vs_c"]
    # 12 shared samples; a has one of its own, b one
    assert (ab["n_shared"], ab["only_in_a"], ab["only_in_b"]) == (12, 1, 1)
    assert ab["metrics"][EQS]["delta"] == ac["metrics"][EQS]["delta"]
    # ... but each pair resamples with its own stream (seed, crc32 of the names), so the intervals differ
    assert ab["metrics"][EQS]["ci"] != ac["metrics"][EQS]["ci"]
    # a first (EQS 7.61/13 against 4.55/13 for b and c), then b and c tied, in name order; the last has no next
    ranking = found["eqs_ranking"]
    assert [(r["rank"], r["model"]) for r in ranking] == [(1, "a"), (2, "b"), (3, "c")]
    assert ranking[-1]["significantly_better_than_next"] is None
    # the first two were compared on their shared samples: a yes or no, whatever the p-value
    assert isinstance(ranking[0]["significantly_better_than_next"], bool)


def test_models_with_no_shared_sample_have_no_significance_and_latency_is_the_per_sample_p95() -> None:
    options = ScoringOptions(statistics=StatsOptions(resamples=200))
    records = [_eqs_record("a", f"a{i}", 0.9) for i in range(5)] + [_eqs_record("b", f"b{i}", 0.5) for i in range(5)]
    for i, record in enumerate(records):
        record.response["latency_s"] = float(i % 5 + 1)  # 1, 2, 3, 4, 5 s for each model
    by_model = {"a": {EQS: 0.9}, "b": {EQS: 0.5}}
    found = comparison_section(by_model, records, options)["comparison"]
    assert found["pairwise"]["a_vs_b"]["note"] == "no sample scored by both models"
    assert found["eqs_ranking"][0]["significantly_better_than_next"] is None
    latency = found["pareto_frontier"]["accuracy_vs_latency"]
    # p95 of 1..5 s, linear: position 0.95 * 4 = 3.8 between 4 and 5 s: 4.8 s = 4800 ms
    assert latency["available"] is True
    assert latency["points"]["a"]["latency_p95_ms"] == pytest.approx(4800.0)


def test_a_model_as_cheap_and_less_accurate_than_another_is_dominated() -> None:
    by_model = {m: {EQS: e} for m, e in {"a": 0.9, "e": 0.8, "f": 0.7}.items()}
    # e costs what a costs and scores less: dominated; f is cheaper, so on the frontier
    found = pareto(["a", "e", "f"], by_model, {"a": 100.0, "e": 100.0, "f": 50.0}, "latency_p95_ms")
    assert found["frontier"] == ["f", "a"]


def test_best_by_metric_takes_the_highest_exact_match_and_validity() -> None:
    by_model = {
        "a": {EQS: 0.9, "exact_match_rate": 0.2, "schema_validity_rate": 0.9},
        "b": {EQS: 0.5, "exact_match_rate": 0.6, "schema_validity_rate": 0.5},
    }
    best = best_by_metric(["a", "b"], by_model, [])
    assert (best["highest_exact_match"], best["highest_schema_validity"]) == ("b", "a")


def test_the_gap_rule_at_its_edges_with_the_paired_test_of_either_orientation() -> None:
    # threshold 1/32 (under the 0.05 minimal gap, so it is also the moderate band's floor); binary fractions, exact
    by_model = {m: {EQS: e} for m, e in {"ref": 0.5, "edge": 0.46875, "far": 0.25, "even": 0.5, "ahead": 0.625}.items()}
    interval = Interval(0.03, 0.01, 0.05, 0.95, "percentile bootstrap", 200, 5)
    tested = MetricDelta(EQS, 0.46875, 0.5, -0.03125, interval, 0.01, "permutation", {}, True, 5, True)
    # stored as (edge, ref): the rule finds it the other way round too
    found = gap_rule(
        ["ahead", "ref", "even", "edge", "far"],
        by_model,
        {("edge", "ref"): tested},
        StatsOptions(gap_threshold=0.03125, reference_model="ref"),
    )
    models = found["models"]
    # edge: 0.5 - 0.46875 = 1/32, the threshold itself: not flagged, and at the moderate band's floor
    assert models["edge"] == {
        "gap": 0.03125,
        "relative_gap": 0.0625,  # (1/32) / (1/2)
        "band": "moderate difference: fine-tuning optional",
        "needs_fine_tuning": False,
        "p_value": 0.01,
        "significant": True,
    }
    assert (models["far"]["band"], models["far"]["needs_fine_tuning"]) == (
        "significant difference: fine-tuning recommended",
        True,
    )
    # a gap of exactly 0 is no lead; no paired test for these: None, not a number
    assert models["even"]["band"] == "minimal practical difference"
    assert models["ahead"]["band"] == "ahead of the reference"
    assert (models["far"]["p_value"], models["far"]["significant"]) == (None, None)
    assert found["flagged"] == ["far"]


def test_the_gap_relative_to_a_reference_scoring_zero_is_null() -> None:
    found = gap_rule(
        ["ref", "other"], {"ref": {EQS: 0.0}, "other": {EQS: 0.0}}, {}, StatsOptions(reference_model="ref")
    )
    assert found["models"]["other"]["relative_gap"] is None


# --- resampled ---


def test_a_row_carries_the_sample_f1_of_each_mode() -> None:
    # a exact, b wrong: 1 of 2 predicted and of 2 expected in every mode, F1 1/2
    row = resampled.sample_row(score_sample({"a": "x", "b": "no"}, {"a": "x", "b": "y"}))
    assert (row["f1_strict"], row["f1_partial"], row["f1_lenient"]) == (0.5, 0.5, 0.5)


def test_columns_of_no_sample_have_no_values_or_intervals() -> None:
    scores = [score_sample({"a": "x"}, {"a": "x"}), score_sample({"a": "y"}, {"a": "x"})]
    assert len(resampled.Columns(scores)) == 2
    empty = resampled.Columns([])
    assert resampled.metric_values(empty) == {}
    assert resampled.confidence_intervals(empty, StatsOptions(resamples=100)) == {}


def test_a_track_figure_whose_per_sample_value_a_saved_row_lacks_is_not_measured() -> None:
    figures = track_metrics.compared("repair")
    row = {"tp_partial": 1.0, "predicted": 2.0, "expected": 2.0}  # saved before f1_partial was kept
    assert resampled.measured([row], ["field_f1_partial"], figures) == []
    assert resampled.measured([{**row, "f1_partial": 0.5}], ["field_f1_partial"], figures) == ["field_f1_partial"]


def test_paired_deltas_draw_from_the_options_seed_unless_given_a_generator() -> None:
    def rows(values):
        scores = [score_sample({"a": "x"}, {"a": "x"}) for _ in values]
        for score, value in zip(scores, values):
            score.eqs = value
        return [resampled.sample_row(s) for s in scores]

    a = rows([0.91, 0.35, 0.77, 0.12, 0.64, 0.58, 0.99, 0.23])
    b = rows([0.5, 0.2, 0.9, 0.4, 0.1, 0.3, 0.6, 0.0])
    options, names = StatsOptions(resamples=200, seed=5), [EQS]

    def interval(**rng):
        return resampled.paired_deltas(a, b, options, names, **rng)[EQS].ci.as_dict()

    # no generator: the options' seed 5, the same resamples as a generator seeded 5; another seed draws others
    assert interval() == interval(rng=5)
    assert interval(rng=6) != interval(rng=5)
