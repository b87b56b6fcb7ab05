"""Where each model is served: the given base URLs, or embedded llama-servers started by the controller.

Only the controller (the single process, or xdist's controller) starts servers: one
:class:`~.server.EmbeddedServer` per model, stopped at session end, on Ctrl-C and on failure
(and by the kernel if pytest is killed). Workers get the URLs through ``workerinput``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from .baseline import redact_url
from .live import LiveOptions

ENDPOINTS_KEY = "extractbench_endpoints"


@dataclass(frozen=True)
class Route:
    """The replicas serving one model, and the name they know it by."""

    urls: tuple[str, ...]
    served_model: str


class Endpoints:
    """Routes of every model of the run; owns the embedded servers it started."""

    def __init__(self, live: LiveOptions, models: Sequence[str]) -> None:
        self.live = live
        self.models = list(models)
        self.routes: dict[str, Route] = {}
        self.embedded: dict[str, dict[str, Any]] = {}  # model -> facts about its embedded server
        self._servers: list[Any] = []
        if live.base_urls:
            self.routes = {model: Route(live.base_urls, model) for model in self.models}


    def start(self, log_dir: Path) -> None:
        """Start one embedded server per model (a no-op with base URLs or when already started)."""
        if self.routes:
            return
        from .server import EmbeddedServer, EmbeddedServerError

        try:
            for model in self.models:
                server = EmbeddedServer(
                    model=model, parallel=self.live.slots, log_path=log_dir / f"llama-server-{_file_safe(model)}.log"
                )
                self._servers.append(server)
                server.start()
                self.routes[model] = Route((server.base_url,), server.model)
                resolved = server.resolved
                self.embedded[model] = {
                    "model_file": str(resolved.path) if resolved else None,
                    "slots": server.parallel,
                    "log": str(server.log_path),
                    "startup_s": server.startup_seconds,
                }
        except EmbeddedServerError as exc:
            self.stop()
            raise pytest.UsageError(f"extractbench: {exc}") from None
        except BaseException:
            self.stop()
            raise

    def check(self, api_key: str | None) -> None:
        """Every URL answers and serves its models: one clear line otherwise, before any item runs."""
        from .client import ConnectionCheckError, run_check
        from .pipeline import client_config

        wanted: dict[str, list[str]] = {}
        for route in self.routes.values():
            for url in route.urls:
                wanted.setdefault(url, []).append(route.served_model)
        for url, models in wanted.items():
            try:
                run_check(client_config(self.live, url, api_key), models)
            except (ConnectionCheckError, ValueError) as exc:  # ValueError: a URL or key no request can carry
                raise pytest.UsageError(f"extractbench: {exc}") from None

    def stop(self) -> None:
        for server in reversed(self._servers):
            with contextlib.suppress(Exception):
                server.stop()
        self._servers.clear()

    # -- xdist ---------------------------------------------------------------------------------

    def to_wire(self) -> dict[str, Any]:
        """JSON-able form for ``workerinput`` (the controller's started servers)."""
        return {model: [list(route.urls), route.served_model] for model, route in self.routes.items()}

    def load_wire(self, data: dict[str, Any]) -> None:
        self.routes = {model: Route(tuple(urls), served) for model, (urls, served) in data.items()}

    def facts(self) -> dict[str, Any]:
        """For metrics.json ``run.live``: URLs without credentials and the embedded model files."""
        return {
            "base_urls": sorted({redact_url(url) for route in self.routes.values() for url in route.urls}),
            "served_models": {model: route.served_model for model, route in self.routes.items()},
            "embedded": self.embedded or None,
        }


def _file_safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-._" else "_" for c in Path(name).name)
