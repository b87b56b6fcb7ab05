"""Answers from a Python callable: benchmark your own pipeline (a retrieval step, an SDK, a local function).

The callable takes a :class:`~pytest_extractbench.dataset.samples.SampleView` (what a model would see: id,
text, schema and meta, never the gold) and returns the extraction as JSON text, a parsed ``dict``, or a
:class:`~pytest_extractbench.dataset.responses.ModelResponse`; it may be ``async``. It runs like a server
would: ahead of the items with bounded concurrency, every answer journaled the moment it arrives, reused by
``--extractbench-resume`` and by the response cache.

Each call has the per-attempt deadline of a server request (``--extractbench-timeout``); past it the sample
is a ``timeout``. Sync callables run on daemon threads of their own, so a call that never returns is left
behind without holding up the others or the end of the session; async ones run on the pipeline's loop, and
one that blocks the loop instead of awaiting is caught by a watchdog. Any exception the callable raises
(``SystemExit`` and other ``BaseException`` subclasses included; only ``KeyboardInterrupt`` stops the run),
or a return value that is not a JSON answer, is that sample's ``extractor_error``, in one line.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import importlib
import importlib.util
import inspect
import json
import os
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import Future, InvalidStateError
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core import jsonio
from ..core.errors import UsageProblem
from ..core.redact import mask
from ..core.textsafe import LINE_LIMIT, clip
from ..dataset.responses import ERROR_CLASSES, ModelResponse
from ..dataset.samples import Sample, SampleView
from ..scoring import MISSING
from .journal import asked
from .options import LiveOptions
from .pipeline import AheadSource

ERROR_CLASS = "extractor_error"
DEFAULT_TIMEOUT_S = LiveOptions.timeout_s
# The largest answer recorded: its journal line must stay within what the journal's reader accepts
# (jsonio.MAX_LINE_BYTES), even when every character is written as a six-byte escape.
MAX_ANSWER_CHARS = jsonio.MAX_LINE_BYTES // 8
WATCH_S = 0.5  # how often the loop of an async callable shows it is alive, and the main thread looks


def load_extractor(spec: str, base_dir: Path) -> Callable[..., Any]:
    """``module:function``, ``package.module:function`` or ``path/to/file.py:function`` (relative to base_dir)."""
    where, sep, name = spec.rpartition(":")
    if not sep or not where or not name:
        raise UsageProblem(
            f"extractbench: --extractbench-extractor {spec!r}: expected MODULE:FUNCTION or FILE.py:FUNCTION"
        )
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
    except Exception as exc:  # noqa: BLE001 - any import failure is reported against the extractor's name
        raise UsageProblem(
            f"extractbench: --extractbench-extractor {spec!r}: cannot import {where!r}: {type(exc).__name__}: {exc}"
        ) from None
    fn: object = getattr(module, name, None)
    if fn is None:
        raise UsageProblem(f"extractbench: --extractbench-extractor {spec!r}: {where!r} has no attribute {name!r}")
    if not callable(fn):
        raise UsageProblem(f"extractbench: --extractbench-extractor {spec!r}: {name!r} is not callable")
    return fn


def extractor_name(fn: Callable[..., Any]) -> str:
    """The model name a callable's results are reported under when no --model is given."""
    return str(getattr(fn, "__name__", None) or type(fn).__name__)


def to_response(value: Any) -> ModelResponse:
    """What the callable returned, as a response; an unusable value is an error response naming what is wrong."""
    response = value if isinstance(value, ModelResponse) else ModelResponse(content=value)
    if not isinstance(value, (ModelResponse, str, dict)):
        return _refused(f"the extractor returned {type(value).__name__}; expected str (JSON), dict or ModelResponse")
    if response.error_class is not None and response.error_class not in ERROR_CLASSES:
        return _refused(
            f"the extractor's ModelResponse has an unknown error_class {clip(repr(response.error_class), 80)}"
        )
    problem = _content_problem(response.content)
    if problem:
        return _refused(problem)
    if response.error is not None:  # the callable's own words, kept to one line like every recorded error
        response.error = clip(" ".join(str(response.error).split()), LINE_LIMIT)
    return response


def _content_problem(content: Any) -> str | None:
    """Why an answer cannot be journaled and scored like a model's, or None: it must be JSON within the
    limits every recorded answer is read back with."""
    if content is MISSING or content is None:
        return None
    if isinstance(content, str):
        if len(content) > MAX_ANSWER_CHARS:
            return f"the extractor returned {len(content):,} characters; at most {MAX_ANSWER_CHARS:,} are recorded"
        return None
    if not isinstance(content, dict):
        return f"the extractor's answer is {type(content).__name__}; expected str (JSON) or dict"
    deep = jsonio.too_deep(content)
    if deep:
        return f"the extractor returned a dict nested more than {jsonio.MAX_DEPTH} levels deep (at {deep})"
    try:
        text = json.dumps(content, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError) as exc:
        return f"the extractor returned a dict that is not JSON: {type(exc).__name__}: {clip(str(exc), 200)}"
    if len(text) > MAX_ANSWER_CHARS:
        return (
            f"the extractor returned a dict of {len(text):,} characters as JSON; "
            f"at most {MAX_ANSWER_CHARS:,} are recorded"
        )
    return None


def _refused(problem: str) -> ModelResponse:
    return ModelResponse(error_class=ERROR_CLASS, error=problem)


def _raised(exc: BaseException) -> ModelResponse:
    """The callable raised: one line naming the exception (never the traceback)."""
    text = " ".join(str(exc).split())
    # user code's message can quote a key (a client's error with its headers): masked before it is recorded
    return _refused(
        clip(mask(f"the extractor raised {type(exc).__name__}" + (f": {text}" if text else "")), LINE_LIMIT)
    )


def _timed_out(timeout_s: float) -> ModelResponse:
    return ModelResponse(error_class="timeout", error=f"the extractor did not answer within {timeout_s:g}s")


@dataclass
class _Call:
    model: str
    sample_id: str
    sample: Sample
    key: str
    future: Future[ModelResponse]


class ExtractorSource(AheadSource):
    """An ``OutputSource`` over a Python callable, with the live pipeline's journal, cache and resume."""

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        run_dir: Path,
        cache_dir: Path | None,
        resume: bool,
        concurrency: int,
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> None:
        super().__init__(run_dir=run_dir, cache_dir=cache_dir, resume=resume)
        self.fn = fn
        self.name = self.qualified_name(fn)
        self.code = code_hash(fn)
        self.concurrency = max(1, concurrency)
        self.timeout_s = timeout_s
        self.is_async = inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(getattr(fn, "__call__", None))  # noqa: B004 - an instance's __call__ method
        self._limit: asyncio.Semaphore | None = None
        self._beat = time.monotonic()  # the loop's last sign of life (async callables: the watchdog)
        self._stuck = False  # an async callable blocked the loop: nothing more can run on it

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
            if self.is_async:
                self._heartbeat()
        async with self._limit:
            self.in_flight.sent(id(request))
            started, clock = time.time(), time.perf_counter()
            response = await self._call(request.sample.view())
            if response.latency_s is None:
                response.latency_s = time.perf_counter() - clock
            response.started_at = response.started_at or started
            response.finished_at = response.finished_at or time.time()
            response.attempts = response.attempts or 1
            if response.end_to_end_s is None and response.attempts == 1:
                response.end_to_end_s = response.latency_s
            return response

    def _asked_of(self, request: _Call) -> tuple[str, str]:
        return "extractor", self.name

    async def _call(self, view: SampleView) -> ModelResponse:
        """One call within the deadline. The callable runs in a task (async) or a daemon thread (sync) of its
        own, so that past the deadline it is left behind (cancelled if it can be) rather than waited for,
        and nothing it raises can stop the loop."""
        deadline = asyncio.get_running_loop().time() + self.timeout_s
        if self.is_async:
            outcome = await _within(asyncio.ensure_future(_guarded(lambda: self.fn(view))), deadline)
        else:
            outcome = await _within(_in_daemon_thread(self.fn, view), deadline)
            if outcome is not None and outcome[0] == "returned" and inspect.isawaitable(outcome[1]):
                # a plain function handing back a coroutine (a lambda over an async one): awaited like one
                awaitable = outcome[1]
                outcome = await _within(asyncio.ensure_future(_guarded(lambda: awaitable)), deadline)
        if outcome is None:
            return _timed_out(self.timeout_s)
        kind, value = outcome
        if kind == "raised":
            if isinstance(value, KeyboardInterrupt):  # the one exception that means "stop the run"
                raise value
            return _raised(value)
        return to_response(value)

    def _before_submit(self) -> None:
        self._beat = time.monotonic()  # the watchdog counts the loop's silence from when it has work, not from creation

    def _heartbeat(self) -> None:
        """Loop thread: a sign of life every WATCH_S, which a loop blocked by an async callable cannot give."""
        self._beat = time.monotonic()
        if self._loop is not None and not self._loop.is_closed():
            self._loop.call_later(WATCH_S, self._heartbeat)

    def response(self, model: str, sample: Sample) -> ModelResponse:
        if not self.is_async:
            return super().response(model, sample)
        future = self._future(model, sample)
        while True:
            try:
                return future.result(timeout=WATCH_S)
            except FutureTimeout:
                pass
            silent = time.monotonic() - self._beat
            if self._stuck or silent > self.timeout_s + WATCH_S:
                self._stuck = True
                return self._give_up(model, sample, future, silent)

    def _give_up(self, model: str, sample: Sample, future: Future[ModelResponse], silent: float) -> ModelResponse:
        """Main thread: the loop is blocked (an async callable that never awaits): this pair times out, and so
        does every pair still waiting, since nothing else can run on that loop."""
        response = ModelResponse(
            error_class="timeout",
            attempts=1,
            error=f"the extractor blocked the event loop for {silent:.0f}s (more than the {self.timeout_s:g}s "
            "timeout): an async extractor must await, not block; a plain function runs in a thread",
        )
        response.origin = asked("extractor", self.name, time.time())
        try:
            future.set_result(response)
        except InvalidStateError:  # answered after all, just now
            return future.result()
        self.journal.append(model, sample.id, call_key(self.name, model, sample, self.code), response)
        return response

    def close(self) -> None:
        if self._stuck:  # its loop will not run the shutdown: leave the daemon thread behind
            self._loop = None
        super().close()


async def _within(work: asyncio.Future[tuple[str, Any]], deadline: float) -> tuple[str, Any] | None:
    """The call's outcome, or None when it is still running at the deadline (then it is left behind)."""
    try:
        done, _ = await asyncio.wait({work}, timeout=max(0.0, deadline - asyncio.get_running_loop().time()))
    except asyncio.CancelledError:
        work.cancel()
        raise
    if not done:
        work.cancel()  # a coroutine gets CancelledError; a thread runs on, unheard
        if isinstance(work, asyncio.Task):
            # one that ignores its cancellation is left behind knowingly: no "destroyed but pending" noise at exit
            work._log_destroy_pending = False  # type: ignore[attr-defined]  # asyncio's own, undeclared
        return None
    return work.result()


async def _guarded(start: Callable[[], Awaitable[Any]]) -> tuple[str, Any]:
    """Await the call, turning whatever it raises into a value: an exception escaping a task (SystemExit)
    would stop the whole loop."""
    try:
        return "returned", await start()
    except BaseException as exc:  # noqa: BLE001 - the callable's failure is this sample's outcome
        if isinstance(exc, asyncio.CancelledError) and _cancelling():
            raise
        return "raised", exc


def _cancelling() -> bool:
    """Whether this task itself is being cancelled, not merely seeing a CancelledError its callable raised.

    Python 3.10's tasks cannot tell (``Task.cancelling`` is 3.11's): there the error is the call's outcome, which is
    safe because :func:`_within` never awaits a call it has cancelled."""
    cancelling = getattr(asyncio.current_task(), "cancelling", None)
    return cancelling is not None and bool(cancelling() > 0)


def _in_daemon_thread(fn: Callable[..., Any], view: SampleView) -> asyncio.Future[tuple[str, Any]]:
    """Run a sync callable on a daemon thread of its own: one that never returns is abandoned at the
    deadline and cannot keep the process from exiting (a pool's threads are joined at exit)."""
    loop = asyncio.get_running_loop()
    result: asyncio.Future[tuple[str, Any]] = loop.create_future()

    def settle(outcome: tuple[str, Any]) -> None:
        if not result.done():
            result.set_result(outcome)

    def target() -> None:
        try:
            outcome: tuple[str, Any] = ("returned", fn(view))
        except BaseException as exc:  # noqa: BLE001 - carried to the loop, decided there
            outcome = ("raised", exc)
        with contextlib.suppress(RuntimeError):  # the loop is gone: the run ended without this answer
            loop.call_soon_threadsafe(settle, outcome)

    threading.Thread(target=target, name="extractbench-extractor", daemon=True).start()
    return result


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
