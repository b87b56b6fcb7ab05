"""Baselines pair only unchanged samples, through pytest on real files: a gold answer edited after the baseline was
saved leaves that sample out of the comparison (and says so in metrics.json, the terminal and summary.md), a dataset
mostly replaced stops a regression check with a usage error naming the counts, and a baseline saved before content
hashes still compares, with a warning that the pairing could not be checked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}}}
N = 8


def sample(n: int, age: int | None = None, prefix: str = "s") -> dict:
    return {
        "id": f"{prefix}{n}",
        "text": f"P{n} is {n}.",
        "schema": SCHEMA,
        "expected": {"name": f"P{n}", "age": n if age is None else age},
    }


ORIGINAL = [sample(n) for n in range(N)]


def write(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def bench(pytester: pytest.Pytester, data: list[dict], *args: str, out: str) -> pytest.RunResult:
    write(pytester.path / "data.jsonl", data)
    # the model's answers do not change: each sample's original gold, whatever the dataset says now
    write(
        pytester.path / "preds.jsonl",
        [
            {"id": s["id"], "output": {"name": s["expected"]["name"], "age": int(s["expected"]["name"][1:])}}
            for s in data
        ],
    )
    return pytester.runpytest(
        "-p",
        "no:randomly",
        "--extractbench",
        "--extractbench-dataset",
        "data.jsonl",
        "--extractbench-predictions",
        "preds.jsonl",
        "--extractbench-output",
        out,
        "--extractbench-sla",
        "none",
        "--extractbench-resamples",
        "500",
        *args,
    )


def compare(pytester: pytest.Pytester, data: list[dict], *args: str, out: str = "after") -> pytest.RunResult:
    return bench(
        pytester, data, "--extractbench-compare", "main", "--extractbench-compare-fail", "eqs:-0.01", *args, out=out
    )


@pytest.fixture
def saved(pytester: pytest.Pytester) -> Path:
    result = bench(pytester, ORIGINAL, "--extractbench-save", "main", out="before")
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    return pytester.path / ".extractbench" / "baselines" / "0001_main.json"


def test_a_baseline_carries_each_sample_s_content_hash(pytester: pytest.Pytester, saved: Path) -> None:
    stored = json.loads(saved.read_text())
    run = json.loads((pytester.path / "before" / "metrics.json").read_text())["run"]["dataset"]
    hashes = {s["sample_id"]: s["sample_hash"] for s in stored["models"]["predictions"]["samples"]}
    assert hashes == run["sample_hashes"]  # the same hasher as metrics.json's
    assert stored["provenance"]["dataset"]["hash"] == run["content_hash"]


def test_an_edited_gold_answer_is_left_out_of_the_comparison(pytester: pytest.Pytester, saved: Path) -> None:
    # s2's gold now says 99: the unchanged answer scores worse against it, but that is the data's change, not the
    # model's
    edited = [sample(2, age=99) if s["id"] == "s2" else s for s in ORIGINAL]
    result = compare(pytester, edited)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    result.stdout.fnmatch_lines(
        [
            "  samples: 7 unchanged, 1 changed, 0 added, 0 removed of the baseline's 8 samples by content hash; "
            "only the unchanged are compared",
            "  model predictions: verdict NEUTRAL on 7 shared samples",
            "*paired on the 7 samples both runs scored (0 only in this run, 0 only in the baseline, 1 changed since*",
        ]
    )
    comparison = json.loads((pytester.path / "after" / "metrics.json").read_text())["baseline_comparison"]
    assert comparison["pairing"] == {
        "checked": True,
        "baseline_samples": 8,
        "unchanged": 7,
        "changed": 1,
        "added": 0,
        "removed": 0,
        "unchanged_fraction": 7 / 8,
        "changed_samples": ["s2"],
    }
    model = comparison["models"]["predictions"]
    assert model["n_shared"] == 7 and model["n_changed"] == 1
    assert model["metrics"]["extraction_quality_score"]["delta"] == 0  # s2's drop is not counted
    assert model["metrics"]["extraction_quality_score"]["n_shared"] == 7
    summary = (pytester.path / "after" / "summary.md").read_text()
    assert "Samples: 7 unchanged, 1 changed, 0 added, 0 removed of the baseline's 8 by content hash" in summary


def test_a_dataset_mostly_replaced_stops_a_regression_check(pytester: pytest.Pytester, saved: Path) -> None:
    # 3 kept, 2 edited, 3 replaced by new samples: 3 of the baseline's 8 unchanged, under half
    replaced = ORIGINAL[:3] + [sample(3, age=30), sample(4, age=40)] + [sample(n, prefix="n") for n in range(5, N)]
    result = compare(pytester, replaced)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    error = result.stderr.str()
    assert (
        "only 3 of the baseline's 8 samples are unchanged in this dataset (3 unchanged, 2 changed, 3 added, "
        "3 removed" in error
    )
    assert "--extractbench-baseline-min-unchanged 0.5" in error
    assert not (pytester.path / "after" / "samples.jsonl").exists() and "passed" not in result.stdout.str()
    # a lower threshold lets the same check run, on the 3 unchanged samples
    lowered = compare(pytester, replaced, "--extractbench-baseline-min-unchanged", "0.3", out="lowered")
    assert lowered.ret == pytest.ExitCode.OK, lowered.stdout.str()
    lowered.stdout.fnmatch_lines(
        [
            "  samples: 3 unchanged, 2 changed, 3 added, 3 removed of the baseline's 8 samples*",
            "  model predictions: verdict NEUTRAL on 3 shared samples",
        ]
    )
    # comparing without a check only reports: the counts say how little was compared
    plain = bench(pytester, replaced, "--extractbench-compare", "main", out="plain")
    assert plain.ret == pytest.ExitCode.OK
    plain.stdout.fnmatch_lines(["  samples: 3 unchanged, 2 changed, 3 added, 3 removed*"])


def test_an_old_baseline_without_hashes_compares_by_id_and_says_so(pytester: pytest.Pytester, saved: Path) -> None:
    stored = json.loads(saved.read_text())
    for entry in stored["models"]["predictions"]["samples"]:
        del entry["sample_hash"]  # as versions before content hashes wrote it
    saved.write_text(json.dumps(stored), encoding="utf-8")
    edited = [sample(n, age=n + 50) if n < 6 else s for n, s in enumerate(ORIGINAL)]  # mostly edited: cannot be told
    result = compare(pytester, edited)
    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED), result.stderr.str()
    result.stdout.fnmatch_lines(
        [
            "  WARNING: sample pairing could not be checked: the baseline has no per-sample "
            "content hashes*paired by id alone (8 ids in common)*",
            "  model predictions: verdict * on 8 shared samples",
        ]
    )
    comparison = json.loads((pytester.path / "after" / "metrics.json").read_text())["baseline_comparison"]
    assert comparison["pairing"]["checked"] is False and comparison["models"]["predictions"]["n_shared"] == 8
    summary = (pytester.path / "after" / "summary.md").read_text()
    assert "WARNING: sample pairing could not be checked" in summary
