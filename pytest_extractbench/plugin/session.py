"""The benchmark session: inputs, items, per-item scoring, and (on the controller) aggregation and gates.

Every process that collects (the only process, or each xdist worker) loads the
dataset and builds items; results travel back on the test reports, so the
controller aggregates the same way with and without xdist (DESIGN decision 3).
"""

from __future__ import annotations

import gc
import platform
import sys
import time
import warnings
from dataclasses import asdict
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ..gating import baseline as baselines
from ..core import rundir, textsafe
from .items import DatasetCollector, SampleItem
from ..dataset.samples import Dataset, DatasetProblem, subsample
from ..dataset.statistics import dataset_statistics
from ..analysis.diagnostics import sample_diagnostics
from ..live.endpoints import ENDPOINTS_KEY, Endpoints
from .extensions import rule_problems
from ..gating.sla import GateCheck, evaluate_sla, sla_passed
from ..dataset.sources import DatasetSourceError, load_source
from ..analysis.metrics import metrics_by_model, run_level_metrics
from ..analysis.performance import apply_prices
from ..dataset.predictions import DEFAULT_OFFLINE_MODEL, PredictionsSource, load_predictions
from ..dataset.records import SampleRecord, TrackRecord
from ..gating.regression import RunComparison, compare_run
from ..core import files
from ..report import outputs, terminal
from ..analysis.sample_extras import extra_diagnostics
from ..scoring import MISSING, budget, score_sample
from ..scoring.sample import SCORING_ERROR, scoring_error_score
from ..live.llama_server import DEFAULT_EMBEDDED_MODEL
from ..gating.subsets import gate_scopes, subset_metrics
from ..tracks import get_track
from .track_runner import TrackRunner
from ..gating.verdict import verdict_lines

STATIC_KEY = "extractbench_static_schedule"  # xdist_schedule.STATIC_KEY (that module needs xdist)


def own_indices(total: int, workerid: str, workercount: int) -> list[int]:
    """The item indices the fixed live-run schedule (xdist_schedule.py) gives one worker."""
    return list(range(int(workerid.removeprefix("gw")), total, max(1, workercount)))

if TYPE_CHECKING:
    from ..dataset.responses import OutputSource
    from ..config.settings import Settings

FORMAT_VERSION = 1
RUN_DIR_KEY = "extractbench_run_dir"
MAX_WARNINGS = 20


class ExtractBenchWarning(UserWarning):
    """A problem with the dataset or predictions that did not stop the run."""


def is_worker(config: pytest.Config) -> bool:
    """True inside an xdist worker process."""
    return hasattr(config, "workerinput")


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


class BenchSession:
    """State of one benchmark run in one process."""

    def __init__(self, config: pytest.Config, settings: Settings) -> None:
        self.config = config
        self.settings = settings
        self.is_worker = is_worker(config)
        self.records: list[SampleRecord] = []
        self.track_records: list[TrackRecord] = []
        # a non-extraction track runs through its own runner (None = extraction)
        track = get_track(settings.tracks.track)
        self.tracks = TrackRunner(self, track) if track is not None else None
        self.unscored: list[str] = []
        self.started_at = datetime.now(timezone.utc)
        self._clock = time.perf_counter()
        self._lock: rundir.RunLock | None = None
        self.run_dir = self._run_dir()
        self._dataset: Dataset | None = None
        self.population = 0
        self._predictions: PredictionsSource | None = None
        self._source: OutputSource | None = None
        self._rule_problems: list[DatasetProblem] | None = None
        self.metrics: dict[str, dict[str, Any]] = {}
        self.run_level: dict[str, Any] = {}
        self.checks: dict[str, list[GateCheck]] = {}
        self.baseline = None if self.is_worker else self._load_baseline()
        self.baseline_comparison: RunComparison | None = None
        self.saved_baseline: Path | None = None
        # --- live runs ---
        self.endpoints: Endpoints | None = None
        self._replay: Any = None
        self._prompt_templates: Any = None
        self._live_facts: dict[str, Any] | None = None
        self._check_live_options()
        self.report_files: list[Path] = []
        self.report_errors: list[str] = []
        self._own_run_dir()

    # -- inputs ------------------------------------------------------------------------------

    def _run_dir(self) -> Path:
        """The session's run directory, checked before any item runs (locked at the end of __init__)."""
        if self.is_worker:
            return Path(self.config.workerinput[RUN_DIR_KEY])  # type: ignore[attr-defined]
        # --collect-only writes nothing: the path is checked, an earlier run's files are no obstacle
        writes = not self.config.option.collectonly
        try:
            if self.settings.live.resume is not None:  # a resumed run continues in its own directory
                path = self.config.invocation_params.dir / self.settings.live.resume
                rundir.prepare(path, what="--extractbench-resume", resume=True)
            elif self.settings.output is not None:
                path = self.settings.output
                if not path.is_absolute():
                    path = self.config.invocation_params.dir / path
                rundir.prepare(path, what="--extractbench-output", fresh=writes)
            else:
                stamp = self.started_at.astimezone().strftime("%Y%m%d-%H%M%S")
                path = rundir.claim_new(self.settings.rootdir / ".extractbench" / "runs" / stamp)
        except rundir.RunDirError as exc:
            raise pytest.UsageError(textsafe.text_lines(f"extractbench: {exc}")) from None
        return path

    def _own_run_dir(self) -> None:
        """Lock the run directory for this session (last step of __init__: a failed start leaves no lock held)."""
        if self.is_worker or self.config.option.collectonly:
            return
        lock = rundir.RunLock(self.run_dir)
        try:
            lock.acquire()
        except rundir.RunDirError as exc:
            raise pytest.UsageError(textsafe.text_lines(f"extractbench: {exc}")) from None
        self._lock = lock

    def _load_baseline(self) -> baselines.Baseline | None:
        """The --extractbench-compare target, read before anything runs so a typo fails fast."""
        if self.settings.compare_fail and not self.settings.compare:
            raise pytest.UsageError("extractbench: --extractbench-compare-fail needs --extractbench-compare NAME|PATH")
        if not self.settings.compare:
            return None
        try:
            path = baselines.resolve(
                self.settings.compare,
                baselines.baseline_dir(self.settings.rootdir),
                base_dir=self.config.invocation_params.dir,
            )
            return baselines.load(path)
        except baselines.BaselineError as exc:
            raise pytest.UsageError(f"extractbench: {exc}") from None

    @property
    def dataset(self) -> Dataset:
        if self._dataset is None:
            data = self.settings.data
            try:
                if self.tracks is not None:  # each track reads its own rows
                    loaded = self.tracks.track.load(self.settings.dataset, base_dir=self.config.invocation_params.dir)
                else:
                    loaded = load_source(self.settings.dataset, base_dir=self.config.invocation_params.dir,
                                         columns=dict(data.columns), cache_dir=data.cache_dir)  # fmt: skip
            except (FileNotFoundError, OSError, DatasetSourceError) as exc:
                raise pytest.UsageError(f"extractbench: {exc}") from None
            self.population = len(loaded.samples)
            loaded.samples = subsample(loaded.samples, data.sample, data.seed)
            self._dataset = loaded
        return self._dataset

    @property
    def predictions(self) -> PredictionsSource | None:
        if self._predictions is None and self.settings.offline:
            models = self.settings.models
            try:
                self._predictions = load_predictions(
                    self.settings.predictions,
                    default_model=models[0] if len(models) == 1 else None,
                    base_dir=self.config.invocation_params.dir,
                )
            except (FileNotFoundError, OSError) as exc:
                raise pytest.UsageError(f"extractbench: {exc}") from None
            self._predictions.check_ids(self.dataset.samples)
        return self._predictions

    @property
    def problems(self) -> list[DatasetProblem]:
        found = list(self.dataset.problems)
        if self.settings.data.invalid_samples == "skip":  # listed in metrics.json only
            found = [p for p in found if p.severity != "error"]
        if self._rule_problems is None:
            self._rule_problems = rule_problems(self.dataset.samples) if self.tracks is None else []
        found.extend(self._rule_problems)
        if self.predictions is not None:
            found.extend(self.predictions.problems)
        return found

    def models(self) -> list[str]:
        """Models that get one item per sample."""
        if self.settings.models:
            return list(dict.fromkeys(self.settings.models))
        if self.predictions is not None:
            return self.predictions.models or [DEFAULT_OFFLINE_MODEL]
        if self.replay is not None:
            return self.replay.models
        if self.settings.live.embedded:
            return [DEFAULT_EMBEDDED_MODEL]
        return []

    @property
    def source(self) -> OutputSource:
        if self._source is None:
            self._source = self.config.hook.pytest_extractbench_make_source(config=self.config, bench=self)
            if self._source is None:
                raise pytest.UsageError("extractbench: no output source: pass --extractbench-predictions FILE")
        return self._source

    # -- collection and running (every collecting process) -----------------------------

    def make_items(self, session: pytest.Session) -> list[SampleItem]:
        """One item per (model, sample), in dataset order for each model."""
        dataset = self.dataset
        models = self.models()
        if not models:
            raise pytest.UsageError("extractbench: no model given (use --model NAME)")
        invalid = self.dataset.skipped
        if invalid and self.settings.data.invalid_samples == "fail":
            listed = "\n  ".join(textsafe.terminal(p, terminal.PROBLEM_WIDTH) for p in invalid[:MAX_WARNINGS])
            more = f"\n  ... {len(invalid) - MAX_WARNINGS} more" if len(invalid) > MAX_WARNINGS else ""
            raise pytest.UsageError(f"extractbench: {len(invalid)} invalid sample problem(s) and "
                                    f"--extractbench-invalid-samples fail:\n  {listed}{more}")
        self._warn(self.problems)
        # The dataset stays unchanged for the whole session: keep the cyclic GC from rescanning
        # it after every few hundred scored fields (30% of scoring time on 10,000 samples).
        gc.freeze()
        work = [(model, sample) for model in models for sample in dataset.samples]
        collector = DatasetCollector.from_parent(session, name=dataset.name, nodeid=dataset.name, work=work)
        items = collector.collect()
        # Report the collection like any collector, so "collected N items" counts the samples.
        report = pytest.CollectReport(collector.nodeid, "passed", None, list(items))
        session.ihook.pytest_collectreport(report=report)
        return items

    def _warn(self, problems: list[DatasetProblem]) -> None:
        if self.is_worker and self.config.workerinput.get("workerid") != "gw0":  # type: ignore[attr-defined]
            return  # every worker loads the same inputs: let one of them speak
        for problem in problems[:MAX_WARNINGS]:
            # Point the warning at the data file, not at this module; line 0, because pytest would echo the
            # line it points at verbatim (a bad row can be megabytes of untrusted bytes): the message says
            # which line, clipped and made safe.
            text = textsafe.terminal(problem, terminal.PROBLEM_WIDTH)
            warnings.warn_explicit(ExtractBenchWarning(text), ExtractBenchWarning, textsafe.terminal(problem.source), 0)
        if len(problems) > MAX_WARNINGS:
            warnings.warn(ExtractBenchWarning(f"{len(problems) - MAX_WARNINGS} more input problems; see metrics.json"))

    def prepare(self, items: list[pytest.Item]) -> None:
        """Hand the source every (model, sample) this process will run, so it can work ahead."""
        if self.is_worker:
            info = self.config.workerinput  # type: ignore[attr-defined]
            if not info.get(STATIC_KEY):
                # --dist other than load: this worker's items are not known ahead, each asks when it runs
                return
            # live runs under xdist: the items the fixed schedule gives this worker (xdist_schedule.py)
            items = [items[i] for i in own_indices(len(items), info["workerid"], info["workercount"])]
        work = [(item.model, item.sample) for item in items if isinstance(item, SampleItem)]
        if work:
            self.source.prepare(work)

    def run_item(self, item: SampleItem) -> SampleRecord:
        """Get the item's output, score it, and decide pass/fail."""
        if self.tracks is not None:
            return self.tracks.run_item(item)  # type: ignore[return-value]
        sample = item.sample
        responses = self.item_responses(item.model, sample)
        response = responses[0]
        meta = {**sample.meta, "text_chars": len(sample.text or "")}  # input length for spec 4.3.1
        try:
            # Any failure or overrun while scoring is this sample's scoring_error, never a lost sample.
            with budget.time_budget(budget.ITEM_BUDGET_S):
                score = score_sample(
                    response.content, sample.expected, sample.schema, options=self.settings.scoring,
                    sample_id=sample.id, rule_errors="ignore",  # reported once per sample as an input problem instead
                )
                failure = self._failure(score, response)
                record = SampleRecord(
                    model=item.model, sample_id=sample.id, score=score, meta=meta, response=response.as_dict(),
                    passed=failure is None, failure=failure,
                    # needs the source text, which only this process has: computed here, carried in the record
                    diagnostics=sample_diagnostics(score, sample.text, sample.expected, response.content),
                )
                extra_diagnostics(record, responses)  # calibration and consistency, when there is data
        except Exception as exc:  # noqa: BLE001 - see above
            record = self._scoring_error(item.model, sample, meta, response, exc)
        self.config.hook.pytest_extractbench_sample_scored(config=self.config, record=record)
        return record

    def _scoring_error(self, model: str, sample: Any, meta: dict[str, Any], response: Any,
                       exc: BaseException) -> SampleRecord:
        """The record of a sample whose scoring failed: invalid output (EQS 0, every gold field missed)."""
        reason = budget.failure_reason(exc)
        score = scoring_error_score(sample.expected, reason, options=self.settings.scoring, sample_id=sample.id)
        try:
            content = response.as_dict()
        except Exception:  # noqa: BLE001 - the response itself may be what broke scoring
            content = {"content": None, "error_class": response.error_class, "error": response.error}
        return SampleRecord(
            model=model, sample_id=sample.id, score=score, meta=meta, response=content, passed=False,
            failure=f"scoring failed ({SCORING_ERROR}): {reason}", scoring_error=reason,
        )

    def item_responses(self, model: str, sample: Any) -> list[Any]:
        """The runs of one sample (several with --extractbench-repeats), each announced by the request hook."""
        repeats = self.settings.tracks.repeats
        several = getattr(self.source, "responses", None)
        found = list(several(model, sample, repeats)) if repeats > 1 and several is not None else [
            self.source.response(model, sample)]
        for response in found:
            self.config.hook.pytest_extractbench_request_done(
                config=self.config, model=model, sample_id=sample.id, response=response)
        return found

    def _failure(self, score: Any, response: Any) -> str | None:
        if response.content is MISSING:
            return f"no output ({response.error_class}): {response.error}"
        if not score.json_valid:
            return f"unusable output: {score.parse_error}"
        if not score.schema_valid:
            return f"output violates the schema ({len(score.validation_errors)} error(s))"
        bar = self.settings.sample_min_eqs
        if bar is not None and score.eqs < bar:
            return f"EQS {score.eqs:.3f} is below the per-sample bar {bar:.3f}"
        return None

    def close_source(self) -> None:
        """Release the output source (live: cancel the requests still queued, fsync the journal)."""
        source, self._source = self._source, None
        if source is not None:
            source.close()

    def close(self) -> None:
        gc.unfreeze()
        try:
            self.close_source()
        finally:
            if self.endpoints is not None and not self.is_worker:
                self.endpoints.stop()
            if self._lock is not None:
                self._lock.release()

    # -- live runs -----------------------------------------------------------------

    @property
    def live(self) -> bool:
        """Answers come from a server (given or embedded): neither predictions nor a replayed journal."""
        return not self.settings.offline and self.settings.live.replay is None

    def _check_live_options(self) -> None:
        live = self.settings.live
        if live.replay is not None and self.settings.offline:
            raise pytest.UsageError("extractbench: --extractbench-replay and --extractbench-predictions exclude each other")
        if live.replay is not None and live.resume is not None:
            raise pytest.UsageError("extractbench: --extractbench-replay and --extractbench-resume exclude each other")

    @property
    def replay(self) -> Any:
        """The ReplaySource of --extractbench-replay DIR (read once)."""
        live = self.settings.live
        if self._replay is None and live.replay is not None:
            from ..live.journal import JOURNAL_FILE
            from ..live.pipeline import ReplaySource

            path = self.config.invocation_params.dir / live.replay
            if not (path / JOURNAL_FILE).is_file():
                raise pytest.UsageError(f"extractbench: --extractbench-replay {live.replay}: no {JOURNAL_FILE} in {path}")
            self._replay = ReplaySource(path)
        return self._replay

    def start_live(self) -> None:
        """Controller: start the embedded servers (if no URL) and check every server, before any item runs."""
        if not self.live or self.endpoints is not None:
            return
        models = self.models()
        if not models:
            raise pytest.UsageError("extractbench: --extractbench-base-url needs the served model's name: --model NAME")
        from ..live.client import api_key_from_env

        self._templates()  # a bad template file fails now, not in every item
        self.endpoints = Endpoints(self.settings.live, models)
        self.endpoints.start(self.run_dir, self._sizing_prompts)
        self.endpoints.check(api_key_from_env())

    def _sizing_prompts(self) -> dict[str, Any]:
        """The chat messages of every extraction sample, which the embedded server's context must hold.

        Tracks build their own, short requests: they keep the default context."""
        if self.tracks is not None:
            return {}
        from ..live.client import build_messages

        templates = self._templates()
        return {sample.id: build_messages(sample.text, sample.schema, templates) for sample in self.dataset.samples}

    def worker_input(self) -> dict[str, Any]:
        """What a worker needs from the controller: the routes of the servers it started."""
        return {ENDPOINTS_KEY: self.endpoints.to_wire()} if self.endpoints is not None else {}

    def make_live_source(self) -> OutputSource | None:
        """The replayed journal, or the live pipeline; None in offline runs."""
        if self.settings.offline:
            return None
        if self.replay is not None:
            return self.replay
        from ..live.client import api_key_from_env
        from ..live.pipeline import CACHE_SUBDIR, LiveSource

        live = self.settings.live
        if self.is_worker:
            self.endpoints = Endpoints(live, self.models())
            self.endpoints.load_wire(self.config.workerinput.get(ENDPOINTS_KEY) or {})  # type: ignore[attr-defined]
        source_class: Any = LiveSource
        extra: dict[str, Any] = {}
        tracks = self.settings.tracks
        if self.tracks is not None or tracks.repeats > 1 or tracks.calibration:
            from ..tracks.live import TrackLiveSource

            source_class = TrackLiveSource
            extra = {"track": self.tracks.track if self.tracks else None, "repeats": tracks.repeats,
                     "logprobs": tracks.calibration}  # fmt: skip
            if tracks.repeats > 1 and live.temperature == 0 and not self.is_worker:
                warnings.warn(ExtractBenchWarning(
                    f"--extractbench-repeats {tracks.repeats} with temperature 0: runs differ only by seed; "
                    "set --extractbench-temperature above 0 to measure consistency"))  # fmt: skip
        return source_class(
            live,
            self._routes,  # called when the first request must go out: a fully cached rerun starts no server
            run_dir=self.run_dir,
            cache_dir=None if live.no_cache else self.settings.rootdir.joinpath(".extractbench", *CACHE_SUBDIR),
            concurrency=live.default_concurrency(self._workers()),
            api_key=api_key_from_env(),
            templates=self._templates(),
            **extra,
        )

    def _routes(self) -> dict[str, Any]:
        if self.endpoints is None:
            self.start_live()
        assert self.endpoints is not None
        return self.endpoints.routes

    def _workers(self) -> int:
        if self.is_worker:
            return int(self.config.workerinput.get("workercount", 1))  # type: ignore[attr-defined]
        return int(getattr(self.config.option, "numprocesses", None) or 1)

    def _templates(self) -> Any:
        """The prompt templates, read once (their files are read at the first call)."""
        if self._prompt_templates is None:
            from ..live.client import PromptTemplateError
            from ..live.pipeline import load_templates

            try:
                self._prompt_templates = load_templates(self.settings.live, self.config.invocation_params.dir)
            except PromptTemplateError as exc:
                raise pytest.UsageError(f"extractbench: {exc}") from None
        return self._prompt_templates

    def live_facts(self) -> dict[str, Any] | None:
        """``run.live`` in metrics.json: how the answers were obtained (no credentials); computed once,
        at session end, for metrics.json and the saved baseline alike."""
        if self._live_facts is None:
            self._live_facts = self._collect_live_facts()
        return self._live_facts

    def _collect_live_facts(self) -> dict[str, Any] | None:
        live = self.settings.live
        if self.settings.offline:
            return None
        if live.replay is not None:
            recorded = self.replay.recorded_live()
            return {
                "mode": "replay",
                "replayed_from": str(self.replay.run_dir),
                "prompt_hash": (recorded or {}).get("prompt_hash"),  # how the answers were asked for
                "recorded": recorded,
            }
        from ..live.pipeline import decoding_params, prompt_hash

        facts: dict[str, Any] = {"mode": "server" if live.base_urls else "embedded"}
        facts.update(self.endpoints.facts() if self.endpoints else {})
        templates = self._templates()
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
                "concurrency": live.default_concurrency(self._workers()),
                "workers": self._workers(),
                "cache": not live.no_cache,
                "resumed_from": str(self.run_dir) if live.resume is not None else None,
                "cached_responses": sum(1 for r in self.records if r.response.get("cached")),
            }
        )
        return facts

    # -- the controller ----------------------------------------------------------------------

    def add_report(self, report: pytest.TestReport) -> None:
        """Keep the record a sample item's report carries; note items that ended without one."""
        data = getattr(report, "extractbench", None)
        if data is not None and "track" in data:
            self.track_records.append(TrackRecord.from_dict(data))
        elif data is not None:
            self.records.append(SampleRecord.from_dict(data, self.settings.scoring))
        elif "::extractbench[" in report.nodeid and (report.when == "call" or report.failed):
            self.unscored.append(report.nodeid)

    def finish(self, session: pytest.Session) -> None:
        """Aggregate, write the run directory, apply the SLA gate (controller only)."""
        if self.tracks is not None and not self.is_worker:
            self.tracks.finish()
            return
        if self.is_worker or not self.records:
            return
        self.records.sort(key=lambda r: r.sort_key)
        self.metrics = metrics_by_model(self.records, self.settings.scoring)
        for metrics in self.metrics.values():
            apply_prices(metrics, self.settings.prices)  # before the comparison reads the cost
        by_model = self._records_by_model()
        if self.settings.subsets is not None:
            for model, metrics in self.metrics.items():
                metrics.update(subset_metrics(by_model[model], self.settings.subsets, self.settings.scoring.statistics))
        self.run_level = run_level_metrics(self.metrics, self.records, self.settings.scoring)
        self._baselines(by_model)
        for model, metrics in self.metrics.items():
            self.checks[model] = evaluate_sla(metrics, self.settings.sla)
            metrics["sla"] = {
                "tier": self.settings.sla,
                "passed": sla_passed(self.checks[model]),
                "checks": [c.as_dict() for c in self.checks[model]],
            }
        self._write()
        if not self.gate_passed:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        self.config.hook.pytest_extractbench_run_finished(config=self.config, metrics=self.metrics)

    def _records_by_model(self) -> dict[str, list[SampleRecord]]:
        grouped: dict[str, list[SampleRecord]] = {}
        for record in self.records:
            grouped.setdefault(record.model, []).append(record)
        return grouped

    def _baselines(self, by_model: dict[str, list[SampleRecord]]) -> None:
        """Compare with the --extractbench-compare baseline, then store --extractbench-save (controller only)."""
        settings = self.settings
        if self.baseline is None and not settings.save:
            return
        snapshots = baselines.snapshot_records(self.records)
        dataset_hash = baselines.dataset_hash(self.dataset.samples)
        if self.baseline is not None:
            config = settings.subsets
            scopes = {model: gate_scopes(found, config) for model, found in by_model.items()} if config else {}
            self.baseline_comparison = compare_run(
                snapshots, self.baseline, settings.scoring.statistics, checks=settings.compare_fail, scopes=scopes,
                thresholds=settings.verdict_thresholds, dataset_hash=dataset_hash,
            )  # fmt: skip
            self.run_level["baseline_comparison"] = self.baseline_comparison.as_dict()
        if settings.save:
            info = baselines.provenance(
                models=list(self.metrics),
                dataset=self.dataset,
                rootdir=settings.rootdir,
                # live runs add their server URLs and prompt-template hash here
                servers=[url for route in (self.endpoints.routes.values() if self.endpoints else ()) for url in route.urls],
                prompt_hash=(self.live_facts() or {}).get("prompt_hash"),
                outputs=[self.config.invocation_params.dir / spec.path for spec in settings.predictions],
                package_version=_version("pytest-extractbench"),
                options=settings.to_dict(),
            )
            document = baselines.build(
                settings.save, snapshots, self.metrics, info, asdict(settings.scoring.statistics)
            )
            self.saved_baseline = baselines.save(document, baselines.baseline_dir(settings.rootdir))
            self.run_level["baseline_saved"] = {"name": settings.save, "path": str(self.saved_baseline)}

    @property
    def gate_passed(self) -> bool:
        regressions = self.baseline_comparison.failures if self.baseline_comparison else []
        return all(sla_passed(checks) for checks in self.checks.values()) and not regressions

    def run_info(self) -> dict[str, Any]:
        dataset = self.dataset
        finished = datetime.now(timezone.utc)
        return {
            "started_at": self.started_at.isoformat(timespec="seconds"),
            "finished_at": finished.isoformat(timespec="seconds"),
            "duration_s": time.perf_counter() - self._clock,
            "dataset": {
                "name": dataset.name,
                "source": dataset.source,
                "num_samples": len(dataset.samples),
                "num_skipped": len(dataset.skipped),
            },
            "num_records": len(self.records),
            "models": list(self.metrics),
            "workers": getattr(self.config.option, "numprocesses", None) or 0,
            "options": self.settings.to_dict(),
            "versions": {
                "pytest_extractbench": _version("pytest-extractbench"),
                "python": platform.python_version(),
                "pytest": pytest.__version__,
                "jsonschema": _version("jsonschema"),
            },
            "platform": sys.platform,
            "problems": [p.as_dict() for p in self.problems],
            "unscored_items": sorted(self.unscored),
            "live": self.live_facts(),
            "config": self.settings.config,
        }

    def dataset_section(self) -> dict[str, Any]:
        """metrics.json ``dataset``: what was evaluated, what was left out and why, and its statistics."""
        data = self.settings.data
        return {
            "name": self.dataset.name,
            "source": self.dataset.source,
            "num_samples": len(self.dataset.samples),
            "num_loaded": self.population,
            "sampling": {"sample": data.sample, "seed": data.seed, "method": "sha256(seed, sample id)"},
            "invalid_policy": data.invalid_samples,
            "invalid_samples": [p.as_dict() for p in self.dataset.skipped],
            "statistics": dataset_statistics(self.dataset.samples),
        }

    def _write(self) -> None:
        files.write_jsonl(self.run_dir / files.SAMPLES_FILE, (r.to_dict() for r in self.records))
        document = {
            "format_version": FORMAT_VERSION, "track": "extraction", "run": self.run_info(),
            "dataset": self.dataset_section(), "models": self.metrics, **self.run_level,
        }  # fmt: skip
        files.write_json(self.run_dir / files.METRICS_FILE, document)
        # --- reports: report.html, summary.md, metrics.csv, samples.csv from the same data
        self.report_files, self.report_errors = outputs.write_reports(
            self.run_dir, files.plain(document), lambda: (r.to_dict() for r in self.records), self.settings.report
        )

    def summary_lines(self) -> list[str]:
        """The terminal summary: one headline block per model, problems, where the files are."""
        if self.tracks is not None:
            return self.tracks.summary_lines()
        if not self.metrics:
            return ["no sample was scored"] + terminal.problem_lines(self.problems)
        lines = [f"dataset {self.dataset.name}: {len(self.dataset.samples)} samples; results in {self.run_dir}"]
        if self.settings.data.sample is not None:
            lines.append(f"sampled {len(self.dataset.samples)} of {self.population} (seed {self.settings.data.seed})")
        invalid = {p.sample_id or f"{p.source}:{p.location}" for p in self.dataset.skipped}
        if invalid:
            lines.append(f"{len(invalid)} invalid sample(s) skipped (--extractbench-invalid-samples "
                         f"{self.settings.data.invalid_samples}): " + ", ".join(sorted(invalid)[:10]))
        lines.extend(terminal.context_lines(self.live_facts(), self.records))
        for model, metrics in self.metrics.items():
            lines.extend(terminal.model_lines(model, metrics, self.checks.get(model, []), self.settings.sla))
        lines.extend(terminal.run_lines(self.run_level, self.baseline_comparison))
        if self.report_files:
            lines.append("reports: " + ", ".join(p.name for p in self.report_files))
        lines.extend(f"report not written: {error}" for error in self.report_errors)
        if self.unscored:
            lines.append(f"{len(self.unscored)} item(s) ended without a score: " + ", ".join(sorted(self.unscored)[:5]))
        lines.extend(terminal.problem_lines(self.problems))
        regressions = len(self.baseline_comparison.failures) if self.baseline_comparison else 0
        lines.extend(verdict_lines(self.metrics, self.checks, self.settings.sla, regressions=regressions,
                                   safe=terminal.safe))
        return lines
