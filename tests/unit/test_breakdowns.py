"""The per-sample EQS spread, the per-field table and precision/recall per complexity bin, by hand."""

from __future__ import annotations

import argparse

import pytest

from pytest_extractbench import SampleRecord, ScoringOptions, model_metrics, score_sample
from pytest_extractbench.core import rundoc
from pytest_extractbench.gating.regression import parse_compare_fail
from pytest_extractbench.report.exports import summary_md
from pytest_extractbench.report.summary import weakest_fields

OPTIONS = ScoringOptions()
OBJECT = {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}}


def record(sample_id: str, output, expected, schema=None, bin_name: str | None = None) -> SampleRecord:
    meta = {"complexity": {"complexity_bin": bin_name}} if bin_name else {}
    return SampleRecord(
        model="m", sample_id=sample_id, meta=meta, score=score_sample(output, expected, schema, sample_id=sample_id)
    )


def test_the_eqs_spread_uses_the_true_median_and_counts_perfect_and_zero_samples() -> None:
    gold = {"a": "x", "b": "y"}
    records = [
        record("perfect-1", '{"a": "x", "b": "y"}', gold, OBJECT),  # EQS 1
        record("perfect-2", '{"a": "x", "b": "y"}', gold, OBJECT),  # EQS 1
        record("empty", "[]", gold, OBJECT),  # schema-invalid, nothing spurious: 0.15
        record("garbage", "not json", gold, OBJECT),  # EQS 0
    ]
    metrics = model_metrics(records, OPTIONS)
    # sorted EQS 0, 0.15, 1, 1: the median is (0.15 + 1) / 2, not the upper middle value 1
    assert metrics["eqs_distribution"] == {
        "min": 0.0,
        "max": 1.0,
        "median": pytest.approx(0.575),
        "perfect_samples": 2,
        "zero_samples": 1,
    }
    assert metrics["perfect_sample_rate"] == pytest.approx(2 / 4)
    assert metrics["zero_score_rate"] == pytest.approx(1 / 4)
    ci = metrics["confidence_intervals"]["perfect_sample_rate"]
    assert 0.0 <= ci["low"] <= 0.5 <= ci["high"] <= 1.0


def test_no_sample_gives_an_empty_spread() -> None:
    from pytest_extractbench.analysis.metrics import eqs_distribution

    assert eqs_distribution([]) == {"min": None, "max": None, "median": None, "perfect_samples": 0, "zero_samples": 0}


def test_each_field_name_gets_its_occurrences_mean_score_and_outcome_counts() -> None:
    records = [
        # a exact; b "q" vs "y": no shared token or character -> incorrect, score 0; c missed; d invented
        record("s1", {"a": "x", "b": "q", "d": "w"}, {"a": "x", "b": "y", "c": "z"}),
        record("s2", {"a": "x", "b": "y"}, {"a": "x", "b": "y"}),  # both exact
    ]
    table = model_metrics(records, OPTIONS)["field_scores_by_name"]
    zero = {"matches": 0, "partial": 0, "mismatches": 0, "omissions": 0, "hallucinations": 0}
    assert table == {
        "a": {"occurrences": 2, "mean_score": 1.0, **zero, "matches": 2},
        "b": {"occurrences": 2, "mean_score": 0.5, **zero, "matches": 1, "mismatches": 1},
        "c": {"occurrences": 1, "mean_score": 0.0, **zero, "omissions": 1},
        "d": {"occurrences": 1, "mean_score": 0.0, **zero, "hallucinations": 1},
    }
    # the report's "fields to look at": under 1 on average; c, d and b each lost 1 point (b: 2 x 0.5),
    # so the lower mean score goes first, then the name
    assert [name for name, _ in weakest_fields({"field_scores_by_name": table})] == ["c", "d", "b"]
    assert [name for name, _ in weakest_fields({"field_scores_by_name": table}, limit=1)] == ["c"]
    # a field missed in 3 of 4 samples (lost 3) comes before one missed in its only sample (lost 1)
    often = {
        "often": {"occurrences": 4, "mean_score": 0.25},
        "once": {"occurrences": 1, "mean_score": 0.0},
        "fine": {"occurrences": 9, "mean_score": 1.0},
    }
    assert [name for name, _ in weakest_fields({"field_scores_by_name": often})] == ["often", "once"]


def test_precision_and_recall_per_complexity_bin() -> None:
    records = [
        # simple: 1 of 2 predicted fields right, 1 of 3 expected found -> P 1/2, R 1/3
        record("s", {"a": "x", "b": "q"}, {"a": "x", "b": "y", "c": "z"}, bin_name="simple"),
        # complex: both right, one more expected -> P 1, R 2/3
        record("c", {"a": "x", "b": "y"}, {"a": "x", "b": "y", "c": "z"}, bin_name="complex"),
    ]
    bins = model_metrics(records, OPTIONS)["metrics_by_complexity_bin"]
    assert bins["simple"]["field_precision_strict"] == pytest.approx(1 / 2)
    assert bins["simple"]["field_recall_strict"] == pytest.approx(1 / 3)
    assert bins["complex"]["field_precision_partial"] == pytest.approx(1.0)
    assert bins["complex"]["field_recall_partial"] == pytest.approx(2 / 3)
    assert bins["medium"] == {"num_samples": 0}


def test_the_new_rates_can_be_gated_against_a_baseline() -> None:
    assert parse_compare_fail("perfect_sample_rate:-0.05").metric == "perfect_sample_rate"
    assert parse_compare_fail("zero_scores:+2%").metric == "zero_score_rate"
    with pytest.raises(argparse.ArgumentTypeError, match="a lower zero_score_rate is better"):
        parse_compare_fail("zero_score_rate:-0.05")


def test_summary_md_shows_the_spread_the_weak_fields_and_the_bins() -> None:
    records = [
        record("s", {"a": "x", "b": "q"}, {"a": "x", "b": "y", "c": "z"}, bin_name="simple"),
        record("c", '{"a": "x", "b": "y"}', {"a": "x", "b": "y"}, OBJECT, bin_name="complex"),
    ]
    text = summary_md(rundoc.complete({"models": {"m": model_metrics(records, OPTIONS)}}))
    assert "- **Per-sample EQS**: min " in text and "1 perfect (EQS 1), 0 at 0" in text
    # c missed (0), b wrong once and right once ("q" vs "y" scores 0): (0 + 1) / 2; ANLS* agrees here
    # ("q" vs "y": Levenshtein 1 of 1, similarity 0; a missing key reads as null against "z": 0)
    assert "| c | 1 | 0.000 | 0.000 | 0 | 0 | 0 | 1 | 0 |" in text
    assert "| b | 2 | 0.500 | 0.500 | 1 | 0 | 1 | 0 | 0 |" in text
    assert "| simple | 1 |" in text and "| complex | 1 | 1.000 | 1.000 | 1.000 | 1.000 |" in text


# --- the field tally counts distinct combinations, then spreads them over the groupings ---

from types import SimpleNamespace  # noqa: E402

from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from pytest_extractbench.analysis import breakdowns  # noqa: E402
from pytest_extractbench.scoring.result import FieldResult  # noqa: E402

_FIELDS = st.builds(
    FieldResult,
    path=st.sampled_from(["a", "b.c", "items[0].sku", "items[12].sku", "items[1].tags[3]"]),
    category=st.sampled_from(["exact", "partial", "incorrect", "missed", "spurious", "error", "pending"]),
    score=st.floats(0.0, 1.0),
    expected_type=st.sampled_from([None, "string", "integer"]),
    predicted_type=st.sampled_from([None, "string", "number"]),
    depth=st.integers(0, 3),
    required=st.booleans(),
    expected=st.none(),
    predicted=st.none(),
    type_ok=st.none(),
    equal=st.just(False),
    origin=st.just(""),
    similarity=st.none(),
    comparator=st.none(),
    error=st.none(),
)
_RECORDS = st.lists(
    st.builds(
        lambda valid, fields: SimpleNamespace(score=SimpleNamespace(valid=valid, fields=fields)),
        st.booleans(),
        st.lists(_FIELDS, max_size=8),
    ),
    max_size=12,
)


def _tally_field_by_field(records, options, credited):
    """The tally as the definition reads: every field's groups counted one by one."""
    tallies = {name: {} for name in breakdowns.GROUPINGS}
    for record in records:
        for field in record.score.fields:
            index = breakdowns._INDEX.get(field.category)
            if index is None:
                continue
            slots = [index]
            if credited and not record.score.valid and index < 4:
                slots = [3]
            elif field.category == "partial" or (
                field.category == "incorrect" and field.score >= options.lenient_threshold
            ):
                slots.append(2)
            for name, group_of in breakdowns.GROUPINGS.items():
                row = tallies[name].setdefault(group_of(field), [0] * 6)
                for slot in slots:
                    row[slot] += 1
    return tallies


@pytest.mark.slow
@given(records=_RECORDS, credited=st.booleans(), lenient=st.sampled_from([0.0, 0.3, 0.5]))
def test_the_combination_tally_equals_a_field_by_field_tally(records, credited, lenient) -> None:
    options = ScoringOptions(lenient_threshold=lenient)
    assert breakdowns._tally(records, options, credited) == _tally_field_by_field(records, options, credited)


@given(records=_RECORDS)
def test_type_confusion_counts_each_expected_and_predicted_type_pair_in_sorted_order(records) -> None:
    from collections import Counter

    from pytest_extractbench.analysis.metrics import type_confusion

    pairs = Counter(
        (f.expected_type, f.predicted_type)
        for r in records
        for f in r.score.fields
        if f.expected_type is not None and f.predicted_type is not None
    )
    matrix = type_confusion(records)
    assert {(e, p): n for e, row in matrix.items() for p, n in row.items()} == pairs
    assert list(matrix) == sorted(matrix) and all(list(row) == sorted(row) for row in matrix.values())
