"""The analysis sections where a mutation run found no unit test looking: the per-sample calibration and consistency
extras, where reused answers came from, the recommendation's thresholds, the consistency of repeated runs. Every
expected value is worked out by hand in the comments."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest

from pytest_extractbench import SampleRecord, ScoringOptions, StatsOptions, metrics_by_model, score_sample
from pytest_extractbench.analysis import breakdowns, distributions, track_metrics
from pytest_extractbench.analysis.bands import recommendation
from pytest_extractbench.analysis.comparison import EQS, best_by_metric, comparison_section, gap_rule, pareto
from pytest_extractbench.analysis.consistency import aggregate_consistency, consistency
from pytest_extractbench.analysis.distributions import HISTOGRAM_EDGES, SIMILARITIES
from pytest_extractbench.analysis.metrics import accuracy_section, complexity_bin_section
from pytest_extractbench.analysis.provenance import answer_counts, reuse_sentence
from pytest_extractbench.analysis.repeats import (
    MAX_FLAKY_FIELDS,
    MAX_FLAKY_SAMPLES,
    pass_at_k,
    pass_hat_k,
    repeats_section,
    sample_repeats,
)
from pytest_extractbench.analysis.sample_extras import calibration_section, extra_diagnostics
from pytest_extractbench.analysis.stats import bootstrap_ci
from pytest_extractbench.scoring import MISSING
from pytest_extractbench.scoring.result import FieldResult

OPTIONS = ScoringOptions()
SCHEMA = {
    "type": "object",
    "properties": {k: {"type": t} for k, t in (("a", "string"), ("n", "integer"), ("m", "string"), ("b", "string"))},
}
GOLD = {"a": "x", "n": 3, "m": "here", "b": "y"}
PREDICTED = {"a": "x", "n": "3", "m": None, "b": "zz", "q": "extra"}
# the output as tokens, each value one token with its own probability, the punctuation certain (logprob 0)
TOKENS = [
    ('{"a": ', 1.0),
    ('"x"', 0.9),
    (', "n": ', 1.0),
    ('"3"', 0.8),
    (', "m": ', 1.0),
    ("null", 0.7),
    (', "b": ', 1.0),
    ('"zz"', 0.6),
    (', "q": ', 1.0),
    ('"extra"', 0.5),
    ("}", 1.0),
]
LOGPROBS = {"content": [{"token": t, "logprob": math.log(p)} for t, p in TOKENS]}


def scored_record(**extra) -> SampleRecord:
    # a exact (type ok), n exact but a string for an integer (type_ok False), m missed (a null), b incorrect, q spurious
    return SampleRecord(model="m", sample_id="s", score=score_sample(PREDICTED, GOLD, SCHEMA), **extra)


def response(content="{}", logprobs=None) -> SimpleNamespace:
    return SimpleNamespace(content=content, logprobs=logprobs)


# --- sample_extras ---


def test_calibration_pairs_each_scored_field_present_in_the_output_with_its_confidence_and_correctness() -> None:
    record = scored_record()
    extra_diagnostics(record, [response(logprobs=LOGPROBS)])
    # the missed field m is left out although its null is in the output; a field is correct only when equal and of
    # the right type: a (0.9) yes; n (0.8) equal but a string for an integer, no; b (0.6) and q (0.5) not equal
    found = [[path, round(conf, 12), ok] for path, conf, ok in record.diagnostics["calibration"]]
    assert found == [["a", 0.9, True], ["n", 0.8, False], ["b", 0.6, False], ["q", 0.5, False]]
    # one response: no consistency
    assert "consistency" not in record.diagnostics


def test_no_logprobs_no_calibration_and_two_runs_give_consistency_with_the_failed_runs_counted() -> None:
    record = scored_record()
    runs = [response('{"a": 1}'), response(MISSING), response('{"a": 2}')]
    extra_diagnostics(record, runs)
    assert "calibration" not in record.diagnostics
    found = record.diagnostics["consistency"]
    # two outputs that parsed, 3 runs - 2 outputs = 1 failed; they differ: the modal output is 1 of 2
    assert (found["runs"], found["failed_runs"], found["exact_match_consistency"]) == (2, 1, 0.5)
    # an object without a logprobs attribute reads as no logprobs either
    bare = scored_record()
    extra_diagnostics(bare, [SimpleNamespace(content="{}")])
    assert bare.diagnostics == {}


def test_runs_that_all_failed_give_no_consistency() -> None:
    record = scored_record()
    extra_diagnostics(record, [response(MISSING), response(MISSING)])
    assert record.diagnostics == {}


def test_calibration_section_pools_the_pairs_and_counts_the_samples_that_have_them() -> None:
    with_pairs = scored_record(diagnostics={"calibration": [["a", 0.9, True], ["b", 0.3, False]]})
    also = scored_record(diagnostics={"calibration": [["a", 0.9, True]]})
    without = scored_record()
    section = calibration_section([with_pairs, without, also], OPTIONS)["calibration"]
    # three pairs from two samples; accuracy 2/3, Brier ((0.1)^2 + (0.3)^2 + (0.1)^2) / 3 = 0.11 / 3
    assert (section["samples"], section["fields"]) == (2, 3)
    assert section["accuracy"] == pytest.approx(2 / 3)
    assert section["brier"] == pytest.approx(0.11 / 3)
    assert calibration_section([without], OPTIONS) == {}


# --- provenance ---

ORIGINS = [
    {"source": "asked"},
    {"source": "cache", "where": "http://b", "at": "2026-05-03T10:00:00"},
    {"source": "cache", "where": "http://b", "at": "2026-05-01T09:00:00"},
    {"source": "cache", "where": "http://a", "at": "2026-05-02T08:00:00"},
    {"source": "journal"},
    {"source": "cache", "where": "http://b"},
    {"source": "unknown"},
    {"source": "replay", "where": "", "at": 5},
]


def test_answer_counts_by_source_and_the_reused_groups_with_their_dates() -> None:
    responses = [{"origin": o} for o in ORIGINS] + [{}, {"origin": "cache"}]
    counts, reused = answer_counts(responses)
    # asked 1, cache 4, journal 1, replay 1; "unknown", a missing and a non-mapping origin are not counted
    assert counts == {"asked": 1, "cache": 4, "journal": 1, "replay": 1, "total": 7}
    # by source (cache, journal, replay), then most answers first: cache b (3) before cache a (1); a group with no
    # text date keeps None; an empty server name reads as unknown
    assert reused == [
        {
            "source": "cache",
            "where": "http://b",
            "count": 3,
            "first_at": "2026-05-01T09:00:00",
            "last_at": "2026-05-03T10:00:00",
        },  # fmt: skip
        {
            "source": "cache",
            "where": "http://a",
            "count": 1,
            "first_at": "2026-05-02T08:00:00",
            "last_at": "2026-05-02T08:00:00",
        },  # fmt: skip
        {"source": "journal", "where": "an unknown source", "count": 1, "first_at": None, "last_at": None},
        {"source": "replay", "where": "an unknown source", "count": 1, "first_at": None, "last_at": None},
    ]


def test_reuse_sentence_names_each_group_with_its_dates_and_the_asked_answers() -> None:
    counts, reused = answer_counts({"origin": o} for o in ORIGINS)
    # 7 answers of which 1 asked: 6 reused; dates cut to the day; one day alone when first and last agree
    assert reuse_sentence({"answers": counts, "reused": reused}) == (
        "6 of 7 answers reused (3 from the cache, recorded 2026-05-01 to 2026-05-03, from http://b; "
        "1 from the cache, recorded 2026-05-02, from http://a; "
        "1 from the resumed run's journal, undated, from an unknown source; "
        "1 replayed, undated, from an unknown source); 1 asked in this run"
    )


def test_reuse_sentence_without_an_asked_count_or_a_last_date() -> None:
    group = {"source": "mirror", "where": "w", "count": 5, "first_at": "2026-05-01", "last_at": None}
    # no asked count: 5 - 0 = 5 reused; a first date with no last one is that day alone; an unknown source by name
    assert reuse_sentence({"answers": {"total": 5}, "reused": [group]}) == (
        "5 of 5 answers reused (5 mirror, recorded 2026-05-01, from w); 0 asked in this run"
    )


def test_reuse_sentence_is_none_when_nothing_was_reused_or_counted() -> None:
    group = {"source": "cache", "where": "w", "count": 1, "first_at": None, "last_at": None}
    assert reuse_sentence(None) is None
    assert reuse_sentence({"answers": "3"}) is None
    assert reuse_sentence({"answers": {"total": 3, "asked": 3}, "reused": []}) is None
    assert reuse_sentence({"answers": {"total": 3, "asked": 3}}) is None
    assert reuse_sentence({"answers": {"asked": 0}, "reused": [group]}) is None  # no total
    assert reuse_sentence({"answers": {"total": 0}, "reused": [group]}) is None


# --- bands ---


@pytest.mark.parametrize(
    ("eqs", "hallucination", "expected"),
    [
        (0.90, 0.0, "Deploy without human review"),  # EQS at its threshold passes
        (0.95, 0.02, "Deploy with spot-check human review"),  # hallucination at its threshold does not
        (0.80, 0.0, "Deploy with spot-check human review"),
        (0.85, 0.05, "Deploy with mandatory human review"),
        (0.85, 0.5, "Not recommended for production - needs improvement"),
        (0.70, 0.0, "Deploy with mandatory human review"),
    ],
)
def test_recommendation_at_each_threshold(eqs: float, hallucination: float, expected: str) -> None:
    assert recommendation(eqs, hallucination) == expected


# --- consistency ---


def test_one_run_is_consistent_with_itself() -> None:
    found = consistency(['{"a": 1}'])
    assert (found["runs"], found["exact_match_consistency"], found["field_level_consistency"]) == (1, 1.0, 1.0)


def test_parsed_values_compare_as_values() -> None:
    # key order ignored: two of three runs give the same object; a: 1, 1, 2 -> 2/3 agree; b: 2, 2, absent -> 2/3
    found = consistency([{"a": 1, "b": 2}, {"b": 2, "a": 1}, {"a": 2}], parsed=True)
    assert (found["distinct_outputs"], found["exact_match_consistency"]) == (2, 2 / 3)
    assert found["field_agreement"] == {"a": 2 / 3, "b": 2 / 3}


def test_a_number_some_runs_leave_out_has_no_spread() -> None:
    # a: one run gives 1, the other none: one number of two runs, no standard deviation
    found = consistency(['{"a": 1}', "{}"])
    assert (found["field_std"], found["value_variance"]) == ({}, None)


def test_outputs_none_of_which_parsed_have_no_fields_and_agree_on_all_of_them() -> None:
    found = consistency(["not json", "nope"])
    assert (found["distinct_outputs"], found["exact_match_consistency"]) == (2, 0.5)
    assert (found["field_level_consistency"], found["value_variance"], found["field_agreement"]) == (1.0, None, {})


def test_aggregate_consistency_of_nothing() -> None:
    assert aggregate_consistency([]) == {"samples": 0}


def test_aggregate_consistency_counts_consistent_samples_and_keeps_ten_fields_below_full_agreement() -> None:
    # sample 1: fields f00..f10 at agreements 0.00, 0.05, ..., 0.50 (11 below 1) and g at 1.0; sample 2 agrees fully
    shares = {f"f{i:02d}": i / 20 for i in range(11)}
    first = {"runs": 3, "exact_match_consistency": 0.5, "field_level_consistency": 0.5, "value_variance": None}
    second = {"runs": 2, "exact_match_consistency": 1.0, "field_level_consistency": 1.0, "value_variance": None}
    found = aggregate_consistency(
        [{**first, "field_agreement": {**shares, "g": 1.0}}, {**second, "field_agreement": {"g": 1.0}}]
    )
    assert (found["samples"], found["runs_per_sample"], found["fully_consistent_samples"]) == (2, 3, 1)
    assert found["value_variance"] is None
    # the ten lowest, lowest first: f00..f09; f10 is the eleventh, g agrees fully
    assert found["least_consistent_fields"] == [{"field": f"f{i:02d}", "agreement": i / 20} for i in range(10)]


# --- distributions ---


def test_histogram_edges_are_tenths_and_an_empty_distribution_is_zero_counts_and_no_mean() -> None:
    assert HISTOGRAM_EDGES == (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
    assert distributions._distribution([]) == {
        "count": 0,
        "mean": None,
        "median": None,
        "histogram": {"edges": list(HISTOGRAM_EDGES), "counts": [0] * 10},
    }


def _string_record(similarity) -> SampleRecord:
    record = SampleRecord(
        model="m", sample_id="s", score=score_sample({"a": "ab", "b": "same"}, {"a": "abcd", "b": "same"})
    )
    record.score.fields = [field._replace(similarity=similarity) for field in record.score.fields]
    return record


def test_similarities_missing_from_a_field_are_computed_again_and_equal_strings_are_one() -> None:
    section = distributions.string_similarity_section([_string_record(None)], OPTIONS)["string_similarity"]
    # "ab" against "abcd": no shared word (token F1 0), Levenshtein 1 - 2/4 = 0.5, "ab" inside "abcd": 2/4 = 0.5;
    # "same" against "same": 1, 1, 1. Means over the two fields; only "ab" is not exact
    means = {name: (section[name]["mean"], section[name]["non_exact"]["mean"]) for name in SIMILARITIES}
    assert means == {
        "token_overlap_f1": (0.5, 0.0),
        "levenshtein_similarity": (0.75, 0.5),
        "containment_score": (0.75, 0.5),
    }
    # the histogram of token F1: 0.0 in the first bin, 1.0 in the last (numpy's last bin is closed)
    assert section["token_overlap_f1"]["histogram"]["counts"] == [1, 0, 0, 0, 0, 0, 0, 0, 0, 1]


def test_similarities_a_field_carries_are_used_as_they_are() -> None:
    section = distributions.string_similarity_section([_string_record((0.2, 0.3, 0.4))], OPTIONS)["string_similarity"]
    assert [section[name]["mean"] for name in SIMILARITIES] == [0.2, 0.3, 0.4]


def test_a_complexity_feature_that_is_not_a_number_is_not_correlated() -> None:
    records = [
        SampleRecord(
            model="m",
            sample_id=str(i),
            score=score_sample({"a": "x"}, {"a": "x"}),
            meta={"complexity": {"depth": i, "bin": "simple", "none": None}},
        )
        for i in range(3)
    ]
    # the text and the null are no features, only depth: three samples whose F1 is 1 each, a constant input
    found = distributions.complexity_correlation_section(records, OPTIONS)["complexity_correlation"]
    assert sorted(found) == ["f1_vs_depth", "latency_vs_depth"]
    assert found["f1_vs_depth"]["note"] == "constant input"


def test_a_correlation_of_fewer_than_three_samples_or_with_a_non_finite_result_is_null() -> None:
    assert distributions.pearson([1.0, 2.0], [2.0, 1.0]) == {
        "r": None,
        "p_value": None,
        "n": 2,
        "note": "fewer than 3 samples",
    }

    def nan_p_value(a, b):
        return SimpleNamespace(statistic=0.5, pvalue=float("nan"))

    assert distributions.correlation([1, 2, 3], [3, 1, 2], nan_p_value, "r") == {
        "r": None,
        "p_value": None,
        "n": 3,
        "note": "undefined",
    }


def test_f1_and_latency_are_correlated_with_the_feature_not_with_themselves() -> None:
    # partial F1 1, 1/2 (one of two fields right: P = R = 1/2) and 0 against depths 1, 2, 4; latencies 3, 1, 2 s
    outputs = [({"a": "x", "b": "y"}, 1), ({"a": "x", "b": "no"}, 2), ({"a": "no", "b": "no"}, 4)]
    records = [
        SampleRecord(
            model="m",
            sample_id=str(depth),
            score=score_sample(output, {"a": "x", "b": "y"}),
            meta={"complexity": {"depth": depth}},
            response={"latency_s": latency},
        )
        for (output, depth), latency in zip(outputs, (3.0, 1.0, 2.0))
    ]
    found = distributions.complexity_correlation_section(records, OPTIONS)["complexity_correlation"]
    # Pearson's r by hand: depth 1, 2, 4 (mean 7/3, deviations -4/3, -1/3, 5/3, squares summing to 42/9);
    # F1 1, 1/2, 0 (deviations 1/2, 0, -1/2, squares 1/2): r = (-2/3 + 0 - 5/6) / sqrt(42/9 * 1/2) = -1.5 / sqrt(7/3)
    assert found["f1_vs_depth"]["r"] == pytest.approx(-1.5 / math.sqrt(7 / 3))
    # latency 3, 1, 2 (deviations 1, -1, 0, squares 2): r = (-4/3 + 1/3 + 0) / sqrt(42/9 * 2) = -1 / sqrt(28/3)
    assert found["latency_vs_depth"]["r"] == pytest.approx(-1 / math.sqrt(28 / 3))


def test_no_latency_at_all_is_said_so() -> None:
    record = SampleRecord(
        model="m", sample_id="s", score=score_sample({"a": "x"}, {"a": "x"}), meta={"complexity": {"depth": 1}}
    )
    found = distributions.complexity_correlation_section([record], OPTIONS)["complexity_correlation"]
    assert found["latency_vs_depth"] == {"r": None, "p_value": None, "n": 0, "note": "no latency measured"}


# --- repeats ---


def test_pass_at_k_and_pass_hat_k_by_hand() -> None:
    # n = 5 runs, c = 2 passed, k = 2: C(3, 2) / C(5, 2) = 3/10 of the pairs both fail, C(2, 2) / 10 both pass
    assert pass_at_k(5, 2, 2) == pytest.approx(0.7)
    assert pass_hat_k(5, 2, 2) == pytest.approx(0.1)
    # no run passed: 1 - C(3, 1) / C(3, 1) = 0; all passed: C(3, 3) / C(3, 3) = 1
    assert (pass_at_k(3, 0, 1), pass_hat_k(3, 3, 3)) == (0.0, 1.0)
    with pytest.raises(ValueError):
        pass_hat_k(3, 4, 1)  # more passes than runs


def test_one_compared_run_has_no_field_counts() -> None:
    # the second run did not parse: one set of categories, nothing to flip against
    one = sample_repeats([True, False], [{"a": "exact"}, None])
    assert (one["compared_runs"], one["fields"], one["flips"]) == (1, {}, {})
    two = sample_repeats([True, False], [{"a": "exact", "b[0]": "exact"}, {"a": "missed", "b[0]": "exact"}])
    assert (two["fields"], two["flips"]) == ({"a": 1, "b[]": 1}, {"a": ["exact", "missed"]})


def test_the_flaky_lists_are_cut_at_their_limits() -> None:
    # 51 flaky samples (1 of 2 runs passed), each with its own flipping field: 51 samples and fields, 50 and 20 shown
    per_sample = {
        f"s{i:02d}": sample_repeats([True, False], [{f"f{i:02d}": "exact"}, {f"f{i:02d}": "missed"}]) for i in range(51)
    }
    section = repeats_section(per_sample, resamples=10)["repeats"]
    assert section["flaky_samples"] == 51
    assert len(section["flaky_sample_list"]) == MAX_FLAKY_SAMPLES == 50
    assert len(section["flaky_fields"]) == MAX_FLAKY_FIELDS == 20
    assert section["more_flaky_fields"] == 31


def _runs(passes, *categories):
    return sample_repeats(passes, list(categories))


REPEATED = {
    # a flips exact -> missed -> exact
    "s1": _runs(
        [True, False, False], {"a": "exact", "b": "exact"}, {"a": "missed", "b": "exact"}, {"a": "exact", "b": "exact"}
    ),  # fmt: skip
    # c[0] exact, missed, missed (one change); c[1] partial, exact, partial: two paths of the field c[] in one sample
    "s2": _runs(
        [True, True, False],
        {"a": "exact", "c[0]": "exact", "c[1]": "partial"},
        {"a": "exact", "c[0]": "missed", "c[1]": "exact"},
        {"a": "exact", "c[0]": "missed", "c[1]": "partial"},
    ),
    "s3": _runs([True, True, True], {"a": "exact"}, {"a": "exact"}, {"a": "exact"}),
    "s4": _runs([False, False, False], {"a": "missed"}, {"a": "missed"}, {"a": "missed"}),
    # written without its field counts: a flip with no occurrence counts as flipping every time
    "s6": {"runs": 2, "passed": 1, "flips": {"z": ["exact", "missed"]}},
    "once": _runs([True], {"a": "exact"}),  # one run: not repeated
}


def test_the_repeats_section_by_hand() -> None:
    found = repeats_section(REPEATED, resamples=10)
    section = found["repeats"]
    # k = the fewest runs = 2 (s6); passes (n, c): s1 (3, 1), s2 (3, 2), s3 (3, 3), s4 (3, 0), s6 (2, 1)
    assert (section["runs"], section["samples"]) == (2, 5)
    assert section["pass_counts"] == {"0": 1, "1": 2, "2": 1, "3": 1}
    # pass@1 = pass^1 = mean share passing = (1/3 + 2/3 + 1 + 0 + 1/2) / 5 = 0.5
    # pass@2: 1 - C(2,2)/C(3,2) = 2/3, 1, 1, 1 - 3/3 = 0, 1 - C(1,2)/C(2,2) = 1: mean (11/3) / 5 = 11/15
    # pass^2: C(1,2)/3 = 0, C(2,2)/3 = 1/3, 1, 0, C(1,2)/1 = 0: mean (4/3) / 5 = 4/15
    assert section["pass_at"] == pytest.approx({"1": 0.5, "2": 11 / 15})
    assert section["pass_hat"] == pytest.approx({"1": 0.5, "2": 4 / 15})
    assert (found["pass_at_k"], found["pass_hat_k"]) == (pytest.approx(11 / 15), pytest.approx(4 / 15))
    # flaky: some but not all runs passed, fewest passes (as a share) first: s1 1/3, s6 1/2, s2 2/3
    assert section["flaky_samples"] == 3
    assert section["flaky_sample_list"] == [
        {"sample_id": "s1", "passed": 1, "runs": 3},
        {"sample_id": "s6", "passed": 1, "runs": 2},
        {"sample_id": "s2", "passed": 2, "runs": 3},
    ]
    # occurrences: a in s1, s2, s3, s4 (4), b 1, c[] 2 paths in s2: 7 compared; z has none (rate 1 by default)
    # rates: c[] 2/2 = 1 (2 flips), z 1 (1 flip), a 1/4: sorted by rate, then flips
    assert section["fields_compared"] == 7
    assert section["flaky_fields"] == [
        {
            "field": "c[]",
            "occurrences": 2,
            "flipped": 2,
            "rate": 1.0,
            "samples": 1,
            "transitions": {"exact -> missed": 1, "partial -> exact": 1, "exact -> partial": 1},
        },
        {
            "field": "z",
            "occurrences": 0,
            "flipped": 1,
            "rate": 1.0,
            "samples": 1,
            "transitions": {"exact -> missed": 1},
        },
        {
            "field": "a",
            "occurrences": 4,
            "flipped": 1,
            "rate": 0.25,
            "samples": 1,
            "transitions": {"exact -> missed": 1, "missed -> exact": 1},
        },
    ]
    assert section["more_flaky_fields"] == 0


def test_the_repeats_intervals_default_to_ten_thousand_resamples_seeded_with_zero() -> None:
    # k = 2 (the sample run twice); pass@2 of a sample passing c of 10 runs: 1 - C(10 - c, 2) / 45, eleven values
    per_sample = {"twice": {"runs": 2, "passed": 1}, **{f"t{c:02d}": {"runs": 10, "passed": c} for c in range(11)}}
    # in sample-id order ("t00".."t10", then "twice": 1 - C(1, 2) / C(2, 2) = 1), the order the bootstrap draws from
    values = [1 - math.comb(10 - c, 2) / 45 for c in range(11)] + [1.0]
    found = repeats_section(per_sample)["confidence_intervals"]["pass_at_k"]
    assert found == bootstrap_ci(values, confidence=0.95, resamples=10_000, rng=0).as_dict()
    # another seed draws other resamples, whose percentiles differ
    assert found != bootstrap_ci(values, confidence=0.95, resamples=10_000, rng=1).as_dict()


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
    percent = {(track, m.name): m.percent for track, metrics in track_metrics.TRACK_METRICS.items() for m in metrics}
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


def test_a_gap_equal_to_the_threshold_is_not_flagged() -> None:
    # 0.5 - 0.25 = 0.25 exactly (binary fractions), the threshold itself: moderate, not flagged
    by_model = {"ref": {EQS: 0.5}, "small": {EQS: 0.25}}
    found = gap_rule(["ref", "small"], by_model, {}, StatsOptions(gap_threshold=0.25))
    assert found["models"]["small"]["needs_fine_tuning"] is False
    assert found["models"]["small"]["band"] == "moderate difference: fine-tuning optional"
    assert found["flagged"] == []
