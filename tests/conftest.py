"""Fixtures shared by the unit and integration tests."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Iterator

import pytest

# pytester's in-process runs forget the modules first imported inside them, and numpy's C core cannot be
# loaded twice in one process: loading the run machinery here keeps every in-process benchmark run working.
import pytest_extractbench.run.api  # noqa: E402,F401

if TYPE_CHECKING:
    from faultserver import FaultServer


@pytest.fixture
def semantic_cache_dir(tmp_path: Path) -> Iterator[Path]:
    """A fresh persistent cache for embeddings and judge verdicts, forgotten afterwards."""
    from pytest_extractbench.scoring import semantic_cache

    semantic_cache.set_cache_dir(tmp_path)
    semantic_cache.clear_memory()
    yield tmp_path
    semantic_cache.set_cache_dir(None)
    semantic_cache.clear_memory()


@pytest.fixture
def fault_server() -> Iterator["FaultServer"]:
    """A running scriptable OpenAI-compatible server on loopback (see tests/faultserver.py).

    Script it with ``fault_server.enqueue(Fault...)``, ``.plan = callable`` or ``.default = Fault...``;
    ``.stop()`` / ``.start()`` kill and restart it on the same port.
    """
    from faultserver import FaultServer

    with FaultServer() as server:
        yield server
