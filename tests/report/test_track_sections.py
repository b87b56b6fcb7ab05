"""Track runs (generate, toolcall, repair) write summary.md and report.html with their track sections."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_extractbench.report import track_sections

ARGS = (
    "-W",
    "ignore::pytest.PytestAssertRewriteWarning",
    "--extractbench",
    "--extractbench-output",
    "out",
    "-p",
    "no:randomly",
)
HOSTILE = "<script>alert(1)</script>|`x`"
SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


def write_jsonl(path: Path, rows: list) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path.name


def test_a_generate_run_with_a_hostile_sample_id_gets_escaped_track_sections(pytester: pytest.Pytester) -> None:
    data = write_jsonl(pytester.path / "gen.jsonl", [{"id": HOSTILE, "schema": SCHEMA}, {"id": "ok", "schema": SCHEMA}])
    preds = write_jsonl(
        pytester.path / "preds.jsonl", [{"id": HOSTILE, "output": {"age": 3}}, {"id": "ok", "output": {"name": "Ada"}}]
    )
    result = pytester.runpytest(
        *ARGS, "--extractbench-track", "generate", "--extractbench-dataset", data, "--extractbench-predictions", preds
    )
    result.assert_outcomes(passed=1, failed=1)
    out = pytester.path / "out"
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert "## predictions: Schema-constrained generation" in summary
    assert "- **Schema compliant**: 50.0%" in summary
    assert "### Failed samples" in summary
    assert "<script>" not in summary and "&lt;script&gt;" in summary  # Markdown: HTML syntax escaped
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "Schema-constrained generation" in html and "Compliance per schema feature" in html
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert not (out / "metrics.csv").exists()  # the extraction CSVs are not written for a track


@pytest.mark.parametrize(
    ("track", "title", "figure"),
    [
        ("toolcall", "Tool calling", "Arguments P / R / F1"),
        ("repair", "JSON repair", "Restored exactly"),
    ],
)
def test_every_track_with_a_section_renders_it(pytester: pytest.Pytester, track: str, title: str, figure: str) -> None:
    rows = [
        json.loads(line)
        for line in (Path(track_sections.__file__).parents[1] / "data" / f"{track}.jsonl")
        .read_text(encoding="utf-8")
        .splitlines()
    ]
    preds = write_jsonl(pytester.path / "preds.jsonl", [{"id": r["id"], "output": "not an answer"} for r in rows])
    pytester.runpytest(*ARGS, "--extractbench-track", track, "--extractbench-predictions", preds)
    summary = (pytester.path / "out" / "summary.md").read_text(encoding="utf-8")
    assert f"## predictions: {title}" in summary and f"**{figure}**" in summary
    assert f"<h2>predictions: {title}</h2>" in (pytester.path / "out" / "report.html").read_text(encoding="utf-8")


def test_no_html_report_option_leaves_summary_only(pytester: pytest.Pytester) -> None:
    data = write_jsonl(pytester.path / "gen.jsonl", [{"id": "ok", "schema": SCHEMA}])
    preds = write_jsonl(pytester.path / "preds.jsonl", [{"id": "ok", "output": {"name": "Ada"}}])
    pytester.runpytest(
        *ARGS,
        "--extractbench-track",
        "generate",
        "--extractbench-dataset",
        data,
        "--extractbench-predictions",
        preds,
        "--extractbench-no-html-report",
    )
    assert (pytester.path / "out" / "summary.md").exists()
    assert not (pytester.path / "out" / "report.html").exists()


def test_the_registry_covers_every_non_extraction_track() -> None:
    from pytest_extractbench.tracks import TRACKS

    assert set(track_sections.SECTIONS) == {name for name in TRACKS if name != "extraction"}
