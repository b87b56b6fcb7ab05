"""Reports through pytest: run-directory files, progress line, JUnit properties and pytest-html (also under xdist)."""

from __future__ import annotations

import csv
import json
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import pytest
from benchrun import BenchRun

from _require import import_or_skip
from pytest_extractbench.core.rundoc import iter_samples

SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
    "required": ["name"],
}
SAMPLES = [
    {"id": "s1", "text": "Ann Lee, 41.", "schema": SCHEMA, "expected": {"name": "Ann Lee", "age": 41}},
    {"id": "s2", "text": "Bo Chan is 7.", "schema": SCHEMA, "expected": {"name": "Bo Chan", "age": 7}},
    {"id": "s3", "text": "Cy Dore, 30.", "schema": SCHEMA, "expected": {"name": "Cy Dore", "age": 30}},
    {"id": "s4", "text": "Di Eve, 55.", "schema": SCHEMA, "expected": {"name": "Di Eve", "age": 55}},
]
XSS = "<script>alert(1)</script>"
PREDICTIONS = [
    {"id": "s1", "output": json.dumps({"name": "Ann Lee", "age": 41})},
    {"id": "s2", "output": json.dumps({"name": XSS, "age": 7})},
    {"id": "s3", "output": "not json"},
    {"id": "s4", "output": json.dumps({"name": "Di Eve", "age": 56})},
]


ARGS = (
    "--extractbench-dataset",
    "data.jsonl",
    "--extractbench-predictions",
    "preds.jsonl",
    "--model",
    "m1",
    "--extractbench-sla",
    "none",
)


@pytest.fixture(autouse=True)
def _inputs(run: BenchRun) -> None:
    run.write_jsonl("data.jsonl", SAMPLES)
    run.write_jsonl("preds.jsonl", PREDICTIONS)


def records(pytester: pytest.Pytester) -> dict[str, dict]:
    return {r["sample_id"]: r for r in iter_samples(pytester.path / "out" / "samples.jsonl")}


def test_run_writes_every_report_and_shows_progress(run: BenchRun, pytester: pytest.Pytester) -> None:
    result = run(*ARGS)
    result.assert_outcomes(passed=3, failed=1)
    out = pytester.path / "out"
    for name in ("report.html", "summary.md", "metrics.csv", "samples.csv"):
        assert (out / name).is_file(), name
    metrics = json.loads((out / "metrics.json").read_text())["models"]["m1"]
    eqs = sum(r["score"]["eqs"] for r in records(pytester).values()) / 4
    assert metrics["extraction_quality_score"] == pytest.approx(eqs)
    # by hand: s1 and s4 (56 for 55 scores 0.98, exact) are perfect, s3 is not JSON (0), s2's name is wrong:
    # 0.15 validity + 0.5 * F1 0.5 + 0.2 type accuracy + 0.15 no hallucination = 0.75; mean (1+0.75+0+1)/4
    assert eqs == pytest.approx(0.6875)
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert summary.startswith("# Model Evaluation Report: m1\n")
    assert "- **Overall Score (EQS)**: 0.688 " in summary
    assert "- **Dataset**: data.jsonl (4 samples)" in summary
    with (out / "metrics.csv").open(encoding="utf-8", newline="") as handle:
        header, *model_rows = list(csv.reader(handle))
    assert header[:3] == ["model", "num_samples", "extraction_quality_score"]
    assert {"schema_validity_rate", "field_f1_partial", "hallucination_rate", "sla_passed"} <= set(header)
    assert len(model_rows) == 1
    row = dict(zip(header, model_rows[0]))
    assert row["model"] == "m1" and row["num_samples"] == "4"
    assert float(row["extraction_quality_score"]) == pytest.approx(metrics["extraction_quality_score"])
    assert float(row["schema_validity_rate"]) == pytest.approx(0.75)
    with (out / "samples.csv").open(encoding="utf-8", newline="") as handle:
        sample_rows = list(csv.DictReader(handle))
    assert [(r["model"], r["sample_id"]) for r in sample_rows] == [("m1", s["id"]) for s in SAMPLES]
    by_id = {r["sample_id"]: r for r in sample_rows}
    assert [by_id[i]["passed"] for i in ("s1", "s2", "s3", "s4")] == ["True", "True", "False", "True"]
    assert float(by_id["s2"]["eqs"]) == pytest.approx(0.75) and float(by_id["s3"]["eqs"]) == 0.0
    assert by_id["s3"]["failure"].startswith("unusable output: unparseable JSON")
    result.stdout.fnmatch_lines(
        [
            "extractbench 1/4 scored: m1 EQS 1.000 validity 100.0%",
            "extractbench 2/4 scored: m1 EQS * validity 100.0%",
            "extractbench 3/4 scored: m1 EQS * validity 66.7%",
            f"extractbench 4/4 scored: m1 EQS {eqs:.3f} validity 75.0%",
            "reports: summary.md, metrics.csv, samples.csv, report.html",
        ]
    )
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in (out / "report.html").read_text()


def test_no_html_report_option(run: BenchRun, pytester: pytest.Pytester) -> None:
    run(*ARGS, "--extractbench-no-html-report")
    out = pytester.path / "out"
    assert not (out / "report.html").exists()
    assert (out / "summary.md").is_file() and (out / "samples.csv").is_file()
    # charts: off in every test not marked `charts` (tests/conftest.py)
    assert json.loads((out / "metrics.json").read_text())["run"]["options"]["report"] == {
        "html": False,
        "charts": False,
        "failure_details": 20,
    }


@pytest.mark.slow
@pytest.mark.charts
def test_charts_option_draws_or_leaves_out_the_charts(run: BenchRun, pytester: pytest.Pytester) -> None:
    run(*ARGS)
    drawn = (pytester.path / "out" / "report.html").read_text(encoding="utf-8")
    run(*ARGS, "--extractbench-charts", "off", out="bare")
    bare = (pytester.path / "bare" / "report.html").read_text(encoding="utf-8")
    assert 'id="chart-radar"' in drawn and drawn.count("<svg") >= 5
    assert 'id="chart-' not in bare and "<svg" not in bare
    # the page keeps everything else: its sections and the sample viewer's rows
    for section in ('id="summary"', 'id="accuracy"', 'id="samples"', "s3"):
        assert section in bare
    assert (
        json.loads((pytester.path / "bare" / "metrics.json").read_text())["run"]["options"]["report"]["charts"] is False
    )


def test_junit_xml_properties_per_sample(run: BenchRun, pytester: pytest.Pytester) -> None:
    run(*ARGS, "--junitxml", "junit.xml")
    found = {}
    for case in ET.parse(pytester.path / "junit.xml").getroot().iter("testcase"):
        found[case.get("name")] = {p.get("name"): p.get("value") for p in case.iter("property")}
    for sid, record in records(pytester).items():
        props = found[f"extractbench[m1-{sid}]"]
        assert props["extractbench_model"] == "m1"
        assert float(props["extractbench_eqs"]) == pytest.approx(record["score"]["eqs"], abs=1e-4)
        assert props["extractbench_validity"] == ("valid" if record["score"]["schema_valid"] else "invalid")
        assert float(props["extractbench_f1_partial"]) == pytest.approx(record["score"]["f1"]["partial"], abs=1e-4)


class _Blob(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.blob: dict = {}

    def handle_starttag(self, tag: str, attrs: list) -> None:
        found = dict(attrs)
        if "data-jsonblob" in found:
            self.blob = json.loads(found["data-jsonblob"])


@pytest.mark.parametrize("workers", [None, pytest.param("2", marks=pytest.mark.slow)], ids=["serial", "xdist"])
def test_pytest_html_columns_extras_and_summary(run: BenchRun, pytester: pytest.Pytester, workers: str | None) -> None:
    import_or_skip("pytest_html", "pytest-html (the dev extra) is not installed")
    args = ["--html", "ph.html"] + (["-n", workers] if workers else [])
    result = run(*ARGS, *args, subprocess=workers is not None)
    result.assert_outcomes(passed=3, failed=1)
    page = (pytester.path / "ph.html").read_text(encoding="utf-8")
    parser = _Blob()
    parser.feed(page)
    tests = parser.blob["tests"]
    summary = page.split("<h2>extractbench</h2>", 1)[1].split("</table>", 1)[0]  # the summary section, as HTML
    assert "<td>m1</td>" in summary and "68.8%" not in summary and "0.688" in summary
    saved = records(pytester)
    for sid, record in saved.items():
        (entry,) = [e for key, v in tests.items() if key.endswith(f"[m1-{sid}]") for e in v]
        cells = "".join(entry["resultsTableRow"])
        assert '<td class="col-model">m1</td>' in cells
        assert f'<td class="col-eqs">{round(record["score"]["eqs"], 4)}</td>' in cells
        validity = "valid" if record["score"]["schema_valid"] else "invalid"
        assert f'<td class="col-validity">{validity}</td>' in cells
        (extra,) = [x for x in entry["extras"] if x["format_type"] == "html"]
        assert f"<code>{sid}</code>" in extra["content"]
        assert "<script>" not in extra["content"]
    (s2,) = [e for key, v in tests.items() if key.endswith("[m1-s2]") for e in v]
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in s2["extras"][0]["content"]
