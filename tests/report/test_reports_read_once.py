"""The finish reads samples.jsonl once: report.html's viewer reads the records whole, a OnePass (report/rows.py)
keeps their rows for the charts, summary.md and the CSVs, which come out as when each report read the file."""

from __future__ import annotations

from pathlib import Path

from _runs import fixture_outputs, make_run

from pytest_extractbench.core import files, rundoc
from pytest_extractbench.core.rundoc import iter_samples
from pytest_extractbench.report import outputs
from pytest_extractbench.report.outputs import ReportOptions


def test_reports_read_samples_jsonl_once_and_match_reports_read_per_report(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path / "run", {"good": fixture_outputs("demo.jsonl"), "weak": fixture_outputs("weak.jsonl")})
    document = rundoc.read_metrics(run_dir)
    reads = []

    def counted():
        reads.append(1)
        return iter_samples(run_dir / files.SAMPLES_FILE)

    written, errors, refused = outputs.write_reports(run_dir, document, counted, ReportOptions(html=True))
    assert (errors, refused) == ([], [])
    assert len(reads) == 1, f"samples.jsonl read {len(reads)} times"
    assert {p.name for p in written} >= {"report.html", "summary.md", "samples.csv", "metrics.csv"}
    one_pass = {name: (run_dir / name).read_bytes() for name in ("summary.md", "samples.csv", "metrics.csv")}
    # without the page the exports read the records themselves: the same files
    outputs.write_reports(run_dir, document, counted, ReportOptions(html=False))
    assert len(reads) == 2
    assert {name: (run_dir / name).read_bytes() for name in one_pass} == one_pass
