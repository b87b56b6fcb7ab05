"""The design card's command as written, `pytest --extractbench --model llama-3-8b`, against a served model."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from faultserver import FaultServer  # noqa: E402


def metrics_text(pytester: pytest.Pytester) -> str:
    out = next((pytester.path / ".extractbench" / "runs").iterdir())
    return (out / "metrics.json").read_text()


def config_of(pytester: pytest.Pytester) -> dict:
    return json.loads(metrics_text(pytester))["run"]["config"]["options"]


@pytest.mark.slow
def test_the_card_command_runs_against_openai_base_url(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FaultServer(models=("llama-3-8b",)) as server:  # answers a minimal instance of each sample's schema
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-secret")
        result = pytester.runpytest("--extractbench", "--model", "llama-3-8b", "--extractbench-sample", "4")
        bodies = list(server.requests)
    assert result.ret in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED), result.stdout.str()
    assert len(bodies) == 4 and {body["model"] for body in bodies} == {"llama-3-8b"}
    options = config_of(pytester)
    assert options["base_url"] == {"value": [server.url], "source": "environment OPENAI_BASE_URL"}
    assert "sk-test" not in metrics_text(pytester)


def test_extractbench_base_url_wins_over_openai_base_url(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FaultServer(models=("llama-3-8b",)) as used:
        monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens there
        monkeypatch.setenv("EXTRACTBENCH_BASE_URL", used.url)
        result = pytester.runpytest("--extractbench", "--model", "llama-3-8b", "--extractbench-sample", "2")
        assert len(used.requests) == 2, result.stdout.str()
    assert config_of(pytester)["base_url"]["source"] == "environment EXTRACTBENCH_BASE_URL"


@pytest.mark.slow
def test_without_model_the_one_served_model_is_used(pytester: pytest.Pytester) -> None:
    with FaultServer(models=("qwen-served",)) as server:
        result = pytester.runpytest(
            "--extractbench",
            "--extractbench-base-url",
            server.url,
            "--extractbench-sample",
            "2",
            "--extractbench-sla",
            "none",
        )
        assert {body["model"] for body in server.requests} == {"qwen-served"}
    result.stdout.fnmatch_lines(["*model qwen-served: 2 samples*"])


@pytest.mark.slow
def test_without_model_two_served_models_is_a_clear_usage_error(pytester: pytest.Pytester) -> None:
    with FaultServer(models=("a-model", "b-model")) as server:
        result = pytester.runpytest("--extractbench", "--extractbench-base-url", server.url)
        assert not server.requests
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert (
        "no model given and the server cannot pick one (it serves a-model, b-model): use --model NAME"
        in result.stderr.str()
    )


def test_an_unknown_model_without_a_server_says_how_to_point_at_one(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("OPENAI_BASE_URL", "EXTRACTBENCH_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    result = pytester.runpytest("--extractbench", "--model", "llama-3-8b")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert "unknown embedded model 'llama-3-8b'" in err
    assert "--extractbench-base-url http://HOST:PORT/v1 (or EXTRACTBENCH_BASE_URL / OPENAI_BASE_URL)" in err
