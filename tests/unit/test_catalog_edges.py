"""The catalog's formulas at their edges, its tiers against docs/metrics.md and its orders, by hand (the cases a
mutation run of analysis/catalog.py found unguarded)."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np
import pytest

from pytest_extractbench.analysis import catalog

METRICS_DOC = Path(__file__).resolve().parents[2] / "docs" / "metrics.md"


def values(result) -> list[float]:
    return [round(float(v), 6) for v in np.atleast_1d(result)]


def quietly(function, *args):
    """Calls ``function``; a numpy warning (a division by zero computed and thrown away) fails the test."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(all="warn"):
            return function(*args)


def test_a_rate_over_nothing_counted_is_zero_and_never_divides_by_zero() -> None:
    rate = catalog.ratio_of("n", "d")
    # n / d for d = 0 (nothing counted), 0.5, 1 and 4
    sums = {"n": np.array([1.0, 1.0, 1.0, 1.0]), "d": np.array([0.0, 0.5, 1.0, 4.0])}
    assert values(quietly(rate, sums)) == [0.0, 2.0, 1.0, 0.25]


@pytest.mark.parametrize(
    ("tp", "predicted", "expected", "prf"),
    [
        (0, 0, 0, (1.0, 1.0, 1.0)),  # nothing predicted, nothing expected: perfect
        (0, 0, 2, (0.0, 0.0, 0.0)),  # nothing predicted of 2 expected
        (0, 2, 0, (0.0, 0.0, 0.0)),  # 2 predicted, none expected
        (0, 0, 1, (0.0, 0.0, 0.0)),  # the same with a single field on the other side
        (0, 1, 0, (0.0, 0.0, 0.0)),
        (1, 1, 1, (1.0, 1.0, 1.0)),
        (1, 2, 4, (0.5, 0.25, round(2 * 0.5 * 0.25 / 0.75, 6))),  # F1 = 2PR / (P + R) = 1/3
        (0.5, 0.5, 0.5, (1.0, 1.0, 1.0)),  # fractional sums (a weighted resample) are counts too
        (0, 1, 1, (0.0, 0.0, 0.0)),  # P = R = 0: F1 0 without dividing by P + R = 0
    ],
)
def test_micro_precision_recall_f1_by_hand(tp, predicted, expected, prf) -> None:
    sums = {
        "tp_partial": np.array([tp], dtype=float),
        "predicted": np.array([predicted], dtype=float),
        "expected": np.array([expected], dtype=float),
    }
    got = tuple(values(quietly(catalog.micro_prf(part, "partial"), sums))[0] for part in (0, 1, 2))
    assert got == prf


@pytest.mark.parametrize(
    ("type_correct", "typed", "schema_valid", "accuracy"),
    [
        (0, 0, 0, 0.0),  # no typed field and no valid output: 0
        (0, 0, 1, 1.0),  # no typed field, one valid output: 1
        (0, 0, 2, 1.0),
        (1, 1, 1, 1.0),
        (3, 4, 4, 0.75),
        (0, 1, 1, 0.0),
    ],
)
def test_type_accuracy_by_hand(type_correct, typed, schema_valid, accuracy) -> None:
    sums = {
        "type_correct": np.array([type_correct], dtype=float),
        "typed": np.array([typed], dtype=float),
        "schema_valid": np.array([schema_valid], dtype=float),
    }
    assert values(quietly(catalog._type_accuracy, sums)) == [accuracy]


def test_a_mean_is_a_sum_over_the_sample_count() -> None:
    assert values(catalog.mean_of("eqs")({"eqs": np.array([3.0]), "one": np.array([4.0])})) == [0.75]


def test_sla_tiers_are_the_ones_docs_metrics_md_documents() -> None:
    text = METRICS_DOC.read_text(encoding="utf-8")
    section = text.split("## SLA tiers", 1)[1].split("\n## ", 1)[0]
    documented = {}
    for name, *tiers in re.findall(r"^\| `(\w+)` [<>]= \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \|$", section, re.M):
        documented[name] = tuple(float(t) for t in tiers)
    assert len(documented) == 6
    assert {m.name: m.sla for m in catalog.gated()} == documented


def test_grade_only_tiers_and_which_scale_grades_a_metric() -> None:
    # the grade scale of metrics without an SLA (summary.md's grades): minimum, target, excellence
    grade_only = {m.name: m.grade_tiers for m in catalog.CATALOG if m.grade_tiers}
    assert grade_only == {
        "field_precision_partial": (0.70, 0.80, 0.90),
        "field_recall_partial": (0.70, 0.80, 0.90),
        "anls_star": (0.70, 0.80, 0.90),
        "exact_match_rate": (0.50, 0.65, 0.80),
        "type_accuracy": (0.90, 0.95, 0.99),
        "field_omission_rate": (0.20, 0.10, 0.05),
    }
    assert catalog.get("exact_match_rate").tiers == (0.50, 0.65, 0.80)  # grade tiers when there is no SLA
    assert catalog.get("extraction_quality_score").tiers == (0.75, 0.85, 0.90)  # the SLA otherwise
    assert catalog.get("json_valid_rate").tiers is None


def test_terminal_lines_and_the_strengths_order() -> None:
    by_row: dict[int, list[str]] = {}
    for metric in catalog.ranked("terminal_row"):
        by_row.setdefault(metric.terminal_row, []).append(metric.name)
    assert list(by_row.values()) == [
        ["extraction_quality_score"],
        ["schema_validity_rate", "json_valid_rate"],
        ["field_f1_partial"],
        ["field_f1_strict"],
        ["field_f1_lenient"],
        ["anls_star"],
        ["exact_match_rate"],
        ["hallucination_rate", "field_omission_rate"],
        ["type_accuracy"],
    ]
    assert [m.name for m in catalog.ranked("strength_rank")] == [
        "field_precision_partial",
        "field_recall_partial",
        "schema_validity_rate",
        "hallucination_rate",
        "type_accuracy",
        "exact_match_rate",
        "field_f1_partial",
        "latency_p95_ms",
    ]


def test_percent_and_direction_of_known_and_unknown_metrics() -> None:
    assert catalog.is_percent("schema_validity_rate") is True
    assert catalog.is_percent("extraction_quality_score") is False
    assert catalog.is_percent("no_such_metric") is False
    assert catalog.lower_is_better("hallucination_rate") is True
    assert catalog.lower_is_better("extraction_quality_score") is False
    assert catalog.lower_is_better("no_such_metric") is False


def test_ranks_are_positions_without_gaps_and_strength_ranks_without_ties() -> None:
    # the order is stated by the ranks alone, never by where a metric sits in the table
    strength = sorted(m.strength_rank for m in catalog.metrics() if m.strength_rank is not None)
    assert strength == list(range(len(strength)))
    rows = sorted({m.terminal_row for m in catalog.metrics() if m.terminal_row is not None})
    assert rows == list(range(len(rows)))
    for attribute in ("key_chart", "sample_column"):  # one metric a place: a bar of the chart, a column of the CSV
        ranks = sorted(getattr(m, attribute) for m in catalog.metrics() if getattr(m, attribute) is not None)
        assert ranks == list(range(len(ranks))), attribute


def test_the_key_chart_bars_and_the_per_sample_columns_of_samples_csv_in_order() -> None:
    assert [m.name for m in catalog.ranked("key_chart")] == [
        "extraction_quality_score",
        "schema_validity_rate",
        "field_f1_partial",
        "exact_match_rate",
        "type_accuracy",
        "hallucination_rate",
    ]
    # validity first (JSON, then schema), the score, then the field metrics from strictest to the error rates
    assert [m.per_sample for m in catalog.ranked("sample_column")][:12] == [
        "json_valid",
        "schema_valid",
        "eqs",
        "exact_match",
        "f1_strict",
        "f1_partial",
        "f1_lenient",
        "precision_partial",
        "recall_partial",
        "type_accuracy",
        "hallucination_rate",
        "omission_rate",
    ]


def test_an_eqs_component_missing_from_a_models_entry_reads_as_a_zero_metric() -> None:
    # absent (or null) reads as 0: the component is 0 for a higher-is-better metric, 1 - 0 for a lower-is-better one
    assert catalog.get("schema_validity_rate").component_value({}) == 0.0
    assert catalog.get("hallucination_rate").component_value({}) == 1.0
    assert catalog.get("hallucination_rate").component_value({"hallucination_rate": 0.25}) == 0.75
    assert catalog.get("schema_validity_rate").component_value({"schema_validity_rate": None}) == 0.0
