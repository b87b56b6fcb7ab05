"""The pytest side of a benchmark run: a :class:`~pytest_extractbench.run.context.RunContext` driven by hooks.

Every process that collects (the only process, or each xdist worker) loads the dataset and builds items;
records travel back on the test reports, so the controller finishes the run the same way with and
without xdist. The run itself (inputs, scoring, aggregation, gates, files) lives in :mod:`pytest_extractbench.run`.
"""

from __future__ import annotations

import warnings
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from ..core import textsafe
from ..core.errors import ExtractbenchWarning, UsageProblem
from ..core.files import SAMPLES_FILE
from ..dataset.records import SampleRecord, TrackRecord
from ..dataset.rowfile import DatasetChangedError
from ..gating.gates import gate_verdicts
from ..report import terminal
from ..run.compact import SharedValues, shares_safely
from ..run.context import MAX_LISTED, RUN_DIR_KEY, RunContext, RunEvents, Worker
from ..run.finish import finish_run
from ..run.heap import HeapFreeze
from ..run.items import run_item
from ..run.spool import SPOOL_SUFFIX, RecordSpool
from ..run.summary import exit_lines, failure_class, summary_lines
from .gates import report_gates
from .items import DatasetCollector, SampleItem, register_markers, sample_markers, taken_markers
from .usage import safe_usage_errors

if TYPE_CHECKING:
    from ..config.settings import Settings
    from ..dataset.responses import ModelResponse
    from ..run.result import RunResult

__all__ = ["RUN_DIR_KEY", "STATIC_KEY", "BenchSession", "ExtractbenchWarning", "is_worker", "own_indices"]

STATIC_KEY = "extractbench_static_schedule"  # xdist_schedule.STATIC_KEY (that module needs xdist)
# items between two settlements of the heap (see BenchSession.item_finished). Between two, the collector's own full
# collections walk everything the items left since the last one, each time the survivors grow by a quarter (harsh
# items, all full collections of the items phase: 2,000 items 0.14-0.20 s at 1,000, 0.07-0.08 s at 250; 10,000
# items 0.56 s, 0.40 s)
SETTLE_EVERY = 250


def own_indices(total: int, workerid: str, workercount: int) -> list[int]:
    """The item indices the fixed live-run schedule (xdist_schedule.py) gives one worker."""
    return list(range(int(workerid.removeprefix("gw")), total, max(1, workercount)))


def is_worker(config: pytest.Config) -> bool:
    """True inside an xdist worker process."""
    return hasattr(config, "workerinput")


class HookEvents(RunEvents):
    """A run's announcements as this project's pytest hooks."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config

    # request_done and sample_scored come once an item: a hook nobody implements (the usual case) is not called
    # (asking pluggy for the implementations costs about a twentieth of calling none)

    def request_done(self, model: str, sample_id: str, response: ModelResponse) -> None:
        hook = self.config.hook.pytest_extractbench_request_done
        if hook.get_hookimpls():
            hook(config=self.config, model=model, sample_id=sample_id, response=response)

    def sample_scored(self, record: Any) -> None:
        hook = self.config.hook.pytest_extractbench_sample_scored
        if hook.get_hookimpls():
            hook(config=self.config, record=record)

    def run_finished(self, metrics: dict[str, Any]) -> None:
        self.config.hook.pytest_extractbench_run_finished(config=self.config, metrics=metrics)


# pytest options under which a session only shows something (help, markers, fixtures, items) and runs nothing
_SHOW_ONLY = ("collectonly", "help", "version", "markers", "showfixtures", "show_fixtures_per_test")


def runs_items(config: pytest.Config) -> bool:
    """False when this pytest invocation only shows something: paths are checked, no run directory is made."""
    return not any(getattr(config.option, name, False) for name in _SHOW_ONLY)


class BenchSession:
    """One benchmark run in one pytest process: items in, records out, the run finished on the controller."""

    def __init__(self, config: pytest.Config, settings: Settings) -> None:
        self.config = config
        self.settings = settings
        self.is_worker = is_worker(config)
        info = getattr(config, "workerinput", None)
        worker = Worker(info["workerid"], int(info.get("workercount", 1)), info) if info is not None else None
        self.records: list[SampleRecord | TrackRecord] = []
        self.spool: RecordSpool | None = None  # samples.jsonl's lines, written as the records arrive (controller)
        # the held records' equal values kept once (run/compact.py), unless the finish writes into records
        self.shared = (
            SharedValues(whole_responses=settings.live.record is not None) if shares_safely(settings) else None
        )
        self.unscored: list[str] = []
        self.handed_over: dict[str, Any] = {}  # nodeid -> record, from makereport to the report listener
        self.result: RunResult | None = None
        self.finished_items = 0
        self.wanted_nodeids: list[str] = []  # items named on the command line by node id
        self.failed_items: Counter[str] = Counter()  # failed items by error class, for the closing lines
        self.bucket_properties: dict[str, list[tuple[str, str]]] = {}  # nodeid -> its bucket, for its JUnit testcase
        self.exitstatus: Any = None  # the session's exit code, known at its end
        self.not_finished: str | None = None  # why the finish wrote nothing (a dataset file changed under the run)
        self.heap = HeapFreeze()  # the GC's permanent generation, when it is free (run/heap.py)
        # failed samples still to be explained field by field (explain_failure); --tb=no shows no explanation
        self.details_left = settings.report.failure_details if getattr(config.option, "tbstyle", "auto") != "no" else 0
        self.context = RunContext(
            settings,
            base_dir=config.invocation_params.dir,
            worker=worker,
            writes=runs_items(config),
            processes=int(getattr(config.option, "numprocesses", None) or 0),
            events=HookEvents(config),
            make_source=self._hook_source,
        )

    def _hook_source(self) -> Any:
        return self.config.hook.pytest_extractbench_make_source(config=self.config, context=self.context)

    @property
    def run_dir(self) -> Any:
        return self.context.run_dir

    @property
    def live(self) -> bool:
        return self.context.live.active

    @property
    def metrics(self) -> dict[str, dict[str, Any]]:
        return self.result.metrics if self.result is not None else {}

    def start_live(self) -> None:
        self.context.live.start()

    def worker_input(self) -> dict[str, Any]:
        return self.context.live.worker_input()

    # -- collection and running (every collecting process) -----------------------------

    def make_items(self, session: pytest.Session) -> list[SampleItem]:
        """One item per (model, sample), in dataset order for each model."""
        context = self.context
        dataset = context.dataset
        models = context.models()
        if not models:
            raise UsageProblem("extractbench: no model given (use --model NAME)")
        context.check_invalid_policy()
        self._warn(context.problems)
        # The dataset stays unchanged for the whole session: keep the cyclic GC from rescanning
        # it after every few hundred scored fields (30% of scoring time on 10,000 samples).
        self.heap.freeze()
        work = [(model, sample) for model in models for sample in dataset.samples]
        collector = DatasetCollector.from_parent(session, name=dataset.name, nodeid=dataset.name, work=work)
        items = self._wanted(collector.collect())
        # Report the collection like any collector, so "collected N items" counts the samples.
        report = pytest.CollectReport(collector.nodeid, "passed", None, list(items))
        session.ihook.pytest_collectreport(report=report)
        return items

    def _wanted(self, items: list[SampleItem]) -> list[SampleItem]:
        """The items named by node id on the command line (all when none is); the others are deselected."""
        if not self.wanted_nodeids:
            return items
        known = {item.nodeid for item in items}
        unknown = [nodeid for nodeid in self.wanted_nodeids if nodeid not in known]
        if unknown:
            raise UsageProblem(
                f"extractbench: no item {textsafe.terminal(unknown[0])!r} in this run "
                f"(dataset {textsafe.terminal(self.context.dataset.name)!r}, models "
                f"{', '.join(self.context.models())})"
            )
        wanted = set(self.wanted_nodeids)
        others = [item for item in items if item.nodeid not in wanted]
        if others:
            self.config.hook.pytest_deselected(items=others)
        return [item for item in items if item.nodeid in wanted]

    def register_markers(self) -> None:
        """Register the topic and complexity markers of the dataset's samples (for ``pytest --markers``)."""
        taken = taken_markers(self.config)
        register_markers(self.config, [sample_markers(sample, taken) for sample in self.context.dataset.samples])

    def _warn(self, problems: list[Any]) -> None:
        worker = self.context.worker
        if worker is not None and not worker.speaks:
            return
        for problem in problems[:MAX_LISTED]:
            # Point the warning at the data file, not at this module; line 0, because pytest would echo the
            # line it points at verbatim (a bad row can be megabytes of untrusted bytes): the message says
            # which line, clipped and made safe.
            text = textsafe.terminal(problem, terminal.PROBLEM_WIDTH)
            warnings.warn_explicit(ExtractbenchWarning(text), ExtractbenchWarning, textsafe.terminal(problem.source), 0)
        if len(problems) > MAX_LISTED:
            warnings.warn(  # noqa: B028 - no caller's line to point at, as above
                ExtractbenchWarning(f"{len(problems) - MAX_LISTED} more input problems; see metrics.json")
            )

    def prepare(self, items: list[pytest.Item]) -> None:
        """Hand the source every (model, sample) this process will run, so it can work ahead."""
        worker = self.context.worker
        if worker is not None:
            if not worker.input.get(STATIC_KEY):
                # --dist other than load: this worker's items are not known ahead, each asks when it runs
                return
            # live runs under xdist: the items the fixed schedule gives this worker (xdist_schedule.py)
            items = [items[i] for i in own_indices(len(items), worker.id, worker.count)]
        work = [(item.model, item.sample) for item in items if isinstance(item, SampleItem)]
        if work:
            self.context.source.prepare(work)

    def run_item(self, item: SampleItem) -> SampleRecord | TrackRecord:
        """Get the item's output, score it, and decide pass/fail."""
        with safe_usage_errors():
            record: SampleRecord | TrackRecord = run_item(self.context, item.model, item.sample)
            return record

    def explain_failure(self, record: SampleRecord | TrackRecord) -> str:
        """The failure text pytest keeps for a failed item until the session ends. The first N failed samples of
        this process (--extractbench-failure-details) get every failing field, which pytest's FAILURES section
        shows; the others only their one-line reason, which is all the short summary shows of them: 90,000
        failures keep 90,000 short lines, not 90,000 field tables. samples.jsonl has every sample's fields."""
        detailed = self.details_left > 0
        self.details_left -= detailed
        if isinstance(record, TrackRecord):  # non-extraction tracks explain themselves
            text = record.failure_text() if detailed else record.failure_headline()
        else:
            text = terminal.failure_text(record) if detailed else terminal.failure_headline(record)
        return textsafe.text_lines(text)

    def item_finished(self) -> None:
        """Every SETTLE_EVERY items, settle the heap: what the items left behind stays until the session ends."""
        self.finished_items += 1
        if self.finished_items % SETTLE_EVERY == 0:
            self.heap.freeze(collect=True)

    def close_source(self) -> None:
        self.context.close_source()

    def close(self) -> None:
        # the heap is released by the config's cleanup (plugin.pytest_configure), after pytest's last collections
        if self.spool is not None:  # the finish did not run: the records are not all here, the spool goes
            self.spool.discard()
        self.context.close()

    # -- the controller ----------------------------------------------------------------------

    def hand_over(self, nodeid: str, record: Any) -> None:
        """In a single process the item's record reaches the session as it is, instead of being rebuilt from its
        report's dict; an xdist worker's reports travel as JSON, so there the dict is all the controller gets."""
        if not self.is_worker:
            self.handed_over[nodeid] = record

    def add_report(self, report: pytest.TestReport) -> None:
        """Keep the record a sample item's report carries; note items that ended without one."""
        data = getattr(report, "extractbench", None)
        if data is not None:
            record = self.handed_over.pop(report.nodeid, None)
            record = record if record is not None else self.context.track.record_from_dict(data, self.settings)
            self._spool(record)
            self.records.append(record if self.shared is None else self.shared.compact(record))
            if (note := getattr(report, "extractbench_note", None)) is not None:
                self.context.take_note(record.sample_id, note)
            if not record.passed:
                self.failed_items[failure_class(record)] += 1
            bucket = self.context.sample_bucket(record)
            if bucket is not None:
                self.bucket_properties[report.nodeid] = [("extractbench_bucket", bucket.bucket)] + (
                    [
                        (
                            "extractbench_field_flips",
                            textsafe.terminal("; ".join(map(str, bucket.flips)), textsafe.LINE_LIMIT),
                        )
                    ]
                    if bucket.flips
                    else []
                )
        elif "::extractbench[" in report.nodeid and (report.when == "call" or report.failed):
            self.unscored.append(report.nodeid)

    def _spool(self, record: Any) -> None:
        if self.spool is None:
            run_dir = self.context.run_dir
            if run_dir is None:
                return
            self.spool = RecordSpool(Path(run_dir) / (SAMPLES_FILE + SPOOL_SUFFIX))
        self.spool.add(record)

    def finish(self, session: pytest.Session) -> None:
        """Aggregate, write the run directory, apply the gates (controller only)."""
        if self.is_worker:
            return
        # every record has arrived: the tables of values seen go (the records keep the values they share)
        self.shared = None
        self.heap.freeze(collect=True)
        # nothing in the session needs every record once they are in samples.jsonl (see finish_run)
        try:
            self.result = finish_run(
                self.context,
                self.records,
                unscored=self.unscored,
                pytest_version=pytest.__version__,
                keep_records=False,
                spool=self.spool,
            )
        except DatasetChangedError as exc:  # the samples' hashes and statistics would describe another file
            self.not_finished = f"extractbench: {exc}; the run's files are not written"
            if session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED):
                session.exitstatus = pytest.ExitCode.INTERNAL_ERROR  # nothing measured is on disk: never green
            self.exitstatus = session.exitstatus
            return
        self.spool = None
        if self.result.metrics and not self.result.gate_passed:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        elif self.settings.report_only and session.exitstatus == pytest.ExitCode.TESTS_FAILED:
            session.exitstatus = pytest.ExitCode.OK  # failed items are reported, not a reason to fail the job
        if self.result.write_errors:  # what was measured is not all on disk: never a green run
            session.exitstatus = pytest.ExitCode.INTERNAL_ERROR
        self.exitstatus = session.exitstatus
        if self.result.metrics:
            report_gates(session, self.context.dataset.name, gate_verdicts(self.result.document))
        if self.result.comparison is not None:
            self._bucket_suite_properties()
        self._step_summary()

    def _step_summary(self) -> None:
        """summary.md appended to the GitHub Actions job summary, when this runs in a job that has one."""
        from ..report.exports import SUMMARY_FILE
        from ..report.step_summary import append_step_summary, step_summary_path

        if self.result is None:
            return
        written = [p for p in self.result.report_files if p.name == SUMMARY_FILE]
        if not written or step_summary_path() is None:
            return
        try:
            append_step_summary(written[0])
        except OSError as exc:  # the job summary is a courtesy: the run's own files are written
            self.result.report_errors.append(f"job summary ($GITHUB_STEP_SUMMARY): {exc}")

    def _bucket_suite_properties(self) -> None:
        """Each model's bucket counts as JUnit XML testsuite properties (as record_testsuite_property adds them)."""
        try:
            from _pytest.junitxml import xml_key
        except ImportError:  # pragma: no cover - a pytest that moved it: the counts stay in the other outputs
            return
        xml = self.config.stash.get(xml_key, None)
        if xml is None or self.result is None or self.result.comparison is None:
            return
        for model, comparison in self.result.comparison.models.items():
            if comparison.buckets is not None:
                xml.add_global_property(
                    "extractbench_buckets",
                    textsafe.terminal(f"{model}: {comparison.buckets.describe()}", textsafe.LINE_LIMIT),
                )

    def summary_lines(self, *, verdict_only: bool = False) -> list[str]:
        """The terminal summary: one headline block per model, problems, where the files are (or the verdict)."""
        lines = (
            [self.not_finished]
            if self.not_finished
            else summary_lines(self.context, self.result, self.unscored, verdict_only=verdict_only)
        )
        return lines + exit_lines(
            self.exitstatus,
            self.failed_items,
            len(self.unscored),
            gate_passed=self.result is None or not self.result.metrics or self.result.gate_passed,
            report_only=self.settings.report_only,
        )
