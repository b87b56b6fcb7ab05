"""Baselines, the regression gate, multi-model comparison and subsets, through pytest."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import scipy.stats  # noqa: F401

# The plugin imports scipy.stats lazily; pytester's in-process runs drop modules a run imported, and numpy's
# C extensions cannot load twice in one process. Importing it here keeps it loaded across runs.
from pytest_extractbench import parse_output, score_sample
from pytest_extractbench.dataset import load_dataset

ROOT = Path(__file__).resolve().parents[2]
DATASET = load_dataset()
DEMO = [json.loads(line) for line in (ROOT / "fixtures" / "predictions" / "demo.jsonl").read_text().splitlines()]
FAST = ("--extractbench-resamples", "1000")


def leaf_paths(node: Any, path: tuple = ()) -> list[tuple]:
    """Paths of string and number leaves (arrays of scalars are one field for the scorer: their items are left
    alone)."""
    found = []
    for key, child in node.items() if isinstance(node, dict) else enumerate(node):
        if isinstance(child, dict) or (isinstance(child, list) and any(isinstance(c, (dict, list)) for c in child)):
            found.extend(leaf_paths(child, (*path, key)))
        elif isinstance(child, (str, int, float)) and not isinstance(child, bool):
            found.append((*path, key))
    return found


def degraded(fraction: float, only_topic: str | None = None, seed: int = 0) -> list[dict]:
    """The demo outputs with ``fraction`` of each sample's leaf values made wrong, every output still schema-valid."""
    rng = np.random.default_rng(seed)
    samples = {s.id: s for s in DATASET.samples}
    rows = []
    for row in DEMO:
        sample = samples[row["id"]]
        value = parse_output(row["output"]).value
        if only_topic is None or sample.meta["topic"] == only_topic:
            leaves = leaf_paths(value)
            for i in rng.choice(len(leaves), size=max(1, round(fraction * len(leaves))), replace=False):
                changed = json.loads(json.dumps(value))
                *parents, last = leaves[i]
                node = changed
                for key in parents:
                    node = node[key]
                old = node[last]
                node[last] = "zq " + old[::-1] if isinstance(old, str) else old * 3 + 7
                # keep a change only when the output stays schema-valid (formats, enums): items must pass
                if score_sample(changed, sample.expected, sample.schema).schema_valid:
                    value = changed
        rows.append({"id": row["id"], "output": value})
    return rows


def write(pytester: pytest.Pytester, name: str, rows: list[dict]) -> str:
    (pytester.path / name).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return name


def bench(pytester: pytest.Pytester, *args: str, out: str = "out") -> pytest.RunResult:
    return pytester.runpytest(
        "-p",
        "no:cacheprovider",
        "--extractbench",
        "--extractbench-output",
        out,
        "--extractbench-sla",
        "none",
        *FAST,
        *args,
    )


def literal(text: str) -> str:
    """``text`` for fnmatch_lines: brackets match themselves (``[95% CI: ...]``)."""
    return text.replace("[", "[[]")


def metrics(pytester: pytest.Pytester, out: str = "out") -> dict:
    return json.loads((pytester.path / out / "metrics.json").read_text())


@pytest.fixture
def demo(pytester: pytest.Pytester) -> str:
    return write(pytester, "demo.jsonl", DEMO)


@pytest.mark.slow
def test_save_then_compare_an_unchanged_run(pytester: pytest.Pytester, demo: str) -> None:
    saved = bench(pytester, "--extractbench-predictions", demo, "--extractbench-save", "main")
    assert saved.ret == pytest.ExitCode.OK
    path = pytester.path / ".extractbench" / "baselines" / "0001_main.json"
    saved.stdout.fnmatch_lines([f"baseline 'main' saved to {path}"])
    stored = json.loads(path.read_text())
    assert stored["format_version"] == 2 and stored["name"] == "main"
    info = stored["provenance"]
    assert info["models"] == ["predictions"] and info["dataset"]["num_samples"] == 52
    assert len(info["dataset"]["hash"]) == 64 and info["prompt_hash"] is None and "package_version" in info
    assert info["outputs"][0]["hash"] and info["git"] is None  # pytester's directory is not a git checkout
    assert len(stored["models"]["predictions"]["samples"]) == 52
    assert metrics(pytester)["baseline_saved"]["path"] == str(path)

    again = bench(
        pytester,
        "--extractbench-predictions",
        demo,
        "--extractbench-compare",
        "main",
        "--extractbench-compare-fail",
        "eqs:-0.02",
        "--extractbench-compare-fail",
        "field_f1_partial:-2%",
        out="again",
    )
    assert again.ret == pytest.ExitCode.OK
    again.stdout.fnmatch_lines(
        [
            "baseline 'main' (0001_main.json, *):",
            "  model predictions: verdict NEUTRAL on 52 shared samples",
            "    EQS            0.974 -> 0.974  +0.000 [95% CI: +0.000, +0.000], p = 1.000",
            "  ok model 'predictions': extraction_quality_score 0.974 -> 0.974 *within the allowed 0.020 (eqs:-0.02)",
            "  ok model 'predictions': field_f1_partial 0.936 -> 0.936 *(field_f1_partial:-2%)",
            "  regression gate: passed",
        ]
    )
    comparison = metrics(pytester, "again")["baseline_comparison"]
    assert comparison["passed"] is True and comparison["baseline"]["name"] == "main"
    assert [c["p_value"] for c in comparison["checks"]] == [1.0, 1.0]


@pytest.mark.slow
def test_a_real_regression_fails_the_session_and_explains_itself(pytester: pytest.Pytester, demo: str) -> None:
    bench(pytester, "--extractbench-predictions", demo, "--extractbench-save", "main")
    worse = write(pytester, "worse.jsonl", degraded(0.3))
    result = bench(
        pytester,
        "--extractbench-predictions",
        worse,
        "--extractbench-compare",
        "main",
        "--extractbench-compare-fail",
        "eqs:-0.02",
        out="worse",
    )
    result.assert_outcomes(passed=52)  # every item passes: only the gate fails
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    check = metrics(pytester, "worse")["baseline_comparison"]["checks"][0]
    assert check["failed"] and check["significant"] and check["delta"] < -0.02
    result.stdout.fnmatch_lines(
        [
            "*verdict REGRESSED*",
            literal(
                f"  REGRESSION model 'predictions': extraction_quality_score {check['baseline']:.3f} -> "
                f"{check['current']:.3f} (delta {check['delta']:+.3f} [95% CI: {check['ci']['low']:+.3f}, "
                f"{check['ci']['high']:+.3f}], p = "
            )
            + "*, paired permutation test on 52 shared samples): worse by "
            "more than the allowed 0.020 (eqs:-0.02) and significant at 0.05",
            "  regression gate: FAILED",
        ]
    )
    # a margin wider than the drop passes, and so does the same drop without a gate
    assert (
        bench(
            pytester,
            "--extractbench-predictions",
            worse,
            "--extractbench-compare",
            "main",
            "--extractbench-compare-fail",
            "eqs:-0.5",
            out="wide",
        ).ret
        == pytest.ExitCode.OK
    )
    assert (
        bench(pytester, "--extractbench-predictions", worse, "--extractbench-compare", "main", out="nogate").ret
        == pytest.ExitCode.OK
    )


@pytest.mark.slow
def test_compare_fail_from_ini_and_a_path_baseline(pytester: pytest.Pytester, demo: str) -> None:
    bench(pytester, "--extractbench-predictions", demo, "--extractbench-save", "main")
    pytester.makeini("[pytest]\nextractbench_compare_fail = eqs:-0.02 f1:-2%\n")
    worse = write(pytester, "worse.jsonl", degraded(0.3))
    result = bench(
        pytester,
        "--extractbench-predictions",
        worse,
        "--extractbench-compare",
        ".extractbench/baselines/0001_main.json",
        out="worse",
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    checks = metrics(pytester, "worse")["baseline_comparison"]["checks"]
    assert [c["check"] for c in checks] == ["eqs:-0.02", "f1:-2%"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--extractbench-compare-fail", "eqs:-0.02"), "*--extractbench-compare-fail needs --extractbench-compare*"),
        (("--extractbench-compare", "nope"), "*no baseline 'nope'*create one with --extractbench-save NAME*"),
        (("--extractbench-compare-fail", "eqs:+0.02"), "*a higher extraction_quality_score is better*eqs:-0.02*"),
        (("--extractbench-compare-fail", "f9:-1"), "*unknown metric 'f9'*"),
        (("--extractbench-save", "../x"), "*baseline name '../x'*"),
        (("--extractbench-subsets", "missing.yaml"), "*subsets file missing.yaml*"),
    ],
)
def test_usage_errors(pytester: pytest.Pytester, demo: str, args: tuple[str, ...], message: str) -> None:
    result = bench(pytester, "--extractbench-predictions", demo, *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])


@pytest.mark.slow
def test_several_models_are_compared_in_the_summary_and_metrics(pytester: pytest.Pytester, demo: str) -> None:
    worse = write(pytester, "worse.jsonl", degraded(0.3))
    result = bench(pytester, "--extractbench-predictions", f"good={demo}", "--extractbench-predictions", f"bad={worse}")
    assert result.ret == pytest.ExitCode.OK
    comparison = metrics(pytester)["comparison"]
    assert [e["model"] for e in comparison["eqs_ranking"]] == ["good", "bad"]
    assert comparison["eqs_delta"]["bad_vs_good"] < 0
    assert comparison["statistical_significance"]["bad_vs_good"]["significantly_different"] is True
    assert comparison["gap_rule"]["reference"] == "good"
    result.stdout.fnmatch_lines(
        [
            "comparison of 2 models (paired permutation test, alpha 0.05):",
            "  1. good  EQS 0.974 [[]95% CI: *]",
            "  2. bad  EQS * [[]95% CI: *]",
            "  bad vs good (52 shared samples): EQS -0.* [[]95% CI: -0.*, -0.*], p = * significant; Cohen's d *",
            "*best by metric: highest eqs: good*fastest p95: n/a*",
            "  Pareto frontier accuracy vs latency: not available: latency_p95_ms was not measured for good, bad*",
            "  gap rule (reference good by highest EQS, threshold 0.150 EQS): bad trails by 0.*",
        ]
    )


@pytest.mark.slow
def test_comparison_is_the_same_under_xdist(pytester: pytest.Pytester, demo: str) -> None:
    worse = write(pytester, "worse.jsonl", degraded(0.3))
    models = ("--extractbench-predictions", f"good={demo}", "--extractbench-predictions", f"bad={worse}")
    bench(pytester, *models, "-n", "0", out="serial")
    bench(pytester, *models, "-n", "2", out="parallel")
    serial, parallel = metrics(pytester, "serial"), metrics(pytester, "parallel")
    assert serial["comparison"] == parallel["comparison"]
    assert serial["models"]["good"]["confidence_intervals"] == parallel["models"]["good"]["confidence_intervals"]


@pytest.mark.slow
def test_subsets_get_metrics_and_their_own_gate(pytester: pytest.Pytester, demo: str) -> None:
    pytester.path.joinpath("rules.yaml").write_text(
        "subsets:\n"
        "  - name: medical\n"
        "    conditions: [{field: topic, operator: eq, value: medical}]\n"
        "    compare_fail: ['eqs:-0.05']\n"
        "  - name: cheap\n"
        "    conditions: [{field: price, operator: lt, value: 100}]\n"
        "group_by: [topic]\n",
        encoding="utf-8",
    )
    bench(pytester, "--extractbench-predictions", demo, "--extractbench-save", "main")
    worse = write(pytester, "worse.jsonl", degraded(0.6, only_topic="medical"))
    result = bench(
        pytester,
        "--extractbench-predictions",
        worse,
        "--extractbench-subsets",
        "rules.yaml",
        "--extractbench-compare",
        "main",
        "--extractbench-compare-fail",
        "eqs:-0.2",
        out="worse",
    )
    model = metrics(pytester, "worse")["models"]["predictions"]
    assert model["subsets"]["medical"]["count"] == 6
    assert model["subsets"]["cheap"]["sample_ids"] == ["travel-004"]
    assert sum(g["count"] for g in model["groups"]["topic"].values()) == 52
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "  subset medical: 6 samples, mean EQS *; EQS * [[]95% CI: *]",
            "  group topic=business: 6 samples*",
            "  ok model 'predictions': extraction_quality_score *(eqs:-0.2)",
            (
                "  REGRESSION model 'predictions', subset 'medical': extraction_quality_score "
                "*paired permutation test on 6 shared samples*(eqs:-0.05) and significant at 0.05"
            ),
        ]
    )


@pytest.mark.slow
def test_different_sample_sets_are_paired_on_shared_ids(pytester: pytest.Pytester, demo: str) -> None:
    bench(pytester, "--extractbench-predictions", demo, "--extractbench-save", "medical", "-k", "medical")
    result = bench(
        pytester,
        "--extractbench-predictions",
        demo,
        "--extractbench-compare",
        "medical",
        "--extractbench-compare-fail",
        "eqs:-0.02",
        out="all",
    )
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(
        [
            "  model predictions: verdict NEUTRAL on 6 shared samples",
            "  note: model 'predictions': paired on the 6 samples both runs scored "
            "(46 only in this run, 0 only in the baseline)",
        ]
    )
