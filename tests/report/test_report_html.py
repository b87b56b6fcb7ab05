"""report.html rendered from real run directories: sections, charts, grades, edge cases and escaping."""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
import re
from pathlib import Path

import pytest
from _runs import DATASET, Page, fixture_outputs, gold_outputs, make_run

from pytest_extractbench.core.rundoc import iter_samples
from pytest_extractbench.report import charts, html, viewer
from pytest_extractbench.report.rows import read_run

SECTIONS = {
    "summary",
    "methodology",
    "primary",
    "accuracy",
    "performance",
    "errors",
    "complexity",
    "samples",
    "recommendations",
}
XSS = '<script>document.title="pwned"</script><img src=x onerror="document.title=\'pwned\'">'


def render(run_dir: Path) -> tuple[str, Page]:
    out = html.write_report(read_run(run_dir), run_dir / "report.html")
    text = out.read_text(encoding="utf-8")
    return text, Page(text)


def chart_ids(page: Page) -> set[str]:
    return {i[len("chart-") :] for i in page.ids() if i.startswith("chart-")}


@pytest.fixture(scope="module")
def single(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Page, dict]:
    run = make_run(tmp_path_factory.mktemp("single"), {"demo": fixture_outputs("demo.jsonl")})
    text, page = render(run)
    return text, page, json.loads((run / "metrics.json").read_text())


@pytest.mark.slow
def test_single_model_report_has_every_section_and_the_charts_the_data_supports(single) -> None:
    text, page, document = single
    assert page.ids() >= SECTIONS
    assert "comparison" not in page.ids()
    # offline run: no latency charts; the accuracy, error and complexity charts are there
    assert {
        "gauge-0",
        "radar",
        "categories",
        "pr",
        "errors",
        "omissions",
        "f1-complexity",
        "complexity-box",
        "correlation",
    } <= chart_ids(page)
    assert not {"latency", "latency-eqs", "throughput"} & chart_ids(page)
    assert "f1-modes" not in chart_ids(page)  # three bars the precision/recall table already shows
    assert page.count("svg") >= 10
    metrics = document["models"]["demo"]
    assert metrics["recommendation"] in text and metrics["eqs_band"] in text
    assert "not measured (the run carries no timings" in text


def test_at_a_glance_grades_follow_the_sla_tiers(single) -> None:
    text, page, document = single
    metrics = document["models"]["demo"]
    table = text.split('id="at-a-glance"', 1)[1].split("</table>", 1)[0]
    row = re.search(r"<td>Exact match</td>\s*<td>([^<]+)<span[^>]*>[^<]*</span></td><td[^>]*>([^<]+)</td>", table)
    assert row, table[:2000]
    assert row.group(1).strip() == f"{100 * metrics['exact_match_rate']:.1f}%"
    assert row.group(2) == html.summary.grade("exact_match_rate", metrics["exact_match_rate"])
    assert f"{metrics['extraction_quality_score']:.3f} [95% CI: " in text


def viewer_parts(text: str) -> tuple[dict, str]:
    """The viewer's embedded JSON (parsed) and its inline script, cut out of the page by hand."""

    def element(name: str) -> dict:
        found = text.split(f'<script type="application/json" id="{name}" data-encoding="gzip-base64">', 1)[1]
        return viewer.unpack(found.split("</script>", 1)[0])

    script = text.split('<script type="application/json"', 1)[1].split("<script>", 1)[1].split("</script>", 1)[0]
    return {**element("viewer-data"), **element("viewer-body")}, script


def test_the_page_is_self_contained_and_runs_only_its_own_script(single) -> None:
    text, page, _ = single
    csp = [a for t, a in page.tags if t == "meta" and a.get("http-equiv") == "Content-Security-Policy"]
    assert csp and "default-src 'none'" in csp[0]["content"]
    _, script = viewer_parts(text)
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode()
    directives = dict(d.strip().split(" ", 1) for d in csp[0]["content"].split(";"))
    assert directives["script-src"] == f"'sha256-{digest}'"  # that script alone: no 'unsafe-inline', no eval
    scripts = [a for t, a in page.tags if t == "script"]
    # the table's data, the inline viewer, then the rest of the data
    assert scripts == [
        {"type": "application/json", "id": "viewer-data", "data-encoding": "gzip-base64"},
        {},
        {"type": "application/json", "id": "viewer-body", "data-encoding": "gzip-base64"},
    ]
    assert "eval(" not in script and "innerHTML" not in script and "new Function" not in script
    assert page.count("link") == 0 and page.count("iframe") == 0
    assert not re.search(r"(src|href)=\"(https?:)?//", text)  # nothing fetched
    assert page.event_handlers() == []


@pytest.mark.slow
def test_several_models_get_the_comparison_charts_and_significance(tmp_path: Path) -> None:
    run = make_run(
        tmp_path,
        {"good": fixture_outputs("demo.jsonl"), "weak": fixture_outputs("weak.jsonl"), "oracle": gold_outputs()},
    )
    text, page = render(run)
    assert "comparison" in page.ids()
    assert {"ranking", "grouped", "winrate", "radar", "categories"} <= chart_ids(page)
    document = json.loads((run / "metrics.json").read_text())
    ranking = document["comparison"]["eqs_ranking"]
    assert [e["model"] for e in ranking][0] == "oracle"
    significant = [
        k
        for k, p in document["comparison"]["pairwise"].items()
        if p["metrics"]["extraction_quality_score"]["significant"]
    ]
    assert significant  # good vs weak differ clearly
    assert text.count("<strong>* yes</strong>") == sum(
        m["significant"] for p in document["comparison"]["pairwise"].values() for m in p["metrics"].values()
    )
    for model in ("good", "weak", "oracle"):
        assert f"<h3>{model}</h3>" in text


def test_zero_samples_render_a_readable_page(tmp_path: Path) -> None:
    run = make_run(tmp_path, {}, samples=[])
    text, page = render(run)
    assert "This run scored no model." in text
    assert page.ids() >= SECTIONS


@pytest.mark.slow
def test_all_invalid_outputs(tmp_path: Path) -> None:
    run = make_run(tmp_path, {"broken": lambda sample: "{not json"})
    text, page = render(run)
    assert "0.0%" in text and "invalid output(s)" in text
    assert "Not recommended for production" in text
    glance = text.split('id="at-a-glance"', 1)[1].split("</table>", 1)[0]
    assert 'class="grade grade-F">F<' in glance


@pytest.mark.slow
def test_huge_texts_are_clipped_and_every_sample_reaches_the_viewer(tmp_path: Path) -> None:
    long_value = "x" * 200_000
    run = make_run(tmp_path, {"wordy": lambda s: json.dumps({k: long_value for k in s.expected})})
    text, page = render(run)
    assert len(text) < 3_000_000
    data, _ = viewer_parts(text)
    assert [s[0] for s in data["samples"]] == [s.id for s in DATASET.samples]
    outputs = [r[3] for r in data["results"][0]]
    # each output is 4+ values of 200,000 characters: cut to 20,000 with a note of the full length
    assert all(len(o) == 20_000 + len(o.split("…", 1)[1]) and o.endswith(" characters)") for o in outputs)
    values = [s for s in data["strings"] if s.startswith("xxx")]
    assert values and all(v == "x" * 299 + "… (200,000 characters)" for v in values)


@pytest.mark.slow
def test_performance_figures_and_latency_charts_when_measured(tmp_path: Path) -> None:
    def performance(model: str, metrics: dict) -> None:
        metrics["performance"] = {  # the shape performance.performance_metrics writes
            "measured": True,
            "latency_ms": {"p50": 310.0, "p95": 640.0, "p99": 700.0},
            "throughput": {"requests_per_s": 3.5},
            "reliability": {"success_rate": 1.0},
        }

    run = make_run(tmp_path, {"live": gold_outputs()}, timed=True, extra=performance)
    text, page = render(run)
    assert {"latency", "latency-eqs", "throughput"} <= chart_ids(page)
    assert "640 ms" in text and "3.50/s" in text and "100.0%" in text
    assert "not measured (the run carries" not in text


@pytest.mark.slow
def test_untrusted_text_is_escaped_everywhere(tmp_path: Path) -> None:
    sample = DATASET.samples[0]
    evil = dataclasses.replace(sample, id="id" + XSS)
    run = make_run(
        tmp_path,
        {"m" + XSS: lambda s: json.dumps({**s.expected, "name": XSS, "x" + XSS: XSS})},
        samples=[evil, *DATASET.samples[1:4]],
    )
    text, page = render(run)
    assert page.count("script") == 3 and page.count("img") == 0  # the viewer's data and code, nothing injected
    assert page.event_handlers() == []
    assert "&lt;script&gt;" in text
    assert any(XSS in chunk for chunk in page.text)  # shown as text, not parsed as markup
    data, _ = viewer_parts(text)  # the embedded data carries the payloads with no "<" to end its element
    for name in ("viewer-data", "viewer-body"):
        raw = text.split(f'id="{name}" data-encoding="gzip-base64">', 1)[1].split("</script>", 1)[0]
        assert "<" not in raw and ">" not in raw and "&" not in raw
    assert data["samples"][0][0] == "id" + XSS and data["columns"][0]["model"] == "m" + XSS
    assert "x" + XSS in data["strings"]


def test_charts_are_deterministic_and_show_names_only_as_escaped_text() -> None:
    one = charts.radar({"a<b>": {"schema_validity_rate": 1.0, "field_f1_partial": 0.8}})
    two = charts.radar({"a<b>": {"schema_validity_rate": 1.0, "field_f1_partial": 0.8}})
    assert one.svg == two.svg
    assert one.svg.startswith('<svg xmlns="http://www.w3.org/2000/svg" role="img"')
    assert "<!--" not in one.svg and "a<b>" not in one.svg and ">a&lt;b&gt;</text>" in one.svg
    ids = re.findall(r'\bid="([^"]+)"', one.svg)
    assert ids and all(i.startswith("eb-radar-") for i in ids)


@pytest.mark.slow
def test_complexity_bins_and_dataset_statistics_from_metrics_json(tmp_path: Path) -> None:
    def bins(model: str, metrics: dict) -> None:
        metrics["metrics_by_complexity_bin"] = {
            "simple": {
                "num_samples": 7,
                "extraction_quality_score": 0.91,
                "field_f1_partial": 0.88,
                "schema_validity_rate": 1.0,
            },
            "complex": {
                "num_samples": 3,
                "extraction_quality_score": 0.42,
                "field_f1_partial": 0.37,
                "schema_validity_rate": 0.5,
            },
        }

    run = make_run(tmp_path, {"demo": fixture_outputs("demo.jsonl")}, extra=bins)
    document = json.loads((run / "metrics.json").read_text())
    document["dataset"] = {"num_samples": 52, "topics": {"medical": 9}, "text_length": {"mean": 412.5}}
    (run / "metrics.json").write_text(json.dumps(document))
    text, _ = render(run)
    section = text.split('id="complexity"', 1)[1]
    assert "metrics.json (metrics_by_complexity_bin)" in section
    assert "<td>complex</td><td>3</td><td>0.420</td><td>—</td><td>—</td><td>0.370</td><td>50.0%</td>" in section
    assert "<code>topics.medical</code></td><td>9</td>" in section and "412.5" in section
    assert "Weaker on complex schemas (F1: 0.37 over 3 samples)" in text


@pytest.mark.slow
def test_the_accuracy_section_shows_the_eqs_spread_and_the_fields_to_look_at(tmp_path: Path) -> None:
    run = make_run(tmp_path, {"demo": fixture_outputs("demo.jsonl")})
    text, _ = render(run)
    # counted from the per-sample rows, not from metrics.json's summary of them
    eqs = sorted(r["score"]["eqs"] for r in iter_samples(run / "samples.jsonl"))
    perfect = sum(value == 1.0 for value in eqs)
    table = text[text.index("<caption>Per-sample EQS</caption>") :]
    table = table[: table.index("</table>")]
    assert f"<td>{eqs[0]:.3f}</td>" in table and f"{perfect} (" in table
    fields = text[text.index("<caption>Fields to look at") :]
    fields = fields[: fields.index("</table>")]
    assert fields.count("<tr>") - 1 == 15  # header row + at most 15 fields
    # demo.jsonl gets timeline[].event wrong twice: among the fields that lost the most
    assert re.search(r"<code>timeline\[\]\.event</code></td><td>\d+</td><td>0\.\d+</td>", fields)


@pytest.mark.slow
def test_the_fields_table_lists_what_the_output_left_out(tmp_path: Path) -> None:
    samples = DATASET.samples[:3]
    dropped = {s.id: next(iter(s.expected)) for s in samples}  # each output leaves out the gold's first key
    run = make_run(
        tmp_path,
        {"m": lambda s: json.dumps({k: v for k, v in s.expected.items() if k != dropped[s.id]})},
        samples=samples,
    )
    text, _ = render(run)
    fields = text[text.index("<caption>Fields to look at") :]
    fields = fields[: fields.index("</table>")]
    for name in set(dropped.values()):
        times = list(dropped.values()).count(name)
        # missed every time: mean 0, ANLS* 0, all omissions
        cells = [f"<code>{name}</code>", times, "0.000", "0.000", 0, 0, 0, times, 0]
        assert "</td><td>".join(map(str, cells)) + "</td>" in fields


@pytest.mark.slow
def test_a_hostile_field_name_stays_text_in_the_fields_table(tmp_path: Path) -> None:
    samples = [DATASET.samples[0]]
    run = make_run(tmp_path, {"m": lambda sample: json.dumps({**sample.expected, XSS: "invented"})}, samples=samples)
    text, page = render(run)
    assert "<script>document.title" not in text and "&lt;script&gt;document.title" in text
