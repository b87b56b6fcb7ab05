"""What the integration tests share: the embedded server's installation check."""

from __future__ import annotations

import os

import pytest

from pytest_extractbench.live.backends.llama_server import (
    DEFAULT_EMBEDDED_MODEL,
    MissingExtraError,
    find_llama_server,
    resolve_model,
)


@pytest.fixture(scope="session")
def local_extra() -> None:
    """Skip when llama-server, the default model or the tests' fast model (gemma3-270m, in the dev extra) is
    not installed; under CI (env CI set) fail instead."""
    try:
        find_llama_server()
        resolve_model(DEFAULT_EMBEDDED_MODEL)
        resolve_model("gemma3-270m")
    except MissingExtraError as exc:
        if os.environ.get("CI"):
            pytest.fail(f"CI must install the local extra: {exc}")
        pytest.skip(str(exc))
