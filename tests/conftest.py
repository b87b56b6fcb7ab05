"""Fixtures shared by the unit and integration tests."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest


@pytest.fixture
def semantic_cache_dir(tmp_path: Path) -> Iterator[Path]:
    """A fresh persistent cache for embeddings and judge verdicts, forgotten afterwards."""
    from pytest_extractbench.scoring import semantic_cache

    semantic_cache.set_cache_dir(tmp_path)
    semantic_cache.clear_memory()
    yield tmp_path
    semantic_cache.set_cache_dir(None)
    semantic_cache.clear_memory()
