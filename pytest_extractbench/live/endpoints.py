"""Where each model is served: the given base URLs, or embedded llama-servers started by the controller.

Only the controller (the single process, or xdist's controller) starts servers: one
:class:`~.server.EmbeddedServer` per model, stopped at session end, on Ctrl-C and on failure
(and by the kernel if pytest is killed). Workers get the URLs through ``workerinput``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any


from ..core.errors import UsageProblem
from ..core.redact import redact_url
from .context import ContextPlan, available_memory, gguf_facts, plan_context, prompt_token_bound
from .options import LiveOptions

ENDPOINTS_KEY = "extractbench_endpoints"


@dataclass(frozen=True)
class Route:
    """The replicas serving one model, and the name they know it by."""

    urls: tuple[str, ...]
    served_model: str
    # an embedded server's slot count, when memory made it lower than --extractbench-slots asked
    slots: int | None = None


class Endpoints:
    """Routes of every model of the run; owns the embedded servers it started."""

    def __init__(self, live: LiveOptions, models: Sequence[str]) -> None:
        self.live = live
        self.models = list(models)
        self.routes: dict[str, Route] = {}
        self.embedded: dict[str, dict[str, Any]] = {}  # model -> facts about its embedded server
        self._servers: list[Any] = []
        self._by_model: dict[str, Any] = {}  # model -> its embedded server
        if live.base_urls:
            self.routes = {model: Route(live.base_urls, model) for model in self.models}


    def start(self, log_dir: Path, prompts: Callable[[], Mapping[str, Any]] | None = None) -> None:
        """Start one embedded server per model (a no-op with base URLs or when already started).

        ``prompts`` gives the chat messages of every sample (sample id -> messages): the context of
        each slot is sized to the longest of them (context.py), counted with the model's own tokenizer.
        """
        if self.routes:
            return
        from .llama_server import EmbeddedServer, EmbeddedServerError

        try:
            messages = dict(prompts()) if prompts is not None else {}
            for model in self.models:
                server = EmbeddedServer(
                    model=model, parallel=self.live.slots, log_path=log_dir / f"llama-server-{_file_safe(model)}.log"
                )
                self._servers.append(server)
                self._by_model[model] = server
                plan = self._start_sized(server, messages)
                self.routes[model] = Route((server.base_url,), server.model, server.parallel)
                resolved = server.resolved
                self.embedded[model] = {
                    "model_file": str(resolved.path) if resolved else None,
                    "slots": server.parallel,
                    "ctx_per_slot": server.ctx_per_slot,
                    "context": plan.as_dict(),
                    "log": str(server.log_path),
                    "startup_s": server.startup_seconds,
                }
        except EmbeddedServerError as exc:
            self.stop()
            raise UsageProblem(f"extractbench: {exc}") from None
        except BaseException:
            self.stop()
            raise

    def _start_sized(self, server: Any, messages: Mapping[str, Any]) -> ContextPlan:
        """Start ``server`` with a context that holds every prompt that can fit, counting tokens when
        a prompt's byte size alone does not prove it fits the default (then the server may restart)."""
        from .max_tokens import MAX_BUDGET
        from .llama_server import DEFAULT_CTX_PER_SLOT, resolve_model

        trained, kv_per_token = gguf_facts(resolve_model(server.requested_model).path)
        # 'auto' budgets are derived per schema and never exceed MAX_BUDGET: sizing with it holds them all
        requested, budget = self.live.context, self.live.max_tokens or MAX_BUDGET
        floor = min(DEFAULT_CTX_PER_SLOT, trained or DEFAULT_CTX_PER_SLOT)
        tokens = {sid: prompt_token_bound(m) for sid, m in messages.items()}
        limit = requested if requested is not None else floor - budget
        unsure = [sid for sid, bound in tokens.items() if bound >= limit]

        def plan(counted: int) -> ContextPlan:
            return plan_context(prompt_tokens=tokens, output_budget=budget, slots=self.live.slots, trained=trained,
                                requested=requested, default=DEFAULT_CTX_PER_SLOT, kv_bytes_per_token=kv_per_token,
                                memory_bytes=available_memory(), counted=counted)  # fmt: skip

        if not unsure:  # every prompt fits by its byte size alone: one start, no counting
            chosen = plan(0)
            server.ctx_per_slot, server.parallel = chosen.ctx_per_slot, chosen.slots
            server.start()
            return chosen
        server.ctx_per_slot = requested or floor
        server.start()
        with ThreadPoolExecutor(max_workers=4) as pool:  # /tokenize is served outside the slots
            for sid, count in zip(unsure, pool.map(lambda sid: server.count_prompt_tokens(messages[sid]), unsure)):
                tokens[sid] = count
        chosen = plan(len(unsure))
        if (chosen.ctx_per_slot, chosen.slots) != (server.ctx_per_slot, server.parallel):
            server.restart(ctx_per_slot=chosen.ctx_per_slot, parallel=chosen.slots)
        return chosen

    def check(self, api_key: str | None) -> None:
        """Every URL answers and serves its models: one clear line otherwise, before any item runs."""
        from .client import ConnectionCheckError, client_config, run_check

        wanted: dict[str, list[str]] = {}
        for route in self.routes.values():
            for url in route.urls:
                wanted.setdefault(url, []).append(route.served_model)
        for url, models in wanted.items():
            try:
                run_check(client_config(self.live, url, api_key), models)
            except (ConnectionCheckError, ValueError) as exc:  # ValueError: a URL or key no request can carry
                raise UsageProblem(f"extractbench: {exc}") from None

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
        return {model: [list(route.urls), route.served_model, route.slots] for model, route in self.routes.items()}

    def load_wire(self, data: dict[str, Any]) -> None:
        self.routes = {model: Route(tuple(urls), served, slots) for model, (urls, served, slots) in data.items()}

    def _note_memory(self) -> None:
        """Record each running embedded server's peak resident memory (read before it stops)."""
        for model, server in self._by_model.items():
            peak = server.peak_rss_bytes() if server.is_running() else None
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
