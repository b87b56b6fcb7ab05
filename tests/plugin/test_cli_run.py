"""`extractbench run` with its short spellings: --config, --sample, --seed, --models."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_extractbench.cli import run_arguments

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    "given, expected",
    [
        (["--config", "c.yaml"], ["--extractbench-config", "c.yaml"]),
        (
            ["--config=c.yaml", "--sample=5", "--seed=9"],
            ["--extractbench-config=c.yaml", "--extractbench-sample=5", "--extractbench-seed=9"],
        ),
        (["--models", "a,b", "-q"], ["--model", "a,b", "-q"]),
        (["--extractbench-sample", "3", "-k", "seed"], ["--extractbench-sample", "3", "-k", "seed"]),  # left alone
    ],
)
def test_spellings_become_the_plugin_s_options(given: list[str], expected: list[str]) -> None:
    assert run_arguments(given) == expected


@pytest.mark.slow
def test_a_run_with_the_spec_s_spellings_uses_them(tmp_path: Path) -> None:
    config = tmp_path / "bench.yaml"
    config.write_text("metrics: {sla: none}\n", encoding="utf-8")
    argv = [
        sys.executable,
        "-m",
        "pytest_extractbench",
        "run",
        "--config",
        str(config),
        "--sample",
        "5",
        "--seed",
        "7",
        "--extractbench-predictions",
        str(ROOT / "fixtures" / "predictions" / "demo.jsonl"),
        "--extractbench-output",
        str(tmp_path / "out"),
        "-p",
        "no:cacheprovider",
        "-p",
        "no:randomly",
        "-q",
    ]
    done = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "5 passed" in done.stdout
    options = json.loads((tmp_path / "out" / "metrics.json").read_text())["run"]["config"]["options"]
    assert options["sample"] == {"value": 5, "source": "command line"}
    assert options["seed"] == {"value": 7, "source": "command line"}
    assert options["sla"]["value"] == "none" and options["sla"]["source"].startswith("config")


def test_version_prints_the_installed_version(capsys) -> None:
    from importlib import metadata

    from pytest_extractbench.cli import main

    with pytest.raises(SystemExit) as stopped:
        main(["--version"])
    assert stopped.value.code == 0
    assert capsys.readouterr().out.strip() == f"extractbench {metadata.version('pytest-extractbench')}"


def test_run_help_lists_exactly_the_options_pytest_accepts(pytester: pytest.Pytester, capsys) -> None:
    from pytest_extractbench.cli import main

    with pytest.raises(SystemExit) as stopped:
        main(["run", "--help"])
    assert stopped.value.code == 0
    text = capsys.readouterr().out
    assert text.startswith("usage: extractbench run [--config FILE]")
    flat = " ".join(text.split())
    assert "docs/reference/options.md" in flat and "--sample (= --extractbench-sample)" in flat
    listed = {re.split(r"[ ,]", line.strip())[0] for line in text.splitlines() if line.startswith("  --extractbench")}
    # pytest --help: an option's own line starts with its name (help texts that mention options are indented more)
    lines = pytester.runpytest("--help").stdout.lines
    registered = {re.split(r"[=, ]", line.strip())[0] for line in lines if re.match(r"^ {2}--extractbench", line)}
    assert len(listed) > 20 and listed == registered
