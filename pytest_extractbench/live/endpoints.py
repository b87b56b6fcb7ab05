"""Where each model is served: the given base URLs, or servers a backend started for the controller.

Only the controller (the single process, or xdist's controller) starts servers: one backend instance
per model (``live/backends``: the embedded llama-server by default), stopped at session end, on Ctrl-C
and on failure (and by the kernel if pytest is killed). Workers get the URLs through ``workerinput``.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.errors import UsageProblem
from ..core.redact import redact_url
from .backends import DEFAULT_BACKEND, BackendError, ServerBackend, make_backend
from .connection import ConnectionCheckError, run_check
from .identity import embedded_identity, fetch_model_path, identity_hash, server_identity
from .options import LiveOptions
from .transport import client_config

ENDPOINTS_KEY = "extractbench_endpoints"


@dataclass(frozen=True)
class Route:
    """The replicas serving one model, and the name they know it by."""

    urls: tuple[str, ...]
    served_model: str
    # an embedded server's slot count, when memory made it lower than --extractbench-slots asked
    slots: int | None = None
    # hash of who answers (identity.py), part of every answer's key; set by the connection check
    identity: str = ""


class Endpoints:
    """Routes of every model of the run; owns the embedded servers it started."""

    def __init__(self, live: LiveOptions, models: Sequence[str], *, backend: str = DEFAULT_BACKEND) -> None:
        self.live = live
        self.backend = backend
        self.models = list(models)
        self.routes: dict[str, Route] = {}
        self.embedded: dict[str, dict[str, Any]] = {}  # model -> facts about its embedded server
        self._servers: list[ServerBackend] = []
        self._by_model: dict[str, ServerBackend] = {}  # model -> the backend serving it
        if live.base_urls:
            self.routes = {model: Route(live.base_urls, model) for model in self.models}

    def start(self, log_dir: Path, prompts: Callable[[], Mapping[str, Any]] | None = None) -> None:
        """Start one server per model with the backend (a no-op with base URLs or when already started).

        ``prompts`` gives the chat messages of every sample (sample id -> messages): the backend sizes
        each slot's context to the longest of them.
        """
        if self.routes:
            return
        try:
            messages = dict(prompts()) if prompts is not None else {}
            for model in self.models:
                server = make_backend(self.backend)
                self._servers.append(server)
                self._by_model[model] = server
                log_path = log_dir / f"{self.backend}-{_file_safe(model)}.log"
                started = server.start(model, self.live, log_path=log_path, prompts=messages)
                self.routes[model] = Route(started.urls, started.served_model, started.slots)
                self.embedded[model] = dict(started.facts)
        except BackendError as exc:
            self.stop()
            raise UsageProblem(f"extractbench: {exc}") from None
        except BaseException:
            self.stop()
            raise

    def check(self, api_key: str | None) -> None:
        """Every URL answers and serves its models: one clear line otherwise, before any item runs."""
        wanted: dict[str, list[str]] = {}
        for route in self.routes.values():
            for url in route.urls:
                wanted.setdefault(url, []).append(route.served_model)
        servers: dict[str, dict[str, Any]] = {}
        for url, models in wanted.items():
            entries: dict[str, Any] = {}
            try:
                config = client_config(self.live, url, api_key)
                run_check(config, models, entries=entries)
            except (ConnectionCheckError, ValueError) as exc:  # ValueError: a URL or key no request can carry
                raise UsageProblem(f"extractbench: {exc}") from None
            model_path = fetch_model_path(url, api_key, config.timeout_s)
            servers[url] = {name: server_identity(redact_url(url), entries.get(name), model_path) for name in models}
        self._identify(servers)

    def _identify(self, servers: dict[str, dict[str, dict[str, Any]]]) -> None:
        """Give each route the hash of who answers it: its embedded model file, or its servers."""
        for model, route in self.routes.items():
            if model in self.embedded:
                identity: Any = {"embedded": embedded_identity(self.embedded[model].get("model_file"))}
            else:
                identity = {"servers": [servers[url][route.served_model] for url in sorted(route.urls)]}
            self.routes[model] = dataclasses.replace(route, identity=identity_hash([route.served_model, identity]))

    def stop(self) -> None:
        self._note_memory()
        for server in reversed(self._servers):
            with contextlib.suppress(Exception):
                server.stop()
        self._servers.clear()
        self._by_model.clear()

    # -- xdist ---------------------------------------------------------------------------------

    def to_wire(self) -> dict[str, Any]:
        """JSON-able form for ``workerinput`` (the controller's started servers)."""
        return {
            model: [list(route.urls), route.served_model, route.slots, route.identity]
            for model, route in self.routes.items()
        }

    def load_wire(self, data: dict[str, Any]) -> None:
        self.routes = {
            model: Route(tuple(urls), served, slots, identity)
            for model, (urls, served, slots, identity) in data.items()
        }

    def _note_memory(self) -> None:
        """Record each running embedded server's peak resident memory (read before it stops)."""
        for model, server in self._by_model.items():
            peak = server.peak_rss_bytes()
            if peak is not None and model in self.embedded:
                self.embedded[model]["peak_rss_bytes"] = max(peak, self.embedded[model].get("peak_rss_bytes") or 0)

    def facts(self) -> dict[str, Any]:
        """For metrics.json ``run.live``: URLs without credentials, the embedded model files, each
        embedded server's context plan and peak memory so far."""
        self._note_memory()
        return {
            "base_urls": sorted({redact_url(url) for route in self.routes.values() for url in route.urls}),
            "served_models": {model: route.served_model for model, route in self.routes.items()},
            "embedded": self.embedded or None,
        }


def _file_safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-._" else "_" for c in Path(name).name)
