"""Options act or are refused: whitespace, array order, and config-file keys no option backs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from benchrun import OFFLINE_ARGS

from pytest_extractbench.cli import main

SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}}},
}
SAMPLES = [
    {"id": "a", "text": "t", "schema": SCHEMA, "expected": {"name": "Ann  Lee", "tags": ["x", "y"]}},
    {"id": "b", "text": "t", "schema": SCHEMA, "expected": {"name": "Bo Chan", "tags": ["p", "q"]}},
]
# a: one space where the gold has two; b: the tags reversed
OUTPUTS = [
    {"id": "a", "output": {"name": "Ann Lee", "tags": ["x", "y"]}},
    {"id": "b", "output": {"name": "Bo Chan", "tags": ["q", "p"]}},
]


def bench(pytester: pytest.Pytester, *args: str) -> dict:
    for name, rows in (("data.jsonl", SAMPLES), ("preds.jsonl", OUTPUTS)):
        (pytester.path / name).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = f"out{len(list(pytester.path.glob('out*')))}"
    result = pytester.runpytest(
        "-p",
        "no:randomly",
        "--extractbench",
        *OFFLINE_ARGS,
        "--extractbench-output",
        out,
        *args,
    )
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    return json.loads((pytester.path / out / "metrics.json").read_text())["models"]["predictions"]


@pytest.mark.slow
def test_keep_whitespace_makes_a_spacing_difference_count(pytester: pytest.Pytester) -> None:
    default = bench(pytester)
    kept = bench(pytester, "--extractbench-keep-whitespace")
    # 4 fields: with normalization all exact; kept, "Ann Lee" vs "Ann  Lee" is partial (composite < 0.95)
    assert default["field_f1_strict"] == pytest.approx(1.0)
    assert kept["field_f1_strict"] == pytest.approx(3 / 4)


@pytest.mark.slow
def test_unordered_arrays_makes_reversed_tags_an_exact_sample(pytester: pytest.Pytester) -> None:
    default = bench(pytester)
    unordered = bench(pytester, "--extractbench-unordered-arrays")
    # b's tags hold the same elements in another order: exact match 1/2 (only a) -> 2/2
    assert default["exact_match_rate"] == pytest.approx(0.5)
    assert unordered["exact_match_rate"] == pytest.approx(1.0)


def test_config_keys_map_onto_them(pytester: pytest.Pytester) -> None:
    (pytester.path / "bench.yaml").write_text(
        "metrics: {field_matching: {normalize_whitespace: false, unordered_arrays: true}}\n", encoding="utf-8"
    )
    configured = bench(pytester, "--extractbench-config", "bench.yaml")
    assert configured["field_f1_strict"] == pytest.approx(3 / 4) and configured["exact_match_rate"] == pytest.approx(
        0.5
    )


@pytest.mark.parametrize(
    "yaml_text, key",
    [
        ("performance: {batch_size: 8}\n", "performance.batch_size: 8 cannot be applied"),
        ("metrics: {aggregation: {f1_type: macro}}\n", 'metrics.aggregation.f1_type: "macro" cannot be applied'),
        ("metrics: {enabled: [field_f1]}\n", 'metrics.enabled: ["field_f1"] cannot be applied'),
    ],
)
def test_a_key_that_cannot_act_stops_the_run_and_validate_config_agrees(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str], yaml_text: str, key: str
) -> None:
    config = pytester.path / "bench.yaml"
    config.write_text(yaml_text, encoding="utf-8")
    (pytester.path / "preds.jsonl").write_text("".join(json.dumps(r) + "\n" for r in OUTPUTS), encoding="utf-8")
    result = pytester.runpytest("--extractbench", "--extractbench-config", "bench.yaml")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert key in result.stderr.str() and "is accepted" in result.stderr.str()
    capsys.readouterr()
    assert main(["validate-config", str(config)]) == 1
    assert key in capsys.readouterr().err


def test_the_example_config_only_carries_keys_that_act(capsys: pytest.CaptureFixture[str]) -> None:
    example = Path(__file__).resolve().parents[2] / "fixtures" / "config.yaml"
    assert main(["validate-config", str(example)]) == 0
    out = capsys.readouterr()
    assert "note:" not in out.out and out.err == ""


def test_runs_and_baselines_stay_in_the_directory_pytest_runs_from(
    pytester: pytest.Pytester, tmp_path_factory: pytest.TempPathFactory
) -> None:
    # no ini file: pytest would pick its rootdir from path-like arguments, option values included
    elsewhere = tmp_path_factory.mktemp("other-project")
    (elsewhere / "preds.jsonl").write_text("".join(json.dumps(r) + "\n" for r in OUTPUTS), encoding="utf-8")
    (elsewhere / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in SAMPLES), encoding="utf-8")
    assert not list(pytester.path.glob("*.ini")) and not (pytester.path / "pyproject.toml").exists()
    result = pytester.runpytest(
        "--extractbench",
        "--extractbench-dataset",
        str(elsewhere / "data.jsonl"),
        "--extractbench-predictions",
        str(elsewhere / "preds.jsonl"),
        "--extractbench-sla",
        "none",
        "--extractbench-save",
        "main",
    )
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    saved = list((pytester.path / ".extractbench" / "baselines").glob("*_main.json"))
    runs = list((pytester.path / ".extractbench" / "runs").iterdir())
    assert len(saved) == 1 and len(runs) == 1
    assert not (elsewhere / ".extractbench").exists() and not (elsewhere.parent / ".extractbench").exists()
    result.stdout.fnmatch_lines([f"*results in {runs[0]}*", f"*{saved[0]}*"])


def test_a_path_into_another_project_does_not_move_them_there(
    pytester: pytest.Pytester, tmp_path_factory: pytest.TempPathFactory
) -> None:
    # pytest finds its ini file from path-like arguments too: here the other project's pyproject.toml
    pytester.makeini("[pytest]\n")
    other = tmp_path_factory.mktemp("other-project")
    (other / "pyproject.toml").write_text("[tool.pytest.ini_options]\n", encoding="utf-8")
    (other / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in SAMPLES), encoding="utf-8")
    (pytester.path / "preds.jsonl").write_text("".join(json.dumps(r) + "\n" for r in OUTPUTS), encoding="utf-8")
    result = pytester.runpytest(
        "--extractbench",
        "--extractbench-dataset",
        str(other / "data.jsonl"),
        "--extractbench-predictions",
        "preds.jsonl",
        "--extractbench-sla",
        "none",
        "--extractbench-save",
        "main",
    )
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    assert list((pytester.path / ".extractbench" / "baselines").glob("*_main.json"))
    assert not (other / ".extractbench").exists()


def test_with_an_ini_file_they_stay_in_the_project_root(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\n")
    sub = pytester.mkdir("sub")
    for name, rows in (("data.jsonl", SAMPLES), ("preds.jsonl", OUTPUTS)):
        (sub / name).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(sub)
        result = pytester.runpytest(
            "--extractbench",
            *OFFLINE_ARGS,
            "--extractbench-save",
            "main",
        )
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    assert list((pytester.path / ".extractbench" / "baselines").glob("*_main.json"))
    assert not (sub / ".extractbench").exists()
