"""The metric catalog drives CIs, gates, metrics.csv, the terminal block and summary.md."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from pytest_extractbench.analysis import catalog, resampled
from pytest_extractbench.core import rundoc
from pytest_extractbench.core.modelsections import fill_model
from pytest_extractbench.gating import sla
from pytest_extractbench.report import exports, summary, terminal

# one more metric: the share of samples whose output was valid JSON but failed the schema
FAKE = catalog.Metric(
    "json_only_rate",
    "JSON but not schema",
    "JSON not schema",
    percent=True,
    higher_is_better=False,
    columns=("json_valid", "schema_valid"),
    compute=lambda s: (s["json_valid"] - s["schema_valid"]) / s["one"],
    per_sample="json_valid",
    aliases=("json_only",),
    grade_tiers=(0.3, 0.2, 0.1),
    headline=True,
    ci_columns=True,
    glance=True,
    terminal_row=99,
    sla=(0.5, 0.4, 0.3),
    gate_label="json_only",
    key_chart=99,
)
# one more samples.csv column: a per-sample value the records already hold (score.recall.strict)
SAMPLE_FAKE = catalog.Metric(
    "recall_strict_sample", "Recall (strict)", "recall strict", per_sample="recall_strict", csv=False, sample_column=99
)


@pytest.fixture
def with_fake(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(catalog, "CATALOG", (*catalog.CATALOG, FAKE, SAMPLE_FAKE))


def model_entry() -> dict:
    entry = {m.name: 0.5 for m in catalog.CATALOG if m.csv}
    entry.update(num_samples=4, eqs_band="moderate", recommendation="review", json_only_rate=0.25)
    entry["confidence_intervals"] = {"json_only_rate": {"low": 0.1, "high": 0.4, "confidence": 0.95}}
    return entry


def test_every_metric_is_defined_once_with_a_consistent_shape() -> None:
    names = [m.name for m in catalog.CATALOG]
    assert len(names) == len(set(names))
    aliases = [a for m in catalog.CATALOG for a in m.aliases]
    assert len(aliases) == len(set(aliases)) and not set(aliases) & set(names) - {"json_valid"}
    for metric in catalog.resampled().values():
        assert metric.per_sample and metric.columns
    assert sla.SLA_TIERS["minimum"]["extraction_quality_score"] == 0.75
    assert resampled.resolve_metric("f1").name == "field_f1_partial"


def test_a_new_catalog_entry_reaches_csv_markdown_terminal_gates_and_cis(with_fake: None) -> None:
    rows = [{"json_valid": 1.0, "schema_valid": 0.0}, {"json_valid": 1.0, "schema_valid": 1.0}]
    assert resampled.metric_values(rows, ["json_only_rate"]) == {"json_only_rate": 0.5}
    assert resampled.resolve_metric("json_only").name == "json_only_rate"
    assert "json_only_rate" in resampled.row_keys() or "json_valid" in resampled.row_keys()

    table = list(csv.reader(io.StringIO(exports.metrics_csv({"m": fill_model(model_entry(), "extraction")}))))
    header, values = table[0], dict(zip(table[0], table[1]))
    assert "json_only_rate" in header and values["json_only_rate"] == "0.25"
    assert values["json_only_rate_ci_low"] == "0.1" and values["json_only_rate_ci_high"] == "0.4"

    document = rundoc.complete({"models": {"m": model_entry()}})
    # graded against its SLA tiers (0.25 <= 0.3, the "excellence" threshold)
    assert r"| JSON but not schema | 25.0% \[95% CI: 10.0%, 40.0%\] | A+ |" in exports.summary_md(document)

    lines = terminal.metric_lines(model_entry(), model_entry()["confidence_intervals"])
    assert lines[-1] == "  JSON not schema     25.0% [95% CI: 10.0%, 40.0%]"

    checks = {c.metric: c for c in sla.evaluate_sla(model_entry(), "minimum")}
    assert checks["json_only_rate"].label == "json_only" and checks["json_only_rate"].passed is True
    assert summary.grade("json_only_rate", 0.45) == "B"


def test_without_the_entry_none_of_it_appears() -> None:
    assert "json_only_rate" not in exports.metrics_csv({"m": fill_model(model_entry(), "extraction")}).splitlines()[0]
    assert "JSON but not schema" not in exports.summary_md(rundoc.complete({"models": {"m": model_entry()}}))


def test_a_new_catalog_entry_gets_its_point_value_in_metrics_json(with_fake: None) -> None:
    from pytest_extractbench import SampleRecord, ScoringOptions, model_metrics, score_sample

    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    records = [
        SampleRecord(model="m", sample_id=sid, score=score_sample(out, {"a": 1}, schema, sample_id=sid))
        for sid, out in (("ok", {"a": 1}), ("wrong-type", {"a": "one"}), ("not-json", "{broken"))
    ]
    section = model_metrics(records, ScoringOptions())
    scores = [r.score for r in records]
    assert [s.json_valid and not s.schema_valid for s in scores] == [False, True, False]
    assert section["json_only_rate"] == pytest.approx(1 / 3)


def _two_model_run(path: Path) -> Path:
    """A real run directory of two models (gold answers and answers with a wrong type), as the plugin writes it."""
    from pytest_extractbench import SampleRecord, ScoringOptions, StatsOptions, metrics_by_model, score_sample
    from pytest_extractbench.analysis.metrics import run_level_metrics
    from pytest_extractbench.core import files, rundoc
    from pytest_extractbench.dataset import load_dataset

    options = ScoringOptions(statistics=StatsOptions(resamples=200))
    samples = load_dataset().samples[:6]
    records = []
    for model, wrong in (("good", False), ("typeless", True)):
        for sample in samples:
            output = json.dumps(
                {k: (str(v) if wrong and isinstance(v, int) else v) for k, v in sample.expected.items()}
            )
            score = score_sample(output, sample.expected, sample.schema, options=options, sample_id=sample.id)
            records.append(
                SampleRecord(
                    model=model,
                    sample_id=sample.id,
                    score=score,
                    meta=dict(sample.meta),
                    response={"content": output},
                    passed=score.valid,
                )
            )
    metrics = metrics_by_model(records, options)
    document = {
        "run": {"options": {"scoring": options.to_dict()}, "models": list(metrics), "problems": []},
        "models": metrics,
        **run_level_metrics(metrics, records, options),
    }
    rundoc.write_metrics(path, document)
    rundoc.write_samples(path / files.SAMPLES_FILE, (r.to_dict() for r in records))
    return path


def test_a_new_catalog_entry_reaches_the_report_tables_charts_comparisons_and_samples_csv(
    with_fake: None, tmp_path: Path
) -> None:
    from pytest_extractbench.report import html, html_charts
    from pytest_extractbench.report.rows import read_run, sample_row

    run = read_run(_two_model_run(tmp_path))
    models = run.document["models"]
    assert models["good"]["json_only_rate"] == 0.0 < models["typeless"]["json_only_rate"]  # strings for integers
    context = html.build_context(run)
    assert "json_only_rate" in context["primary_metrics"]  # a row of report.html's metric table
    page = html.write_report(run, tmp_path / "report.html").read_text(encoding="utf-8")
    assert "JSON but not schema" in page
    # a bar of the key-metrics chart, drawn as 1 - value (lower is better)
    assert html_charts.key_metrics()[-1] == ("1 - json_only_rate", "1 - JSON not schema")
    lines = terminal.comparison_lines(run.document["comparison"])  # paired deltas of every headline metric
    assert any("JSON not schema " in line for line in lines), lines
    table = list(csv.DictReader(io.StringIO(exports.samples_csv(sample_row(r) for r in run.records()))))
    assert table[0]["recall_strict"] == "1.0" and list(table[0])[-8] == "recall_strict"


def test_a_new_catalog_entry_reaches_the_run_span_and_gauge(with_fake: None) -> None:
    pytest.importorskip("opentelemetry.sdk", reason="the 'otel' extra is not installed")
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from pytest_extractbench.plugin.otel import OtelExporter

    spans, reader, tracer = InMemorySpanExporter(), InMemoryMetricReader(), TracerProvider()
    tracer.add_span_processor(SimpleSpanProcessor(spans))
    exporter = OtelExporter(providers=(tracer, MeterProvider(metric_readers=[reader])), run_id="r")
    exporter.pytest_extractbench_run_finished(config=None, metrics={"m": model_entry()})  # type: ignore[arg-type]
    (span,) = spans.get_finished_spans()
    assert span.attributes["extractbench.m.json_only_rate"] == 0.25
    gauge = {
        point.attributes["extractbench.metric"]: point.value
        for metric in reader.get_metrics_data().resource_metrics[0].scope_metrics[0].metrics
        for point in metric.data.data_points
    }
    assert gauge["json_only_rate"] == 0.25


def test_the_eqs_components_are_catalog_metrics_one_per_weight() -> None:
    from dataclasses import fields

    from pytest_extractbench.report import chart_readings
    from pytest_extractbench.scoring import EQS_COMPONENTS, EqsWeights

    parts = catalog.eqs_components()
    assert tuple(p.eqs_component for p in parts) == EQS_COMPONENTS == tuple(f.name for f in fields(EqsWeights))
    entry = {"schema_validity_rate": 1.0, "field_f1_partial": 0.9, "type_accuracy": 0.8, "hallucination_rate": 0.6}
    assert [p.component_value(entry) for p in parts] == pytest.approx([1.0, 0.9, 0.8, 0.4])
    assert chart_readings.radar({"m": entry}) == "weakest component 1 - hallucination (0.400)."


def test_anls_star_reaches_every_output_like_the_other_headline_metrics(tmp_path: Path) -> None:
    from pytest_extractbench.report import html
    from pytest_extractbench.report.rows import read_run, sample_row

    run = read_run(_two_model_run(tmp_path))
    models = run.document["models"]
    # the gold itself scores 1; strings for integers fail the schema where the gold has integers: those earn 0
    samples = list(csv.DictReader(io.StringIO(exports.samples_csv(sample_row(r) for r in run.records()))))
    typeless = [float(row["anls_star"]) for row in samples if row["model"] == "typeless"]
    assert models["good"]["anls_star"] == 1.0 and 0.0 in typeless
    assert models["typeless"]["anls_star"] == pytest.approx(sum(typeless) / len(typeless)) and max(typeless) <= 1.0
    assert models["good"]["confidence_intervals"]["anls_star"]["low"] == 1.0
    assert models["good"]["anls_star_by_field"]  # per key path
    table = list(csv.DictReader(io.StringIO(exports.metrics_csv(models))))
    assert float(table[0]["anls_star"]) == 1.0 and "anls_star_ci_low" in table[0]
    assert r"| ANLS\* | 1.000 \[95% CI: 1.000, 1.000\] | A+ |" in exports.summary_md(run.document)  # Markdown-escaped
    assert any(
        line.startswith("  ANLS*")
        for line in terminal.metric_lines(models["good"], models["good"]["confidence_intervals"])
    )
    assert any("ANLS* " in line for line in terminal.comparison_lines(run.document["comparison"]))
    assert "anls_star" in html.build_context(run)["primary_metrics"]
    assert "ANLS*" in html.write_report(run, tmp_path / "report.html").read_text(encoding="utf-8")
