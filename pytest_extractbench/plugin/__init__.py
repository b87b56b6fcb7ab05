"""pytest hooks only; the run lives in :mod:`pytest_extractbench.run`, driven through :mod:`.session` and :mod:`.items`.

This module is pytest's entry point, loaded by every pytest run in an environment that has the plugin: it
registers the options from the option table and imports the run machinery (numpy, scipy, the report layers) only
in pytest_configure when --extractbench is given.
"""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeGuard

import pytest

from ..core import textsafe
from . import hookspecs
from . import pytest_html as pytest_html_glue
from .gates import gate_status
from .options import add_options, settings_from_config
from .scored import ScoredSample
from .stash import BENCH_KEY, TERMINATE_KEY
from .usage import safe_usage_errors

if TYPE_CHECKING:
    from ..run.context import RunContext
    from .items import SampleItem
    from .session import BenchSession

# -------------------------------------------------------------------- configuration


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(hookspecs)


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    if not config.getoption("extractbench"):
        return  # not a benchmark run: no option, config file or environment is read
    from . import extensions
    from .items import take_item_ids
    from .session import BenchSession

    with safe_usage_errors():
        settings = settings_from_config(config)
        extensions.configure(config, settings)
        bench = BenchSession(config, settings)
    config.stash[BENCH_KEY] = bench
    # the heap is thawed after pytest's own last collections (at unconfigure and in its cleanups, registered after
    # this one and so run before it): frozen, the dataset, items and reports are not walked twice more at the end
    config.add_cleanup(bench.heap.release)
    # node ids pasted back from a FAILED line (or an IDE's rerun) name items, not files: select those items
    bench.wanted_nodeids = take_item_ids(config.args)
    if config.option.markers:  # `pytest --markers` lists the samples' topic and complexity markers
        with safe_usage_errors():
            bench.register_markers()
    config.pluginmanager.register(_InterruptListener(bench, config), "extractbench-interrupt")
    config.pluginmanager.register(_HeapSettler(bench), "extractbench-heap")
    if not bench.is_worker:
        from .signals import TerminateAsInterrupt

        terminate = config.stash[TERMINATE_KEY] = TerminateAsInterrupt()
        terminate.install()
        config.pluginmanager.register(_ReportListener(bench), "extractbench-reports")
        if bench.context.baseline is not None:
            config.pluginmanager.register(_BucketProperties(bench), "extractbench-bucket-properties")
        from .failure_details import FailureDetails

        details = FailureDetails(settings.report.failure_details, bench.run_dir)
        config.pluginmanager.register(details, "extractbench-failure-details")
        # --- reports: live progress line, pytest-html columns/summary (only when it is installed)
        config.pluginmanager.register(_ProgressLine(config), "extractbench-progress")
        if bench.live and settings.live.heartbeat_s > 0 and config.get_verbosity() >= 0:
            from .quiet import QuietRunWatch

            watch = QuietRunWatch(config, bench, settings.live.heartbeat_s)
            config.pluginmanager.register(watch, "extractbench-quiet-run")
        if config.pluginmanager.hasplugin("html"):
            config.pluginmanager.register(pytest_html_glue.PytestHtmlHooks(bench), "extractbench-pytest-html")
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_XdistController(), "extractbench-xdist")
    if settings.tracks.otel:
        from . import otel  # lazily: OpenTelemetry is an optional extra

        otel.configure(config, settings.tracks.otel, run_id=bench.run_dir.name)


def _bench(config: pytest.Config) -> BenchSession | None:
    return config.stash.get(BENCH_KEY, None)


class _ReportListener:
    """Collects sample records from test reports; on the controller they arrive from every worker."""

    def __init__(self, bench: BenchSession) -> None:
        self.bench = bench

    @pytest.hookimpl(trylast=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.bench.add_report(report)
        data = getattr(report, "extractbench", None)
        if data is not None:
            # pytest keeps every report until the session ends: past this point the record lives in the
            # session, so the report keeps only who it was (100,000 full copies would take gigabytes)
            # a report keeps a plugin's attributes in its __dict__, which xdist serializes; pytest declares none
            report.extractbench = ScoredSample(data.get("model"), data.get("sample_id"), data.get("passed"))  # type: ignore[attr-defined]


class _BucketProperties:
    """Each sample's bucket against the baseline as JUnit properties of its testcase: added to the teardown
    report, whose properties the JUnit XML writes (tryfirst: before junitxml closes the testcase)."""

    def __init__(self, bench: BenchSession) -> None:
        self.bench = bench

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "teardown":
            report.user_properties.extend(self.bench.bucket_properties.pop(report.nodeid, ()))


class _ProgressLine:
    """Prints the running EQS and validity while items run."""

    def __init__(self, config: pytest.Config) -> None:
        from .progress import Progress

        self.config = config
        self.progress = Progress()
        self.session: pytest.Session | None = None

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.session = session

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        data = getattr(report, "extractbench", None)
        if data is None or self.config.get_verbosity() < 0:  # -q: pytest's quiet means no progress chatter
            return
        line = self.progress.add(data, getattr(self.session, "testscollected", 0) or 0)
        writer = self.config.pluginmanager.get_plugin("terminalreporter")
        if line and writer is not None:
            if getattr(getattr(writer, "_tw", None), "width_of_current_line", 0):
                writer.write("\n")  # after a row of progress dots
            writer.write_line(textsafe.terminal(line, textsafe.LINE_LIMIT))


class _HeapSettler:
    """Counts finished items in every process (they run in it, or their reports arrive in it)."""

    def __init__(self, bench: BenchSession) -> None:
        self.bench = bench

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "teardown":
            self.bench.item_finished()


class _InterruptListener:
    """Ctrl-C or SIGTERM: stop sending requests at once (the answers already received are in the journal), and
    say how to finish the run."""

    def __init__(self, bench: BenchSession, config: pytest.Config) -> None:
        self.bench = bench
        self.config = config

    def pytest_keyboard_interrupt(self) -> None:
        self.bench.close_source()
        reporter = self.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None and not self.bench.is_worker:
            where = textsafe.terminal(str(self.bench.run_dir), None)
            reporter.write("\n")
            reporter.write_line(
                f"extractbench: interrupted; every answer received is kept in {where}/responses.jsonl: "
                f"finish the run with --extractbench-resume {where}"
            )


class _XdistController:
    """Registered only when xdist is installed, so its hook is known."""

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        # Workers write into the run directory the controller chose (journal, caches).
        bench = _bench(node.config)
        if bench is not None:
            from .session import RUN_DIR_KEY, STATIC_KEY

            node.workerinput[RUN_DIR_KEY] = str(bench.run_dir)
            # live runs: the servers the controller started, and the fixed schedule
            node.workerinput.update(bench.worker_input())
            node.workerinput[STATIC_KEY] = _static_schedule(node.config)

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        # Live runs: workers must know their items up front to request them ahead (xdist_schedule.py).
        if _static_schedule(config):
            from .xdist_schedule import StaticScheduling

            return StaticScheduling(config, log)
        return None


def _static_schedule(config: pytest.Config) -> bool:
    bench = _bench(config)
    return bench is not None and bench.live and config.getvalue("dist") == "load"


def pytest_unconfigure(config: pytest.Config) -> None:
    terminate = config.stash.get(TERMINATE_KEY, None)
    if terminate is not None:
        terminate.uninstall()
    bench = _bench(config)
    if bench is not None:
        bench.close()
        if bench.settings.tracks.otel:
            from . import otel

            otel.unconfigure(config)


# ----------------------------------------------------------------------- collection


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    # A benchmark run collects samples, not test files; paths given explicitly still collect.
    return True if _bench(config) is not None else None


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    # tryfirst: -k/-m deselection (later impls of this hook) must see the sample items.
    bench = _bench(config)
    if bench is not None:
        with safe_usage_errors():
            items[:0] = bench.make_items(session)


def pytest_sessionstart(session: pytest.Session) -> None:
    # Under xdist, before it starts its workers (its hook is trylast): they get the servers' URLs.
    # Without xdist the servers start (and are checked) when the first request must go out.
    config = session.config
    bench = _bench(config)
    if bench is not None and not bench.is_worker:
        with safe_usage_errors():  # before any server starts: a baseline of other samples stops the run here
            bench.context.check_baseline_pairing()
    distributed = getattr(config.option, "dist", "no") != "no" and not config.option.collectonly
    if bench is not None and not bench.is_worker and distributed:
        with safe_usage_errors():
            bench.start_live()


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> None:
    bench = _bench(session.config)
    if bench is not None and not session.config.option.collectonly:
        with safe_usage_errors():
            bench.prepare(session.items)


# -------------------------------------------------------------------------- running


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, Any, Any]:
    report = yield
    if call.when != "call":  # every item of every pytest run passes here three times: setup and teardown go first
        return report
    # A plain JSON-able attribute survives xdist's report serialization (report.__dict__).
    bench = _bench(item.config)
    if bench is not None and _is_sample(item) and item.record is not None:
        # an xdist worker's report is how its record travels; in one process the record itself reaches the
        # session, and the report carries its headline (pytest-html's extra shows the whole record)
        record, extras = item.record, pytest_html_glue.wants_extras(item.config)
        report.extractbench = data = record.to_dict() if bench.is_worker or extras else record.headline()
        if bench.is_worker and (note := bench.context.sent_note(item.sample.id)) is not None:
            report.extractbench_note = note  # the sample's hash as this worker loaded it (RunContext.take_note)
        bench.hand_over(report.nodeid, record)
        # the session (or, from a worker, the report) has it now: pytest keeps every item to the end
        item.record = None
        # JUnit XML <property> elements and pytest-html columns, as record_property would add them
        properties = pytest_html_glue.junit_properties(data)
        item.user_properties.extend(properties)  # the teardown report carries them into the JUnit XML
        report.user_properties.extend(properties)
        if extras:
            pytest_html_glue.attach_extra(report, data)
    return report


def pytest_report_teststatus(report: pytest.TestReport) -> tuple[str, str, str] | None:
    # asked for every report of every pytest run: only a gate's report, which only a benchmark run makes, has a
    # status of ours, and gate_status answers None at once for any other
    return gate_status(report)


def _is_sample(item: pytest.Item) -> TypeGuard[SampleItem]:
    from .items import SampleItem  # loaded already: a benchmark run is configured

    return isinstance(item, SampleItem)


@pytest.hookimpl(trylast=True)
def pytest_extractbench_make_source(config: pytest.Config, context: RunContext) -> Any:
    return context.default_source()


# ----------------------------------------------------------------------- session end


@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    bench = _bench(session.config)
    if bench is not None:
        bench.close_source()  # every item has run (or the run was stopped): no more requests
        with safe_usage_errors():
            bench.finish(session)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    bench = _bench(config)
    if bench is None or bench.is_worker:
        return
    from .gates import plural_gate_counts

    plural_gate_counts(terminalreporter.stats)  # every gate has reported by now; the counts line comes after
    terminalreporter.section("extractbench")
    with safe_usage_errors():  # inputs that could not be read fail the session as a usage error, as at collection
        lines = bench.summary_lines(verdict_only=config.get_verbosity() < -1)  # -qq: the verdict alone
    for line in lines:
        # the one terminal sink of the summary: whatever a line quotes, no control character gets out
        terminalreporter.write_line(textsafe.terminal(line, textsafe.LINE_LIMIT))
