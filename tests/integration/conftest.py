"""What the integration tests share: the embedded server's installation check and the session's llama-servers."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytest_extractbench.live.backends.llama_models import DEFAULT_EMBEDDED_MODEL, MissingExtraError, resolve_model
from pytest_extractbench.live.backends.llama_process import EmbeddedServer, find_llama_server

FAST_MODEL = "gemma3-270m"  # the smallest registered model, in the dev extra


@pytest.fixture(scope="session")
def local_extra() -> None:
    """Skip when llama-server, the default model or the tests' fast model (gemma3-270m, in the dev extra) is
    not installed; under CI (env CI set) fail instead."""
    try:
        find_llama_server()
        resolve_model(DEFAULT_EMBEDDED_MODEL)
        resolve_model(FAST_MODEL)
    except MissingExtraError as exc:
        if os.environ.get("CI"):
            pytest.fail(f"CI must install the local extra: {exc}")
        pytest.skip(str(exc))


class LlamaServers:
    """The session's embedded llama-servers, one per (model, options), started on first use and reused by every
    test that asks for the same; stopped at session end. Under xdist the llm tests share one worker
    (``xdist_group``, see tests/conftest.py), so each server starts once per run."""

    def __init__(self, logs: Path) -> None:
        self._logs = logs
        self._servers: dict[tuple[str, tuple[tuple[str, Any], ...]], EmbeddedServer] = {}

    def get(self, model: str, **options: Any) -> EmbeddedServer:
        key = (model, tuple(sorted(options.items())))
        if key not in self._servers:
            log = self._logs / f"{model}-{len(self._servers)}.log"
            self._servers[key] = EmbeddedServer(model=model, log_path=log, startup_timeout=180, **options).start()
        return self._servers[key]

    def stop(self) -> None:
        for server in self._servers.values():
            server.stop()
        self._servers.clear()


@pytest.fixture(scope="session")
def llama_servers(tmp_path_factory: pytest.TempPathFactory, local_extra: None) -> Iterator[LlamaServers]:
    servers = LlamaServers(tmp_path_factory.mktemp("llama-servers"))
    try:
        yield servers
    finally:
        servers.stop()


@pytest.fixture(scope="session")
def gemma_server(llama_servers: LlamaServers) -> EmbeddedServer:
    """gemma3-270m with two slots: the fast model, for the tests that check plumbing rather than quality."""
    return llama_servers.get(FAST_MODEL, parallel=2)
