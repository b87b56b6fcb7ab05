"""The YAML config file: key paths onto options, every problem at once, redaction, validate-config."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_extractbench.cli import main
from pytest_extractbench.config.file import FIXED, KEY_PATHS, read_config, redact
from pytest_extractbench.config.settings import OPTIONS_BY_NAME
from pytest_extractbench.dataset.sources import DataOptions
from pytest_extractbench.scoring import EqsWeights

ROOT = Path(__file__).resolve().parents[2]


def read(tmp_path: Path, text: str):
    path = tmp_path / "config.yaml"
    path.write_text(text)
    return read_config(path, OPTIONS_BY_NAME, prompt_dir=tmp_path / "prompts")


def test_spec_keys_become_option_values(tmp_path: Path) -> None:
    (tmp_path / "user.txt").write_text("Text: {text}")
    found = read(
        tmp_path,
        """
model:
  model_name: [small, large]
dataset:
  name: data.jsonl
  columns: {text: document, expected: gold}
  sample_size: 20
  random_seed: 7
  invalid_samples: fail
prompts:
  system: |
    Be precise.
  user_file: user.txt
metrics:
  field_matching: {numeric_tolerance: 0.001, case_sensitive: true}
  eqs_weights: [0.25, 0.25, 0.25, 0.25]
  sla: target
output:
  results_dir: results
options:
  resamples: 2000
  stats-seed: 3
""",
    )
    assert found.problems == []
    values = dict(found.values)
    # prompts are options of the live pipeline (recorded as pending where that is not merged yet)
    prompts = {name: Path(values.pop(name, None) or found.pending[name]) for name in ("system_prompt", "user_prompt")}
    assert values == {
        "model": (("small",), ("large",)),
        "dataset": "data.jsonl",
        "columns": (("text", "document"), ("expected", "gold")),
        "sample": 20,
        "seed": 7,
        "invalid_samples": "fail",
        "float_epsilon": 0.001,
        "case_sensitive": True,
        "eqs_weights": EqsWeights(0.25, 0.25, 0.25, 0.25),
        "sla": "target",
        "output": Path("results"),
        "resamples": 2000,
        "stats_seed": 3,
    }
    assert found.sources["sla"] == "metrics.sla" and found.sources["stats_seed"] == "options.stats-seed"
    # inline text is written to a content-addressed file; a file is checked and passed on
    assert prompts["system_prompt"].parent == tmp_path / "prompts"
    assert prompts["system_prompt"].read_text() == "Be precise.\n"
    assert prompts["user_prompt"] == tmp_path / "user.txt"


def test_dataset_name_and_split_make_an_hf_spec(tmp_path: Path) -> None:
    found = read(tmp_path, "dataset: {name: paraloq/json_data_extraction, split: train}\n")
    assert found.values["dataset"] == "hf:paraloq/json_data_extraction:train"
    (tmp_path / "local").mkdir()
    assert read(tmp_path, "dataset: {name: local, split: test}\n").values["dataset"] == "local"


def test_every_problem_is_reported_with_its_key_path(tmp_path: Path) -> None:
    found = read(
        tmp_path,
        """
model:
  api_key: sk-live-123
  temperatur: 0.5
  model_name: {a: 1}
dataset:
  sample_size: 0
  invalid_samples: maybe
  split: test
prompts:
  user_file: missing.txt
metrics:
  field_matching: {numeric_tolerance: -1}
output:
  generate_report: "yes"
extra: 1
options:
  resampels: 10
""",
    )
    assert found.problems == [
        "extra: unknown section",
        "model.api_key: secrets do not belong in a config file; leave it null and set EXTRACTBENCH_API_KEY "
        "(or OPENAI_API_KEY) in the environment",
        "model.temperatur: unknown key (did you mean 'model.temperature'?)",
        "model.model_name: must be a single value, got a mapping",
        "dataset.sample_size: expected a whole number of samples, at least 1, got '0'",
        "dataset.invalid_samples: unknown invalid-samples policy 'maybe'; choose one of skip, warn, fail",
        "dataset.split: needs dataset.name",
        "prompts.user_file: cannot read prompt file missing.txt: No such file or directory",
        "metrics.field_matching.numeric_tolerance: expected a finite non-negative number, got '-1'",
        "output.generate_report: expected true or false, got 'yes'",
        "options.resampels: unknown option (did you mean 'resamples'?)",
    ]
    assert "sk-live-123" not in " ".join(found.problems)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("model: [1, 2]\n", "model: must be a mapping, got a list"),
        ("- a\n- b\n", "the top level must be a mapping of sections"),
        ("model:\n  model_name: a\n   bad: indent\n", "line 3, column 7: not valid YAML"),
    ],
)
def test_malformed_files(tmp_path: Path, text: str, problem: str) -> None:
    assert read(tmp_path, text).problems[0].startswith(problem)


def test_keys_without_an_option_take_only_what_the_plugin_does(tmp_path: Path) -> None:
    found = read(
        tmp_path,
        "performance: {batch_size: 1, num_workers: 1, cache_dir: null}\n"
        "metrics: {aggregation: {f1_type: micro}}\noutput: {save_predictions: true}\n",
    )
    assert found.problems == [] and found.values == {}
    found = read(
        tmp_path,
        "performance: {batch_size: 4, num_workers: 2, cache_dir: /tmp/c}\n"
        "metrics: {enabled: [field_f1], aggregation: {f1_type: macro}}\n"
        "output: {save_per_sample: false}\n",
    )
    assert found.problems == [
        "performance.batch_size: 4 cannot be applied: each sample is one request; requests run concurrently "
        "(performance.concurrency); only 1 (or null) is accepted",
        "performance.num_workers: 2 cannot be applied: worker processes come from pytest-xdist: run pytest -n N; "
        "only 1 (or null) is accepted",
        'performance.cache_dir: "/tmp/c" cannot be applied: reused answers are kept in .extractbench/cache/ under '
        "the directory pytest runs from (performance.enable_caching turns the cache on); only null is accepted",
        'metrics.enabled: ["field_f1"] cannot be applied: every metric is always computed; remove the key; only '
        "null is accepted",
        'metrics.aggregation.f1_type: "macro" cannot be applied: the headline F1 is micro-averaged; macro and '
        'weighted F1 are reported beside it in metrics.json; only "micro" (or null) is accepted',
        "output.save_per_sample: false cannot be applied: samples.jsonl is always written; only true (or null) is "
        "accepted",
    ]


def test_the_key_table_names_agreed_options() -> None:
    # Options another issue adds (live pipeline, performance) are listed by their agreed names.
    agreed = {
        "base_url",
        "structured_output",
        "concurrency",
        "temperature",
        "max_tokens",
        "decoding_seed",
        "timeout",
        "retries",
        "system_prompt",
        "user_prompt",
        "no_cache",
        "slots",
        "price_input",
        "price_output",
        "no_html_report",
    }
    mapped = set(KEY_PATHS.values())
    assert mapped - agreed <= set(OPTIONS_BY_NAME), mapped - agreed - set(OPTIONS_BY_NAME)
    assert not set(KEY_PATHS) & set(FIXED)


@pytest.mark.parametrize(
    ("value", "name", "expected"),
    [
        ("http://user:pw@host:8000/v1", "base_url", "http://***@host:8000/v1"),
        ("https://h/v1?api_key=abc&x=1", "base_url", "https://h/v1?api_key=***&x=1"),
        ("sk-123", "judge_api_key", "***"),
        (["http://a:b@h1", "http://h2"], "base_url", ["http://***@h1", "http://h2"]),
        ({"token": "t", "url": "http://u:p@h"}, "x", {"token": "***", "url": "http://***@h"}),
        (None, "api_key", None),
        ("plain", "model", "plain"),
    ],
)
def test_redact(value: object, name: str, expected: object) -> None:
    assert redact(value, name) == expected


def test_validate_config_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate-config", str(ROOT / "fixtures" / "config.yaml")]) == 0
    assert "OK" in capsys.readouterr().out
    bad = tmp_path / "bad.yaml"
    bad.write_text("dataset: {sample_size: -3, random_seed: x}\nmetrics: {sla: gold}\n")
    assert main(["validate-config", str(bad)]) == 1
    err = capsys.readouterr().err
    assert f"{bad}: dataset.sample_size:" in err and f"{bad}: dataset.random_seed:" in err
    assert f"{bad}: metrics.sla: unknown SLA tier 'gold'" in err and "3 problem(s)" in err
    assert main(["validate-config", str(tmp_path / "none.yaml")]) == 1
    assert "cannot read the file" in capsys.readouterr().err


def test_data_options_record() -> None:
    assert DataOptions(columns=(("text", "doc"),), sample=5).as_dict() == {
        "columns": {"text": "doc"},
        "sample": 5,
        "seed": 42,
        "invalid_samples": "warn",
        "cache_dir": None,
        "input": "text",
    }


def test_dataset_stats_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from pytest_extractbench.dataset import load_dataset, subsample
    from pytest_extractbench.dataset.statistics import dataset_statistics

    assert main(["dataset-stats", "bundled", "--sample", "10", "--seed", "1", "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["statistics"] == json.loads(json.dumps(dataset_statistics(subsample(load_dataset().samples, 10, 1))))
    assert printed["statistics"]["num_samples"] == 10 and printed["invalid_samples"] == []
    assert main(["dataset-stats", "bundled"]) == 0
    text = capsys.readouterr().out
    assert "samples: 52 (52 distinct schemas)" in text and "complexity bins: 'simple'=" in text
    bad = tmp_path / "d.jsonl"
    bad.write_text('{"id": "x", "text": "t", "schema": {"type": "object"}}\n')
    assert main(["dataset-stats", str(bad)]) == 0
    assert "1 invalid sample problem(s):" in capsys.readouterr().out
    assert main(["dataset-stats", str(tmp_path / "missing.jsonl")]) == 2
    assert "no such file or folder" in capsys.readouterr().err
    assert main(["dataset-stats", "bundled", "--columns", "nonsense"]) == 2


@pytest.mark.parametrize(
    ("name", "secret"),
    [
        ("api_key", True),
        ("token", True),
        ("hf_token", True),
        ("access_token", True),
        ("password", True),
        ("max_tokens", False),
        ("prompt_tokens", False),
        ("tokens_per_s", False),
        ("context_tokens", False),
    ],
)
def test_token_limits_are_recorded_and_token_credentials_are_not(name: str, secret: bool) -> None:
    from pytest_extractbench.config.file import REDACTED, redact

    assert (redact("123", name) == REDACTED) is secret


def test_validate_config_takes_the_spec_s_config_flag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("metrics: {sla: gold}\n")
    assert main(["validate-config", "--config", str(ROOT / "fixtures" / "config.yaml")]) == 0
    assert main(["validate-config", f"--config={bad}"]) == 1
    assert f"{bad}: metrics.sla: unknown SLA tier 'gold'" in capsys.readouterr().err
    assert main(["validate-config"]) == 2
    assert main(["validate-config", str(bad), "--config", str(bad)]) == 2
    assert "give the config file once" in capsys.readouterr().err
