"""The default model's weights are what the docs say (docs/guides/served-model.md): Qwen's own GGUF file, checked by its published sha256.

Runs where the `local` extra's chunk packages are installed (hashing 491 MB takes a few seconds).
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

from pytest_extractbench.live.backends import llama_models

README = Path(__file__).resolve().parents[2] / "docs" / "guides" / "served-model.md"


def documented_sha256() -> str:
    text = README.read_text(encoding="utf-8")
    section = text[text.index("Where the default model's weights come from") :]
    return re.search(r"published sha256\s+`([0-9a-f]{64})`", section).group(1)


def test_the_launcher_checks_the_hash_the_readme_documents() -> None:
    assert documented_sha256() == llama_models._QWEN_CODER_SHA256
    repo, name, revision = llama_models.QWEN_CODER_UPSTREAM
    text = README.read_text(encoding="utf-8")
    assert repo in text and name in text and revision in text and f"{llama_models.QWEN_CODER_BYTES:,}" in text


@pytest.mark.slow
def test_the_installed_chunks_assemble_the_documented_upstream_file() -> None:
    parts = llama_models._qwen_coder_parts()
    if parts is None:
        pytest.skip("the local extra's chunk packages are not installed")
    digest, size = hashlib.sha256(), 0
    for part in parts:
        with part.open("rb") as handle:
            while chunk := handle.read(4 * 1024 * 1024):
                digest.update(chunk)
                size += len(chunk)
    assert size == llama_models.QWEN_CODER_BYTES
    assert digest.hexdigest() == documented_sha256()
    with parts[0].open("rb") as handle:
        assert handle.read(4) == b"GGUF"
