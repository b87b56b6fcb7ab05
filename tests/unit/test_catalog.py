"""The metric catalog drives CIs, gates, metrics.csv, the terminal block and summary.md."""

from __future__ import annotations

import csv
import io

import pytest

from pytest_extractbench.analysis import catalog, resampled
from pytest_extractbench.gating import sla
from pytest_extractbench.report import exports, summary, terminal

# one more metric: the share of samples whose output was valid JSON but failed the schema
FAKE = catalog.Metric(
    "json_only_rate", "JSON but not schema", "JSON not schema", percent=True, higher_is_better=False,
    columns=("json_valid", "schema_valid"), compute=lambda s: (s["json_valid"] - s["schema_valid"]) / s["one"],
    per_sample="json_valid", aliases=("json_only",), grade_tiers=(0.3, 0.2, 0.1), headline=True, ci_columns=True,
    glance=True, terminal_row=99, sla=(0.5, 0.4, 0.3), gate_label="json_only",
)  # fmt: skip


@pytest.fixture
def with_fake(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(catalog, "CATALOG", (*catalog.CATALOG, FAKE))


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

    table = list(csv.reader(io.StringIO(exports.metrics_csv({"m": model_entry()}))))
    header, values = table[0], dict(zip(table[0], table[1]))
    assert "json_only_rate" in header and values["json_only_rate"] == "0.25"
    assert values["json_only_rate_ci_low"] == "0.1" and values["json_only_rate_ci_high"] == "0.4"

    document = {"run": {}, "models": {"m": model_entry()}}
    # graded against its SLA tiers (0.25 <= 0.3, the "excellence" threshold)
    assert r"| JSON but not schema | 25.0% \[95% CI: 10.0%, 40.0%\] | A+ |" in exports.summary_md(document)

    lines = terminal.metric_lines(model_entry(), model_entry()["confidence_intervals"])
    assert lines[-1] == "  JSON not schema     25.0% [95% CI: 10.0%, 40.0%]"

    checks = {c.metric: c for c in sla.evaluate_sla(model_entry(), "minimum")}
    assert checks["json_only_rate"].label == "json_only" and checks["json_only_rate"].passed is True
    assert summary.grade("json_only_rate", 0.45) == "B"


def test_without_the_entry_none_of_it_appears() -> None:
    assert "json_only_rate" not in exports.metrics_csv({"m": model_entry()}).splitlines()[0]
    assert "JSON but not schema" not in exports.summary_md({"run": {}, "models": {"m": model_entry()}})


def test_a_new_catalog_entry_gets_its_point_value_in_metrics_json(with_fake: None) -> None:
    from pytest_extractbench import SampleRecord, ScoringOptions, model_metrics, score_sample

    schema = {"type": "object", "properties": {"a": {"type": "integer"}}}
    records = [SampleRecord(model="m", sample_id=sid, score=score_sample(out, {"a": 1}, schema, sample_id=sid))
               for sid, out in (("ok", {"a": 1}), ("wrong-type", {"a": "one"}), ("not-json", "{broken"))]  # fmt: skip
    section = model_metrics(records, ScoringOptions())
    scores = [r.score for r in records]
    assert [s.json_valid and not s.schema_valid for s in scores] == [False, True, False]
    assert section["json_only_rate"] == pytest.approx(1 / 3)
