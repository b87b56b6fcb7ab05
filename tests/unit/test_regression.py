"""The regression gate fails on real regressions and not on noise; expressions, verdicts and per-field deltas."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pytest_extractbench import SampleRecord, StatsOptions, parse_output, score_sample
from pytest_extractbench.analysis.resampled import row_keys
from pytest_extractbench.dataset import load_dataset
from pytest_extractbench.gating.baseline import Baseline, SampleSnapshot, snapshot_records
from pytest_extractbench.gating.regression import (
    IMPROVED,
    NEUTRAL,
    REGRESSED,
    Scope,
    compare_run,
    field_deltas,
    parse_compare_fail,
    parse_verdict_thresholds,
    verdict,
)
from pytest_extractbench.scoring.options import TESTS

ROOT = Path(__file__).resolve().parents[2]


# read in the tests that use them, not while pytest collects: code the package runs at collection is outside every
# test, and the mutation tool must then judge each of its mutants in a fresh import (tests/mutation/README.md)
def gold() -> dict[str, Any]:
    return {s.id: s.expected for s in load_dataset().samples}


def demo() -> dict[str, Any]:
    lines = (ROOT / "fixtures" / "predictions" / "demo.jsonl").read_text().splitlines()
    return {row["id"]: parse_output(row["output"]).value for row in map(json.loads, lines)}


FAST = StatsOptions(resamples=2000)


def leaf_paths(value: Any, path: tuple = ()) -> list[tuple]:
    """Paths of scalar leaves (arrays of scalars count as one leaf, like the scorer)."""
    if isinstance(value, dict):
        return [p for k, v in value.items() for p in leaf_paths(v, (*path, k))]
    if isinstance(value, list) and any(isinstance(v, (dict, list)) for v in value):
        return [p for i, v in enumerate(value) for p in leaf_paths(v, (*path, i))]
    return [] if value is None else [path]


def corrupt(value: Any, fraction: float, rng: np.random.Generator) -> Any:
    """A copy of ``value`` with ``fraction`` of its leaf fields replaced by wrong values."""
    value = json.loads(json.dumps(value))
    paths = leaf_paths(value)
    for i in rng.choice(len(paths), size=round(fraction * len(paths)), replace=False):
        *parents, last = paths[i]
        node = value
        for key in parents:
            node = node[key]
        old = node[last]
        if isinstance(old, bool):
            node[last] = not old
        elif isinstance(old, (int, float)):
            node[last] = old * 3 + 7
        elif isinstance(old, str):
            node[last] = "zq " + old[::-1]
        else:
            node[last] = ["zq"]
    return value


def run(outputs: dict[str, Any], model: str = "m") -> dict[str, dict[str, SampleSnapshot]]:
    records = [
        SampleRecord(
            model=model, sample_id=s.id, score=score_sample(outputs.get(s.id), s.expected, s.schema, sample_id=s.id)
        )
        for s in load_dataset().samples
    ]
    return snapshot_records(records)


def as_baseline(snapshots: dict[str, dict[str, SampleSnapshot]], provenance: dict | None = None) -> Baseline:
    return Baseline(Path("0001_base.json"), "base", "2026-01-01T00:00:00+00:00", provenance or {}, snapshots)


def checks(*exprs: str):
    return [parse_compare_fail(e) for e in exprs]


# -- the proofs -------------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("test", TESTS)
def test_identical_runs_never_fail_even_with_zero_margins(test: str) -> None:
    baseline = as_baseline(run(demo()))
    current = run(demo())  # re-scored from scratch: noise-free outputs give the same rows
    gate = checks("eqs:-0", "f1_partial:-0", "f1_strict:-0", "validity:-0", "exact_match:-0", "hallucination_rate:+0")
    for seed in range(25):
        result = compare_run(current, baseline, StatsOptions(seed=seed, resamples=500, test=test), checks=gate)
        assert not result.failures, [c.message for c in result.failures]
        deltas = result.models["m"].deltas
        assert all(d.delta == 0 and d.p_value == 1.0 for d in deltas.values())


@pytest.mark.slow
def test_noise_the_size_of_the_interval_does_not_fail_the_gate() -> None:
    # Two replicas of the same model: each gets 10% of its fields wrong, at random. Their EQS
    # differ by chance as much as the confidence interval says, sometimes beyond the margin.
    failed = naive = 0
    half_widths, deltas = [], []
    for seed in range(40):
        rng = np.random.default_rng(seed)
        baseline = run({k: corrupt(v, 0.1, rng) for k, v in gold().items()})
        current = run({k: corrupt(v, 0.1, rng) for k, v in gold().items()})
        result = compare_run(
            current, as_baseline(baseline), StatsOptions(seed=seed, resamples=2000), checks=checks("eqs:-0.01")
        )
        delta = result.models["m"].deltas["extraction_quality_score"]
        deltas.append(abs(delta.delta))
        half_widths.append((delta.ci.high - delta.ci.low) / 2)
        naive += delta.delta < -0.01  # a gate on the point delta alone
        failed += bool(result.failures)
    assert np.mean(deltas) < np.mean(half_widths)  # the differences are noise of CI size...
    assert naive >= 10  # ...that a plain threshold keeps mistaking for regressions
    assert failed <= 2  # at alpha 0.05 (two-sided) about 1 in 40 is expected by chance


@pytest.mark.slow
def test_a_real_regression_always_fails_the_gate() -> None:
    baseline = as_baseline(run(demo()))
    for seed in range(20):
        rng = np.random.default_rng(seed)
        current = run({k: corrupt(v, 0.1, rng) for k, v in demo().items()})  # 10% of the fields corrupted
        result = compare_run(current, baseline, StatsOptions(seed=seed, resamples=2000), checks=checks("eqs:-0.02"))
        (failure,) = result.failures
        delta = failure.delta
        assert delta.delta < -0.02 and delta.p_value < 0.05 and delta.ci.high < 0
        assert result.models["m"].verdict == REGRESSED


def _rows(eqs: list[float]) -> dict[str, SampleSnapshot]:
    rows = {}
    for i, value in enumerate(eqs):
        row = dict.fromkeys(row_keys(), 0.0)
        row.update(eqs=value, schema_valid=1.0, json_valid=1.0)
        rows[f"s{i:03d}"] = SampleSnapshot(row)
    return rows


def test_a_drop_beyond_the_margin_passes_when_samples_move_both_ways() -> None:
    base = [0.6] * 52
    # 20 samples lose 0.4, 16 gain 0.4: EQS falls by 0.031 (> 0.02), a sign pattern chance makes easily
    mixed = [0.2] * 20 + [1.0] * 16 + [0.6] * 16
    result = compare_run({"m": _rows(mixed)}, as_baseline({"m": _rows(base)}), FAST, checks=checks("eqs:-0.02"))
    (check,) = result.checks
    assert check.exceeds_margin and not check.failed
    assert check.message.startswith("within noise model 'm'") and "not significant at 0.05" in check.message
    # the same drop on every affected sample is a regression
    one_way = [0.6 - 1.6 / 20] * 20 + [0.6] * 32
    result = compare_run({"m": _rows(one_way)}, as_baseline({"m": _rows(base)}), FAST, checks=checks("eqs:-0.02"))
    assert result.failures


def test_the_failure_message_names_metric_values_delta_ci_and_p_value() -> None:
    baseline = as_baseline(run(demo()))
    current = run({k: corrupt(v, 0.2, np.random.default_rng(1)) for k, v in demo().items()})
    result = compare_run(current, baseline, FAST, checks=checks("field_f1_partial:-2%"))
    (failure,) = result.failures
    d = failure.delta
    message = failure.message
    assert message.startswith("REGRESSION model 'm': field_f1_partial")
    assert f"{d.b:.3f} -> {d.a:.3f}" in message and f"delta {d.delta:+.3f}" in message
    assert f"[95% CI: {d.ci.low:+.3f}, {d.ci.high:+.3f}]" in message
    assert "p = " in message and "52 shared samples" in message and "(field_f1_partial:-2%)" in message
    assert failure.allowed_drop == pytest.approx(0.02 * d.b)  # relative margin


def test_different_sample_sets_are_paired_on_the_intersection_and_say_so() -> None:
    current = run(demo())
    baseline = {"m": dict(list(current["m"].items())[:40])}
    result = compare_run(current, as_baseline(baseline), FAST, checks=checks("eqs:-0.02"))
    comparison = result.models["m"]
    assert len(comparison.shared) == 40 and len(comparison.only_current) == 12
    assert any("paired on the 40 samples both runs scored (12 only in this run" in n for n in result.notes)
    assert comparison.as_dict()["n_shared"] == 40 and not result.failures


def test_a_subset_gate_catches_a_regression_the_overall_margin_hides() -> None:
    medical = frozenset(s.id for s in load_dataset().samples if s.meta["topic"] == "medical")
    broken = {k: (corrupt(v, 0.5, np.random.default_rng(0)) if k in medical else v) for k, v in demo().items()}
    scope = Scope("subset 'medical'", medical, tuple(checks("eqs:-0.05")))
    result = compare_run(run(broken), as_baseline(run(demo())), FAST, checks=checks("eqs:-0.2"), scopes={"m": [scope]})
    overall, medical_check = result.checks
    assert not overall.failed
    assert medical_check.failed and medical_check.scope == "subset 'medical'"
    assert medical_check.delta.n == 6 and "subset 'medical'" in medical_check.message


def test_models_are_paired_by_name_or_as_the_only_model() -> None:
    baseline = as_baseline(run(demo(), model="old"))
    result = compare_run(run(demo(), model="new"), baseline, FAST, checks=checks("eqs:-0.02"))
    assert result.models["new"].baseline_model == "old" and not result.failures
    assert any("compared with the baseline's only model 'old'" in n for n in result.notes)
    two = {**run(demo(), model="a"), **run(demo(), model="b")}
    result = compare_run(
        two, as_baseline({**run(demo(), model="a"), **run(demo(), model="c")}), FAST, checks=checks("eqs:-0.02")
    )
    (unchecked,) = result.failures  # a gate that cannot run is not a pass
    assert unchecked.model == "b" and "COULD NOT BE MEASURED" in unchecked.message


# -- expressions, verdicts, fields ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("expr", "metric", "margin", "relative"),
    [
        ("eqs:-0.02", "extraction_quality_score", 0.02, False),
        ("field_f1_partial:-2%", "field_f1_partial", 0.02, True),
        ("f1_strict:0.05", "field_f1_strict", 0.05, False),
        ("hallucination_rate:+0.01", "hallucination_rate", 0.01, False),
        ("  validity:-.5%  ", "schema_validity_rate", 0.005, True),
    ],
)
def test_parse_compare_fail(expr: str, metric: str, margin: float, relative: bool) -> None:
    check = parse_compare_fail(expr)
    assert (check.metric, check.relative) == (metric, relative)
    assert check.margin == pytest.approx(margin)


@pytest.mark.parametrize(
    ("expr", "message"),
    [
        ("eqs", "expected METRIC:MARGIN"),
        ("f9:-0.1", "unknown metric 'f9'"),
        ("eqs:-abc", "must be a number"),
        ("eqs:+0.02", "a higher extraction_quality_score is better; give the tolerated worsening as eqs:-0.02"),
        ("hallucination_rate:-0.01", "a lower hallucination_rate is better"),
        ("eqs:-1e-2", "must be a number"),
    ],
)
def test_parse_compare_fail_rejects_bad_expressions(expr: str, message: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match=message.replace("+", r"\+")):
        parse_compare_fail(expr)


def test_allowed_drop() -> None:
    assert parse_compare_fail("eqs:-2%").allowed(0.8) == pytest.approx(0.016)
    assert parse_compare_fail("eqs:-0.02").allowed(0.8) == 0.02


@pytest.mark.parametrize(
    ("delta", "higher_is_better", "expected"),
    [
        (0.011, True, IMPROVED),
        (0.01, True, NEUTRAL),
        (-0.02, True, NEUTRAL),
        (-0.021, True, REGRESSED),
        (0.03, False, REGRESSED),
        (-0.03, False, IMPROVED),
    ],
)
def test_baseline_verdict(delta: float, higher_is_better: bool, expected: str) -> None:
    assert verdict(delta, (0.01, -0.02), higher_is_better) == expected


def test_verdict_thresholds_parse() -> None:
    assert parse_verdict_thresholds("0.01,-0.02") == (0.01, -0.02)
    assert parse_verdict_thresholds("0.05,0.1") == (0.05, -0.1)
    with pytest.raises(argparse.ArgumentTypeError):
        parse_verdict_thresholds("0.01")


def test_field_deltas_follow_partial_credit_and_invalid_output_earns_nothing() -> None:
    def snap(valid: bool, *fields: tuple[str, str]) -> SampleSnapshot:
        row = dict.fromkeys(row_keys(), 0.0)
        row["schema_valid"] = float(valid)
        return SampleSnapshot(row, tuple((path, category, 1.0) for path, category in fields))

    baseline = [
        snap(True, ("items[0].sku", "exact"), ("name", "exact")),
        snap(True, ("items[0].sku", "exact"), ("items[1].sku", "exact"), ("name", "partial")),
    ]
    current = [
        snap(True, ("items[0].sku", "partial"), ("name", "exact")),
        snap(False, ("items[0].sku", "exact"), ("items[1].sku", "missed"), ("name", "exact")),
    ]
    deltas = field_deltas(current, baseline)
    # items[].sku now: credit 0.5 (partial) + 0 (invalid sample) + 0 (missed) over 2 predicted, 3 expected
    sku = deltas["items[].sku"]
    precision, recall = 0.5 / 2, 0.5 / 3
    assert sku["current"] == pytest.approx(2 * precision * recall / (precision + recall))
    assert sku["baseline"] == 1.0 and sku["expected"] == 3
    # name: baseline 1.5/2 -> 0.75; current 1/2 (the invalid sample's exact earns nothing)
    assert deltas["name"]["delta"] == pytest.approx(0.5 - 0.75)
    assert list(deltas) == ["items[].sku", "name"]  # worst first
