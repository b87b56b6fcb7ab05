"""The OpenTelemetry exporter, checked with the SDK's in-memory span exporter and metric reader."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from _require import import_or_skip

import_or_skip("opentelemetry.sdk", "the 'otel' extra is not installed")

from opentelemetry import metrics, trace  # noqa: E402
from opentelemetry.sdk.metrics import MeterProvider  # noqa: E402
from opentelemetry.sdk.metrics.export import InMemoryMetricReader  # noqa: E402
from opentelemetry.sdk.trace import TracerProvider  # noqa: E402
from opentelemetry.sdk.trace.export import SimpleSpanProcessor  # noqa: E402
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter  # noqa: E402

SPANS = InMemorySpanExporter()
READER = InMemoryMetricReader()


@pytest.fixture(scope="module", autouse=True)
def providers() -> None:
    # The global providers can be set once per process; other tests never set them.
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(SPANS))
    trace.set_tracer_provider(provider)
    metrics.set_meter_provider(MeterProvider(metric_readers=[READER]))


@pytest.fixture
def spans() -> Iterator[InMemorySpanExporter]:
    SPANS.clear()
    READER.collect()  # forget what earlier tests recorded (cumulative: compare before and after instead)
    yield SPANS


DATA = [
    {
        "id": f"s{i}",
        "text": "Ann, 41",
        "schema": {"type": "object", "properties": {"name": {"type": "string"}}},
        "expected": {"name": "Ann"},
    }
    for i in range(3)
]


def _points(name: str) -> list[Any]:
    data = READER.get_metrics_data()
    found = []
    for resource in data.resource_metrics if data else ():
        for scope in resource.scope_metrics:
            if scope.scope.name != "pytest_extractbench":
                continue
            for metric in scope.metrics:
                if metric.name == name:
                    found.extend(metric.data.data_points)
    return found


def test_spans_and_metrics_of_an_offline_run(pytester: pytest.Pytester, spans: InMemorySpanExporter) -> None:
    (pytester.path / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in DATA))
    rows = [{"id": "s0", "output": '{"name": "Ann"}'}, {"id": "s1", "output": "not json"}]
    (pytester.path / "p.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = pytester.runpytest(
        "--extractbench",
        "--extractbench-dataset",
        "data.jsonl",
        "--extractbench-predictions",
        "m1=p.jsonl",
        "--extractbench-output",
        "out",
        "--extractbench-sla",
        "none",
        "--extractbench-otel",
        "global",
        "-p",
        "no:randomly",
    )
    result.assert_outcomes(passed=1, failed=2)
    finished = spans.get_finished_spans()
    by_name: dict[str, list[Any]] = {}
    for span in finished:
        by_name.setdefault(span.name, []).append(span)
    assert len(by_name["extractbench.request"]) == 3  # one per item: s2's missing prediction too
    missing = [s for s in by_name["extractbench.request"] if s.attributes["extractbench.sample_id"] == "s2"]
    assert missing[0].attributes["extractbench.error_class"] == "missing"
    assert missing[0].status.status_code == trace.StatusCode.ERROR
    samples = {s.attributes["extractbench.sample_id"]: s for s in by_name["extractbench.sample"]}
    assert samples["s0"].attributes["extractbench.passed"] is True
    assert samples["s1"].attributes["extractbench.passed"] is False
    assert samples["s1"].events[0].name == "failure"
    assert samples["s0"].attributes["gen_ai.request.model"] == "m1"
    (run,) = by_name["extractbench.run"]
    assert run.attributes["extractbench.m1.schema_validity_rate"] == pytest.approx(1 / 3)
    assert run.attributes["extractbench.run_id"] == "out"
    # no output text is exported
    assert not any("Ann" in str(v) for s in finished for v in s.attributes.values())
    requests = {
        p.attributes["extractbench.error_class"]: p.value
        for p in _points("extractbench.requests")
        if p.attributes["gen_ai.request.model"] == "m1"
    }
    assert requests == {"none": 2, "missing": 1}
    gauge = {
        p.attributes["extractbench.metric"]: p.value
        for p in _points("extractbench.run.metric")
        if p.attributes["gen_ai.request.model"] == "m1"
    }
    assert gauge["schema_validity_rate"] == pytest.approx(1 / 3)


def test_request_span_uses_the_request_timestamps(pytester: pytest.Pytester, spans: InMemorySpanExporter) -> None:
    from pytest_extractbench.dataset.responses import ModelResponse
    from pytest_extractbench.plugin.otel import OtelExporter

    exporter = OtelExporter("global", run_id="r1")
    response = ModelResponse(
        content="{}",
        latency_s=1.5,
        usage={"prompt_tokens": 12, "completion_tokens": 7, "total_tokens": 19},
        finish_reason="stop",
        attempts=2,
        started_at=100.0,
        finished_at=101.5,
    )
    exporter.pytest_extractbench_request_done(config=None, model="m2", sample_id="x", response=response)  # type: ignore[arg-type]
    (span,) = spans.get_finished_spans()
    assert (span.start_time, span.end_time) == (100_000_000_000, 101_500_000_000)
    assert span.attributes["gen_ai.usage.input_tokens"] == 12 and span.attributes["extractbench.attempts"] == 2
    tokens = {
        p.attributes["gen_ai.token.type"]: p.value
        for p in _points("extractbench.tokens")
        if p.attributes["gen_ai.request.model"] == "m2"
    }
    assert tokens == {"input": 12, "output": 7}
    (duration,) = [p for p in _points("extractbench.request.duration") if p.attributes["gen_ai.request.model"] == "m2"]
    assert duration.count == 1 and duration.sum == 1.5


def test_a_retried_request_has_a_span_per_attempt_and_its_duration_is_end_to_end(
    spans: InMemorySpanExporter,
) -> None:
    from pytest_extractbench.dataset.responses import ModelResponse
    from pytest_extractbench.plugin.otel import OtelExporter

    exporter = OtelExporter("global", run_id="r1")
    log = [
        {"start_s": 0.0, "latency_s": 1.0, "outcome": "timeout", "error": "no answer in 1 s"},
        {"start_s": 1.5, "latency_s": 0.5, "outcome": "ok", "slot_wait_s": 0.25},
    ]
    response = ModelResponse(
        content="{}", latency_s=0.5, attempts=2, started_at=100.0, finished_at=102.0, end_to_end_s=2.0, attempt_log=log
    )
    exporter.pytest_extractbench_request_done(config=None, model="m3", sample_id="x", response=response)  # type: ignore[arg-type]
    finished = spans.get_finished_spans()
    (request,) = [s for s in finished if s.name == "extractbench.request"]
    attempts = sorted((s for s in finished if s.name == "extractbench.attempt"), key=lambda s: s.start_time)
    assert [(a.start_time, a.end_time) for a in attempts] == [
        (100_000_000_000, 101_000_000_000),
        (101_500_000_000, 102_000_000_000),
    ]
    assert all(a.parent is not None and a.parent.span_id == request.context.span_id for a in attempts)
    assert [a.attributes["extractbench.outcome"] for a in attempts] == ["timeout", "ok"]
    assert (
        attempts[0].status.status_code == trace.StatusCode.ERROR
        and "no answer in 1 s" in attempts[0].status.description
    )
    assert attempts[1].attributes["extractbench.slot_wait_s"] == 0.25
    assert (
        request.attributes["extractbench.end_to_end_s"] == 2.0 and request.attributes["extractbench.latency_s"] == 0.5
    )
    (duration,) = [p for p in _points("extractbench.request.duration") if p.attributes["gen_ai.request.model"] == "m3"]
    assert duration.count == 1 and duration.sum == 2.0  # first attempt to answer, not the last attempt's 0.5 s


def test_unknown_exporter_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--extractbench", "--extractbench-otel", "zipkin")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*unknown exporter 'zipkin'; choose one of global, console, otlp*"])
