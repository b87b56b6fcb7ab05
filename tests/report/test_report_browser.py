"""report.html in a real headless browser (Debian's chromium): no console errors, charts in the DOM,
and a prediction carrying <script> / onerror= never runs (the ``chromium`` fixture: conftest.py).
"""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
from pathlib import Path

import pytest
from _runs import DATASET, Page, fixture_outputs, make_run

from pytest_extractbench.report import html
from pytest_extractbench.report.rows import read_run

pytestmark = pytest.mark.slow
XSS = '<script>document.title="pwned"</script><img src=x onerror="document.title=\'pwned\'">'
CONSOLE = re.compile(r":CONSOLE[:(].*")


def browse(chromium: str, page: Path, *extra: str) -> tuple[str, list[str]]:
    """The DOM after load, and every console message the page produced."""
    done = subprocess.run(
        [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-extensions",
            "--enable-logging=stderr",
            "--v=0",
            *extra,
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout, [m.group(0) for m in CONSOLE.finditer(done.stderr)]


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = tmp_path_factory.mktemp("browser")
    evil = dataclasses.replace(DATASET.samples[0], id="evil" + XSS)
    predictions = fixture_outputs("weak.jsonl")
    make_run(
        run,
        {
            "weak" + XSS: lambda s: (
                json.dumps({"name": XSS, "x" + XSS: XSS}) if s.id.startswith("evil") else predictions.get(s.id)
            ),
            "good": fixture_outputs("demo.jsonl"),
        },
        samples=[evil, *DATASET.samples[1:]],
        timed=True,
    )
    return html.write_report(read_run(run), run / "report.html")


def test_the_console_capture_sees_script_errors(chromium: str, tmp_path: Path) -> None:
    control = tmp_path / "control.html"
    control.write_text("<!DOCTYPE html><title>c</title><script>undefinedFunction()</script>", encoding="utf-8")
    _, console = browse(chromium, control)
    assert any("undefinedFunction" in line for line in console)


def test_report_loads_without_errors_and_renders_its_charts(chromium: str, report: Path) -> None:
    dom, console = browse(chromium, report, "--virtual-time-budget=3000")
    assert console == []
    page = Page(dom)
    figures = [a["id"] for t, a in page.tags if t == "figure"]
    assert len(figures) >= 13 and page.count("svg") >= len(figures)
    for key in ("radar", "categories", "ranking", "grouped", "latency", "throughput", "complexity-box"):
        assert f"chart-{key}" in figures
    # every chart's SVG has drawn marks and its text
    assert sum(dom.count(f"<{shape} ") for shape in ("rect", "circle", "polyline", "polygon", "path", "line")) > 500
    assert dom.count("<text") > 200


def test_a_malicious_prediction_does_not_execute(chromium: str, report: Path) -> None:
    dom, console = browse(chromium, report, "--virtual-time-budget=3000")
    page = Page(dom)
    title = re.search(r"<title>(.*?)</title>", dom, re.DOTALL).group(1)
    assert "pwned" not in title.split("&lt;script&gt;")[0] and title.startswith("Model Evaluation Report")
    # the viewer's two data elements and its script, and nothing the payload added
    assert page.count("script") == 3 and page.count("img") == 0 and page.event_handlers() == []
    assert any(XSS in chunk for chunk in page.text)
    assert console == []


def test_screenshot(chromium: str, report: Path) -> None:
    shot = report.with_suffix(".png")
    done = subprocess.run(
        [
            chromium,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--window-size=1400,2400",
            f"--screenshot={shot}",
            report.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 50_000
