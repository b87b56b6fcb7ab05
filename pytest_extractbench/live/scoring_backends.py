"""The judge and embeddings clients as the scoring core's :class:`~..scoring.backends.SemanticBackends`.

Scoring asks for similarities and grades and never talks to a server; this module answers with the clients
of judge.py and embeddings.py (one per backend and process, their answers cached by verdict_cache.py).
Nothing is imported or connected until a score needs it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..scoring.backends import Judge, SemanticBackends, install_default

__all__ = ["LiveBackends", "install"]


class LiveBackends:
    """Real clients: sentence-transformers or an embeddings server, an LLM judge over the chat API."""

    def similarities(self, backend: str, model: str | None, pairs: Sequence[tuple[str, str]]) -> list[float]:
        from .embeddings import cosine_similarities, get_embedder

        return cosine_similarities(get_embedder(backend, model), pairs)

    def judge(self, model: str, base_url: str) -> Judge:
        from .judge import get_judge

        return get_judge(model, base_url)

    def mask(self, text: Any) -> str:
        from .scorer_servers import api_key, masked

        return masked(text, api_key())


def install() -> SemanticBackends:
    """Make scoring use the live clients in this process, unless other backends are installed (a test's, a
    notebook's); returns the ones in use."""
    return install_default(LiveBackends())
