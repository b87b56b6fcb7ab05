"""Resampled metrics equal the aggregated ones, and micro ratios are recomputed per resample."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_extractbench import SampleRecord, ScoringOptions, StatsOptions, model_metrics, score_sample
from pytest_extractbench.analysis import catalog, stats
from pytest_extractbench.analysis.resampled import (
    Columns,
    confidence_intervals,
    measured,
    metric_values,
    resolve_metric,
    row_matrix,
    sample_row,
)
from pytest_extractbench.dataset import load_dataset
from pytest_extractbench.scoring import FieldCounts

ROOT = Path(__file__).resolve().parents[2]


def scored(predictions: str) -> list[SampleRecord]:
    rows = {}
    for line in (ROOT / "fixtures" / "predictions" / predictions).read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        rows[row["id"]] = row["output"]
    return [
        SampleRecord(
            model="m", sample_id=s.id, score=score_sample(rows.get(s.id), s.expected, s.schema, sample_id=s.id)
        )
        for s in load_dataset().samples
    ]


@pytest.fixture(scope="module")
def weak() -> list[SampleRecord]:
    return scored("weak.jsonl")  # has unparseable and schema-invalid outputs and missing fields


def test_point_values_equal_model_metrics(weak: list[SampleRecord]) -> None:
    metrics = model_metrics(weak, ScoringOptions())
    values = metric_values([sample_row(r.score) for r in weak], catalog.resampled())
    # the whole-output scores are measured only when asked for: absent here, not 0
    assert set(catalog.resampled()) - set(metrics) == {"semantic_similarity", "judge_score"}
    for name in set(catalog.resampled()) & set(metrics):
        assert values[name] == pytest.approx(metrics[name], abs=1e-12), name
    # and the CI section attached to every model carries the same values
    for name, interval in metrics["confidence_intervals"].items():
        assert interval["value"] == pytest.approx(metrics[name], abs=1e-12)
        assert interval["low"] <= interval["value"] + 1e-12 and interval["value"] <= interval["high"] + 1e-12


def test_micro_f1_of_each_resample_is_recomputed_from_summed_counts(weak: list[SampleRecord]) -> None:
    rows = [sample_row(r.score) for r in weak]
    metric = catalog.resampled()["field_f1_partial"]
    keys = ("one", *metric.columns)
    statistic = metric.statistic(keys)
    sums = stats.bootstrap_sums(row_matrix(rows, keys), 200, 4, chunk=64)
    vectorized = statistic(sums)
    # the same resamples, aggregated the slow way from the field categories of the drawn samples, with the
    # docs/metrics.md's formulas written out: tp = exact + 0.5 * partial, predicted = exact + partial + incorrect +
    # spurious, expected = exact + partial + incorrect + missed, F1 = 2 tp / (predicted + expected)
    for drawn, value in zip(np.concatenate(list(stats.resample_indices(len(rows), 200, 4, chunk=64))), vectorized):
        counts = [weak[i].score.counts for i in drawn]
        tp = sum(c.exact + 0.5 * c.partial for c in counts)
        predicted = sum(c.exact + c.partial + c.incorrect + c.spurious for c in counts)
        expected = sum(c.exact + c.partial + c.incorrect + c.missed for c in counts)
        assert predicted > 0 and expected > 0
        assert value == pytest.approx(2 * tp / (predicted + expected), abs=1e-12)
    # ...which is not the mean of per-sample F1s
    first = np.concatenate(list(stats.resample_indices(len(rows), 1, 4, chunk=64)))[0]
    mean_of_f1 = np.mean([weak[i].score.f1["partial"] for i in first])
    assert abs(vectorized[0] - mean_of_f1) > 1e-6


def test_micro_f1_of_a_resample_by_hand() -> None:
    # three samples: (exact, partial, incorrect, missed, spurious)
    a = FieldCounts(exact=4, partial=2, incorrect=1, missed=1)  # tp 5, predicted 7, expected 8
    b = FieldCounts(exact=0, partial=0, incorrect=0, missed=0, spurious=3)  # tp 0, predicted 3, expected 0
    c = FieldCounts(exact=1, partial=1, incorrect=0, missed=4)  # tp 1.5, predicted 2, expected 6
    rows = [
        {"one": 1.0, "tp_partial": tp, "predicted": p, "expected": e}
        for tp, p, e in ((5.0, 7.0, 8.0), (0.0, 3.0, 0.0), (1.5, 2.0, 6.0))
    ]
    for counts, row in zip((a, b, c), rows):  # the row production builds from these counts
        assert counts.true_positives("partial") == row["tp_partial"]
        assert (counts.predicted, counts.expected) == (row["predicted"], row["expected"])
    statistic = catalog.resampled()["field_f1_partial"].statistic(("one", "tp_partial", "predicted", "expected"))
    # the resample that draws a twice and c once: tp 5+5+1.5 = 11.5, predicted 7+7+2 = 16, expected 8+8+6 = 22,
    # P = 11.5/16, R = 11.5/22, F1 = 2*11.5/(16+22) = 23/38
    sums = np.array([[3.0, 11.5, 16.0, 22.0]])
    drawn = row_matrix(rows, ("one", "tp_partial", "predicted", "expected")).T @ [2, 0, 1]
    assert drawn == pytest.approx(sums[0])
    assert statistic(sums)[0] == pytest.approx(23 / 38)
    # b alone: nothing expected, 3 predicted: P = 0, R = 0 (nothing expected but something predicted), F1 = 0
    assert statistic(np.array([[1.0, 0.0, 3.0, 0.0]]))[0] == 0.0
    # not the mean of the per-sample F1s over the draw a, a, c (a: 10/15, c: 3/8)
    assert abs(23 / 38 - np.mean([10 / 15, 10 / 15, 3 / 8])) > 0.01


def test_every_headline_metric_gets_an_interval(weak: list[SampleRecord]) -> None:
    rows = [sample_row(r.score) for r in weak]
    intervals = confidence_intervals(rows, StatsOptions(resamples=500, confidence=0.9))
    assert set(intervals) == set(catalog.names("headline"))
    eqs = intervals["extraction_quality_score"]
    assert eqs.confidence == 0.9 and eqs.resamples == 500 and eqs.n == len(rows)
    assert eqs.low < eqs.value < eqs.high
    # a run that is perfect on every sample has a degenerate interval at 1.0
    perfect = [sample_row(score_sample(s.expected, s.expected, s.schema)) for s in load_dataset().samples]
    f1 = confidence_intervals(perfect, StatsOptions(resamples=200))["field_f1_partial"]
    assert (f1.low, f1.value, f1.high) == (1.0, 1.0, 1.0)


@pytest.mark.parametrize(
    ("alias", "name"),
    [
        ("eqs", "extraction_quality_score"),
        ("EQS", "extraction_quality_score"),
        ("f1", "field_f1_partial"),
        ("field-f1-strict", "field_f1_strict"),
        ("validity", "schema_validity_rate"),
        ("hallucination_rate", "hallucination_rate"),
        ("exact_match", "exact_match_rate"),
    ],
)
def test_metric_aliases(alias: str, name: str) -> None:
    assert resolve_metric(alias).name == name


def test_unknown_metric_lists_the_known_ones() -> None:
    with pytest.raises(KeyError, match="unknown metric 'f2'.*field_f1_partial"):
        resolve_metric("f2")


VALUES = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.sampled_from(["a", "b", "a b", "B"]))
DOCS = st.dictionaries(st.sampled_from(["x", "y", "z", "w"]), VALUES, max_size=4)
SCHEMA = {"type": "object", "properties": {"x": {"type": "string"}, "y": {}, "z": {}, "w": {}}}


@given(st.lists(st.tuples(DOCS, st.one_of(DOCS, st.just("not json"))), min_size=1, max_size=8))
def test_resampled_point_values_equal_the_aggregates_for_any_outputs(pairs) -> None:
    records = [
        SampleRecord(model="m", sample_id=f"s{i}", score=score_sample(out, gold, SCHEMA, sample_id=f"s{i}"))
        for i, (gold, out) in enumerate(pairs)
    ]
    options = ScoringOptions(statistics=StatsOptions(resamples=100))
    metrics = model_metrics(records, options)
    values = metric_values([sample_row(r.score) for r in records], catalog.resampled())
    for name in set(catalog.resampled()) & set(metrics):
        assert values[name] == pytest.approx(metrics[name], abs=1e-12), name


@given(st.lists(st.tuples(st.floats(0, 1), st.floats(0, 1)), min_size=1, max_size=10))
def test_exact_permutation_p_is_symmetric_and_a_probability(pairs) -> None:
    a, b = [p[0] for p in pairs], [p[1] for p in pairs]
    forward, backward = stats.paired_permutation_test(a, b), stats.paired_permutation_test(b, a)
    assert 0 < forward.p_value <= 1
    assert forward.p_value == pytest.approx(backward.p_value)


@given(st.lists(st.tuples(DOCS, st.one_of(DOCS, st.just("not json"), st.none())), min_size=1, max_size=8))
def test_columns_give_what_the_rows_give(pairs) -> None:
    """The CI section reads columns instead of one dict per sample: same matrix, same measured metrics, same point
    values and the same bootstrap intervals, bit for bit."""
    scores = [score_sample(out, gold, SCHEMA, sample_id=f"s{i}") for i, (gold, out) in enumerate(pairs)]
    rows, columns = [sample_row(s) for s in scores], Columns(scores)
    keys = ["one", *rows[0]]
    assert np.array_equal(columns.matrix(keys), row_matrix(rows, keys))
    assert columns.matrix(keys).flags.c_contiguous
    names = list(catalog.resampled())
    assert measured(columns, names) == measured(rows, names)
    assert metric_values(columns, names) == metric_values(rows, names)
    options = StatsOptions(resamples=100, seed=7)
    assert confidence_intervals(columns, options) == confidence_intervals(rows, options)


def test_columns_count_a_metric_measured_on_some_samples_only() -> None:
    """A whole-output score given on one sample of three makes it measured; on none, it stays out."""
    scores = [score_sample('{"x": "a"}', {"x": "a"}, SCHEMA, sample_id=f"s{i}") for i in range(3)]
    assert "judge_score" not in measured(Columns(scores), catalog.resampled())
    scores[1].extras["judge_score"] = 0.5
    assert "judge_score" in measured(Columns(scores), catalog.resampled())
    assert Columns(scores).column("judge_score_sum").tolist() == [0.0, 0.5, 0.0]
