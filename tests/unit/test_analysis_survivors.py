"""The analysis sections where a mutation run found no unit test looking: the per-sample calibration and consistency
extras, where reused answers came from, the recommendation's thresholds, the consistency of repeated runs. Every
expected value is worked out by hand in the comments."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest

from pytest_extractbench import SampleRecord, ScoringOptions, score_sample
from pytest_extractbench.analysis import distributions
from pytest_extractbench.analysis.bands import recommendation
from pytest_extractbench.analysis.calibration import field_confidences, reliability, token_offsets, value_spans
from pytest_extractbench.analysis.consistency import aggregate_consistency, consistency
from pytest_extractbench.analysis.distributions import HISTOGRAM_EDGES, SIMILARITIES
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
        },
        {
            "source": "cache",
            "where": "http://a",
            "count": 1,
            "first_at": "2026-05-02T08:00:00",
            "last_at": "2026-05-02T08:00:00",
        },
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
    ),
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


# --- calibration ---


def test_token_entries_without_a_text_token_or_a_numeric_logprob_are_skipped() -> None:
    entries = [
        {"token": "{", "logprob": -0.5},
        "junk",
        {"token": "}"},
        {"token": 3, "logprob": -1.0},
        {"token": "x", "logprob": 0},
    ]
    # only "{" (0..1) and "x" (1..2) spell the text; an int logprob counts, as a float
    assert token_offsets(entries) == ("{x", [(0, 1, -0.5), (1, 2, 0.0)])


def test_empty_containers_span_their_two_brackets() -> None:
    # offsets: {0 "a"1-3 :4 {6 }7 ,8 "b"10-12 :13 [15 ]16 ,17 "c"19-21 :22 1 at 24, } at 25
    assert value_spans('{"a": {}, "b": [], "c": 1}') == {"a": (6, 8), "b": (15, 17), "c": (24, 25), "$": (0, 26)}


def test_a_scan_that_breaks_keeps_the_spans_found_before() -> None:
    # a at 6..7; "tru" is no value: the scan stops there
    assert value_spans('{"a": 1, "b": tru') == {"a": (6, 7)}


def test_a_confidence_counts_only_the_tokens_overlapping_the_value() -> None:
    tokens = [('{"a": ', 0.5), ('"x"', 0.9), ("}", 0.8)]
    # the tokens before and after touch the value's span (6..9) but do not overlap it
    found = field_confidences({"content": [{"token": t, "logprob": math.log(p)} for t, p in tokens]}, ["a"])
    assert found == {"a": pytest.approx(0.9)}


def test_the_reliability_table_by_hand() -> None:
    # 0.5 sits on an edge: the bin it opens (0.5-0.6); 0.05 the first bin; 1.0 the last
    found = reliability([0.5, 0.05, 1.0, 0.55], [True, False, True, False])
    bins = found["bins"]
    assert len(bins) == 10
    assert [b["count"] for b in bins] == [1, 0, 0, 0, 0, 2, 0, 0, 0, 1]
    assert bins[5] == {
        "low": 0.5,
        "high": pytest.approx(0.6),
        "midpoint": pytest.approx(0.55),
        "count": 2,
        "accuracy": 0.5,  # one of two correct
        "confidence": pytest.approx(0.525),  # (0.5 + 0.55) / 2
        "gap": pytest.approx(0.025),
    }
    assert bins[1] == {
        "low": 0.1,
        "high": pytest.approx(0.2),
        "midpoint": pytest.approx(0.15),
        "count": 0,
        "accuracy": None,
        "confidence": None,
        "gap": None,
    }
    # ECE: gaps |0 - 0.05| = 0.05 (1 field), 0.025 (2), |1 - 1| = 0 (1): (0.05 * 1 + 0.025 * 2 + 0) / 4 = 0.025; MCE 0.05
    assert (found["ece"], found["mce"]) == (pytest.approx(0.025), pytest.approx(0.05))
    # mean confidence 2.1 / 4 = 0.525; accuracy 2 / 4
    assert (found["mean_confidence"], found["accuracy"]) == (pytest.approx(0.525), 0.5)


def test_the_reliability_of_no_field_is_null() -> None:
    found = reliability([], [])
    assert (found["fields"], found["ece"], found["mce"], found["brier"]) == (0, None, None, None)
    assert (found["mean_confidence"], found["accuracy"]) == (None, None)


def test_two_lone_surrogates_are_not_the_character_they_would_pair_into() -> None:
    # raw surrogate code points stay two characters after parsing; escaped as ASCII (\ud83d\ude00) they would read
    # the same as the one emoji, so the canonical text keeps them unescaped
    pair, emoji = '{"a": "\ud83d\ude00"}', '{"a": "\U0001f600"}'
    found = consistency([pair, emoji])
    assert (found["distinct_outputs"], found["exact_match_consistency"], found["field_agreement"]) == (
        2,
        0.5,
        {"a": 0.5},
    )


def test_fully_consistent_samples_are_counted_and_fields_that_always_agree_are_not_least_consistent() -> None:
    def sample(share: float, agreement: dict) -> dict:
        return {
            "runs": 2,
            "exact_match_consistency": share,
            "field_level_consistency": share,
            "value_variance": None,
            "field_agreement": agreement,
        }

    # two of three samples fully consistent; x agrees on (0.5 + 1 + 1) / 3 of runs on average, g always
    found = aggregate_consistency(
        [sample(0.5, {"x": 0.5, "g": 1.0}), sample(1.0, {"x": 1.0, "g": 1.0}), sample(1.0, {"x": 1.0})]
    )
    assert found["fully_consistent_samples"] == 2
    assert found["least_consistent_fields"] == [{"field": "x", "agreement": pytest.approx(2.5 / 3)}]
