"""Answers from a Python callable: benchmark your own pipeline (a retrieval step, an SDK, a local function).

The callable takes a :class:`~pytest_extractbench.dataset.samples.Sample` and returns the extraction as JSON
text, a parsed ``dict``, or a :class:`~pytest_extractbench.dataset.responses.ModelResponse`; it may be
``async``. It runs like a server would: ahead of the items with bounded concurrency (sync callables on a
thread pool), every answer journaled the moment it arrives, reused by ``--extractbench-resume`` and by the
response cache. An exception, or a return value of another type, is that sample's ``extractor_error``.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib
import importlib.util
import inspect
import json
import os
import sys
import time
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from ..core.errors import UsageProblem
from ..core.textsafe import LINE_LIMIT, clip
from ..dataset.responses import ModelResponse
from ..dataset.samples import Sample
from .pipeline import AheadSource

ERROR_CLASS = "extractor_error"


def load_extractor(spec: str, base_dir: Path) -> Callable[..., Any]:
    """``module:function``, ``package.module:function`` or ``path/to/file.py:function`` (relative to base_dir)."""
    where, sep, name = spec.rpartition(":")
    if not sep or not where or not name:
        raise UsageProblem(f"extractbench: --extractbench-extractor {spec!r}: expected MODULE:FUNCTION or FILE.py:FUNCTION")
    try:
        if where.endswith(".py") or "/" in where or "\\" in where:
            path = Path(where) if Path(where).is_absolute() else base_dir / where
            if not path.is_file():
                raise UsageProblem(f"extractbench: --extractbench-extractor {spec!r}: no file {path}")
            module_spec = importlib.util.spec_from_file_location(f"extractbench_extractor_{path.stem}", path)
            assert module_spec is not None and module_spec.loader is not None
            module = importlib.util.module_from_spec(module_spec)
            module_spec.loader.exec_module(module)
        else:
            if str(base_dir) not in sys.path:  # like `python -m`: modules of the project the run starts in
                sys.path.insert(0, str(base_dir))
            module = importlib.import_module(where)
    except UsageProblem:
        raise
    except Exception as exc:  # noqa: BLE001 - any import failure is the spec's problem to report
        raise UsageProblem(f"extractbench: --extractbench-extractor {spec!r}: cannot import {where!r}: "
                           f"{type(exc).__name__}: {exc}") from None
    fn = getattr(module, name, None)
    if fn is None:
        raise UsageProblem(f"extractbench: --extractbench-extractor {spec!r}: {where!r} has no attribute {name!r}")
    if not callable(fn):
        raise UsageProblem(f"extractbench: --extractbench-extractor {spec!r}: {name!r} is not callable")
    return fn


def extractor_name(fn: Callable[..., Any]) -> str:
    """The model name a callable's results are reported under when no --model is given."""
    return str(getattr(fn, "__name__", None) or type(fn).__name__)


def to_response(value: Any) -> ModelResponse:
    """What the callable returned, as a response; an unusable type is an error response."""
    if isinstance(value, ModelResponse):
        return value
    if isinstance(value, (str, dict)):
        return ModelResponse(content=value)
    return ModelResponse(error_class=ERROR_CLASS,
                         error=f"the extractor returned {type(value).__name__}; expected str (JSON), dict or ModelResponse")


@dataclass
class _Call:
    model: str
    sample_id: str
    sample: Sample
    key: str
    future: Future[ModelResponse]


class ExtractorSource(AheadSource):
    """An ``OutputSource`` over a Python callable, with the live pipeline's journal, cache and resume."""

    def __init__(self, fn: Callable[..., Any], *, run_dir: Path, cache_dir: Path | None, resume: bool,
                 concurrency: int) -> None:
        super().__init__(run_dir=run_dir, cache_dir=cache_dir, resume=resume)
        self.fn = fn
        self.name = self.qualified_name(fn)
        self.code = code_hash(fn)
        self.concurrency = max(1, concurrency)
        self.is_async = inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(getattr(fn, "__call__", None))
        self._pool: ThreadPoolExecutor | None = None
        self._limit: asyncio.Semaphore | None = None

    @staticmethod
    def qualified_name(fn: Callable[..., Any]) -> str:
        return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', extractor_name(fn))}"

    def _admit(self, model: str, sample: Sample) -> _Call | None:
        pair = (model, sample.id)
        if pair in self._futures:
            return None
        key = call_key(self.name, model, sample, self.code)
        return self._admit_pair(pair, key, lambda future: _Call(model, sample.id, sample, key, future))

    async def _answer(self, request: _Call) -> ModelResponse:
        if self._limit is None:
            self._limit = asyncio.Semaphore(self.concurrency)
        async with self._limit:
            started, clock = time.time(), time.perf_counter()
            try:
                if self.is_async:
                    value = await self.fn(request.sample)
                else:
                    if self._pool is None:
                        self._pool = ThreadPoolExecutor(self.concurrency, thread_name_prefix="extractbench-extractor")
                    value = await asyncio.get_running_loop().run_in_executor(self._pool, self.fn, request.sample)
                response = to_response(value)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - the callable's failure is this sample's outcome
                response = ModelResponse(error_class=ERROR_CLASS, error=clip(f"{type(exc).__name__}: {exc}", LINE_LIMIT))
            if response.latency_s is None:
                response.latency_s = time.perf_counter() - clock
            response.started_at = response.started_at or started
            response.finished_at = response.finished_at or time.time()
            response.attempts = response.attempts or 1
            return response

    def _asked_of(self, request: _Call) -> tuple[str, str]:
        return "extractor", self.name

    async def _close_clients(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)


def call_key(name: str, model: str, sample: Sample, code: str = "") -> str:
    """The cache and journal key of one call: the callable's name and code (`code_hash`), the model
    name and the sample's content."""
    payload = json.dumps([2, name, code, model, sample.id, sample.text, sample.schema], sort_keys=True, default=str)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def code_hash(fn: Callable[..., Any]) -> str:
    """sha256 of the callable's source and of its whole module file: an edit to the function, or to
    a helper beside it, changes the key, so the cache never answers for code that changed.

    A callable whose code cannot be read (a builtin, a C extension, code typed at a prompt) gets a
    key of this process only: its answers are never reused by a later run."""
    target = fn if inspect.isfunction(fn) or inspect.ismethod(fn) else type(fn)
    digest = hashlib.sha256()
    try:
        digest.update(inspect.getsource(target).encode("utf-8"))
        source_file = inspect.getsourcefile(target)
        if source_file:
            digest.update(Path(source_file).read_bytes())
    except (OSError, TypeError):
        digest.update(f"unreadable code, process {os.getpid()}, {time.time_ns()}".encode())
    return digest.hexdigest()
