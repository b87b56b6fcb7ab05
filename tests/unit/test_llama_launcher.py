"""The extractbench-llama-server launcher maps llama-server's flags onto xllamacpp's parameters."""

from __future__ import annotations

from pathlib import Path

import pytest

from _require import import_or_skip
from pytest_extractbench.live.backends.llama_launcher import _parser, build_params

xllamacpp = import_or_skip("xllamacpp", "the `local` extra's xllamacpp is not installed")


def test_the_flags_the_embedded_server_passes_reach_the_parameters(tmp_path: Path) -> None:
    template = tmp_path / "t.jinja"
    template.write_text("{{ messages[0]['content'] }}", encoding="utf-8")
    args, unknown = _parser().parse_known_args(
        [
            "--model",
            "/m.gguf",
            "--host",
            "127.0.0.1",
            "--port",
            "4321",
            "--parallel",
            "3",
            "--ctx-size",
            "6144",
            "--threads",
            "1",
            "--batch-size",
            "512",
            "-ub",
            "256",
            "--alias",
            "tiny",
            "--jinja",
            "--no-webui",
            "--chat-template-file",
            str(template),
            "--embeddings",
            "--pooling",
            "mean",
            "--no-repack",
            "--flash-attn",
        ]
    )
    assert unknown == ["--flash-attn"]
    params = build_params(args)
    assert params.model.path == "/m.gguf" and list(params.hostnames) == ["127.0.0.1"] and params.port == 4321
    assert (params.n_parallel, params.n_ctx, params.cpuparams.n_threads) == (3, 6144, 1)
    assert (params.n_batch, params.n_ubatch) == (512, 256)  # xllamacpp's own defaults are 2048 and 512
    assert set(params.model_alias) == {"tiny"} and params.use_jinja and not params.ui
    assert params.chat_template == "{{ messages[0]['content'] }}"
    assert params.embedding and int(params.pooling_type) == 1 and params.no_extra_bufts


def test_the_server_process_waits_passively_unless_told_otherwise(monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_extractbench.live.backends.llama_process import _child_env

    monkeypatch.delenv("OMP_WAIT_POLICY", raising=False)
    monkeypatch.setenv("LLAMA_API_KEY", "stray")
    env = _child_env(None)
    assert env["OMP_WAIT_POLICY"] == "PASSIVE" and "LLAMA_API_KEY" not in env
    monkeypatch.setenv("OMP_WAIT_POLICY", "ACTIVE")
    assert _child_env(None)["OMP_WAIT_POLICY"] == "ACTIVE"


def test_an_unknown_model_name_is_one_clear_line(capsys: pytest.CaptureFixture[str]) -> None:
    from pytest_extractbench.live.backends.llama_launcher import main

    import_or_skip("xllamacpp", "the 'local' extra is not installed")
    assert main(["--model", "no-such-model"]) == 2
    err = capsys.readouterr().err
    assert "unknown embedded model 'no-such-model'" in err and "qwen2.5-coder-0.5b" in err


def test_the_embedded_server_reads_one_micro_batch_a_turn_unless_told_otherwise() -> None:
    """Between two turns of its loop llama-server answers no /slots query and notices no closed connection."""
    from pytest_extractbench.live.backends.llama_process import BATCH_TOKENS, _batch_args

    assert _batch_args([]) == ["--batch-size", str(BATCH_TOKENS)] and BATCH_TOKENS == 512
    params = build_params(_parser().parse_known_args(["--model", "/m.gguf", *_batch_args([])])[0])
    assert params.n_batch == params.n_ubatch == BATCH_TOKENS  # one micro-batch: no speed is given up
    assert _batch_args(["--batch-size", "2048"]) == [] and _batch_args(["-b", "64"]) == []
