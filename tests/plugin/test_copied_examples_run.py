"""A run whose model copies the schema's "e.g." values: counted in metrics.json, named in summary.md and
report.html, carried per sample in samples.jsonl."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_extractbench.core.rundoc import iter_samples

SCHEMA = {
    "type": "object",
    "properties": {
        "date": {"type": "string", "description": "Receipt date, e.g. 25/12/2018."},
        "total": {"type": "string", "description": 'Amount paid (e.g. "9.00")'},
    },
}
GOLD = [("r1", "03/01/2019", "15.50"), ("r2", "25/12/2018", "9.00"), ("r3", "07/07/2018", "4.20")]
# r1 copies both examples, r2's gold *is* the example (no copy), r3 copies the total only
OUTPUTS = {
    "r1": {"date": "25/12/2018", "total": "9.00"},
    "r2": {"date": "25/12/2018", "total": "9.00"},
    "r3": {"date": "07/07/2018", "total": "9.00"},
}


def _write(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


def test_copied_examples_are_counted_and_named(pytester: pytest.Pytester) -> None:
    _write(
        pytester.path / "data.jsonl",
        [{"id": i, "text": f"Receipt {i}", "schema": SCHEMA, "expected": {"date": d, "total": t}} for i, d, t in GOLD],
    )
    _write(pytester.path / "preds.jsonl", [{"id": i, "output": json.dumps(o)} for i, o in OUTPUTS.items()])
    result = pytester.runpytest(
        "-p",
        "no:randomly",
        "--extractbench",
        "--extractbench-dataset",
        "data.jsonl",
        "--extractbench-predictions",
        "preds.jsonl",
        "--extractbench-output",
        "out",
        "--extractbench-sla",
        "none",
    )
    assert result.ret == 0, result.stdout.str()
    out = pytester.path / "out"
    section = json.loads((out / "metrics.json").read_text())["models"]["predictions"]["copied_examples"]
    assert section == {"total": 3, "samples": 2, "by_field": {"total": 2, "date": 1}}
    records = {r["sample_id"]: r for r in iter_samples(out / "samples.jsonl")}
    assert records["r1"]["diagnostics"]["copied_examples"] == ["date", "total"]
    assert "copied_examples" not in records["r2"]["diagnostics"]
    assert records["r3"]["diagnostics"]["copied_examples"] == ["total"]
    summary = (out / "summary.md").read_text()
    assert "3 values copied from the schema's examples in 2 samples (total 2, date 1)" in summary
    html = (out / "report.html").read_text()
    assert (
        "Copied from the schema&#39;s examples (3 values in 2 samples)" in html
        or "Copied from the schema's examples (3 values in 2 samples)" in html
    )
