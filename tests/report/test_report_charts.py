"""Charts that earn their place: labelled axes, a reading computed from the data, sorted heatmaps, and no
plot for too few points."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from _runs import DATASET, fixture_outputs, gold_outputs, make_run

from pytest_extractbench.report import chart_readings as readings
from pytest_extractbench.report import distribution_charts as spread
from pytest_extractbench.report import html, html_charts, svg
from pytest_extractbench.report.rows import read_run

SVG = "{http://www.w3.org/2000/svg}"


def _marks(chart: svg.Chart, cls: str) -> list[ET.Element]:
    """The elements of a chart's SVG (parsed: it must be well-formed) drawn with class ``cls``."""
    return [e for e in ET.fromstring(chart.svg).iter() if e.get("class") == cls]


def _tick_y(chart: svg.Chart, text: str) -> float:
    """Where the y tick labelled ``text`` sits: the axis's own statement of where a value goes."""
    (tick,) = [e for e in _marks(chart, "tick") if e.text == text and e.get("text-anchor") == "end"]
    return float(tick.get("y"))


def _charts(run: Path) -> dict[str, svg.Chart]:
    context = html.build_context(read_run(run))
    return {c.key: c for section in context["charts"].values() for c in section}


@pytest.mark.slow
def test_every_chart_has_labelled_axes_and_a_reading(tmp_path: Path) -> None:
    run = make_run(
        tmp_path,
        {"demo": fixture_outputs("demo.jsonl"), "weak": fixture_outputs("weak.jsonl"), "gold": gold_outputs()},
        timed=True,
    )
    drawn = _charts(run)
    assert {
        "pr",
        "latency",
        "latency-eqs",
        "throughput",
        "errors",
        "omissions",
        "f1-complexity",
        "complexity-box",
        "correlation",
        "ranking",
        "grouped",
        "winrate",
        "categories",
        "severity",
    } <= set(drawn)
    for key, chart in drawn.items():
        assert chart.reading, key
        if key.startswith("gauge-") or key == "radar":
            continue  # a dial and a polar plot have no x and y axes
        (xlabel,), (ylabel,) = _marks(chart, "xlabel"), _marks(chart, "ylabel")
        assert xlabel.text and ylabel.text, key
        assert ET.fromstring(chart.svg).find(f"{SVG}title").text == chart.title


@pytest.mark.slow
def test_too_few_samples_make_no_per_sample_chart(tmp_path: Path) -> None:
    few = _charts(make_run(tmp_path / "few", {"m": gold_outputs()}, samples=DATASET.samples[:4], timed=True))
    enough = _charts(make_run(tmp_path / "enough", {"m": gold_outputs()}, samples=DATASET.samples[:5], timed=True))
    per_sample = {"pr", "latency", "latency-eqs", "throughput", "f1-complexity", "complexity-box"}
    assert not per_sample & set(few)
    assert per_sample <= set(enough)
    # the per-model figures stay: they summarize the run, not points
    assert {"categories", "radar"} <= set(few)


@pytest.mark.slow
def test_two_models_get_no_win_rate_matrix(tmp_path: Path) -> None:
    drawn = _charts(make_run(tmp_path, {"demo": fixture_outputs("demo.jsonl"), "weak": fixture_outputs("weak.jsonl")}))
    assert "ranking" in drawn and "winrate" not in drawn


def test_a_bin_of_few_samples_shows_its_points_not_a_box() -> None:
    chart = spread.box_by_bin(
        {"m": {"simple": [1.0], "medium": [0.1, 0.2, 0.3, 0.4, 0.5], "complex": []}}, ("simple", "medium", "complex")
    )
    (box,) = _marks(chart, "box")  # one box: medium
    (point,) = _marks(chart, "point")  # simple's one sample, as a point at 1
    assert float(point.get("cy")) == pytest.approx(_tick_y(chart, "1"))
    # the box spans the quartiles 0.2 and 0.4 (numpy's linear interpolation), its median line at 0.3
    assert float(box.get("y")) == pytest.approx(_tick_y(chart, "0.4"), abs=0.1)
    assert float(box.get("y")) + float(box.get("height")) == pytest.approx(_tick_y(chart, "0.2"), abs=0.2)


def test_the_bins_axis_counts_each_models_samples_as_its_reading_does() -> None:
    by_bin = {"a": {"simple": [0.5] * 4, "medium": [0.1, 0.9]}, "b": {"simple": [0.7] * 4, "medium": [0.2, 0.4, 0.6]}}
    chart = spread.box_by_bin(by_bin, ("simple", "medium"))
    ticks = ["".join(e.itertext()) for e in _marks(chart, "tick")]  # a tick's lines joined
    reading = readings.bins(by_bin, ("simple", "medium"))
    # both models have 4 simple samples: the axis says 4 (not their sum 8), as the reading says n 4 per model
    assert any(t.endswith("(n=4)") for t in ticks) and not any("n=8" in t for t in ticks)
    assert "simple 0.50 (n 4)" in reading and "simple 0.70 (n 4)" in reading
    assert any(t.endswith("(n=2/3)") for t in ticks) and not any("n=5" in t for t in ticks)
    assert "samples per model" in chart.caption


def test_the_omission_heatmap_shows_the_most_missed_fields_highest_rate_first(monkeypatch) -> None:
    monkeypatch.setattr(html_charts, "MAX_NAMES", 3)
    by_name = {
        "x": {"missed": 1, "omission_rate": 1.0},
        "y": {"missed": 3, "omission_rate": 0.3},
        "z": {"missed": 2, "omission_rate": 1.0},
        "w": {"missed": 0, "omission_rate": 0.0},
        "zz": {"missed": 1, "omission_rate": 0.1},  # ties x on missed; x wins by name
    }
    names = html_charts._omitted_names({"m": {"omission_analysis": {"by_field_name": by_name}}})
    # chosen by count missed (y 3, z 2, then x before zz), shown by rate: z and x (1.0; z missed more), then y
    assert names == ["z", "x", "y"]


def test_the_correlation_heatmap_puts_the_strongest_feature_first() -> None:
    found = {
        "f1_vs_depth": {"r": -0.2},
        "f1_vs_fields": {"r": 0.7},
        "f1_vs_enums": {"r": None},
        "latency_vs_depth": {"r": 0.9},
        "latency_vs_fields": {"r": 0.1},
        "latency_vs_enums": {"r": -0.3},
    }
    matrix, rows, features = html_charts._correlations({"m": {"complexity_correlation": found}})
    assert rows == ["f1", "latency"]
    # strongest |r| per column: depth 0.9, fields 0.7, enums 0.3
    assert features == ["depth", "fields", "enums"]
    assert matrix[0].tolist()[:2] == [-0.2, 0.7] and np.isnan(matrix[0, 2])
    assert matrix[1].tolist() == [0.9, 0.1, -0.3]


def test_long_field_paths_keep_their_leaf() -> None:
    path = "shipments[].packages[].contents[].declared_value"
    shown = svg.label(path, 30, keep_end=True)
    assert len(shown) == 30 and shown.endswith("contents[].declared_value"[-19:]) and shown.startswith("shipments[")
    assert svg.label(path, 30).startswith("shipments[].packages[].conten")


# -- readings, by hand -------------------------------------------------------------------------


def test_readings_of_the_summary_charts() -> None:
    m = {
        "schema_validity_rate": 0.9,
        "field_f1_partial": 0.7,
        "type_accuracy": 1.0,
        "hallucination_rate": 0.05,
        "match_category_distribution": {
            "exact": 0.6,
            "partial": 0.1,
            "incorrect": 0.05,
            "missed": 0.2,
            "spurious": 0.05,
        },
    }
    assert readings.radar({"m": m}) == "weakest component F1 partial (0.700)."
    assert readings.categories({"m": m}) == "60% of fields exact, most of the rest missed (20%)."
    assert readings.gauge("m", 0.8123, "Good - suitable with human review", 0.75, 0.86) == (
        "m: EQS 0.812, 95% CI [0.750, 0.860], good."
    )
    assert readings.largest_gap({"a": {"x": 0.9, "y": 0.5}, "b": {"x": 0.8, "y": 0.9}}, [("x", "X"), ("y", "Y")]) == (
        "Largest difference: Y, b 0.900 vs a 0.500."
    )


def test_readings_of_per_sample_charts() -> None:
    rising = {"m": [(1.0, 0.1), (2.0, 0.4), (3.0, 0.5), (4.0, 0.9), (5.0, 1.0)]}
    assert readings.correlation(rising, "complexity", "F1") == (
        "a strong rising relation of F1 to complexity (Spearman rho +1.00, n 5)."
    )
    flat = {"m": [(1.0, 0.5), (2.0, 0.5), (3.0, 0.5)]}
    assert "no rank correlation defined" in readings.correlation(flat, "x", "y")
    # numpy's linear interpolation: p50 of 1..5 is 3, p95 is 4 + 0.8 * 1
    assert readings.latency({"m": [1.0, 2.0, 3.0, 4.0, 5.0]}) == "p50 3.00 s, p95 4.80 s."
    assert readings.throughput({"m": [10.0, 11.0, 12.0, 13.0, 14.0]}) == "5 responses, 1.00 responses/s on average."
    assert readings.bins({"m": {"simple": [1.0, 0.5, 0.8], "complex": [0.2]}}, ("simple", "medium", "complex")) == (
        "median F1 simple 0.80 (n 3), complex 0.20 (n 1)."
    )
    assert readings.medians({"a": [(0.5, 1.0), (1.0, 0.0), (0.0, 0.5)]}, "recall", "precision") == (
        "median recall 0.500, precision 0.500."
    )


def test_readings_of_the_comparison_charts() -> None:
    ranking = [
        {"model": "a", "extraction_quality_score": 0.9, "significantly_better_than_next": True},
        {"model": "b", "extraction_quality_score": 0.75, "significantly_better_than_next": None},
    ]
    assert readings.ranking(ranking) == "a leads b by 0.150 EQS (significant)."
    wins = {"a": {"b": 0.6, "c": 0.9}, "b": {"a": 0.3, "c": 0.5}, "c": {"a": 0.05, "b": 0.4}}
    assert readings.win_rates(wins, ["a", "b", "c"]) == "Most one-sided: a beats c on 90% of shared samples."
    matrix = np.array([[0.2, np.nan], [-0.7, 0.4]])
    assert readings.heatmap_top(matrix, ["f1", "latency"], ["depth", "size"], "Strongest", "r {:+.2f}") == (
        "Strongest: latency, depth (r -0.70)."
    )
    assert readings.severity({"m": {"critical": 2, "moderate": 1, "minor": 0}}) == "2 critical of 3 spurious fields."
