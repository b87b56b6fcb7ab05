"""Baseline files: numbering, lookup, round trip, provenance, and clear errors."""

from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path

import pytest

from pytest_extractbench import SampleRecord, ScoringOptions, metrics_by_model, score_sample
from pytest_extractbench.core import rundoc
from pytest_extractbench.core.rundoc import BASELINE_KIND, RunDocError
from pytest_extractbench.dataset import identity, load_dataset
from pytest_extractbench.gating import baseline as baselines


def snapshots_and_metrics():
    records = [
        SampleRecord(
            model=model,
            sample_id=s.id,
            score=score_sample(s.expected if model == "good" else {}, s.expected, s.schema, sample_id=s.id),
        )
        for model in ("good", "empty")
        for s in load_dataset().samples[:10]
    ]
    return baselines.snapshot_records(records), metrics_by_model(records, ScoringOptions())


def document(name: str = "main", tmp_path: Path | None = None) -> dict:
    snapshots, metrics = snapshots_and_metrics()
    info = baselines.provenance(
        models=list(metrics),
        dataset=load_dataset(),
        rootdir=tmp_path or Path("/"),
        servers=["https://user:secret@example.com:8443/v1?key=abc#frag"],
    )
    return baselines.build(name, snapshots, metrics, info, {"resamples": 10000})


def test_save_numbers_files_and_names_resolve_to_the_newest(tmp_path: Path) -> None:
    directory = tmp_path / ".extractbench" / "baselines"
    first = baselines.save(document("main"), directory)
    second = baselines.save(document("other"), directory)
    third = baselines.save(document("main"), directory)
    assert [p.name for p in (first, second, third)] == ["0001_main.json", "0002_other.json", "0003_main.json"]
    assert baselines.resolve("main", directory, base_dir=tmp_path) == third
    assert baselines.resolve("0001", directory, base_dir=tmp_path) == first
    assert baselines.resolve("0002_other", directory, base_dir=tmp_path) == second
    assert baselines.resolve(str(first), directory, base_dir=tmp_path) == first
    assert baselines.resolve(".extractbench/baselines/0002_other.json", directory, base_dir=tmp_path) == second
    with pytest.raises(baselines.BaselineError, match="no baseline 'nope'.*stored baselines: main, other"):
        baselines.resolve("nope", directory, base_dir=tmp_path)
    with pytest.raises(baselines.BaselineError, match="no baseline is stored there yet"):
        baselines.resolve("main", tmp_path / "empty", base_dir=tmp_path)


def test_round_trip_keeps_every_sample_row_and_field(tmp_path: Path) -> None:
    snapshots, metrics = snapshots_and_metrics()
    path = baselines.save(document(), tmp_path)
    loaded = baselines.load(path)
    assert loaded.name == "main" and set(loaded.models) == {"good", "empty"}
    for model in snapshots:
        assert loaded.models[model] == snapshots[model]
        for key in ("extraction_quality_score", "field_f1_partial", "hallucination_rate"):
            assert loaded.metrics[model][key] == pytest.approx(metrics[model][key], abs=1e-12)
    raw = json.loads(path.read_text())
    assert raw["format_version"] == rundoc.FORMAT_VERSION[rundoc.BASELINE] and raw["kind"] == BASELINE_KIND
    assert raw["models"]["good"]["confidence_intervals"]["extraction_quality_score"]["resamples"] == 10000
    assert raw["models"]["good"]["samples"][0]["fields"][0][1] == "exact"


def test_provenance_has_no_secrets_and_hashes_the_data(tmp_path: Path) -> None:
    info = document(tmp_path=tmp_path)["provenance"]
    assert info["servers"] == ["https://example.com:8443/v1"]
    text = json.dumps(info)
    assert "secret" not in text and "key=abc" not in text
    assert info["dataset"]["hash"] == identity.dataset_hash(load_dataset().samples)  # one hasher for runs and baselines
    assert identity.dataset_hash(load_dataset().samples[:-1]) != info["dataset"]["hash"]
    assert info["prompt_hash"] is None  # offline: no prompt; live runs fill it
    assert info["git"] is None  # tmp_path is not a git checkout


def test_git_commit_is_recorded_inside_a_checkout(tmp_path: Path) -> None:
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True, text=True).stdout

    git("init", "-q")
    (tmp_path / "f.txt").write_text("x")
    git("add", "f.txt")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "c")
    info = baselines.git_info(tmp_path)
    assert info["commit"] == git("rev-parse", "HEAD").strip() and info["dirty"] is False
    (tmp_path / "f.txt").write_text("changed")
    assert baselines.git_info(tmp_path)["dirty"] is True


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "line 1: not valid JSON"),
        ('{"kind": "something else"}', "not a pytest-extractbench baseline file"),
        (
            json.dumps({"kind": BASELINE_KIND, "format_version": 99}),
            "format_version 99 was written by a newer pytest-extractbench \\(this release reads baseline format 1, 2\\)",
        ),
        (
            json.dumps(
                {
                    "kind": BASELINE_KIND,
                    "format_version": 1,
                    "models": {"m": {"samples": [{"sample_id": "s1", "row": {"eqs": 1.0}}]}},
                }
            ),
            "model 'm', sample 's1' \\(#0\\): row lacks schema_valid",
        ),
        (
            json.dumps({"kind": BASELINE_KIND, "format_version": 1, "models": {"m": {}}}),
            "malformed \\(model 'm' has no list of samples",
        ),
    ],
)
def test_bad_files_are_rejected_with_the_path_and_the_reason(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "0001_x.json"
    path.write_text(content)
    with pytest.raises(RunDocError, match=f"baseline {path}: .*{message}"):
        baselines.load(path)


@pytest.mark.parametrize("name", ["main", "v1.2", "pr-123_rc"])
def test_baseline_names(name: str) -> None:
    assert baselines.parse_baseline_name(name) == name


@pytest.mark.parametrize("name", ["", "../evil", "a/b", "-x", "white space"])
def test_bad_baseline_names(name: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError):
        baselines.parse_baseline_name(name)
