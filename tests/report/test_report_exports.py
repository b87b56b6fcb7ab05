"""summary.md, metrics.csv and samples.csv: content from metrics.json, Markdown escaping, CSV formula injection."""

from __future__ import annotations

import csv
import dataclasses
import io
import json
from pathlib import Path

from _runs import DATASET, fixture_outputs, make_run

from pytest_extractbench.core.rundoc import iter_samples
from pytest_extractbench.report import exports
from pytest_extractbench.report.rows import read_run

FORMULAS = ('=HYPERLINK("http://x")', "+1+1", "-2+3", "@SUM(A1)", "\t=1", "\r=1")


def write(run: Path) -> dict[str, str]:
    data = read_run(run)
    exports.write_exports(run, data.document, data.records)
    return {
        name: (run / name).open(encoding="utf-8", newline="").read()
        for name in ("summary.md", "metrics.csv", "samples.csv")
    }


def test_summary_and_csvs_carry_the_metrics_json_values(tmp_path: Path) -> None:
    run = make_run(tmp_path, {"good": fixture_outputs("demo.jsonl"), "weak": fixture_outputs("weak.jsonl")})
    out = write(run)
    document = json.loads((run / "metrics.json").read_text())
    good = document["models"]["good"]
    assert f"- **Overall Score (EQS)**: {good['extraction_quality_score']:.3f} \\[95% CI:" in out["summary.md"]
    assert f"- **Recommendation**: {good['recommendation']}" in out["summary.md"]
    assert "| Metric | Value | Grade |" in out["summary.md"] and "## Ranking" in out["summary.md"]
    rows = list(csv.DictReader(io.StringIO(out["metrics.csv"])))
    assert [r["model"] for r in rows] == ["good", "weak"]
    assert float(rows[0]["extraction_quality_score"]) == good["extraction_quality_score"]
    assert float(rows[1]["field_f1_partial"]) == document["models"]["weak"]["field_f1_partial"]
    assert rows[0]["latency_p95_ms"] == ""  # offline: not measured
    samples = list(csv.DictReader(io.StringIO(out["samples.csv"])))
    assert len(samples) == 2 * len(DATASET.samples)
    by_id = {(r["model"], r["sample_id"]): r for r in samples}
    record = next(iter_samples(run / "samples.jsonl"))
    assert float(by_id[(record["model"], record["sample_id"])]["eqs"]) == record["score"]["eqs"]


def test_csv_cells_never_start_a_formula(tmp_path: Path) -> None:
    samples = [dataclasses.replace(s, id=f) for s, f in zip(DATASET.samples, FORMULAS)]
    run = make_run(tmp_path, {"=cmd|' /C calc'!A0": lambda s: "{broken"}, samples=samples)
    out = write(run)
    for name in ("metrics.csv", "samples.csv"):
        for row in csv.reader(io.StringIO(out[name])):
            for value in row:
                assert not value.startswith(("=", "+", "@", "\t", "\r")) and not value.startswith("-2"), (name, value)
    ids = {r["sample_id"] for r in csv.DictReader(io.StringIO(out["samples.csv"]))}
    # a carriage return is a control character: escaped as the terminal and summary.md show it, it starts nothing
    assert ids == {"\\x0d" + f[1:] if f.startswith("\r") else "'" + f for f in FORMULAS}
    assert exports.cell(-2.5) == -2.5  # numbers stay numbers


def test_summary_md_escapes_markdown_and_html(tmp_path: Path) -> None:
    model = "<img src=x onerror=alert(1)> *bold* [link](http://evil) |pipe|"
    run = make_run(tmp_path, {model: fixture_outputs("demo.jsonl")})
    text = write(run)["summary.md"]
    assert "<img" not in text and "&lt;img src=x onerror=alert(1)&gt;" in text
    assert "\\*bold\\*" in text and "\\[link\\](http://evil)" in text and "\\|pipe\\|" in text
