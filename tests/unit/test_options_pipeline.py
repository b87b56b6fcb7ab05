"""The option table drives everything: settings are built from it, every layer reaches every entry, the config
file's key map comes from it, and registering the options stays cheap."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from pytest_extractbench.config.file import KEY_PATHS
from pytest_extractbench.config.layers import OptionSources, resolve_layers
from pytest_extractbench.config.settings import Settings
from pytest_extractbench.config.table import OPTIONS, OPTIONS_BY_NAME

# -- the hand-written build the table replaced: the reference the generic build must equal --------------------


def _reference_settings(values: dict[str, Any], rootdir: Path) -> Settings:
    from pytest_extractbench.analysis.performance import Prices
    from pytest_extractbench.dataset.sources import DataOptions
    from pytest_extractbench.live.options import DEFAULT_TIMEOUT_S, EMBEDDED_TIMEOUT_S, LiveOptions
    from pytest_extractbench.report.outputs import ReportOptions
    from pytest_extractbench.scoring import ScoringOptions, StatsOptions
    from pytest_extractbench.tracks.base import TrackSettings

    scoring = ScoringOptions(
        case_sensitive=values["case_sensitive"],
        null_equals_absent=not values["null_as_value"],
        strict_types=not values["lenient_types"],
        validate_formats=not values["no_format_check"],
        anls_star=not values["no_anls"],
        float_epsilon=values["float_epsilon"],
        exact_within=values["exact_within"],
        eqs_weights=values["eqs_weights"],
        list_similarity=values["list_similarity"],
        normalisers=values["normalise"],
        normalize_whitespace=not values["keep_whitespace"],
        array_order_matters=not values["unordered_arrays"],
        post_processors=values["post_process"],
        semantic=values["semantic"],
        semantic_model=values["semantic_model"],
        judge_model=values["judge"],
        judge_url=values["judge_url"],
        statistics=StatsOptions(
            resamples=values["resamples"],
            confidence=values["confidence"],
            seed=values["stats_seed"],
            alpha=values["alpha"],
            test=values["test"],
            reference_model=values["reference_model"],
            gap_threshold=values["gap_threshold"],
        ),
    )
    live = LiveOptions(
        base_urls=tuple(dict.fromkeys(values["base_url"])),
        structured_output=values["structured_output"],
        concurrency=values["concurrency"],
        temperature=values["temperature"],
        max_tokens=values["max_tokens"],
        decoding_seed=values["decoding_seed"],
        timeout_s=values["timeout"]
        if values["timeout"] is not None
        else (
            EMBEDDED_TIMEOUT_S
            if not values["base_url"] and values["replay"] is None and values["extractor"] is None
            else DEFAULT_TIMEOUT_S
        ),
        retries=values["retries"],
        stream=values["stream"],
        system_prompt=values["system_prompt"],
        user_prompt=values["user_prompt"],
        resume=values["resume"],
        replay=values["replay"],
        record=values["record"],
        cache=bool(values["cache"]),
        no_cache=bool(values["no_cache"]),
        slots=values["slots"],
        context=values["context"],
        prompt_budget=values["prompt_budget"],
        extractor=values["extractor"],
        heartbeat_s=values["heartbeat"],
    )
    return Settings(
        enabled=True,
        models=values["model"],
        dataset=values["dataset"],
        predictions=tuple(values["predictions"]),
        output=values["output"],
        sla=values["sla"],
        unmeasured=values["unmeasured"],
        report_only=bool(values["report_only"]),
        sample_min_eqs=values["sample_min_eqs"],
        scoring=scoring,
        rootdir=rootdir,
        subsets=values["subsets"],
        save=values["save"],
        compare=values["compare"],
        compare_fail=tuple(values["compare_fail"]),
        baseline_min_unchanged=values["baseline_min_unchanged"],
        sample_regression_delta=values["sample_regression_delta"],
        require=tuple(values["require"]),
        verdict_thresholds=values["verdict_thresholds"],
        prices=Prices(values["price_input"], values["price_output"]),
        live=live,
        report=ReportOptions(
            html=not values["no_html_report"], charts=values["charts"], failure_details=values["failure_details"]
        ),
        tracks=TrackSettings(
            track=values["track"], repeats=values["repeats"], otel=values["otel"], calibration=values["calibration"]
        ),
        data=DataOptions(
            columns=tuple(values["columns"]),
            sample=values["sample"],
            seed=values["seed"],
            invalid_samples=values["invalid_samples"],
            cache_dir=values["dataset_cache"],
            input=values["input"],
        ),
    )


# The config file's key map as it was written by hand before the table declared it.
OLD_KEY_PATHS = {
    "model.base_url": "base_url",
    "model.model_name": "model",
    "model.temperature": "temperature",
    "model.max_tokens": "max_tokens",
    "model.timeout": "timeout",
    "model.max_retries": "retries",
    "model.stream": "stream",
    "metrics.require": "require",
    "metrics.unmeasured": "unmeasured",
    "model.structured_output": "structured_output",
    "model.seed": "decoding_seed",
    "model.price_input": "price_input",
    "model.price_output": "price_output",
    "dataset.name": "dataset",
    "dataset.columns": "columns",
    "dataset.sample_size": "sample",
    "dataset.random_seed": "seed",
    "dataset.invalid_samples": "invalid_samples",
    "dataset.cache_dir": "dataset_cache",
    "prompts.system_file": "system_prompt",
    "prompts.user_file": "user_prompt",
    "prompts.system": "system_prompt",
    "prompts.user": "user_prompt",
    "metrics.field_matching.numeric_tolerance": "float_epsilon",
    "metrics.field_matching.case_sensitive": "case_sensitive",
    "metrics.sla": "sla",
    "metrics.eqs_weights": "eqs_weights",
    "metrics.sample_min_eqs": "sample_min_eqs",
    "output.results_dir": "output",
    "output.generate_report": "no_html_report",
    "output.charts": "charts",
    "output.failure_details": "failure_details",
    "output.heartbeat": "heartbeat",
    "metrics.field_matching.exact_within": "exact_within",
    "metrics.field_matching.list_similarity": "list_similarity",
    "metrics.field_matching.normalisers": "normalise",
    "metrics.field_matching.normalize_whitespace": "keep_whitespace",
    "metrics.field_matching.unordered_arrays": "unordered_arrays",
    "performance.concurrency": "concurrency",
    "performance.slots": "slots",
    "performance.context": "context",
    "performance.prompt_budget": "prompt_budget",
    "performance.enable_caching": "cache",
    "dataset.input": "input",
}


def _given_text(tmp_path: Path) -> dict[str, str]:
    """A value other than the default for every option, as text."""
    subsets = Path(__file__).parents[2] / "fixtures" / "subsets.yaml"
    for name in ("sys.txt", "user.txt"):
        (tmp_path / name).write_text("{text} {schema}", encoding="utf-8")
    text = {
        "model": "alpha,beta",
        "dataset": "data.jsonl",
        "predictions": "alpha=preds.jsonl",
        "output": "out",
        "sla": "target",
        "unmeasured": "warn",
        "report_only": "true",
        "sample_min_eqs": "0.4",
        "case_sensitive": "true",
        "null_as_value": "true",
        "lenient_types": "true",
        "no_format_check": "true",
        "no_anls": "true",
        "float_epsilon": "0.01",
        "exact_within": "0.02",
        "list_similarity": "0.8",
        "normalise": "no_punctuation,no_legal_suffix",
        "keep_whitespace": "true",
        "unordered_arrays": "true",
        "eqs_weights": "0.25,0.25,0.25,0.25",
        "post_process": "nulls_as_absent",
        "semantic": "local",
        "semantic_model": "emb",
        "judge": "judge-model",
        "judge_url": "http://judge:1/v1",
        "resamples": "500",
        "confidence": "0.9",
        "stats_seed": "7",
        "alpha": "0.1",
        "test": "ttest",
        "reference_model": "alpha",
        "gap_threshold": "0.2",
        "subsets": str(subsets),
        "save": "nightly",
        "compare": "0001",
        "compare_fail": "eqs:-0.02",
        "baseline_min_unchanged": "0.8",
        "sample_regression_delta": "0.1",
        "require": "judge_score>=0.8",
        "verdict_thresholds": "0.02,-0.03",
        "price_input": "0.5",
        "price_output": "1.5",
        "base_url": "http://host:8000/v1",
        "extractor": "mymod:extract",
        "structured_output": "json_object",
        "concurrency": "3",
        "temperature": "0.7",
        "max_tokens": "512",
        "decoding_seed": "5",
        "timeout": "30",
        "retries": "1",
        "system_prompt": str(tmp_path / "sys.txt"),
        "user_prompt": str(tmp_path / "user.txt"),
        "resume": "prev",
        "replay": "old",
        "record": "cas",
        "cache": "true",
        "no_cache": "true",
        "stream": "true",
        "slots": "2",
        "context": "8192",
        "prompt_budget": "off",
        "heartbeat": "300",
        "no_html_report": "true",
        "charts": "off",
        "failure_details": "3",
        "track": "repair",
        "repeats": "3",
        "otel": "console",
        "calibration": "true",
        "columns": "text=document",
        "sample": "5",
        "seed": "9",
        "invalid_samples": "fail",
        "dataset_cache": "hfcache",
        "input": "both",
    }
    assert set(text) == set(OPTIONS_BY_NAME) - {"config"}, "every option needs a sample value here"
    return text


def _sources(tmp_path: Path, cli: dict[str, Any] | None = None, ini: dict[str, str] | None = None) -> OptionSources:
    ini = ini or {}
    return OptionSources(cli=cli or {}, getini=lambda key: ini.get(key, ""), invocation_dir=tmp_path, rootpath=tmp_path)


def _target(settings: Settings, target: str) -> Any:
    value: Any = settings
    for part in target.split("."):
        value = getattr(value, part)
    return value


@pytest.fixture(autouse=True)
def _no_extractbench_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for spec in OPTIONS:
        monkeypatch.delenv(spec.env, raising=False)


def test_defaults_build_the_same_settings_as_the_hand_written_build(tmp_path: Path) -> None:
    values, sources, _ = resolve_layers(_sources(tmp_path))
    assert set(sources.values()) == {"default"}
    assert repr(Settings.from_values(values, enabled=True, rootdir=tmp_path)) == repr(
        _reference_settings(values, tmp_path)
    )
    assert Settings.from_values(values, enabled=True, rootdir=tmp_path).live.timeout_s == 600.0  # embedded server


@pytest.mark.parametrize("layer", ["cli", "env", "ini", "config file"])
def test_every_option_reaches_its_settings_field_from_each_layer(
    layer: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = _given_text(tmp_path)
    defaults = Settings.from_values(resolve_layers(_sources(tmp_path))[0], enabled=True, rootdir=tmp_path)
    cli: dict[str, Any] = {}
    ini: dict[str, str] = {}
    if layer == "cli":  # what argparse hands over: converted values, repeatable ones as lists
        cli = {
            name: [OPTIONS_BY_NAME[name].converter(raw)]
            if OPTIONS_BY_NAME[name].multiple
            else OPTIONS_BY_NAME[name].converter(raw)
            for name, raw in text.items()
        }
    elif layer == "env":
        for name, raw in text.items():
            monkeypatch.setenv(OPTIONS_BY_NAME[name].env, raw)
    elif layer == "ini":
        ini = {OPTIONS_BY_NAME[name].ini: raw for name, raw in text.items()}
    else:
        lines = ["options:"] + [f"  {name}: '{raw}'" for name, raw in text.items()]
        config = tmp_path / "bench.yaml"
        config.write_text("\n".join(lines) + "\n", encoding="utf-8")
        cli = {"config": config}
    values, sources, _ = resolve_layers(_sources(tmp_path, cli, ini))
    settings = Settings.from_values(values, enabled=True, rootdir=tmp_path)
    assert repr(settings) == repr(_reference_settings(values, tmp_path))
    expected_source = {"cli": "command line", "env": "environment", "ini": "ini", "config file": "config file"}[layer]
    for name in text:
        spec = OPTIONS_BY_NAME[name]
        assert sources[name].startswith(expected_source), name
        assert _target(settings, spec.target) != _target(defaults, spec.target), name


def test_layers_keep_their_precedence_through_the_generic_build(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "bench.yaml"
    config.write_text(
        "model:\n  timeout: 40\n  temperature: 0.3\n  seed: 11\nperformance:\n  enable_caching: true\n"
        "output:\n  generate_report: false\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("EXTRACTBENCH_TEMPERATURE", "0.5")
    monkeypatch.setenv("EXTRACTBENCH_BASE_URL", "http://a:1/v1 http://a:1/v1 http://b:2/v1")
    ini = {"extractbench_timeout": "50", "extractbench_decoding_seed": "12", "extractbench_retries": "0"}
    values, sources, _ = resolve_layers(_sources(tmp_path, {"config": config, "timeout": 20.0}, ini))
    settings = Settings.from_values(values, enabled=True, rootdir=tmp_path)
    assert repr(settings) == repr(_reference_settings(values, tmp_path))
    live = settings.live
    assert (live.timeout_s, live.temperature, live.decoding_seed, live.retries) == (20.0, 0.5, 11, 0)
    assert live.base_urls == ("http://a:1/v1", "http://b:2/v1")  # a replica given twice counts once
    assert live.cache is True and settings.report.html is False  # a plain and an inverted config-file switch
    assert sources["decoding_seed"] == "config file model.seed" and sources["retries"] == "ini"


def test_the_config_file_key_map_is_the_table_s(tmp_path: Path) -> None:
    assert KEY_PATHS == OLD_KEY_PATHS
    for key, name in KEY_PATHS.items():
        assert key in OPTIONS_BY_NAME[name].yaml


def test_an_unknown_config_file_key_keeps_its_message(tmp_path: Path) -> None:
    from pytest_extractbench.core.errors import UsageProblem

    config = tmp_path / "bench.yaml"
    config.write_text("model:\n  model_nme: x\n", encoding="utf-8")
    with pytest.raises(UsageProblem) as raised:
        resolve_layers(_sources(tmp_path, {"config": config}))
    assert str(raised.value) == (
        f"extractbench: config file {config}: model.model_nme: unknown key (did you mean 'model.model_name'?)"
    )


def test_every_target_is_a_settings_field() -> None:
    values = {spec.name: spec.default_value() for spec in OPTIONS}
    settings = Settings.from_values(values, enabled=False, rootdir=Path("."))
    targets = [spec.target for spec in OPTIONS if spec.target]
    assert len(targets) == len(set(targets)), "two options fill the same field"
    for target in targets:
        _target(settings, target)  # AttributeError when a target names no field


def test_help_texts_cite_no_spec_section() -> None:
    for spec in OPTIONS:
        assert not re.search(r"\bspec\b", spec.help, re.IGNORECASE), spec.name


HEAVY = ("numpy", "scipy", "openai", "datasets", "matplotlib", "jinja2")


def test_the_entry_point_imports_no_heavy_library() -> None:
    code = f"import sys, pytest_extractbench.plugin\nprint(','.join(m for m in {HEAVY!r} if m in sys.modules))"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == ""


@pytest.mark.slow
def test_the_public_names_import_on_first_use() -> None:
    code = (
        "import sys, pytest_extractbench as p\n"
        "assert 'numpy' not in sys.modules\n"
        "from pytest_extractbench import score_sample, evaluate, load_run, RunResult, ModelResponse\n"
        "assert all(getattr(p, name) is not None for name in p.__all__)\n"
        "assert set(p.__all__) <= set(dir(p))\n"
        "print(score_sample.__module__)"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.strip().startswith("pytest_extractbench.scoring")


def test_every_option_parses_from_pytest_s_command_line(pytester: pytest.Pytester) -> None:
    from pytest_extractbench.plugin.options import settings_from_config

    text = _given_text(pytester.path)
    argv = ["--extractbench"]
    for name, raw in text.items():
        spec = OPTIONS_BY_NAME[name]
        argv += [spec.option] if spec.flag else [spec.option, raw]
    config = pytester.parseconfig(*argv)
    settings = settings_from_config(config)
    values, sources, _ = resolve_layers(_sources(pytester.path))
    defaults = Settings.from_values(values, enabled=True, rootdir=pytester.path)
    options = settings.config["options"]
    for name in text:
        spec = OPTIONS_BY_NAME[name]
        assert options[name]["source"] == "command line", name
        assert _target(settings, spec.target) != _target(defaults, spec.target), name
