"""Config input limits: each hostile input is refused with a message that names it, and nothing crashes, hangs
or fills memory. Numbers of thousands of digits, devices and FIFOs where a file is expected, keys given twice,
non-finite thresholds in every spelling, and a predictions row whose model is not a name."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_extractbench.cli import main
from pytest_extractbench.config.parsers import parse_compare_fail, parse_int, parse_requirement
from pytest_extractbench.core import jsonio, userfiles
from pytest_extractbench.dataset.predictions import PredictionsSpec, load_predictions
from pytest_extractbench.gating.subsets import SubsetConfigError, load_subsets

HUGE = "9" * 5000


def validate(path: Path | str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["validate-config", str(path)])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_a_five_thousand_digit_seed_is_refused_with_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "bench.yaml"
    config.write_text(f"dataset:\n  sample_size: 2\n  random_seed: {HUGE}\n")
    code, text = validate(config, capsys)
    assert code == 1 and "line 3, column 16" in text and "a number of 5,000 characters; at most 100" in text


@pytest.mark.parametrize("value", [HUGE, "9" * 30, str(2**63), str(-(2**63) - 1)])
def test_whole_numbers_on_the_command_line_fit_64_bits(value: str) -> None:
    with pytest.raises(Exception, match="whole number of at most 64 bits"):
        parse_int(value)
    assert parse_int(str(2**63 - 1)) == 2**63 - 1


@pytest.mark.slow
def test_validate_config_refuses_a_device_without_reading_it() -> None:
    # a child process with a memory cap: reading /dev/zero whole would hit it within a second
    script = (
        "import resource, sys; resource.setrlimit(resource.RLIMIT_AS, (1 << 31, 1 << 31)); "
        "from pytest_extractbench.cli import main; sys.exit(main(['validate-config', '/dev/zero']))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert done.returncode == 1, done.stderr
    assert "/dev/zero is a device, not a regular file" in done.stdout + done.stderr


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_is_refused_instead_of_blocking(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    fifo = tmp_path / "bench.yaml"
    os.mkfifo(fifo)  # open() of a FIFO with no writer would block forever
    code, text = validate(fifo, capsys)
    assert code == 1 and "is a FIFO (named pipe), not a regular file" in text
    with pytest.raises(userfiles.NotAFile, match="FIFO"):
        list(jsonio.iter_jsonl(fifo))
    with pytest.raises(userfiles.NotAFile, match="FIFO"):
        jsonio.load_file(fifo)
    with pytest.raises((SubsetConfigError, OSError), match="FIFO"):
        load_subsets(fifo)


def test_a_directory_is_refused_with_its_kind(tmp_path: Path) -> None:
    with pytest.raises(userfiles.NotAFile, match="is a directory"):
        userfiles.read_bytes(tmp_path, 10)
    big = tmp_path / "big.yaml"
    big.write_bytes(b"x" * 11)
    with pytest.raises(userfiles.NotAFile, match="larger than 10 bytes"):
        userfiles.read_bytes(big, 10)


@pytest.mark.parametrize(
    "text, key, line, first",
    [
        ("dataset:\n  random_seed: 1\n  random_seed: 2\n", "random_seed", 3, 2),
        ("metrics:\n  sla: target\nmodel:\n  timeout: 5\nmetrics:\n  sla: none\n", "metrics", 5, 1),
    ],
)
def test_a_duplicate_key_is_refused_naming_the_key_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, key: str, line: int, first: int
) -> None:
    config = tmp_path / "bench.yaml"
    config.write_text(text)
    code, output = validate(config, capsys)
    assert code == 1 and f"line {line}, column" in output
    assert f"duplicate key {key!r} (first on line {first})" in output


def test_a_merge_key_override_is_not_a_duplicate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "bench.yaml"
    config.write_text("metrics: &m\n  sla: target\noptions:\n  <<: {stats_seed: 1}\n  stats_seed: 2\n")
    code, output = validate(config, capsys)
    assert "duplicate" not in output and code == 0, output


def test_a_duplicate_key_in_a_subsets_file_is_refused(tmp_path: Path) -> None:
    rules = tmp_path / "rules.yaml"
    rules.write_text("subsets:\n  - name: a\n    name: b\n    conditions: []\n")
    with pytest.raises(SubsetConfigError, match=r"line 3, column 5: .*duplicate key 'name' \(first on line 2\)"):
        load_subsets(rules)


NON_FINITE = ["1e999", "-1e999", "inf", "-inf", "nan", ".inf", "-.inf", ".nan", "Infinity", "NaN", "1" * 400, "1e999%"]


@pytest.mark.parametrize("number", NON_FINITE)
def test_non_finite_thresholds_are_refused_in_every_spelling(number: str) -> None:
    with pytest.raises(Exception) as info:
        parse_requirement(f"eqs>={number}")
    assert "finite" in str(info.value) or "expected METRIC>=VALUE" in str(info.value)
    with pytest.raises(argparse.ArgumentTypeError):
        parse_compare_fail(f"eqs:-{number}")


@pytest.mark.parametrize("number", [".inf", "-.inf", ".nan", "1e999"])
def test_non_finite_thresholds_in_a_config_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], number: str
) -> None:
    config = tmp_path / "bench.yaml"
    config.write_text(f"metrics:\n  require: ['eqs>={number}']\n  sample_min_eqs: {number}\n")
    code, output = validate(config, capsys)
    assert code == 1 and "metrics.require" in output and "metrics.sample_min_eqs" in output


@pytest.mark.parametrize(
    "name, number",
    [
        ("rules.yaml", ".inf"),
        ("rules.yaml", "-.inf"),
        ("rules.yaml", ".nan"),
        ("rules.yaml", "1.0e+999"),
        ("rules.json", "1e999"),
        ("rules.json", "NaN"),
    ],
)
def test_non_finite_bounds_in_a_subset_condition(tmp_path: Path, name: str, number: str) -> None:
    rules = tmp_path / name
    rules.write_text(
        f'{{"subsets": [{{"name": "a", "conditions": [{{"field": "total", "operator": "gt", "value": {number}}}]}}]}}'
    )  # JSON is YAML too
    with pytest.raises(SubsetConfigError, match=r"subsets\[0\]\.conditions\[0\]\.value: must be a finite number"):
        load_subsets(rules)


@pytest.mark.parametrize("model", [{"a": 1}, ["m"], 7, True])
def test_a_model_that_is_not_a_string_is_an_input_problem(tmp_path: Path, model: object) -> None:
    preds = tmp_path / "preds.jsonl"
    preds.write_text(
        json.dumps({"id": "s1", "output": "{}", "model": "ok"})
        + "\n"
        + json.dumps({"id": "s2", "output": "{}", "model": model})
        + "\n"
    )
    source = load_predictions([PredictionsSpec(preds)], default_model=None, base_dir=tmp_path)
    assert source.models == ["ok"]  # no model named "{'a': 1}"
    (problem,) = source.problems
    text = str(problem.as_dict())
    assert "line 2" in text and "'model' must be a string" in text and "s2" in text
