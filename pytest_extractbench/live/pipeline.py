"""Requests ahead of items: the live output source, and the replay source.

:class:`LiveSource` gets every (model, sample) this process will run in ``prepare``; an asyncio
loop in a background thread sends their requests with bounded concurrency per server group
(least-outstanding-requests over the replicas of a model), journals each response the moment it
arrives, and resolves a ``concurrent.futures.Future`` per pair. An item blocks only on its own
future, so the server stays saturated while pytest scores items one by one.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import itertools
import json
import threading
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..dataset.documents import DocumentError
from ..dataset.responses import ModelResponse
from ..dataset.samples import Sample
from .errors import RETRIED, client_error
from .inflight import InFlight
from .journal import Journal, ResponseCache, asked, latest_responses, reusable_by_key, reused
from .options import LiveOptions
from .schedule import ATTEMPT_TIMEOUT, PromptBudget, prompt_chars

if TYPE_CHECKING:
    from .client import ExtractionClient
    from .endpoints import Route

_R = TypeVar("_R")

CACHE_SUBDIR = ("cache", "responses")
SUBMIT_BATCH = 64
# A replica that still fails this way after the client's retries may be down or overloaded: ask another.
FAILOVER_ERRORS = RETRIED
SUSPECT_S = 30.0  # how long such a replica is tried last


def load_templates(live: LiveOptions, base_dir: Path, input_mode: str = "text") -> Any:
    """The prompt templates: the defaults, or the files given (relative to the invocation directory), sending
    what ``input_mode`` says of each sample's document.

    Raises ``client.PromptTemplateError`` naming the file when one is unreadable or lacks a placeholder.
    """
    from dataclasses import replace

    from .prompts import PromptTemplates

    def where(path: Path | None) -> Path | None:
        return None if path is None else path if path.is_absolute() else base_dir / path

    return replace(PromptTemplates.from_files(where(live.system_prompt), where(live.user_prompt)), input=input_mode)


def prompt_hash(templates: Any) -> str:
    """sha256 of the system and user templates (and of the input mode, when documents go as images): runs with the
    same hash asked the same way."""
    mode = getattr(templates, "input", "text")
    suffix = "" if mode == "text" else f"\x00input={mode}"
    return hashlib.sha256(f"{templates.system}\x00{templates.user}{suffix}".encode()).hexdigest()


def decoding_params(live: LiveOptions) -> dict[str, Any]:
    """What, besides model, messages and schema, changes the answer: the client's own cache-key params."""
    from .transport import client_config

    return client_config(live, "http://127.0.0.1/v1", None).decoding_params()


def route_concurrency(concurrency: int, live: LiveOptions, route: Route) -> int:
    """This process's requests in flight to ``route``: ``concurrency``, scaled down when the embedded
    server was started with fewer slots than asked (memory), so requests wait here rather than in the
    server's queue, where their time would count against the timeout."""
    if live.concurrency is not None or not route.slots or route.slots >= live.slots:
        return concurrency
    return max(1, concurrency * route.slots // live.slots)


@dataclass
class _Request:
    model: str
    sample_id: str
    held: list[dict[str, Any]] | None  # the messages, or None while ``rebuild`` makes them at send time
    schema: dict[str, Any]
    key: str
    future: Future[ModelResponse]
    url: str = ""  # the replica that answered
    rebuild: Callable[[], list[dict[str, Any]]] | None = None
    chars: int = 0  # prompt text characters, for the prompt budget
    image_tokens: int = 0  # and its images' tokens (estimated from their sizes)

    @property
    def messages(self) -> list[dict[str, Any]]:
        if self.held is not None:
            return self.held
        assert self.rebuild is not None
        return self.rebuild()


def prompt_size(messages: list[dict[str, Any]]) -> tuple[int, int]:
    """What the prompt budget weighs a request by: its text's characters and its images' estimated tokens."""
    from .context import prompt_image_tokens

    return prompt_chars(messages), prompt_image_tokens(messages)


def held_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    """What a queued request keeps: its messages, unless they carry images. Every request of a run is queued at
    once, and page images are a megabyte or more each in base64: those are built again when the request goes out
    (the renders are cached by the document's hash), so only the requests in flight hold them."""
    for message in messages:
        content = message.get("content")
        if isinstance(content, list) and any(isinstance(p, dict) and p.get("type") == "image_url" for p in content):
            return None
    return messages


class AheadSource:
    """Answers fetched ahead of the items on an asyncio loop in a background thread; implements ``OutputSource``.

    The base of every live-like source: it owns admission (a future per pair, answered at once from the
    resumed journal or the cache), the loop thread, journaling each answer the moment it arrives and
    caching it. A subclass builds the pair's request (:meth:`_admit`) and answers it (:meth:`_answer`).
    """

    def __init__(self, *, run_dir: Path, cache_dir: Path | None, resume: bool) -> None:
        # resume: the run directory is the resumed one; read its journal before appending to it
        self._resumed = reusable_by_key(run_dir) if resume else {}
        self.journal = Journal(run_dir)
        self.cache = ResponseCache(cache_dir) if cache_dir is not None else None
        self._futures: dict[tuple[str, str], Future[ModelResponse]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self.counts = {"requested": 0, "resumed": 0, "cached": 0}
        self.in_flight = InFlight()  # read by the quiet-run line from the main thread

    # -- what a subclass provides -------------------------------------------------------------

    def _admit(self, model: str, sample: Sample) -> Any:
        """The pair's request (via :meth:`_admit_pair`), or None when it is answered already."""
        raise NotImplementedError

    async def _answer(self, request: Any) -> ModelResponse:
        """Get one request's answer (on the loop thread); errors are returned as responses."""
        raise NotImplementedError

    def _before_submit(self) -> None:
        """Main thread, before the first request goes out (e.g. start the servers)."""

    async def _close_clients(self) -> None:
        """Loop thread, at close: release connections."""

    def _asked_of(self, request: Any) -> tuple[str, str]:
        """Who answered ``request`` in this run (the ``by`` and ``where`` of its origin)."""
        raise NotImplementedError

    # -- OutputSource -----------------------------------------------------------------------

    def prepare(self, work: Sequence[tuple[str, Sample]]) -> None:
        """Queue a request for every pair not answered by the resumed journal or the cache.

        Requests go out in batches as they are built, so the first ones are on the wire while the
        prompts of the rest are still being rendered.
        """
        batch: list[Any] = []
        for model, sample in work:
            batch.extend(self._admissions(model, sample))
            if len(batch) >= SUBMIT_BATCH:
                self._submit(batch)
                batch = []
        if batch:
            self._submit(batch)

    def _admissions(self, model: str, sample: Sample) -> list[Any]:
        """The requests one pair still needs (the tracks' repeats need several)."""
        request = self._admit(model, sample)
        return [] if request is None else [request]

    def response(self, model: str, sample: Sample) -> ModelResponse:
        return self._future(model, sample).result()

    def _future(self, model: str, sample: Sample) -> Future[ModelResponse]:
        """The pair's future, submitted now if ``prepare`` did not announce it (e.g. an xdist worker took
        over a crashed one's item)."""
        future = self._futures.get((model, sample.id))
        if future is None:
            request = self._admit(model, sample)
            if request is not None:
                self._submit([request])
            future = self._futures[(model, sample.id)]
        return future

    def close(self) -> None:
        """Cancel what is still in flight, close the clients, stop the thread, fsync the journal."""
        loop, self._loop = self._loop, None
        if loop is not None:
            # closing must not mask the session's own outcome
            with contextlib.suppress(Exception):
                asyncio.run_coroutine_threadsafe(self._shutdown(), loop).result(timeout=30)
            loop.call_soon_threadsafe(loop.stop)
            if self._thread is not None:
                self._thread.join(timeout=10)
            if not loop.is_running():
                loop.close()
        self.journal.close()

    # -- admission (main thread) -------------------------------------------------------------

    def _admit_pair(
        self, pair: tuple[str, str], key: str, make_request: Callable[[Future[ModelResponse]], _R]
    ) -> _R | None:
        """Create the pair's future; resolve it at once from the resumed journal or the cache."""
        future: Future[ModelResponse] = Future()
        self._futures[pair] = future
        found = self._resumed.get(key)
        if found is not None:
            self.counts["resumed"] += 1
            future.set_result(reused(found, "journal"))
            return None
        if self.cache is not None and (found := self.cache.get(key)) is not None:
            self.counts["cached"] += 1
            reused(found, "cache")
            self.journal.append(pair[0], pair[1], key, found)
            future.set_result(found)
            return None
        self.counts["requested"] += 1
        return make_request(future)

    def _unaskable(self, pair: tuple[str, str], exc: Exception) -> None:
        """A pair whose request cannot be built: answered at once with the reason, as a ``client_error``."""
        future: Future[ModelResponse] = Future()
        future.set_result(client_error("could not build the request", exc))
        self._futures[pair] = future

    def _submit(self, requests: Iterable[Any]) -> None:
        self._before_submit()
        loop = self._ensure_loop()
        batch = list(requests)
        loop.call_soon_threadsafe(self._schedule, batch)

    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
            self._thread = threading.Thread(target=self._loop.run_forever, name="extractbench-requests", daemon=True)
            self._thread.start()
        return self._loop

    # -- the loop thread ------------------------------------------------------------------------

    def _schedule(self, batch: list[Any]) -> None:
        # In request order: the semaphores wake waiters first-in first-out, so answers arrive
        # roughly in the order pytest will ask for them.
        for request in batch:
            task = asyncio.get_running_loop().create_task(self._fetch(request))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _fetch(self, request: Any) -> None:
        try:
            self.in_flight.waiting(id(request))
            try:
                response = await self._answer(request)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - a defect, not a server fault: still an outcome
                response = client_error("could not get the answer", exc)
            finally:
                self.in_flight.done(id(request))
            by, where = self._asked_of(request)
            response.origin = asked(by, where, response.finished_at)
            # journaled before anyone scores it; an answer the journal cannot write is recorded as an error
            try:
                self.journal.append(request.model, request.sample_id, request.key, response)
            except (TypeError, ValueError, RecursionError) as exc:
                response = client_error("could not record the answer", exc, response)
                self.journal.append(request.model, request.sample_id, request.key, response)
            if self.cache is not None:
                self.cache.put(request.key, response)
        except asyncio.CancelledError:
            request.future.cancel()
            raise
        except BaseException as exc:  # noqa: BLE001 - e.g. a full disk: the item shows it
            request.future.set_exception(exc)
            return
        request.future.set_result(response)

    async def _shutdown(self) -> None:
        current = asyncio.current_task()
        tasks = [task for task in self._tasks if task is not current]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await self._close_clients()


class LiveSource(AheadSource):
    """Answers from live servers: chat completions over the routes of each model."""

    def __init__(
        self,
        live: LiveOptions,
        routes: Callable[[], dict[str, Route]],
        *,
        run_dir: Path,
        cache_dir: Path | None,
        concurrency: int,
        api_key: str | None,
        templates: Any,
        http_client_factory: Callable[[Any], Any] | None = None,
    ) -> None:
        """``http_client_factory`` (a client config -> an async httpx client) carries every request through
        your own transport (transport.py); by default each server URL gets the SDK's own client."""
        super().__init__(run_dir=run_dir, cache_dir=cache_dir, resume=live.resume is not None)
        self.live = live
        self._route_provider = routes
        self.routes: dict[str, Route] | None = None  # known once the first request must go out
        self.concurrency = concurrency
        self.templates = templates
        self._api_key = api_key
        self._params = decoding_params(live)
        self._http_client_factory = http_client_factory
        self._clients: dict[str, Any] = {}
        self._outstanding: dict[str, int] = {}
        self._suspect_until: dict[str, float] = {}  # replica -> loop time until which it is tried last
        self._limits: dict[tuple[str, ...], PromptBudget] = {}
        self._tiebreak = itertools.count()

    def _admit(self, model: str, sample: Sample) -> _Request | None:
        """The pair's request, unless the resumed journal or the cache answers it."""
        pair = (model, sample.id)
        if pair in self._futures:
            return None
        from .dialects import cache_key
        from .prompts import sample_messages

        try:
            messages = sample_messages(sample, self.templates)
        except DocumentError as exc:  # the document changed or vanished since the dataset was read
            self._unaskable(pair, exc)
            return None
        key = cache_key(model, messages, sample.schema, self._params, self.server_identity(model))
        held, (chars, image_tokens), templates = held_messages(messages), prompt_size(messages), self.templates
        return self._admit_pair(
            pair,
            key,
            lambda future: _Request(
                model,
                sample.id,
                held,
                sample.schema,
                key,
                future,
                rebuild=lambda: sample_messages(sample, templates),
                chars=chars,
                image_tokens=image_tokens,
            ),
        )

    def _before_submit(self) -> None:
        if self.routes is None:  # main thread: may start the embedded servers and check them
            self.routes = self._route_provider()

    def server_identity(self, model: str) -> str:
        """Who answers ``model`` (part of each key): known once its server is reached, so even a run
        that the cache or the journal answers whole stops first when no server answers."""
        self._before_submit()
        assert self.routes is not None
        return self.routes[model].identity

    def _limit(self, route: Route) -> PromptBudget:
        """The route's admission: its concurrency, and the prompt tokens its servers can read in time (schedule.py)."""
        if route.urls not in self._limits:
            self._limits[route.urls] = PromptBudget(
                route_concurrency(self.concurrency, self.live, route), self.live.timeout_s, self.live.prompt_budget
            )
        return self._limits[route.urls]

    def prompt_budgets(self) -> dict[str, dict[str, Any]]:
        """What each model's admission did (metrics.json's ``run.live.prompt_budget``)."""
        if not self.routes:
            return {}
        return {
            model: self._limits[route.urls].describe()
            for model, route in self.routes.items()
            if route.urls in self._limits
        }

    def _client(self, url: str) -> ExtractionClient:
        client = self._clients.get(url)
        if client is None:
            from .client import ExtractionClient, client_config

            config = client_config(self.live, url, self._api_key)
            client = self._clients[url] = ExtractionClient(
                config, http_client_factory=self._http_client_factory, slots=self._embedded_slots(url)
            )
            self._outstanding[url] = 0
        return client

    def _embedded_slots(self, url: str) -> int | None:
        """The slots of the llama-server this plugin started at ``url`` (None for a server it did not start): an
        attempt's clock waits for one of them to be free (slots.py)."""
        if not self.live.embedded or self.routes is None:
            return None
        return next((route.slots or self.live.slots for route in self.routes.values() if url in route.urls), None)

    def _pick(self, urls: tuple[str, ...], tried: set[str]) -> str:
        """Least outstanding requests among the replicas not tried yet, those that failed lately last;
        ties go round-robin."""
        for url in urls:
            self._client(url)
        turn = next(self._tiebreak)
        now = asyncio.get_running_loop().time()
        candidates = [u for u in urls if u not in tried] or list(urls)
        return min(
            candidates,
            key=lambda u: (
                self._suspect_until.get(u, 0.0) > now,
                self._outstanding[u],
                (urls.index(u) - turn) % len(urls),
            ),
        )

    async def _send(self, client: ExtractionClient, served_model: str, request: _Request) -> ModelResponse:
        """One request to one replica (the tracks send other request fields: tracks/live.py)."""
        return await client.extract(served_model, request.messages, request.schema)

    async def _answer(self, request: _Request) -> ModelResponse:
        assert self.routes is not None
        route = self.routes[request.model]
        budget = self._limit(route)
        # waited: for a free request slot and room in the prompt budget, before any attempt's clock starts
        async with budget.admit(request.chars, request.image_tokens) as waited:
            self.in_flight.sent(id(request))
            sized = ATTEMPT_TIMEOUT.set(lambda: budget.attempt_timeout(request.chars, request.image_tokens))
            try:
                response = await self._ask(request, route)
            finally:
                ATTEMPT_TIMEOUT.reset(sized)
        budget.speed.observe(request.chars, response.timings, request.image_tokens)
        response.wait_s = waited
        return response

    async def _ask(self, request: _Request, route: Route) -> ModelResponse:
        """The answer, from another replica when one fails for a reason another might not have."""
        tried: set[str] = set()
        answers: list[ModelResponse] = []
        while True:
            url = self._pick(route.urls, tried)
            tried.add(url)
            self._outstanding[url] += 1
            try:
                response = await self._send(self._client(url), route.served_model, request)
            finally:
                self._outstanding[url] -= 1
            answers.append(response)
            request.url = url
            if response.error_class in FAILOVER_ERRORS and len(route.urls) > 1:
                # down or overloaded: later requests try the other replicas first for a while
                self._suspect_until[url] = asyncio.get_running_loop().time() + SUSPECT_S
            if response.error_class not in FAILOVER_ERRORS or len(tried) == len(route.urls):
                return _every_attempt(answers)

    def _asked_of(self, request: _Request) -> tuple[str, str]:
        from ..core.redact import redact_url

        return ("embedded" if self.live.embedded else "server"), redact_url(request.url) if request.url else ""

    async def _close_clients(self) -> None:
        for client in self._clients.values():
            with contextlib.suppress(Exception):
                await client.aclose()
        self._clients.clear()


def _every_attempt(answers: Sequence[ModelResponse]) -> ModelResponse:
    """The last replica's answer, counting the attempts made of every replica asked: their log, with starts from
    the first attempt's, and the end-to-end latency from then (wall clock across replicas)."""
    last = answers[-1]
    last.attempts = sum(a.attempts for a in answers)
    if len(answers) == 1:
        return last
    first = answers[0].started_at
    log: list[dict[str, Any]] = []
    for answer in answers:
        offset = (answer.started_at - first) if answer.started_at is not None and first is not None else None
        if offset is None or answer.attempt_log is None:
            last.attempt_log = last.end_to_end_s = None
            return last
        log += [{**entry, "start_s": entry["start_s"] + offset} for entry in answer.attempt_log]
    last.attempt_log = log
    if last.end_to_end_s is not None:
        last.end_to_end_s += offset  # type: ignore[operator]  # the loop returned on a None offset
    last.started_at = first
    return last


class ReplaySource:
    """Responses recorded in a run directory's journal, re-scored with no server."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.responses = {pair: response for pair, (_key, response) in latest_responses(run_dir).items()}

    @property
    def models(self) -> list[str]:
        return sorted({model for model, _ in self.responses})

    def recorded_live(self) -> dict[str, Any] | None:
        """``run.live`` of the recorded run's metrics.json (how its answers were obtained), if there is one."""
        try:
            live = json.loads((self.run_dir / "metrics.json").read_text(encoding="utf-8"))["run"]["live"]
        except (OSError, ValueError, KeyError, TypeError):
            return None
        return live if isinstance(live, dict) else None

    def prepare(self, work: Sequence[tuple[str, Sample]]) -> None:
        """Everything is in memory already."""

    def response(self, model: str, sample: Sample) -> ModelResponse:
        found = self.responses.get((model, sample.id))
        if found is None:
            return ModelResponse(
                error_class="missing", error=f"no response for sample {sample.id!r} (model {model!r}) in {self.run_dir}"
            )
        if not (found.origin or {}).get("where"):  # recorded before answers carried their origin
            when = asked("", "", found.finished_at)["at"] if found.finished_at else None
            found.origin = {"where": "a server the journal does not name", **({"at": when} if when else {})}
        return reused(found, "replay")

    def close(self) -> None:
        """Nothing to release."""
