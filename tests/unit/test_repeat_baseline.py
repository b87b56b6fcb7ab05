"""pass@k and pass^k against a baseline: pass counts saved in the file, both runs' estimators at one k, the paired
test and the compare-fail gate, and baselines without counts (older format, or no repeats) never holding a check."""

from __future__ import annotations

import argparse
import json
from math import comb
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_extractbench import SampleRecord, StatsOptions, score_sample
from pytest_extractbench.analysis.repeats import sample_repeats
from pytest_extractbench.core import rundoc
from pytest_extractbench.gating import baseline as baselines
from pytest_extractbench.gating.baseline import SampleSnapshot
from pytest_extractbench.gating.outcomes import HELD, MISSED, UNMEASURED
from pytest_extractbench.gating.regression import Scope, compare_run, parse_compare_fail
from pytest_extractbench.gating.repeated import compare_repeats

SCHEMA = {"type": "object", "properties": {"a": {"type": "integer"}}}
FAST = StatsOptions(resamples=2000)
HAT, AT = parse_compare_fail("pass^k:-0.1"), parse_compare_fail("pass@k:-0.05")


def record(sample_id: str, runs: int, passed: int) -> SampleRecord:
    """A sample scored perfectly on its first run, with ``passed`` of its ``runs`` runs passing."""
    score = score_sample('{"a": 1}', {"a": 1}, SCHEMA, sample_id=sample_id)
    passes = [True] * passed + [False] * (runs - passed)
    diagnostics = {"repeats": sample_repeats(passes, [None] * runs)} if runs > 1 else {}
    return SampleRecord(model="m", sample_id=sample_id, score=score, passed=True, diagnostics=diagnostics)


def saved(tmp_path: Path, counts: list[tuple[int, int]], *, old_format: bool = False) -> baselines.Baseline:
    """A baseline file written from records with these (runs, passed) counts, read back; ``old_format`` rewrites it
    as format 1 wrote it (no counts)."""
    records = [record(f"s{i}", n, c) for i, (n, c) in enumerate(counts)]
    document = baselines.build("base", baselines.snapshot_records(records), {}, {}, {})
    path = baselines.save(document, tmp_path)
    if old_format:
        raw = json.loads(path.read_text())
        raw["format_version"] = 1
        for sample in raw["models"]["m"]["samples"]:
            sample.pop("repeats", None)
        path.write_text(json.dumps(raw))
    return baselines.load(path)


def current(counts: list[tuple[int, int]]) -> baselines.Snapshots:
    return baselines.snapshot_records([record(f"s{i}", n, c) for i, (n, c) in enumerate(counts)])


def test_the_file_keeps_each_repeated_samples_pass_count(tmp_path: Path) -> None:
    loaded = saved(tmp_path, [(3, 2), (1, 1), (4, 0)])
    raw = json.loads(loaded.path.read_text())
    assert raw["format_version"] == rundoc.FORMAT_VERSION[rundoc.BASELINE] == 2
    assert [s.get("repeats") for s in raw["models"]["m"]["samples"]] == [
        {"runs": 3, "passed": 2},
        None,
        {"runs": 4, "passed": 0},
    ]
    assert [loaded.models["m"][f"s{i}"].repeats for i in range(3)] == [(3, 2), None, (4, 0)]
    assert loaded.keeps_repeats


def test_both_runs_are_taken_at_the_smaller_k(tmp_path: Path) -> None:
    # baseline: 5 runs, 4 pass -> pass^3 = C(4,3)/C(5,3) = 0.4, pass@3 = 1 - C(1,3)/C(5,3) = 1
    # this run: 3 runs, all pass on s0-s4 (pass^3 = 1) and one passes on s5-s9 (pass^3 = 0, pass@3 = 1)
    base = saved(tmp_path, [(5, 4)] * 10)
    result = compare_run(current([(3, 3)] * 5 + [(3, 1)] * 5), base, FAST, checks=[HAT, AT])
    comparison = result.models["m"]
    hat, at = comparison.deltas["pass_hat_k"], comparison.deltas["pass_at_k"]
    assert hat.b == pytest.approx(comb(4, 3) / comb(5, 3)) and hat.a == pytest.approx(0.5)
    assert hat.delta == pytest.approx(0.1) and hat.n == 10
    assert (at.a, at.b, at.delta) == (1.0, 1.0, 0.0)
    assert comparison.as_dict()["repeats"] == {"compared": True, "runs": 3, "samples": 10}
    assert "model 'm': pass@3 / pass^3 compared on the 10 samples both runs ran at least 3 times" in result.notes
    assert [c.outcome for c in result.checks] == [HELD, HELD] and not result.failures


def test_a_significant_drop_in_pass_hat_k_fails_the_gate(tmp_path: Path) -> None:
    # every sample passed all 3 runs; now 8 of 10 pass only one: pass^3 1 -> 0.2, pass@3 stays 1
    base = saved(tmp_path, [(3, 3)] * 10)
    result = compare_run(current([(3, 1)] * 8 + [(3, 3)] * 2), base, FAST, checks=[HAT, AT])
    hat, at = result.checks
    assert (hat.metric, hat.outcome, hat.failed) == ("pass_hat_k", MISSED, True)
    assert hat.delta is not None and hat.delta.delta == pytest.approx(-0.8)
    # exact permutation test: 8 samples differ, each by -1, so only "no swap" and "all swapped" are as extreme
    assert hat.delta.p_value == pytest.approx(2 / 2**8) and hat.delta.significant
    assert hat.message.startswith("REGRESSION model 'm': pass_hat_k 1.000 -> 0.200")
    assert (at.outcome, at.failed) == (HELD, False)
    assert result.failures == [hat]


def test_a_subsets_check_compares_only_its_samples(tmp_path: Path) -> None:
    # s0-s3 lose every pass^3 (1 -> 0); s4-s11 are unchanged: the subset of s4-s11 holds, the whole run does not
    base = saved(tmp_path, [(3, 3)] * 12)
    steady = Scope("steady", frozenset(f"s{i}" for i in range(4, 12)), (HAT,))
    result = compare_run(current([(3, 1)] * 4 + [(3, 3)] * 8), base, FAST, checks=[HAT], scopes={"m": [steady]})
    whole, scoped = result.checks
    assert (whole.scope, whole.delta.delta if whole.delta else None) == (None, pytest.approx(-4 / 12))
    assert (scoped.scope, scoped.outcome, scoped.delta.n if scoped.delta else None) == ("steady", HELD, 8)
    assert scoped.delta is not None and scoped.delta.delta == 0


def test_a_baseline_saved_before_counts_is_not_measured(tmp_path: Path) -> None:
    base = saved(tmp_path, [(3, 3)] * 4, old_format=True)
    assert not base.keeps_repeats and all(s.repeats is None for s in base.models["m"].values())
    result = compare_run(current([(3, 1)] * 4), base, FAST, checks=[HAT])
    (check,) = result.checks
    assert (check.outcome, check.failed) == (UNMEASURED, True)
    assert "not measured in the baseline" in check.message and "baseline format 1" in check.message
    assert "pass_hat_k" not in result.models["m"].deltas
    assert any("pass@k / pass^k not compared: not measured in the baseline" in note for note in result.notes)
    warned = compare_run(current([(3, 1)] * 4), base, FAST, checks=[HAT], policy="warn")
    assert (warned.checks[0].outcome, warned.checks[0].failed) == (UNMEASURED, False)


def test_a_baseline_run_once_or_a_run_without_repeats_is_not_measured(tmp_path: Path) -> None:
    once = saved(tmp_path / "once", [(1, 1)] * 3)
    (check,) = compare_run(current([(3, 2)] * 3), once, FAST, checks=[AT]).checks
    assert check.outcome == UNMEASURED and "its run asked each sample once" in check.message
    repeated = saved(tmp_path / "repeated", [(3, 2)] * 3)
    result = compare_run(current([(1, 1)] * 3), repeated, FAST, checks=[AT])
    assert (
        result.checks[0].outcome == UNMEASURED and "this run asked each shared sample once" in result.checks[0].message
    )
    # no repeats anywhere and no check: nothing about pass@k is said
    plain = compare_run(current([(1, 1)] * 3), once, FAST)
    assert not any("pass@k" in note for note in plain.notes) and "repeats" not in plain.models["m"].as_dict()


def test_compare_fail_takes_pass_at_k_and_pass_hat_k() -> None:
    assert (AT.metric, AT.margin, AT.relative) == ("pass_at_k", 0.05, False)
    relative = parse_compare_fail("pass^k:-5%")
    assert (relative.metric, relative.margin, relative.relative) == ("pass_hat_k", 0.05, True)
    with pytest.raises(argparse.ArgumentTypeError, match=r"a higher pass_at_k is better.*pass@k:-0\.05"):
        parse_compare_fail("pass@k:+0.05")
    with pytest.raises(argparse.ArgumentTypeError, match=r"unknown metric 'pass@q'.*pass@k, pass\^k"):
        parse_compare_fail("pass@q:-0.05")


counts = st.integers(2, 6).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n)))


@given(st.lists(st.tuples(counts, counts), min_size=1, max_size=12))
def test_the_delta_is_the_mean_of_per_sample_estimators(pairs: list[tuple[tuple[int, int], tuple[int, int]]]) -> None:
    now = {f"s{i}": SampleSnapshot({}, repeats=a) for i, (a, _) in enumerate(pairs)}
    then = {f"s{i}": SampleSnapshot({}, repeats=b) for i, (_, b) in enumerate(pairs)}
    ids = sorted(now)
    found = compare_repeats(now, then, ids, FAST, keeps_repeats=True, rng=np.random.default_rng(0))
    k = min(n for pair in pairs for n, _ in pair)
    assert found.k == k and found.why is None
    hat = found.deltas["pass_hat_k"]
    expect_a = sum(comb(now[i].repeats[1], k) / comb(now[i].repeats[0], k) for i in ids) / len(ids)  # type: ignore[index]
    expect_b = sum(comb(then[i].repeats[1], k) / comb(then[i].repeats[0], k) for i in ids) / len(ids)  # type: ignore[index]
    assert hat.a == pytest.approx(expect_a) and hat.b == pytest.approx(expect_b)
    assert hat.delta == pytest.approx(expect_a - expect_b)
    # the same counts on both sides: no difference, and nothing significant
    same = compare_repeats(now, now, ids, FAST, keeps_repeats=True, rng=np.random.default_rng(0))
    assert all(d.delta == 0 and not d.significant for d in same.deltas.values())
