"""Datasets and configuration through pytest: sources, sampling under xdist, the invalid-sample policy,
the dataset section of metrics.json and the precedence of command line, environment, config file and ini."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pytest_extractbench.core.rundoc import iter_samples
from pytest_extractbench.dataset import load_dataset, subsample

ROOT = Path(__file__).resolve().parents[2]
DEMO = str(ROOT / "fixtures" / "predictions" / "demo.jsonl")
SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
    "required": ["name"],
}
ROWS = [
    {"id": "a", "text": "Ann, 41.", "schema": SCHEMA, "expected": {"name": "Ann", "age": 41}},
    {"id": "b", "text": "Bo, 7.", "schema": SCHEMA, "expected": {"name": "Bo", "age": 7}},
    {"id": "bad-gold", "text": "Cy.", "schema": SCHEMA, "expected": {"age": "old"}},
]
PREDICTIONS = [{"id": "a", "output": {"name": "Ann", "age": 41}}, {"id": "b", "output": {"name": "Bo", "age": 7}}]


def write_jsonl(path: Path, rows: list) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def bench(pytester: pytest.Pytester, *args: str, out: str = "out", subprocess: bool = False) -> pytest.RunResult:
    shutil.rmtree(pytester.path / out, ignore_errors=True)  # each call is a new run, which needs an empty directory
    argv = ["-W", "ignore::pytest.PytestAssertRewriteWarning", "--extractbench", "--extractbench-output", out, *args]
    return pytester.runpytest_subprocess(*argv) if subprocess else pytester.runpytest(*argv)


def metrics(pytester: pytest.Pytester, out: str = "out") -> dict:
    return json.loads((pytester.path / out / "metrics.json").read_text())


@pytest.fixture
def small(pytester: pytest.Pytester) -> list[str]:
    write_jsonl(pytester.path / "data.jsonl", ROWS)
    write_jsonl(pytester.path / "preds.jsonl", PREDICTIONS)
    return ["--extractbench-dataset", "data.jsonl", "--extractbench-predictions", "preds.jsonl"]


# -- sampling ---------------------------------------------------------------------------------------


def _scored_ids(pytester: pytest.Pytester, out: str) -> list[str]:
    return sorted(r["sample_id"] for r in iter_samples(pytester.path / out / "samples.jsonl"))


@pytest.mark.slow
def test_sampling_is_the_same_under_xdist(pytester: pytest.Pytester) -> None:
    args = [
        "--extractbench-predictions",
        DEMO,
        "--extractbench-sample",
        "9",
        "--extractbench-seed",
        "5",
        "--extractbench-sla",
        "none",
    ]
    bench(pytester, *args, "-p", "no:xdist", out="serial", subprocess=True).assert_outcomes(passed=9)
    bench(pytester, *args, "-n", "2", out="parallel", subprocess=True).assert_outcomes(passed=9)
    expected = sorted(s.id for s in subsample(load_dataset().samples, 9, 5))
    assert _scored_ids(pytester, "serial") == _scored_ids(pytester, "parallel") == expected
    section = metrics(pytester, "parallel")["dataset"]
    assert (section["num_samples"], section["num_loaded"], section["sampling"]["seed"]) == (9, 52, 5)


# -- the invalid-sample policy ---------------------------------------------------------------------------


def test_warn_skips_invalid_samples_and_lists_them(pytester: pytest.Pytester, small: list[str]) -> None:
    result = bench(pytester, *small)
    result.assert_outcomes(passed=2, warnings=2)
    result.stdout.fnmatch_lines(
        [
            "*data.jsonl:line 3, sample 'bad-gold', field 'expected': gold violates its own schema at $*",
            "*1 invalid sample(s) skipped (--extractbench-invalid-samples warn): bad-gold",
        ]
    )
    invalid = metrics(pytester)["dataset"]["invalid_samples"]
    assert [(p["sample_id"], p["location"], p["field"]) for p in invalid] == [
        ("bad-gold", "line 3", "expected"),
        ("bad-gold", "line 3", "expected"),
    ]  # name missing; age not an integer


def test_skip_is_quiet_but_recorded(pytester: pytest.Pytester, small: list[str]) -> None:
    result = bench(pytester, *small, "--extractbench-invalid-samples", "skip")
    result.assert_outcomes(passed=2)
    assert "gold violates" not in result.stdout.str().split("extractbench ===")[0]
    assert len(metrics(pytester)["dataset"]["invalid_samples"]) == 2
    assert metrics(pytester)["run"]["problems"] == []


@pytest.mark.slow
def test_fail_stops_the_session(pytester: pytest.Pytester, small: list[str]) -> None:
    result = bench(pytester, *small, "--extractbench-invalid-samples", "fail")
    assert result.ret == pytest.ExitCode.INTERRUPTED or result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "*2 invalid sample problem(s) and --extractbench-invalid-samples fail:*",
            "*data.jsonl:line 3, sample 'bad-gold', field 'expected': gold violates its own schema*",
        ]
    )


# -- sources and the dataset section -------------------------------------------------------------------------


def test_parquet_with_column_mapping_and_statistics(pytester: pytest.Pytester) -> None:
    rows = [
        {
            "key": r["id"],
            "document": r["text"],
            "schema": json.dumps(r["schema"]),
            "gold": json.dumps(r["expected"]),
            "topic": "people",
        }
        for r in ROWS[:2]
    ]
    pq.write_table(pa.Table.from_pylist(rows), pytester.path / "data.parquet")
    write_jsonl(pytester.path / "preds.jsonl", PREDICTIONS)
    result = bench(
        pytester,
        "--extractbench-dataset",
        "data.parquet",
        "--extractbench-predictions",
        "preds.jsonl",
        "--extractbench-columns",
        "id=key,text=document,expected=gold",
    )
    result.assert_outcomes(passed=2)
    document = metrics(pytester)
    stats = document["dataset"]["statistics"]
    assert stats["by_topic"] == {"people": 2}
    assert stats["depth_histogram"] == {"1": 2}
    assert stats["text_length_chars"]["max"] == len("Ann, 41.")
    assert stats["gold_fields"]["mean"] == 2
    bins = document["models"]["predictions"]["metrics_by_complexity_bin"]
    assert bins["simple"]["num_samples"] == 2 and bins["simple"]["field_f1_partial"] == 1.0
    assert bins["medium"] == {"num_samples": 0} and bins["complex"] == {"num_samples": 0}


@pytest.mark.slow
def test_unloadable_sources_are_usage_errors(pytester: pytest.Pytester) -> None:
    (pytester.path / "empty").mkdir()
    result = bench(pytester, "--extractbench-dataset", "empty", "--extractbench-predictions", DEMO)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*extractbench: dataset 'empty': * is a folder without test/*"])


# -- configuration precedence -----------------------------------------------------------------------------------


CONFIG = """
dataset:
  name: data.jsonl
  invalid_samples: skip
metrics:
  sla: excellence
model:
  base_url: "http://llm.internal:8000/v1?api_key=s3cret"
options:
  resamples: 500
"""


def _option(pytester: pytest.Pytester, name: str) -> dict:
    return metrics(pytester)["run"]["config"]["options"][name]


@pytest.mark.slow
def test_command_line_beats_environment_beats_config_file_beats_ini(
    pytester: pytest.Pytester, small: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makeini("[pytest]\nextractbench_sla = target\nextractbench_resamples = 300\nextractbench_seed = 9\n")
    (pytester.path / "bench.yaml").write_text(CONFIG)
    base = ["--extractbench-predictions", "preds.jsonl", "--extractbench-config", "bench.yaml"]

    bench(pytester, *base)
    assert _option(pytester, "sla") == {"value": "excellence", "source": "config file metrics.sla"}
    assert _option(pytester, "resamples") == {"value": 500, "source": "config file options.resamples"}
    assert _option(pytester, "seed") == {"value": 9, "source": "ini"}
    assert _option(pytester, "sample") == {"value": None, "source": "default"}
    assert _option(pytester, "dataset")["value"] == "data.jsonl"
    assert metrics(pytester)["dataset"]["invalid_policy"] == "skip"
    record = json.dumps(metrics(pytester)["run"]["config"])
    assert "s3cret" not in record and "http://llm.internal:8000/v1?api_key=***" in record

    monkeypatch.setenv("EXTRACTBENCH_SLA", "minimum")
    bench(pytester, *base)
    assert _option(pytester, "sla") == {"value": "minimum", "source": "environment EXTRACTBENCH_SLA"}

    bench(pytester, *base, "--extractbench-sla", "none")
    assert _option(pytester, "sla") == {"value": "none", "source": "command line"}


def test_config_file_problems_are_usage_errors_with_key_paths(pytester: pytest.Pytester, small: list[str]) -> None:
    (pytester.path / "bench.yaml").write_text("metrics: {sla: gold}\ndataset: {sample_size: 0}\n")
    result = bench(pytester, *small, "--extractbench-config", "bench.yaml")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*bench.yaml: metrics.sla: unknown SLA tier 'gold'*; dataset.sample_size: expected*"])


def test_a_bad_environment_value_names_the_variable(
    pytester: pytest.Pytester, small: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EXTRACTBENCH_SAMPLE", "lots")
    result = bench(pytester, *small)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*environment variable EXTRACTBENCH_SAMPLE='lots': expected a whole number*"])
