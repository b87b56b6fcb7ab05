"""The sample viewer driven in Debian's chromium with Playwright: filter, sort by delta, open a sample and
see its source, gold, both outputs and the coloured diff; hostile ids, texts and outputs stay inert; a
10,000-sample report pages its rows. (Load time is measured by benchmarks/bench_viewer.py, not here.)"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _runs import DATASET, fixture_outputs, make_run, replicate_run

from pytest_extractbench.dataset.sources import load_source
from pytest_extractbench.report import html
from pytest_extractbench.report.rows import read_run

pytestmark = pytest.mark.slow
playwright_api = pytest.importorskip("playwright.sync_api", reason="the dev extra installs playwright")
PAYLOAD = "</script><img src=x onerror=alert(1)><svg onload=alert(2)>"
# the diff's category colours (report/templates/_viewer.html.j2), as getComputedStyle reports them
EXACT_BG, MISSED_BG = "rgb(232, 245, 233)", "rgb(255, 235, 238)"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two models over the bundled samples plus one whose id, text and 'weak' output carry the payload."""
    base = tmp_path_factory.mktemp("viewer")
    rows = [json.loads(line) for line in Path(DATASET.source).read_text(encoding="utf-8").splitlines() if line]
    rows.append({**rows[0], "id": "evil" + PAYLOAD, "text": PAYLOAD + " " + rows[0]["text"]})
    data = base / "data.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    weak = fixture_outputs("weak.jsonl")
    return make_run(
        base / "run",
        {
            "good": fixture_outputs("demo.jsonl"),
            "weak": lambda s: json.dumps({"name": PAYLOAD}) if s.id.startswith("evil") else weak.get(s.id),
        },
        samples=load_source(str(data)).samples,
    )


@pytest.fixture(scope="module")
def report(run: Path) -> Path:
    return html.write_report(read_run(run), run / "report.html")


@pytest.fixture(scope="module")
def browser(chromium: str) -> Iterator[Any]:
    with playwright_api.sync_playwright() as p:
        launched = p.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        yield launched
        launched.close()


class Tab:
    """A page with every dialog, page error and console error it produced."""

    def __init__(self, browser: Any, url: str) -> None:
        self.page = browser.new_page(viewport={"width": 1300, "height": 1000})
        self.dialogs: list[str] = []
        self.errors: list[str] = []
        self.page.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.goto(url)

    def cells(self, column: int) -> list[str]:
        return self.page.locator(f"#viewer-table tbody tr td:nth-child({column})").all_text_contents()


def records(run: Path) -> dict[tuple[str, str], dict]:
    lines = (run / "samples.jsonl").read_text(encoding="utf-8").splitlines()
    return {(r["model"], r["sample_id"]): r for r in map(json.loads, lines)}


def test_filter_sort_by_delta_and_open_a_sample_side_by_side(browser: Any, run: Path, report: Path) -> None:
    found = records(run)
    order = [s.id for s in load_source(str(run.parent / "data.jsonl")).samples]
    topic_of = {sid: found[("weak", sid)]["meta"]["topic"] for sid in order}
    invalid = [sid for sid in order if not found[("weak", sid)]["score"]["schema_valid"]]
    topic = max(sorted(set(topic_of[s] for s in invalid)), key=lambda t: sum(topic_of[s] == t for s in invalid))
    delta = {s: found[("weak", s)]["score"]["eqs"] - found[("good", s)]["score"]["eqs"] for s in order}
    # the page's order: largest drop first, ties in file order
    expected = sorted((s for s in invalid if topic_of[s] == topic), key=lambda s: (delta[s], order.index(s)))
    assert expected

    tab = Tab(browser, report.as_uri())
    page = tab.page
    page.select_option("#viewer-col", label="weak")
    page.select_option("#viewer-topic", topic)
    page.select_option("#viewer-validity", "invalid")
    page.select_option("#viewer-sort", "delta-1-asc")
    assert tab.cells(1) == expected
    assert tab.cells(3 + 2 * 2 + 1) == [("+" if delta[s] > 0 else "") + f"{delta[s]:.3f}" for s in expected]
    assert page.locator("#viewer-status").text_content().startswith(f"samples 1–{len(expected)} of {len(expected)}")

    first = expected[0]
    sample = next(s for s in load_source(str(run.parent / "data.jsonl")).samples if s.id == first)
    page.locator("#viewer-table tbody tr").first.click()
    detail = page.locator("#viewer-detail")
    blocks = detail.locator(".block pre").all_text_contents()
    assert blocks[0] == sample.text and json.loads(blocks[1]) == sample.expected
    outputs = detail.locator(".output pre").all_text_contents()
    assert outputs == [found[(m, first)]["response"]["content"] for m in ("good", "weak")]
    # the diff: one row per field, a cell per model coloured by that model's category for the field
    rows = detail.locator(".viewer-diff tbody tr")
    paths = rows.locator("td:first-child").all_text_contents()
    for m, column in (("good", 3), ("weak", 4)):
        want = {f["path"]: f["category"] for f in found[(m, first)]["score"]["fields"]}
        cells = rows.locator(f"td:nth-child({column})")
        got = {p: cells.nth(i).get_attribute("data-category") for i, p in enumerate(paths)}
        assert {p: c for p, c in got.items() if c} == want
    colours = {
        c.get_attribute("data-category"): c.evaluate("e => getComputedStyle(e).backgroundColor")
        for c in detail.locator("td[data-category]").all()
    }
    assert colours.get("missed", MISSED_BG) == MISSED_BG and colours.get("exact", EXACT_BG) == EXACT_BG
    assert {"missed", "exact"} & set(colours) and len(set(colours.values())) == len(colours)
    assert tab.dialogs == [] and tab.errors == []
    page.close()


def test_hostile_ids_texts_and_outputs_stay_inert(browser: Any, report: Path) -> None:
    tab = Tab(browser, report.as_uri())
    page = tab.page
    page.fill("#viewer-q", "evil")
    assert tab.cells(1) == ["evil" + PAYLOAD]
    page.locator("#viewer-table tbody tr").first.click()
    detail = page.locator("#viewer-detail")
    assert detail.locator("h3 code").text_content() == "evil" + PAYLOAD
    assert detail.locator(".block pre").first.text_content().startswith(PAYLOAD + " ")
    assert detail.locator(".output").nth(1).locator("pre").text_content() == json.dumps({"name": PAYLOAD})
    assert PAYLOAD in detail.locator(".viewer-diff").text_content()
    injected = page.evaluate("document.querySelectorAll('#samples img, #samples svg, [onerror], [onload]').length")
    assert injected == 0 and tab.dialogs == [] and tab.errors == []
    assert page.title().startswith("Model Evaluation Report")
    page.close()


def test_ten_thousand_samples_render_one_page_of_rows(browser: Any, run: Path, tmp_path: Path) -> None:
    big = replicate_run(run, tmp_path / "big", 10_000)
    report = html.write_report(read_run(big), big / "report.html")
    tab = Tab(browser, report.as_uri())
    page = tab.page
    rows = page.locator("#viewer-table tbody tr")
    assert rows.count() == 100  # rows are paged: the DOM holds one page, not 10,000
    assert page.locator("#viewer-status").text_content() == "samples 1–100 of 10000, page 1 of 100"
    page.click("#viewer-next")
    assert rows.count() == 100 and page.locator("#viewer-status").text_content().startswith("samples 101–200 of")
    samples = load_source(str(run.parent / "data.jsonl")).samples
    source = samples[9999 % len(samples)]  # replicate_run cycles through the samples in file order
    page.fill("#viewer-q", "~9999")
    assert tab.cells(1) == [f"{source.id}~9999"]
    page.locator("#viewer-table tbody tr").first.click()
    assert page.locator("#viewer-detail .block pre").first.text_content() == source.text
    assert tab.dialogs == [] and tab.errors == []
    page.close()
