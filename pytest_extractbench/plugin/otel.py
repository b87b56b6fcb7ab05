"""OpenTelemetry exporter (``--extractbench-otel``): spans and metrics from the three observability hooks.

An ordinary plugin object built on the public ``pytest_extractbench_*`` hooks, so it
is also the worked example for writing another exporter. Needs the ``otel`` extra
(``opentelemetry-sdk``; ``otlp`` also needs ``opentelemetry-exporter-otlp``).

* ``global`` uses the tracer and meter providers the process has configured (for
  example by ``opentelemetry-instrument`` or your conftest.py); ``console`` and ``otlp``
  build SDK providers of their own, flushed and shut down at the end of the session.
* Spans: ``extractbench.request`` per model response (timed by the request's own
  start and end when known), ``extractbench.sample`` per scored sample,
  ``extractbench.run`` per run with every model's headline metrics. Attributes use the
  GenAI semantic conventions where one exists (``gen_ai.request.model``,
  ``gen_ai.usage.input_tokens``...), ``extractbench.*`` otherwise. No prompt or output
  text is exported (it may hold personal data); secrets never reach a span.
* Metrics: ``extractbench.requests`` (counter), ``extractbench.request.duration``
  (histogram, s), ``extractbench.tokens`` (counter, by ``gen_ai.token.type``),
  ``extractbench.samples`` (counter, by ``passed``), ``extractbench.run.metric``
  (gauge: headline metric values at the end of the run).
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import metadata
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pytest

SCOPE = "pytest_extractbench"
INSTALL_HINT = "pip install 'pytest-extractbench[otel]'"


def _headlines(track: str) -> tuple[str, ...]:
    """The metrics put on the run span and the run gauge: the track's headline (extraction's are the metric
    catalog's headline metrics), so a metric added there reaches the spans with no list here."""
    from ..tracks import TRACKS, get_track

    return get_track(track).headline_metrics() if track in TRACKS else ()


def _ns(seconds: float | None) -> int | None:
    return int(seconds * 1e9) if seconds is not None else None


def _attributes(values: Mapping[str, Any]) -> dict[str, Any]:
    """Only the types OpenTelemetry attributes accept; None dropped."""
    return {k: v for k, v in values.items() if isinstance(v, (str, bool, int, float))}


class OtelExporter:
    """Implements the observability hooks; register one per session (``plugin.pytest_configure`` does)."""

    def __init__(self, exporter: str = "global", *, run_id: str = "", providers: tuple[Any, Any] | None = None) -> None:
        """``providers``: a (tracer, meter) provider pair to use instead of ``exporter``'s (an application that
        keeps its own, or a test's in-memory ones)."""
        try:
            from opentelemetry import metrics, trace
        except ImportError:  # pragma: no cover - depends on the environment
            raise RuntimeError(f"--extractbench-otel needs OpenTelemetry: {INSTALL_HINT}") from None
        self._owned: list[Any] = []
        if providers is not None:
            tracer_provider, meter_provider = providers
        elif exporter == "global":
            tracer_provider, meter_provider = trace.get_tracer_provider(), metrics.get_meter_provider()
        else:
            tracer_provider, meter_provider = self._sdk_providers(exporter)
        try:
            version = metadata.version("pytest-extractbench")
        except metadata.PackageNotFoundError:  # pragma: no cover
            version = None
        self.run_id = run_id
        self.tracer = tracer_provider.get_tracer(SCOPE, version)
        meter = meter_provider.get_meter(SCOPE, version)
        self.requests = meter.create_counter(
            "extractbench.requests", unit="{request}", description="Model responses received"
        )
        self.duration = meter.create_histogram(
            "extractbench.request.duration", unit="s", description="Request latency, retries included"
        )
        self.tokens = meter.create_counter("extractbench.tokens", unit="{token}", description="Tokens used")
        self.samples = meter.create_counter("extractbench.samples", unit="{sample}", description="Samples scored")
        self.run_metric = meter.create_gauge("extractbench.run.metric", description="Headline metrics of the run")

    def _sdk_providers(self, exporter: str) -> tuple[Any, Any]:
        try:
            from opentelemetry.sdk.metrics import MeterProvider
            from opentelemetry.sdk.metrics.export import ConsoleMetricExporter, PeriodicExportingMetricReader
            from opentelemetry.sdk.trace import TracerProvider
            from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter
        except ImportError:
            raise RuntimeError(f"--extractbench-otel {exporter} needs the OpenTelemetry SDK: {INSTALL_HINT}") from None
        if exporter == "otlp":
            try:
                from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
                from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
            except ImportError:
                raise RuntimeError("--extractbench-otel otlp needs: pip install opentelemetry-exporter-otlp") from None
            # endpoint and headers from the standard OTEL_EXPORTER_OTLP_* environment variables
            span_exporter, metric_exporter = OTLPSpanExporter(), OTLPMetricExporter()
        else:
            span_exporter, metric_exporter = ConsoleSpanExporter(), ConsoleMetricExporter()
        tracer_provider = TracerProvider()
        tracer_provider.add_span_processor(BatchSpanProcessor(span_exporter))
        meter_provider = MeterProvider(metric_readers=[PeriodicExportingMetricReader(metric_exporter)])
        self._owned = [tracer_provider, meter_provider]
        return tracer_provider, meter_provider

    # -- hooks --------------------------------------------------------------------------------

    def pytest_extractbench_request_done(
        self, config: pytest.Config, model: str, sample_id: str, response: Any
    ) -> None:
        from opentelemetry.trace import Status, StatusCode

        usage = response.usage or {}
        attributes = _attributes(
            {
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": model,
                "gen_ai.usage.input_tokens": usage.get("prompt_tokens"),
                "gen_ai.usage.output_tokens": usage.get("completion_tokens"),
                "extractbench.run_id": self.run_id,
                "extractbench.sample_id": sample_id,
                "extractbench.latency_s": response.latency_s,
                "extractbench.end_to_end_s": response.end_to_end_s,
                "extractbench.finish_reason": response.finish_reason,
                "extractbench.attempts": response.attempts,
                "extractbench.cached": response.cached,
                "extractbench.error_class": response.error_class,
                "extractbench.tool_calls": len(getattr(response, "tool_calls", None) or ()),
            }
        )
        start = _ns(response.started_at)
        span = self.tracer.start_span("extractbench.request", attributes=attributes, start_time=start)
        if response.error_class:
            span.set_status(Status(StatusCode.ERROR, f"{response.error_class}: {response.error or ''}"[:200]))
        if start is not None and len(response.attempt_log or ()) > 1:
            self._attempt_spans(span, response)
        span.end(end_time=_ns(response.finished_at) if start is not None else None)
        labels = {"gen_ai.request.model": model, "extractbench.error_class": response.error_class or "none"}
        self.requests.add(1, labels)
        # first attempt to final answer, as the SLA reads it; the answering attempt's alone when it was the only one
        took = response.end_to_end_s if response.end_to_end_s is not None else response.latency_s
        if took is not None:
            self.duration.record(took, {"gen_ai.request.model": model})
        for kind, key in (("input", "prompt_tokens"), ("output", "completion_tokens")):
            if usage.get(key):
                self.tokens.add(int(usage[key]), {"gen_ai.request.model": model, "gen_ai.token.type": kind})

    def _attempt_spans(self, parent: Any, response: Any) -> None:
        """One child span per attempt of a retried request, at its own start and latency, with its outcome."""
        from opentelemetry.trace import Status, StatusCode, set_span_in_context

        context = set_span_in_context(parent)
        for number, attempt in enumerate(response.attempt_log, 1):
            start_s, latency_s = attempt.get("start_s"), attempt.get("latency_s")
            if not isinstance(start_s, (int, float)) or not isinstance(latency_s, (int, float)):
                continue
            begin = response.started_at + start_s
            outcome = attempt.get("outcome") or "ok"
            child = self.tracer.start_span(
                "extractbench.attempt",
                context=context,
                start_time=_ns(begin),
                attributes=_attributes(
                    {
                        "extractbench.attempt": number,
                        "extractbench.outcome": outcome,
                        "extractbench.slot_wait_s": attempt.get("slot_wait_s"),
                    }
                ),
            )
            if outcome != "ok":
                child.set_status(Status(StatusCode.ERROR, f"{outcome}: {attempt.get('error') or ''}"[:200]))
            child.end(end_time=_ns(begin + latency_s))

    def pytest_extractbench_sample_scored(self, config: pytest.Config, record: Any) -> None:
        track = getattr(record, "track", "extraction")
        score = getattr(record, "score", None)
        attributes = _attributes(
            {
                "gen_ai.request.model": record.model,
                "extractbench.run_id": self.run_id,
                "extractbench.sample_id": record.sample_id,
                "extractbench.track": track,
                "extractbench.passed": record.passed,
                "extractbench.eqs": getattr(score, "eqs", None),
                "extractbench.schema_valid": getattr(score, "schema_valid", None),
                "extractbench.f1_partial": score.f1["partial"] if score is not None else None,
            }
        )
        with self.tracer.start_as_current_span("extractbench.sample", attributes=attributes) as span:
            if record.failure:
                span.add_event("failure", {"reason": str(record.failure)[:500]})
        self.samples.add(
            1,
            {
                "gen_ai.request.model": record.model,
                "extractbench.track": track,
                "extractbench.passed": bool(record.passed),
            },
        )

    def pytest_extractbench_run_finished(self, config: pytest.Config, metrics: dict[str, Any]) -> None:
        with self.tracer.start_as_current_span("extractbench.run") as span:
            span.set_attribute("extractbench.run_id", self.run_id)
            span.set_attribute("extractbench.models", sorted(metrics))
            for model, found in metrics.items():
                track = found.get("track", "extraction")
                section = found.get(track, found) if track != "extraction" else found
                span.set_attribute("extractbench.track", track)
                for name in _headlines(track):
                    value = section.get(name)
                    if isinstance(value, (int, float)):
                        span.set_attribute(f"extractbench.{model}.{name}", float(value))
                        self.run_metric.set(
                            float(value),
                            {"gen_ai.request.model": model, "extractbench.track": track, "extractbench.metric": name},
                        )
        self.flush()

    def flush(self) -> None:
        for provider in self._owned:
            provider.force_flush()

    def shutdown(self) -> None:
        """Flush and stop the providers this exporter built (global ones belong to the application)."""
        for provider in self._owned:
            provider.shutdown()
        self._owned = []


PLUGIN_NAME = "extractbench-otel"


def configure(config: pytest.Config, exporter: str, *, run_id: str) -> None:
    """Register the exporter for this session (every process: xdist workers export their own requests)."""
    import pytest

    try:
        plugin = OtelExporter(exporter, run_id=run_id)
    except RuntimeError as exc:
        raise pytest.UsageError(str(exc)) from None
    config.pluginmanager.register(plugin, PLUGIN_NAME)


def unconfigure(config: pytest.Config) -> None:
    """Flush, stop and unregister the exporter."""
    plugin = config.pluginmanager.get_plugin(PLUGIN_NAME)
    if isinstance(plugin, OtelExporter):
        plugin.shutdown()
        config.pluginmanager.unregister(plugin, PLUGIN_NAME)
