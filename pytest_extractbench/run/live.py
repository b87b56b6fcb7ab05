"""Where live answers come from: a replayed journal, or model servers (given URLs or embedded ones).

Only the controller (the single process, or xdist's controller) starts embedded servers; workers get
their routes through ``worker_input()``. Nothing here is imported by an offline run.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

from ..core.errors import ExtractbenchWarning, UsageProblem

if TYPE_CHECKING:
    from ..dataset.responses import OutputSource
    from ..live.cassette import CassetteSource
    from ..live.endpoints import Endpoints
    from ..live.pipeline import AheadSource, LiveSource, ReplaySource
    from .context import RunContext


class LiveSetup:
    """The live half of a run: replay, prompt templates, servers, the pipeline and what metrics.json says of them."""

    def __init__(self, context: RunContext) -> None:
        self.context = context
        self.settings = context.settings
        self.endpoints: Endpoints | None = None
        self._replay: ReplaySource | CassetteSource | None = None
        self._templates: Any = None
        self._facts: dict[str, Any] | None = None
        self._live_source: LiveSource | None = None  # kept after it is closed: what its prompt budgets did
        self._ahead: AheadSource | None = None  # this process's requests, for the quiet-run line

    @property
    def active(self) -> bool:
        """Answers come from a server (given or embedded): neither predictions nor a replayed journal."""
        return not self.settings.offline and self.settings.live.replay is None

    @property
    def replay(self) -> ReplaySource | CassetteSource | None:
        """The ReplaySource of --extractbench-replay DIR (read once)."""
        live = self.settings.live
        if self._replay is None and live.replay is not None:
            from ..live.cassette import CASSETTE_FILE, CassetteSource
            from ..live.journal import JOURNAL_FILE
            from ..live.pipeline import ReplaySource, decoding_params

            path = self.context.base_dir / live.replay
            if (path / CASSETTE_FILE).is_file():
                self._replay = CassetteSource(path, templates=self.templates(), params=decoding_params(live))
            elif not (path / JOURNAL_FILE).is_file():
                raise UsageProblem(
                    f"extractbench: --extractbench-replay {live.replay}: neither {CASSETTE_FILE} nor "
                    f"{JOURNAL_FILE} in {path}"
                )
            else:
                self._replay = ReplaySource(path)
        return self._replay

    def workers(self) -> int:
        worker = self.context.worker
        return worker.count if worker is not None else max(1, self.context.processes)

    def templates(self) -> Any:
        """The prompt templates, read once (their files are read at the first call)."""
        if self._templates is None:
            from ..live.client import PromptTemplateError
            from ..live.pipeline import load_templates

            try:
                self._templates = load_templates(self.settings.live, self.context.base_dir, self.settings.data.input)
            except PromptTemplateError as exc:
                raise UsageProblem(f"extractbench: {exc}") from None
        return self._templates

    def start(self) -> None:
        """Controller: start the embedded servers (if no URL) and check every server, before any item runs."""
        if not self.active or self.endpoints is not None or self.context.has_extractor:
            return
        models = self.context.models()
        if not models:
            raise UsageProblem("extractbench: --extractbench-base-url needs the served model's name: --model NAME")
        from ..live.client import api_key_from_env
        from ..live.endpoints import Endpoints

        self.templates()  # a bad template file fails now, not in every item
        self._check_input_mode()
        self.endpoints = Endpoints(self.settings.live, models)
        self.endpoints.start(self.context.run_dir, self._sizing_prompts)
        self.endpoints.check(api_key_from_env())

    def _check_input_mode(self) -> None:
        """Page images need a vision model: the embedded llama-server serves a text-only one (no projector)."""
        mode = self.settings.data.input
        if (
            mode != "text"
            and self.settings.live.embedded
            and any(s.document is not None for s in self.context.dataset.samples if hasattr(s, "document"))
        ):
            raise UsageProblem(
                f"extractbench: --extractbench-input {mode} sends documents as images, which needs a "
                "vision model's server (--extractbench-base-url); the embedded llama-server serves a "
                "text-only model"
            )

    def _sizing_prompts(self) -> dict[str, Any]:
        """The chat messages of every extraction sample, which the embedded server's context must hold.

        Tracks that build their own, short requests keep the default context."""
        if self.context.track.own_request:
            return {}
        from ..live.prompts import sample_messages

        templates = self.templates()
        return {s.id: sample_messages(s, templates) for s in self.context.dataset.samples}

    def worker_input(self) -> dict[str, Any]:
        """What a worker needs from the controller: the routes of the servers it started."""
        if self.endpoints is None:
            return {}
        from ..live.endpoints import ENDPOINTS_KEY

        return {ENDPOINTS_KEY: self.endpoints.to_wire()}

    def make_source(self) -> OutputSource | None:
        """The replayed journal, or the live pipeline; None in offline runs."""
        if self.settings.offline:
            return None
        if self.replay is not None:
            return self.replay
        from ..live.pipeline import CACHE_SUBDIR

        context, live = self.context, self.settings.live
        cache_dir = self.settings.rootdir.joinpath(".extractbench", *CACHE_SUBDIR) if live.reuses_answers else None
        if context.has_extractor:
            from ..live.extractor import ExtractorSource

            self._ahead = ExtractorSource(
                context.answering_extractor(),
                run_dir=context.run_dir,
                cache_dir=cache_dir,
                resume=live.resume is not None,
                concurrency=live.default_concurrency(self.workers()),
                timeout_s=live.timeout_s,
            )
            return self._ahead
        from ..live.client import api_key_from_env
        from ..live.endpoints import ENDPOINTS_KEY, Endpoints
        from ..live.pipeline import LiveSource

        if context.worker is not None:
            self.endpoints = Endpoints(live, context.models())
            self.endpoints.load_wire(context.worker.input.get(ENDPOINTS_KEY) or {})
        source_class: type[LiveSource] = LiveSource
        extra: dict[str, Any] = {}
        tracks = self.settings.tracks
        track = context.track if context.track.own_request else None
        if track is not None or tracks.repeats > 1 or tracks.calibration:
            from ..tracks.live import TrackLiveSource

            source_class = TrackLiveSource
            extra = {"track": track, "repeats": tracks.repeats, "logprobs": tracks.calibration}
            if tracks.repeats > 1 and live.temperature == 0 and not context.is_worker:
                warnings.warn(
                    ExtractbenchWarning(
                        f"--extractbench-repeats {tracks.repeats} with temperature 0: runs differ only by seed; "
                        "set --extractbench-temperature above 0 to measure consistency"
                    ),
                    stacklevel=2,
                )
        self._live_source = source_class(
            live,
            self._routes,  # called when the first request must go out: a fully cached rerun starts no server
            run_dir=context.run_dir,
            cache_dir=cache_dir,
            concurrency=live.default_concurrency(self.workers()),
            api_key=api_key_from_env(),
            templates=self.templates(),
            **extra,
        )
        self._ahead = self._live_source
        return self._live_source

    def _routes(self) -> dict[str, Any]:
        if self.endpoints is None:
            self.start()
        assert self.endpoints is not None
        return self.endpoints.routes

    def quiet_line(self, quiet_s: float, done: int, total: int) -> str:
        """What is in flight when no item has finished for ``quiet_s`` seconds (live/inflight.py): this process's
        requests (none under xdist's controller: its workers send them) and the embedded servers' slots."""
        from ..live.inflight import quiet_line, read_slots, slot_activity
        from ..live.slots import slots_url

        snapshot = self._ahead.in_flight.snapshot() if self._ahead is not None else None
        embedded = self.server_urls() if self.settings.live.embedded else []
        return quiet_line(quiet_s, done, total, snapshot, [slot_activity(read_slots(slots_url(u))) for u in embedded])

    def server_urls(self) -> list[str]:
        return [url for route in (self.endpoints.routes.values() if self.endpoints else ()) for url in route.urls]

    def facts(self, records: list[Any]) -> dict[str, Any] | None:
        """``run.live`` in metrics.json: how the answers were obtained (no credentials); computed once,
        at the end, for metrics.json and the saved baseline alike."""
        if self._facts is None:
            self._facts = self._collect_facts(records)
        return self._facts

    def _collect_facts(self, records: list[Any]) -> dict[str, Any] | None:
        facts = self._source_facts(records)
        if facts is None:
            return None
        from ..analysis.provenance import answer_counts

        answers, reused = answer_counts(r.response for r in records)
        facts.update(answers=answers, reused=reused)
        if not answers["asked"] and reused and facts["mode"] != "replay":
            # no server, embedded server or extractor answered: name what did
            facts["mode"] = max(("cache", "journal"), key=lambda source: answers[source])
        return facts

    def _source_facts(self, records: list[Any]) -> dict[str, Any] | None:
        live = self.settings.live
        if self.settings.offline:
            return None
        if live.replay is not None:
            from ..live.cassette import CassetteSource

            replay = self.replay  # built (or the run stopped) whenever --extractbench-replay is given
            if isinstance(replay, CassetteSource):
                return {"mode": "replay", "replayed_from": str(replay.path), "cassette": replay.header}
            assert replay is not None
            recorded = replay.recorded_live()
            return {
                "mode": "replay",
                "replayed_from": str(replay.run_dir),
                "prompt_hash": (recorded or {}).get("prompt_hash"),  # how the answers were asked for
                "recorded": recorded,
            }
        common = {
            "concurrency": live.default_concurrency(self.workers()),
            "workers": self.workers(),
            "cache": live.reuses_answers,
            "resumed_from": str(self.context.run_dir) if live.resume is not None else None,
            "cached_responses": sum(1 for r in records if r.response.get("cached")),
        }
        if self.context.has_extractor:
            from ..live.extractor import ExtractorSource

            fn = self.context.answering_extractor()
            return {
                "mode": "extractor",
                "extractor": live.extractor or ExtractorSource.qualified_name(fn),
                "timeout_s": live.timeout_s,
                **common,
            }
        from ..live.pipeline import decoding_params, prompt_hash

        facts: dict[str, Any] = {"mode": "server" if live.base_urls else "embedded"}
        facts.update(self.endpoints.facts() if self.endpoints else {})
        templates = self.templates()
        facts.update(
            {
                "structured_output": live.structured_output,
                "decoding": decoding_params(live),
                "timeout_s": live.timeout_s,
                "retries": live.retries,
                "prompt_hash": prompt_hash(templates),
                "prompt_templates": {
                    "system": str(live.system_prompt) if live.system_prompt else "spec",
                    "user": str(live.user_prompt) if live.user_prompt else "spec",
                },
                **common,
            }
        )
        # what the prompt budget did, where this process sent the requests (under xdist each worker has its own)
        source = self._live_source
        budgets = source.prompt_budgets() if source is not None else {}
        facts["prompt_budget"] = {"setting": live.prompt_budget, "by_model": budgets}
        return facts

    def record(self, records: list[Any]) -> None:
        """--extractbench-record DIR: every answer of the run, to DIR/cassette.jsonl (controller, at the end)."""
        live = self.settings.live
        if live.record is None:
            return
        from ..core.files import OutputWriteError
        from ..live.cassette import write_cassette
        from ..live.pipeline import decoding_params

        dataset = self.context.dataset
        samples = {sample.id: sample for sample in dataset.samples}
        answers = [(r.model, samples[r.sample_id], r.response) for r in records if r.sample_id in samples]
        try:
            write_cassette(
                self.context.base_dir / live.record,
                answers,
                templates=self.templates(),
                params=decoding_params(live),
                dataset=dataset.name,
            )
        except OutputWriteError as exc:
            raise UsageProblem(
                f"extractbench: --extractbench-record {live.record}: cannot write the cassette: {exc.reason}"
            ) from None

    def stop(self) -> None:
        if self.endpoints is not None and not self.context.is_worker:
            self.endpoints.stop()
