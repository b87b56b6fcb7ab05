"""What the networked scores give the scoring core, and who provides it.

Scoring never opens a connection: the "semantic" comparator and the whole-output scores ask a
:class:`SemanticBackends` for cosine similarities and an LLM judge's grades. The live layer has the real
one (``pytest_extractbench.live.scoring_backends``, clients with their URL checks, key lookup, bounded
answers and masking); the run layer installs it for every run (``evaluate()`` and the plugin, each
process), and so does ``from pytest_extractbench import score_sample``. A test, or a notebook scoring
against recorded grades, can install its own with :func:`use_backends`.

With none installed, a field or sample that needs one gets an error naming what to install; nothing
else changes.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any, Protocol

from ..core.errors import ExtractbenchError

__all__ = ["Judge", "NoBackendsError", "SemanticBackends", "current_backends", "install_default", "use_backends"]


class Judge(Protocol):
    """An LLM judge: 1-7 grades with what they cost so far (requests, tokens, seconds)."""

    calls: int
    prompt_tokens: int
    completion_tokens: int
    seconds: float

    def grade(self, items: Sequence[tuple[str, Any, Any]]) -> list[Any]:
        """A 1-7 grade, or the exception saying why there is none, per ``(field, expected, extracted)``."""

    def grade_outputs(self, items: Sequence[tuple[str, str]], *, batch: int = 4) -> list[Any]:
        """``(grade, reasoning)``, or the exception saying why there is none, per ``(expected, extracted)``
        JSON text pair."""


class SemanticBackends(Protocol):
    """Where similarities and grades come from; every failure is an exception the caller records."""

    def similarities(self, backend: str, model: str | None, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """The cosine similarity in [0, 1] of each text pair's embeddings from ``backend``."""

    def judge(self, model: str, base_url: str) -> Judge:
        """The judge ``model`` served at ``base_url``."""

    def mask(self, text: Any) -> str:
        """``text`` as one line without any credential the backends use (for errors kept in records)."""


class NoBackendsError(ExtractbenchError, RuntimeError):
    """A semantic score was asked for and no :class:`SemanticBackends` is installed."""


_lock = threading.Lock()
_installed: SemanticBackends | None = None


def use_backends(backends: SemanticBackends | None) -> SemanticBackends | None:
    """Install ``backends`` (None: none) for this process; returns the ones they replace."""
    global _installed
    with _lock:
        previous, _installed = _installed, backends
    return previous


def install_default(backends: SemanticBackends) -> SemanticBackends:
    """Install ``backends`` unless some are installed already; returns the ones in use."""
    global _installed
    with _lock:
        if _installed is None:
            _installed = backends
        return _installed


def current_backends() -> SemanticBackends:
    """The installed backends, or :class:`NoBackendsError` saying how to install some."""
    backends = _installed
    if backends is None:
        raise NoBackendsError(
            "no judge or embeddings client is installed: call pytest_extractbench.live.scoring_backends.install() "
            "(evaluate() and the plugin do), or pytest_extractbench.scoring.backends.use_backends(your_backends)"
        )
    return backends
