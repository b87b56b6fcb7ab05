"""The figures a toolcall, generate or repair run is compared with its baseline on: recomputed from per-sample rows
they equal the track's own aggregate (a hypothesis property over random results); a track baseline saved and read
back; a baseline of another track, or a figure the track lacks, that could not be measured; the option parsers
taking a track's figures."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_extractbench import StatsOptions
from pytest_extractbench.analysis import track_metrics
from pytest_extractbench.analysis.resampled import metric_values
from pytest_extractbench.core import rundoc
from pytest_extractbench.dataset.records import TrackRecord
from pytest_extractbench.gating import baseline as baselines
from pytest_extractbench.gating.outcomes import UNMEASURED
from pytest_extractbench.gating.regression import compare_run, parse_compare_fail
from pytest_extractbench.gating.requirements import parse_requirement
from pytest_extractbench.tracks import GenerateTrack, RepairTrack, ToolCallTrack

FAST = StatsOptions(resamples=500)
small = st.integers(min_value=0, max_value=4)


@st.composite
def toolcall_result(draw: Any) -> dict[str, Any]:
    gold, predicted = draw(small), draw(small)
    calls = max(gold, predicted)
    names = draw(st.integers(0, min(gold, predicted)))
    valid_format = draw(st.booleans())
    correct = valid_format and draw(st.booleans())
    return {
        "gold_calls": gold,
        "predicted_calls": predicted,
        "calls": calls,
        "valid_calls": draw(st.integers(0, predicted)),
        "name_matches": names,
        "arguments_exact": draw(st.integers(0, names)),
        "arguments": {"tp": draw(small), "fp": draw(small), "fn": draw(small)},
        "abstention_expected": gold == 0,
        "abstained": valid_format and predicted == 0,
        "format_error": None if valid_format else "not JSON",
        "correct": correct,
        "passed": correct,
    }


@st.composite
def repair_result(draw: Any) -> dict[str, Any]:
    counts = {
        name: draw(small)
        for name in ("exact", "partial", "partial_lenient", "incorrect", "missed", "spurious", "typed", "type_correct")
    }
    expected = counts["exact"] + counts["partial"] + counts["incorrect"] + counts["missed"]
    json_valid = draw(st.booleans())
    return {
        "kind": draw(st.sampled_from(["trailing_comma", "unquoted_keys"])),
        "json_valid": json_valid,
        "schema_valid": json_valid and draw(st.booleans()),
        "exact_match": json_valid and draw(st.booleans()),
        "field_f1_partial": draw(st.floats(0, 1)),
        "fields_equal": draw(st.integers(0, expected)),
        "fields_expected": expected,
        "counts": counts,
        "passed": draw(st.booleans()),
    }


def recomputed(track: str, results: list[dict[str, Any]]) -> dict[str, float]:
    rows = [track_metrics.sample_row(track, r, r["passed"]) for r in results]
    figures = track_metrics.compared(track)
    assert figures is not None
    return metric_values(rows, list(figures), figures)


def agrees(track: str, results: list[dict[str, Any]], aggregate: dict[str, Any]) -> None:
    found = recomputed(track, results)
    assert found["pass_rate"] == pytest.approx(sum(r["passed"] for r in results) / len(results))
    for name, value in found.items():
        if name == "pass_rate":
            continue
        expected = aggregate[name]
        # the track reports a rate over no calls as n/a; recomputed it is 0, as the catalog's micro rates are
        assert value == pytest.approx(0.0 if expected is None else expected), name


@given(st.lists(toolcall_result(), min_size=1, max_size=12))
def test_toolcall_figures_from_rows_equal_the_tracks_aggregate(results: list[dict[str, Any]]) -> None:
    agrees("toolcall", results, ToolCallTrack().aggregate(results))


@given(st.lists(repair_result(), min_size=1, max_size=12))
def test_repair_figures_from_rows_equal_the_tracks_aggregate(results: list[dict[str, Any]]) -> None:
    agrees("repair", results, RepairTrack().aggregate(results))


@given(st.lists(st.tuples(st.booleans(), st.booleans()), min_size=1, max_size=12))
def test_generate_figures_from_rows_equal_the_tracks_aggregate(flags: list[tuple[bool, bool]]) -> None:
    results = [{"json_valid": j, "schema_valid": j and s, "features": {}, "passed": j and s} for j, s in flags]
    agrees("generate", results, GenerateTrack().aggregate(results))


def records(track: str, passes: list[bool]) -> list[TrackRecord]:
    result = {"json_valid": True, "schema_valid": True}
    return [TrackRecord("m", f"s{i}", track, {**result, "passed": p}, passed=p) for i, p in enumerate(passes)]


def saved(tmp_path: Path, track: str, passes: list[bool]) -> baselines.Baseline:
    snapshots = baselines.snapshot_records(records(track, passes))
    path = baselines.save(baselines.build("base", snapshots, {}, {}, {}, track), tmp_path)
    return baselines.load(path)


def test_a_track_baseline_keeps_its_track_and_rows(tmp_path: Path) -> None:
    loaded = saved(tmp_path, "generate", [True, False, True, True])
    assert loaded.track == "generate"
    assert loaded.metrics["m"]["pass_rate"] == 0.75 and loaded.metrics["m"]["json_valid_rate"] == 1.0
    assert loaded.models["m"]["s1"].row == {"passed": 0.0, "json_valid": 1.0, "schema_valid": 1.0}
    raw = json.loads(loaded.path.read_text())
    raw["track"] = "poetry"
    loaded.path.write_text(json.dumps(raw))
    with pytest.raises(rundoc.RunDocError, match="unknown track 'poetry'"):
        baselines.load(loaded.path)
    raw["track"] = "generate"
    del raw["models"]["m"]["samples"][0]["row"]["passed"]
    loaded.path.write_text(json.dumps(raw))
    with pytest.raises(rundoc.RunDocError, match="row lacks passed"):
        baselines.load(loaded.path)


def test_a_figure_the_baseline_did_not_keep_could_not_be_measured(tmp_path: Path) -> None:
    """A track baseline whose rows lack a figure's counts (saved before the figure was kept) still loads; that
    figure is not compared and a check on it could not be measured, while the others are compared."""
    loaded = saved(tmp_path, "generate", [True, True, True])
    raw = json.loads(loaded.path.read_text())
    for sample in raw["models"]["m"]["samples"]:
        del sample["row"]["schema_valid"]
    loaded.path.write_text(json.dumps(raw))
    base = baselines.load(loaded.path)
    assert set(base.metrics["m"]) == {"pass_rate", "json_valid_rate"}
    now = baselines.snapshot_records(records("generate", [True, False, True]))
    checks = [parse_compare_fail("schema_compliance_rate:-0.1"), parse_compare_fail("json_valid_rate:-0.1")]
    found = compare_run(now, base, FAST, checks=checks, track="generate")
    assert set(found.models["m"].deltas) == {"pass_rate", "json_valid_rate"}
    lacking, compared = found.checks
    assert (lacking.outcome, lacking.failed) == (UNMEASURED, True)
    assert "the baseline has no schema_compliance_rate for the shared samples" in lacking.message
    assert compared.outcome == "held"


def test_an_extraction_baseline_without_a_track_key_reads_as_extraction(tmp_path: Path) -> None:
    loaded = saved(tmp_path, "generate", [True])
    raw = json.loads(loaded.path.read_text())
    del raw["track"], raw["models"]  # as a baseline saved before other tracks had them (no model, no row to check)
    raw["models"] = {}
    loaded.path.write_text(json.dumps(raw))
    assert baselines.load(loaded.path).track == "extraction"


@pytest.mark.parametrize("policy", ["fail", "warn"])
def test_a_baseline_of_another_track_measures_nothing(tmp_path: Path, policy: str) -> None:
    base = saved(tmp_path, "generate", [True, True])
    now = baselines.snapshot_records(records("repair", [True, False]))
    check = parse_compare_fail("pass_rate:-0.1")
    found = compare_run(now, base, FAST, checks=[check], policy=policy, track="repair")
    assert found.models == {}
    (result,) = found.checks
    assert (result.outcome, result.failed) == (UNMEASURED, policy == "fail")
    assert "saved from a generate run and this is a repair run" in result.message
    assert found.notes == [f"not compared: {result.message.split(': ', 1)[1].rsplit(' (', 1)[0]}"]


def test_a_figure_the_track_lacks_could_not_be_measured(tmp_path: Path) -> None:
    base = saved(tmp_path, "generate", [True, True, True])
    now = baselines.snapshot_records(records("generate", [True, False, True]))
    checks = [parse_compare_fail("arguments_f1:-0.1"), parse_compare_fail("pass_rate:-0.5")]
    found = compare_run(now, base, FAST, checks=checks, track="generate")
    lacking, held = found.checks
    assert (lacking.outcome, lacking.failed) == (UNMEASURED, True)
    assert "the generate track has no arguments_f1" in lacking.message
    assert held.outcome == "held" and held.delta is not None and held.delta.delta == pytest.approx(-1 / 3)
    model = found.models["m"]
    assert model.verdict_metric == "pass_rate" and model.verdict == "regressed"  # -1/3 is past -0.02
    assert model.buckets is not None and model.buckets.ids("regressed") == ["s1"]


def test_the_parsers_take_a_tracks_figures() -> None:
    assert parse_compare_fail("accuracy:-0.05").metric == "accuracy"
    assert parse_compare_fail("compliance:-5%").metric == "schema_compliance_rate"
    with pytest.raises(argparse.ArgumentTypeError, match="a higher accuracy is better"):
        parse_compare_fail("accuracy:+0.05")
    with pytest.raises(argparse.ArgumentTypeError, match="on the other tracks .*arguments_f1"):
        parse_compare_fail("nonsense:-0.1")
    assert parse_requirement("arguments_f1>=0.8").metric == "arguments_f1"
    assert parse_requirement("json_valid_rate>=0.9").metric == "json_valid_rate"  # the catalog's, as before
