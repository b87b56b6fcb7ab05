"""The baseline comparison's modules (gating/baseline.py, regression.py, subsets.py) where a mutation run found no
test looking: what a baseline keeps, a check's margin and record, one model's and the run's comparison, subset
conditions and their configuration. A survivor there can hide a regression from the reviewer or from the gate. Every
value is worked out by hand in the comments."""

from __future__ import annotations

import argparse
import math
import subprocess
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from pytest_extractbench import SampleRecord, StatsOptions, score_sample
from pytest_extractbench.analysis.resampled import MetricDelta, sample_row
from pytest_extractbench.analysis.stats import Interval
from pytest_extractbench.gating.baseline import (
    Baseline,
    SampleSnapshot,
    build,
    file_hash,
    git_info,
    load,
    provenance,
    repeat_counts,
    save,
    snapshot_records,
    stored,
)
from pytest_extractbench.gating.buckets import Buckets
from pytest_extractbench.gating.outcomes import HELD, MISSED, UNMEASURED
from pytest_extractbench.gating.regression import (
    EQS,
    IMPROVED,
    NEUTRAL,
    NOT_COMPARABLE,
    PASS_RATE,
    REGRESSED,
    CheckResult,
    ModelComparison,
    RunComparison,
    Scope,
    compare_model,
    compare_run,
    evaluate_check,
    pair_models,
    parse_compare_fail,
    parse_verdict_thresholds,
    verdict,
)
from pytest_extractbench.gating.repeated import RepeatComparison
from pytest_extractbench.gating.subsets import (
    Condition,
    GroupBy,
    SubsetConfig,
    SubsetConfigError,
    load_subsets,
    members,
)

# -- baseline: what a snapshot keeps, and the counts of repeats ----------------------------------------------------------


def test_a_snapshot_writes_only_the_facts_it_has() -> None:
    bare = SampleSnapshot({"eqs": 1.0})  # no hash, no pass/fail, no repeats: none of them written, not even as 0
    assert bare.as_dict("s") == {"sample_id": "s", "row": {"eqs": 1.0}, "fields": []}
    full = SampleSnapshot({"eqs": 1.0}, (("a", "exact", 1.0),), "h", False, (3, 2))
    assert full.as_dict("s") == {
        "sample_id": "s",
        "row": {"eqs": 1.0},
        "fields": [["a", "exact", 1.0]],
        "sample_hash": "h",
        "passed": False,
        "repeats": {"runs": 3, "passed": 2},
    }


SCHEMA = {"type": "object", "properties": {"a": {"type": "string"}}}


def test_a_snapshot_of_a_score_keeps_field_scores_to_six_decimals_and_nothing_it_was_not_given() -> None:
    score = score_sample({"a": "abcdefh"}, {"a": "abcdefg"}, SCHEMA)
    raw = score.fields[0].score
    assert round(raw, 6) != round(raw, 7)  # a score whose seventh decimal matters (0.2571428...)
    snapshot = SampleSnapshot.from_score(score)
    assert snapshot.fields == (("a", score.fields[0].category, round(raw, 6)),)
    assert (snapshot.sample_hash, snapshot.passed, snapshot.repeats) == (None, None, None)


def test_a_record_without_pass_fail_or_hashes_gives_a_snapshot_without_them() -> None:
    score = score_sample({"a": "x"}, {"a": "x"}, SCHEMA)
    record = SimpleNamespace(model="m", sample_id="s", score=score)  # duck-typed: no passed, no diagnostics
    snapshot = snapshot_records([record])["m"]["s"]
    assert (snapshot.sample_hash, snapshot.passed, snapshot.repeats) == (None, None, None)
    kept = SampleRecord(
        model="m", sample_id="s", score=score, passed=True, diagnostics={"repeats": {"runs": 2, "passed": 1}}
    )
    snapshot = snapshot_records([kept], {"s": "h"})["m"]["s"]
    assert (snapshot.sample_hash, snapshot.passed, snapshot.repeats) == ("h", True, (2, 1))


@pytest.mark.parametrize(
    ("found", "counts"),
    [
        ({"runs": 3, "passed": 2}, (3, 2)),
        ({"runs": 2, "passed": 0}, (2, 0)),  # the smallest repeat: two runs, none passed
        ({"runs": 2, "passed": 2}, (2, 2)),
        ({"runs": 1, "passed": 1}, None),  # one run is no repeat
        ({"runs": 0, "passed": 0}, None),
        ({"runs": 2, "passed": 3}, None),  # more passes than runs
        ({"runs": 2, "passed": -1}, None),
        ({"runs": 3.0, "passed": 1}, None),  # counts are whole numbers, not floats
        ({"runs": 3, "passed": 1.0}, None),
        ({"runs": "3", "passed": 1}, None),
        ({"runs": True, "passed": 1}, None),  # a bool is an int to isinstance, but no count
        ({"runs": 3, "passed": True}, None),
        ({"runs": 3}, None),
        ([3, 1], None),  # not a mapping
        (None, None),
    ],
)
def test_repeat_counts_accept_only_whole_counts_of_a_real_repeat(found: object, counts: tuple[int, int] | None) -> None:
    assert repeat_counts(found) == counts  # 0 for None would fail: 0 != None


def test_a_baseline_describes_its_file_date_and_short_commit() -> None:
    baseline = Baseline(
        Path("b/0003_main.json"), "main", "2026-05-01T10:00:00+00:00", {"git": {"commit": "abc1234567890"}}, {}
    )
    assert baseline.describe() == "'main' (0003_main.json, 2026-05-01T10:00:00+00:00, commit abc1234567)"
    plain = Baseline(Path("0001_x.json"), "x", "2026-05-01", {}, {})
    assert plain.describe() == "'x' (0001_x.json, 2026-05-01)"


def test_file_hash_is_the_sha256_of_the_bytes_or_none(tmp_path: Path) -> None:
    path = tmp_path / "f.txt"
    path.write_bytes(b"abc")
    # the FIPS 180-2 test vector for "abc"
    assert file_hash(path) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    assert file_hash(tmp_path / "missing") is None


def test_provenance_without_a_version_or_git_records_none_for_them(tmp_path: Path) -> None:
    dataset = SimpleNamespace(name="d", source="s", samples=[])
    found = provenance(models=["m"], dataset=dataset, rootdir=tmp_path)  # tmp_path is outside every checkout
    assert (found["package_version"], found["git"], found["options"], found["outputs"]) == (None, None, {}, [])
    assert found["dataset"]["num_samples"] == 0


def test_git_info_records_no_branch_when_git_cannot_tell_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    def answers(branch: Any) -> Any:
        def run(args: list[str], **_: Any) -> SimpleNamespace:
            if args[3:] == ["rev-parse", "HEAD"]:
                return SimpleNamespace(returncode=0, stdout="abc123\n")
            if args[3:5] == ["status", "--porcelain"]:
                return SimpleNamespace(returncode=0, stdout=" M f.py\n")
            if isinstance(branch, Exception):
                raise branch
            return SimpleNamespace(returncode=branch, stdout="")

        return run

    # git answered the commit and a dirty status, then failed on the branch (exit 128) or could not be run at all
    for branch in (128, OSError("no git"), subprocess.TimeoutExpired("git", 10)):
        monkeypatch.setattr(subprocess, "run", answers(branch))
        assert git_info(tmp_path) == {"commit": "abc123", "dirty": True, "branch": None}


def test_stored_lists_only_numbered_files(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("not a baseline")
    (tmp_path / "0002_folder.json").mkdir()  # named like one, but a directory
    (tmp_path / "0001_main.json").write_text("{}")
    assert stored(tmp_path) == [(1, "main", tmp_path / "0001_main.json")]


def test_an_older_baseline_file_loads_with_its_rows_completed_and_its_provenance(tmp_path: Path) -> None:
    score = score_sample({"a": "x"}, {"a": "x"}, SCHEMA)  # a perfect sample: EQS 1
    document = build("old", snapshot_records([SampleRecord("m", "s", score)]), {}, {"git": None, "who": "ci"}, {})
    (sample,) = document["models"]["m"]["samples"]
    for key in ("perfect", "zero_score"):  # saved before these were kept: they follow from its EQS
        del sample["row"][key]
    sample.pop("passed", None)
    path = save(document, tmp_path)
    loaded = load(path)
    snapshot = loaded.models["m"]["s"]
    # EQS 1.0 >= 1 - tolerance: perfect; 1.0 <= tolerance fails: no zero score
    assert (snapshot.row["perfect"], snapshot.row["zero_score"]) == (1.0, 0.0)
    assert snapshot.passed is None  # not 0: the file never said
    assert loaded.provenance == {"git": None, "who": "ci"}


# -- regression: expressions, a check's record and its margin ------------------------------------------------------


def test_a_compare_fail_expression_needs_a_metric_before_the_colon() -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="expected METRIC:MARGIN"):
        parse_compare_fail(":-0.02")


@pytest.mark.parametrize("text", ["nan,-0.02", "0.01,inf", "inf,-0.02", "-0.01,-0.02"])
def test_verdict_thresholds_must_be_finite_with_a_non_negative_improvement(text: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match="expected IMPROVE >= 0 and a finite REGRESS"):
        parse_verdict_thresholds(text)


def test_an_improvement_threshold_of_zero_is_allowed() -> None:
    assert parse_verdict_thresholds("0,0.02") == (0.0, -0.02)  # REGRESS is a drop whatever its sign


def test_a_delta_that_is_not_a_number_is_not_comparable() -> None:
    assert verdict(math.nan, (0.01, -0.02)) == NOT_COMPARABLE


def delta(a: float, b: float, change: float, *, significant: bool = True, metric: str = EQS) -> MetricDelta:
    ci = Interval(change, change - 0.01, change + 0.01, 0.95, "paired percentile bootstrap", 1000, 30)
    return MetricDelta(metric, a, b, change, ci, 0.001, "permutation", {}, significant, 30, True)


def test_a_drop_equal_to_the_margin_is_within_it_despite_float_rounding() -> None:
    check = parse_compare_fail("eqs:-0.02")
    # 0.48 - 0.5 = -0.020000000000000018 in floats: 2e-17 past the margin, far under the 1e-12 tolerance
    result = evaluate_check(check, delta(0.48, 0.5, 0.48 - 0.5), model="m", scope=None, alpha=0.05)
    assert (result.failed, result.exceeds_margin, result.outcome) == (False, False, HELD)
    # a margin of 0: a drop of exactly the tolerance is not past it, a drop of 0.001 is
    zero = parse_compare_fail("eqs:-0")
    assert not evaluate_check(zero, delta(0.0, 1e-12, -1e-12), model="m", scope=None, alpha=0.05).failed
    assert evaluate_check(zero, delta(0.499, 0.5, -0.001), model="m", scope=None, alpha=0.05).failed


@pytest.mark.parametrize(
    ("a", "b", "side"),
    [(0.5, math.nan, "the baseline"), (math.inf, 0.5, "this run"), (math.nan, math.nan, "the baseline")],
)
def test_a_check_on_a_value_that_is_not_a_number_fails_as_unmeasured(a: float, b: float, side: str) -> None:
    result = evaluate_check(parse_compare_fail("eqs:-0.02"), delta(a, b, a - b), model="m", scope=None, alpha=0.05)
    assert (result.failed, result.outcome, result.allowed_drop, result.exceeds_margin) == (
        True,
        UNMEASURED,
        None,
        False,
    )
    assert f"{side} has no numeric value for it" in result.message


def test_a_check_result_without_a_delta_writes_and_reads_back_as_such() -> None:
    bare = CheckResult("eqs:-0.02", EQS, "m", None, True, "COULD NOT BE MEASURED", outcome=UNMEASURED)
    written = bare.as_dict()
    assert written == {
        "check": "eqs:-0.02",
        "outcome": UNMEASURED,
        "metric": EQS,
        "model": "m",
        "scope": None,
        "failed": True,
        "exceeds_margin": False,
        "allowed_drop": None,
        "message": "COULD NOT BE MEASURED",
    }
    read = CheckResult.from_dict(written)
    assert (read.delta, read.outcome, read.failed) == (None, UNMEASURED, True)  # not re-derived as "missed"


def test_a_check_result_with_a_delta_round_trips_through_metrics_json() -> None:
    found = delta(0.4, 0.5, -0.1, metric="hallucination_rate")
    result = CheckResult("x", "hallucination_rate", "m", "subset 'a'", True, "msg", found, 0.02, True)
    written = result.as_dict()
    assert (written["baseline"], written["current"], written["delta"], written["n_shared"]) == (0.5, 0.4, -0.1, 30)
    assert (written["p_value"], written["test"], written["significant"]) == (0.001, "permutation", True)
    assert written["ci"]["low"] == -0.1 - 0.01
    read = CheckResult.from_dict(written)
    assert read.delta is not None
    assert (read.delta.a, read.delta.b, read.delta.delta, read.delta.n) == (0.4, 0.5, -0.1, 30)
    assert read.delta.higher_is_better is False  # from the catalog: a lower hallucination rate is better
    assert (read.allowed_drop, read.exceeds_margin, read.outcome) == (0.02, True, MISSED)


def test_a_check_read_back_without_a_sample_count_or_a_known_metric() -> None:
    written = {**CheckResult("x", "custom", "m", None, False, "ok", delta(0.5, 0.5, 0.0)).as_dict()}
    del written["n_shared"]
    read = CheckResult.from_dict(written)
    assert read.delta is not None
    assert (read.delta.n, read.delta.higher_is_better) == (0, True)  # no count: 0; unknown metric: higher is better


# -- regression: one model's comparison and the run's ---------------------------------------------------------------

FAST = StatsOptions(resamples=200)


def perfect_row() -> dict[str, Any]:
    """A perfect sample's row: every quantity present (made in the test: see ``rows``)."""
    return sample_row(score_sample({"a": "x"}, {"a": "x"}, SCHEMA))


def rows(eqs: float, ids: Sequence[str] = ("s0", "s1", "s2", "s3"), **extra: Any) -> dict[str, SampleSnapshot]:
    # a row made while pytest collects would run the scorer outside every test (tests/mutation/README.md)
    return {i: SampleSnapshot({**perfect_row(), "eqs": eqs}, **extra) for i in ids}


def test_a_model_comparison_written_with_its_defaults() -> None:
    comparison = ModelComparison("m", "m", ["s"], [], [], {}, {}, NEUTRAL)
    written = comparison.as_dict()
    assert written["paired_on"] == "unchanged samples (same id and content hash)"  # hashed unless told otherwise
    assert written["samples"]["checked"] is True
    # no EQS delta: no accuracies; no buckets, no repeats, no verdict metric besides EQS written
    assert (written["baseline_accuracy"], written["candidate_accuracy"], written["delta"]) == (None, None, None)
    assert not {"buckets", "repeats", "verdict_metric"} & set(written)
    assert comparison.failed == []


def test_a_model_comparison_written_with_everything_set() -> None:
    found = delta(0.6, 0.8, -0.2, metric=PASS_RATE)
    failing = CheckResult("x", PASS_RATE, "m", None, True, "REGRESSION")
    comparison = ModelComparison(
        "m", "m", ["s"], ["extra"], [], {PASS_RATE: found}, {}, REGRESSED, [failing], hashed=False,
        buckets=Buckets(0.05, {}), repeats=RepeatComparison({}, why="w"), verdict_metric=PASS_RATE,
    )  # fmt: skip
    written = comparison.as_dict()
    assert written["paired_on"] == "shared sample ids (the sample sets differ)"  # one sample only in this run
    assert written["verdict_metric"] == PASS_RATE
    assert (written["baseline_accuracy"], written["candidate_accuracy"], written["delta"]) == (0.8, 0.6, -0.2)
    assert written["buckets"]["counts"]["regressed"] == 0
    assert written["repeats"] == {"compared": False, "reason": "w"}
    assert comparison.failed == [failing]


def test_compare_model_reads_a_verdict_with_the_default_thresholds() -> None:
    # every sample's EQS 0.5 -> 0.55: +0.05 > +0.01 improves; 0.5 -> 0.45: -0.05 < -0.02 regresses
    improved = compare_model("m", rows(0.55), rows(0.5), FAST)
    assert (improved.verdict, improved.hashed) == (IMPROVED, True)
    assert compare_model("m", rows(0.45), rows(0.5), FAST).verdict == REGRESSED
    assert compare_model("m", rows(0.505), rows(0.5), FAST).verdict == NEUTRAL  # +0.005: within both


def test_pass_at_k_against_a_baseline_that_asked_once_says_so() -> None:
    current = rows(1.0, repeats=(3, 2))
    compared = compare_model("m", current, rows(1.0), FAST)  # the baseline's format keeps counts by default
    assert compared.repeats is not None
    assert compared.repeats.why == (
        "not measured in the baseline: its run asked each sample once (save it from a run with "
        "--extractbench-repeats N, N >= 2)"
    )


def test_pass_at_k_deltas_are_the_same_every_time_the_same_runs_are_compared() -> None:
    ids = [f"s{i}" for i in range(40)]
    current = {i: SampleSnapshot(perfect_row(), repeats=(5, n % 6)) for n, i in enumerate(ids)}
    baseline = {i: SampleSnapshot(perfect_row(), repeats=(4, (3 * n) % 5)) for n, i in enumerate(ids)}
    first, again = (compare_model("m", current, baseline, FAST).deltas for _ in range(2))
    for name in ("pass_at_k", "pass_hat_k"):  # the bootstrap and permutation draws are seeded, not fresh
        assert first[name].ci == again[name].ci and first[name].p_value == again[name].p_value


def test_a_scope_without_shared_samples_names_itself_in_the_unmeasured_message() -> None:
    scope = Scope("subset 'tiny'", frozenset({"elsewhere"}), (parse_compare_fail("eqs:-0.02"),))
    result = compare_model("m", rows(0.5), rows(0.5), FAST, scopes=[scope])
    (check,) = result.checks
    assert check.message == (
        "COULD NOT BE MEASURED model 'm', subset 'tiny': no sample in common with the baseline (eqs:-0.02)"
    )
    assert (check.scope, check.failed, check.outcome) == ("subset 'tiny'", True, UNMEASURED)


def test_models_pair_by_name_unless_each_run_has_one() -> None:
    assert pair_models(["a", "b"], ["a"]) == {"a": "a", "b": None}
    assert pair_models(["a"], ["a", "b"]) == {"a": "a"}
    assert pair_models(["x"], ["y"]) == {"x": "y"}


def base(models: dict[str, dict[str, SampleSnapshot]], track: str = "extraction") -> Baseline:
    return Baseline(Path("0001_b.json"), "b", "2026-01-01", {}, models, track=track)


def test_a_run_notes_a_model_missing_from_the_baseline_and_checks_it_as_unmeasured() -> None:
    current = {"m": rows(0.5), "other": rows(0.5)}
    result = compare_run(current, base({"m": rows(0.5)}), FAST, checks=[parse_compare_fail("eqs:-0.02")])
    assert "model 'other' is not in the baseline (it has: m)" in result.notes
    (unchecked,) = result.unchecked
    assert (unchecked.model, unchecked.scope, unchecked.failed, unchecked.outcome) == ("other", None, True, UNMEASURED)
    assert result.pairing is None and result.as_dict()["pairing"] is None  # no hashes given: no pairing


def test_a_run_notes_samples_changed_since_the_baseline_or_only_in_one_run() -> None:
    hashed = {i: SampleSnapshot({**perfect_row(), "eqs": 0.5}, sample_hash="h") for i in ("s0", "s1", "s2", "s3")}
    edited = {"s0": "new", "s1": "h", "s2": "h", "s3": "h"}  # s0's text, schema or gold changed since
    result = compare_run({"m": rows(0.5)}, base({"m": hashed}), FAST, sample_hashes=edited)
    assert result.notes == [
        "model 'm': paired on the 3 samples both runs scored (0 only in this run, 0 only in the baseline, "
        "1 changed since (not compared))"
    ]
    extra = compare_run({"m": rows(0.5, ("s0", "s1", "s2", "s3", "s4"))}, base({"m": hashed}), FAST)
    assert extra.notes == [
        "model 'm': paired on the 4 samples both runs scored (1 only in this run, 0 only in the baseline)"
    ]


def test_a_run_reads_its_verdict_with_the_default_thresholds() -> None:
    # +0.05 > +0.01 improves, -0.05 < -0.02 regresses (as compare_model)
    assert compare_run({"m": rows(0.55)}, base({"m": rows(0.5)}), FAST).models["m"].verdict == IMPROVED
    assert compare_run({"m": rows(0.45)}, base({"m": rows(0.5)}), FAST).models["m"].verdict == REGRESSED


def test_a_baseline_of_another_track_leaves_every_check_unmeasured_without_a_scope() -> None:
    result = compare_run(
        {"m": rows(0.5)}, base({"m": rows(0.5)}, track="toolcall"), FAST, checks=[parse_compare_fail("eqs:-0.02")]
    )
    (check,) = result.unchecked
    assert (check.scope, check.failed, check.outcome) == (None, True, UNMEASURED)
    assert result.pairing is None and result.as_dict()["pairing"] is None


# -- subsets: conditions at their edges, every configuration problem, group keys --------------------------------------


@pytest.mark.parametrize(
    ("operator", "value", "actual", "matches"),
    [
        ("gt", "a", 5, False),  # a number and a text bound are never ordered
        ("gt", 3, "b", False),  # nor a text and a number bound
        ("lt", 3, [1], False),  # a list is neither
        ("eq", "1", 1, False),  # the number 1 is not the text "1"
        ("eq", 1.5, 1.0, False),  # 0.5 apart
        ("eq", 1.5, 1.5 + 1e-13, True),  # within the 1e-12 a number may differ by
        ("contains", 3, 3, False),  # a number contains nothing
        ("not_contains", 3, 3, True),
        ("regex", "^None$", None, False),  # null is no text, though str(None) would match
        ("regex", ".", [1], False),
        ("regex", ".", {"a": 1}, False),
        ("regex", r"(a|a)*\1b", "a" * 40 + "!", False),  # too much backtracking: not in the subset
        ("regex", "^7$", 7, True),  # a number's text is searched
    ],
)
def test_a_condition_at_its_edges(operator: str, value: Any, actual: Any, matches: bool) -> None:
    assert Condition("f", operator, value).matches(actual) is matches


OK = {"field": "x", "operator": "eq", "value": 1}


@pytest.mark.parametrize(
    ("data", "problems"),
    [
        ({"subsets": "x"}, ["subsets: must be a list of rules"]),
        ({"group_by": 5}, ["group_by: must be a field name, a mapping or a list of them"]),
        ({"subsets": [5]}, ["subsets[0]: a rule must be a mapping with name and conditions"]),
        ({"subsets": [{"name": "a", "conditions": []}]}, ["subsets[0].conditions: a non-empty list is required"]),
        (
            {"subsets": [{"name": "a", "conditions": [5]}]},
            ["subsets[0].conditions[0]: a condition must be a mapping with field, operator and value"],
        ),
        ({"subsets": [{"name": "a", "conditions": [{**OK, "extra": 2}]}]}, ["subsets[0].conditions[0].extra: unknown key"]),
        ({"subsets": [{"name": "a", "conditions": [{**OK, "field": ""}]}]}, ["subsets[0].conditions[0].field: a field name is required"]),
        ({"subsets": [{"name": "a", "conditions": [{**OK, "field": 5}]}]}, ["subsets[0].conditions[0].field: a field name is required"]),
        ({"subsets": [{"name": "a", "conditions": [{"operator": "eq", "value": 1}]}]}, ["subsets[0].conditions[0].field: a field name is required"]),
        ({"subsets": [{"name": "a", "conditions": [{"field": "x", "operator": "eq"}]}]}, ["subsets[0].conditions[0].value: required"]),
        ({"subsets": [{"name": "a", "conditions": [OK], "compare_fail": 5}]}, ["subsets[0].compare_fail: must be a list of METRIC:MARGIN expressions"]),
        ({"subsets": [{"name": "a", "conditions": [{**OK, "operator": "regex", "value": 5}]}]}, ["subsets[0].conditions[0].value: regex needs a string pattern"]),
        ({"subsets": [{"name": "a", "conditions": [{**OK, "value": math.nan}]}]}, ["subsets[0].conditions[0].value: must be a finite number, got nan"]),
        ({"group_by": [5]}, ["group_by[0]: a field name or a mapping with 'field'"]),
        ({"group_by": [{"field": "x", "extra": 1}]}, ["group_by[0].extra: unknown key"]),
        ({"group_by": [{"field": ""}]}, ["group_by[0].field: a field name is required"]),
        # two rules without a name: each is told so, and neither is a duplicate of the other
        (
            {"subsets": [{"conditions": [OK]}, {"conditions": [OK]}]},
            ["subsets[0].name: a non-empty string is required", "subsets[1].name: a non-empty string is required"],
        ),
        # a rule refused for a bad condition is no rule: a later rule of its name is no duplicate
        (
            {"subsets": [{"name": "a", "conditions": [{**OK, "operator": "gt", "value": [1]}]}, {"name": "a", "conditions": [OK]}]},
            ["subsets[0].conditions[0].value: gt needs a number or a string, got list"],
        ),
        (
            {"subsets": [{"name": "b", "conditions": [{**OK, "value": math.inf}]}, {"name": "b", "conditions": [OK]}]},
            ["subsets[0].conditions[0].value: must be a finite number, got inf"],
        ),
    ],
)  # fmt: skip
def test_every_problem_of_a_subsets_configuration_is_reported_with_its_key_path(
    data: dict[str, Any], problems: list[str]
) -> None:
    with pytest.raises(SubsetConfigError) as raised:
        SubsetConfig.from_data(data)
    assert raised.value.problems == problems


def test_a_yaml_file_with_a_control_character_is_reported_by_its_first_line(tmp_path: Path) -> None:
    path = tmp_path / "subsets.yaml"
    path.write_text("subsets:\x07 []\n")  # the YAML reader refuses it before parsing: no line or column
    with pytest.raises(SubsetConfigError) as raised:
        load_subsets(path)
    assert raised.value.problems == [
        "not valid YAML: unacceptable character #x0007: special characters are not allowed"
    ]


def test_a_group_key_of_an_object_value_does_not_depend_on_its_key_order() -> None:
    score = score_sample({"a": "x"}, {"a": "x"}, SCHEMA)
    records = [
        SampleRecord("m", "s1", score, meta={"tags": {"b": 1, "a": 2}}),
        SampleRecord("m", "s2", score, meta={"tags": {"a": 2, "b": 1}}),
    ]
    _, groups = members(records, SubsetConfig(group_by=(GroupBy("tags"),)))
    assert {key: [r.sample_id for r in found] for key, found in groups["tags"].items()} == {
        '{"a": 2, "b": 1}': ["s1", "s2"]
    }


def test_a_run_comparison_built_without_a_pairing_writes_none_for_it() -> None:
    result = RunComparison(base({}), {}, [], [], FAST)
    assert result.pairing is None
    assert result.as_dict()["pairing"] is None
    assert result.as_dict()["passed"] is True  # no check: nothing failed
