"""The sections only some runs have, in summary.md and report.html alike, with numbers worked out by hand:
the baseline comparison, subsets and groups, calibration, consistency, the pairwise comparison, problems."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from _runs import Page, make_run

from pytest_extractbench.analysis.calibration import reliability
from pytest_extractbench.analysis.consistency import aggregate_consistency, consistency
from pytest_extractbench.core import rundoc
from pytest_extractbench.report import html
from pytest_extractbench.report.exports import summary_md
from pytest_extractbench.report.rows import read_run

SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}, "city": {"type": "string"}}}
SAMPLES = [
    {
        "id": "a",
        "text": "Ann lives in Oslo.",
        "schema": SCHEMA,
        "expected": {"name": "Ann", "city": "Oslo"},
        "topic": "north",
    },
    {
        "id": "b",
        "text": "Bo lives in Rome.",
        "schema": SCHEMA,
        "expected": {"name": "Bo", "city": "Rome"},
        "topic": "south",
    },
    {
        "id": "c",
        "text": "Cy lives in Bergen.",
        "schema": SCHEMA,
        "expected": {"name": "Cy", "city": "Bergen"},
        "topic": "north",
    },
]


def _files(pytester: pytest.Pytester, outputs: dict[str, dict], name: str) -> str:
    (pytester.path / "data.jsonl").write_text("".join(json.dumps(s) + "\n" for s in SAMPLES), encoding="utf-8")
    rows = "".join(json.dumps({"id": k, "output": v}) + "\n" for k, v in outputs.items())
    (pytester.path / name).write_text(rows, encoding="utf-8")
    return name


def _run(pytester: pytest.Pytester, out: str, *args: str) -> Path:
    pytester.runpytest(
        "-p",
        "no:randomly",
        "--extractbench",
        "--extractbench-dataset",
        "data.jsonl",
        "--extractbench-sla",
        "none",
        "--extractbench-output",
        out,
        *args,
    )
    assert (pytester.path / out / "summary.md").exists()
    return pytester.path / out


def _row(text: str, first_cell: str, after: str = "") -> list[str]:
    """The cells of the Markdown table row that starts with ``first_cell`` (the first one after ``after``)."""
    for line in text[text.index(after) :].splitlines():
        if line.startswith(f"| {first_cell} |"):
            return [c.strip() for c in line.strip("|").split("|")]
    raise AssertionError(f"no row {first_cell!r} in:\n{text}")


def _html_row(page_text: str, section: str, first_cell: str) -> list[str]:
    body = page_text[page_text.index(f'<section id="{section}">') :]
    body = body[: body.index("</section>")]
    for row in re.findall(r"<tr>(.*?)</tr>", body, re.S):
        cells = [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)]
        if cells and cells[0] == first_cell:
            return cells
    raise AssertionError(f"no row {first_cell!r} in section {section}")


@pytest.fixture
def compared(pytester: pytest.Pytester) -> tuple[str, str]:
    """A baseline of perfect outputs, then a run where sample b leaves out its city."""
    gold = {s["id"]: s["expected"] for s in SAMPLES}
    _run(
        pytester,
        "before",
        "--extractbench-predictions",
        _files(pytester, gold, "gold.jsonl"),
        "--extractbench-save",
        "main",
    )
    worse = dict(gold, b={"name": "Bo"})
    run = _run(
        pytester,
        "after",
        "--extractbench-predictions",
        _files(pytester, worse, "worse.jsonl"),
        "--extractbench-compare",
        "main",
    )
    html.write_report(read_run(run), run / "report.html")
    return (run / "summary.md").read_text(encoding="utf-8"), (run / "report.html").read_text(encoding="utf-8")


@pytest.mark.slow
def test_the_baseline_comparison_is_in_both_files_with_its_verdict_on_top(compared: tuple[str, str]) -> None:
    summary, page = compared
    # sample b: validity 1, F1 partial 2/3 (P 1, R 1/2), type accuracy 1, no hallucination:
    # EQS 0.15 + 0.5 * 2/3 + 0.2 + 0.15 = 0.8333; the run's mean (1 + 0.8333 + 1) / 3 = 0.9444, delta -0.0556
    # only b differs, so every sign swap of the paired test gives the same |delta|: p = 1
    row = _row(summary, "Overall score (EQS)", after="## Against the baseline")
    assert row[:4] == ["Overall score (EQS)", "1.000", "0.944", "-0.056"] and row[-1] == "no"
    top = summary[: summary.index("## Executive Summary")]
    assert "**Against baseline main**: predictions **REGRESSED**: EQS 1.000 -> 0.944 (-0.056, p = 1.000)" in top
    # city: 3 in the gold, 2 found, none wrong: P 1, R 2/3, F1 0.8 (baseline 1.0); name did not move
    assert _row(summary, "city", after="## Against the baseline") == ["city", "1.000", "0.800", "-0.200", "3"]
    assert "1 field(s) unchanged." in summary
    assert _html_row(page, "baseline", "Overall score (EQS)")[:4] == ["Overall score (EQS)", "1.000", "0.944", "-0.056"]
    assert _html_row(page, "baseline", "city") == ["city", "1.000", "0.800", "-0.200", "3"]
    gate = page[page.index('<section id="gate">') : page.index('<section id="summary">')]
    assert "REGRESSED" in gate and "1.000 → 0.944" in gate


@pytest.mark.slow
def test_subsets_and_groups_are_in_both_files(pytester: pytest.Pytester) -> None:
    gold = {s["id"]: s["expected"] for s in SAMPLES}
    outputs = dict(gold, b={"name": "Bo"})
    (pytester.path / "subsets.yaml").write_text(
        "subsets:\n  - name: oslo\n    conditions:\n      - {field: gold.city, operator: eq, value: Oslo}\n"
        "group_by:\n  - topic\n",
        encoding="utf-8",
    )
    run = _run(
        pytester,
        "out",
        "--extractbench-predictions",
        _files(pytester, outputs, "p.jsonl"),
        "--extractbench-subsets=subsets.yaml",
    )
    summary = (run / "summary.md").read_text(encoding="utf-8")
    # oslo: sample a alone, perfect; north: a and c, perfect; south: b alone, EQS 0.8333 (see above)
    assert _row(summary, "oslo")[:4] == ["oslo", "1", "1.000 (mean)", "1.000"]
    assert _row(summary, "topic = south")[:4] == ["topic = south", "1", "0.833 (mean)", "0.833"]
    assert _row(summary, "topic = north")[:2] == ["topic = north", "2"]
    # the weakest group of a field comes first
    assert summary.index("| topic = south |") < summary.index("| topic = north |")
    html.write_report(read_run(run), run / "report.html")
    page = (run / "report.html").read_text(encoding="utf-8")
    assert _html_row(page, "breakdowns", "topic = south")[:4] == ["topic = south", "1", "0.833 mean", "0.833"]
    assert 'href="#breakdowns"' in page


CONFIDENCES = [0.95, 0.95, 0.65, 0.25, 0.75]
CORRECT = [True, False, True, False, True]
RUNS = ['{"a": 1, "b": "x"}', '{"a": 1, "b": "x"}', '{"a": 2, "b": "x"}']


@pytest.fixture(scope="module")
def extras_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from _runs import DATASET

    def add(model: str, entry: dict) -> None:
        entry["calibration"] = reliability(CONFIDENCES, CORRECT) | {"samples": 2}
        entry["consistency"] = aggregate_consistency([consistency(RUNS)])

    gold = {s.id: json.dumps(s.expected) for s in DATASET.samples[:6]}
    return make_run(tmp_path_factory.mktemp("extras"), {"m": gold}, samples=DATASET.samples[:6], extra=add)


@pytest.mark.slow
def test_calibration_and_consistency_are_in_both_files(extras_run: Path) -> None:
    run = read_run(extras_run)
    summary = summary_md(run.document)
    # bins [0.9, 1]: conf 0.95, acc 0.5, gap 0.45 (2 fields); [0.6, 0.7]: 0.65, 1, 0.35; [0.2, 0.3]: 0.25, 0, 0.25;
    # [0.7, 0.8]: 0.75, 1, 0.25. ECE (0.45*2 + 0.35 + 0.25 + 0.25) / 5 = 0.35, MCE 0.45,
    # Brier (0.0025 + 0.9025 + 0.1225 + 0.0625 + 0.0625) / 5 = 0.2305
    assert "ECE 0.350, MCE 0.450, Brier 0.231 over 5 fields (mean confidence 71.0%, accuracy 60.0%)" in summary
    assert _row(summary, "0.9-1.0") == ["0.9-1.0", "2", "95.0%", "50.0%", "45.0%"]
    # runs agree on b, on a 2 of 3 times: identical 66.7%, field-level (2/3 + 1) / 2 = 83.3%, std of 1, 1, 2 = 0.4714
    assert (
        "1 sample run 3 times: identical outputs 66.7%, field-level agreement 83.3%, numeric std 0.4714; "
        "0 samples fully consistent."
    ) in summary
    assert "Least consistent fields: a (66.7%)" in summary
    page = html.render(html.build_context(run))
    assert _html_row(page, "breakdowns", "0.9–1.0") == ["0.9–1.0", "2", "95.0%", "50.0%", "45.0%"]
    assert _html_row(page, "breakdowns", "a") == ["a", "66.7%"]
    assert "ECE 0.350, MCE 0.450, Brier 0.231 over 5 fields" in page
    assert "1 sample run 3 times;" in page and "0 samples fully consistent." in page
    # five fields in four filled bins: the reliability diagram, read as two overconfident bins (0.95 and 0.25)
    assert 'id="chart-reliability"' in page
    assert "ECE 0.350, overconfident in 2 of 4 filled bins." in page


def test_the_pairwise_comparison_and_input_problems_reach_summary_md(tmp_path: Path) -> None:
    from _runs import DATASET

    samples = DATASET.samples[:6]
    gold = {s.id: json.dumps(s.expected) for s in samples}
    broken = dict(gold, **{samples[0].id: "not json"})
    run = make_run(tmp_path, {"good": gold, "broken": broken}, samples=samples)
    document = json.loads((run / "metrics.json").read_text())
    document["run"]["problems"] = [
        {
            "severity": "warning",
            "source": "data.jsonl",
            "location": "line 7",
            "sample_id": "x1",
            "field": "schema",
            "message": "schema is not an object",
        },
        {
            "severity": "error",
            "source": "p.jsonl",
            "location": "line 2",
            "sample_id": "",
            "field": "",
            "message": "not JSON",
        },
    ]
    summary = summary_md(rundoc.complete(document))  # as every renderer gets it
    # one sample of six scores 0 instead of 1 for 'broken': good wins 1 of 6 (16.7%), broken wins none
    (pair,) = document["comparison"]["pairwise"].values()
    row = _row(summary, f"{pair['a']} vs {pair['b']}")
    wins = {pair["a"]: row[-2], pair["b"]: row[-1]}
    assert row[1] == "6" and wins == {"good": "16.7%", "broken": "0.0%"}
    sign = 1 if pair["a"] == "good" else -1
    assert row[2] == f"{sign / 6:+.3f}"
    problems = summary[summary.index("## Input problems") :]
    assert "2 problem(s), 1 error(s):" in problems
    # errors first, each naming file, line, sample and field
    assert problems.index("[error] p.jsonl:line 2: not JSON") < problems.index(
        "[warning] data.jsonl:line 7 x1 schema: schema is not an object"
    )


@pytest.mark.slow
def test_hostile_names_in_the_sections_stay_inert(tmp_path: Path) -> None:
    from _runs import DATASET

    xss = "<img src=x onerror=alert(1)>"

    def add(model: str, entry: dict) -> None:
        entry["groups"] = {
            xss: {xss: {"count": 1, "aggregation": "mean", "score": 0.5, "metrics": {}, "confidence_intervals": {}}}
        }
        entry["consistency"] = aggregate_consistency([consistency(['{"%s": 1}' % xss.replace('"', ""), "{}"])])

    gold = {s.id: json.dumps(s.expected) for s in DATASET.samples[:5]}
    run = read_run(make_run(tmp_path, {"m": gold}, samples=DATASET.samples[:5], extra=add))
    page = html.render(html.build_context(run))
    assert xss not in page and Page(page).event_handlers() == []
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    assert xss not in summary_md(run.document)
