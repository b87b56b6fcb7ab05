"""The sample viewer driven in Debian's chromium with Playwright: filter, sort by a header (the same model's
delta in another run), filter by bucket, open a sample beside the table without moving it and step with j/k,
see its source, gold, both outputs, their JSON diffs and the coloured field diff; an unusable output said once;
hostile ids, texts and outputs stay inert; a 10,000-sample report stays under its size cap and pages its rows.
(Load time is measured by benchmarks/bench_viewer.py, not here.)"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from _runs import DATASET, fixture_outputs, make_run, repeated_run, replicate_run

from pytest_extractbench.core.rundoc import iter_samples
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
        self.page.wait_for_selector("#viewer[data-ready]", state="attached")

    def cells(self, column: int) -> list[str]:
        return self.page.locator(f"#viewer-table tbody tr td:nth-child({column})").all_text_contents()


def records(run: Path) -> dict[tuple[str, str], dict]:
    return {(r["model"], r["sample_id"]): r for r in iter_samples(run / "samples.jsonl")}


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
    page.click('#viewer-table th[data-key="delta-1-0"] button')
    assert page.get_attribute('#viewer-table th[data-key="delta-1-0"]', "aria-sort") == "ascending"
    assert page.get_attribute('#viewer-table th[data-key="eqs-0"]', "aria-sort") == "none"
    assert tab.cells(1) == expected
    assert tab.cells(3 + 2 * 2 + 1) == [("+" if delta[s] > 0 else "") + f"{delta[s]:.3f}" for s in expected]
    assert page.locator("#viewer-status").text_content().startswith(f"samples 1–{len(expected)} of {len(expected)}")

    first = expected[0]
    sample = next(s for s in load_source(str(run.parent / "data.jsonl")).samples if s.id == first)
    page.locator("#viewer-table tbody tr").first.click()
    detail = page.locator("#viewer-detail")
    blocks = detail.locator(".block pre").all_text_contents()
    assert blocks[0] == sample.text and json.loads(blocks[1]) == sample.expected
    # outputs pretty-printed (an unusable one as it came)
    for k, m in enumerate(("good", "weak")):
        content = found[(m, first)]["response"]["content"]
        shown = detail.locator(f'.output[data-column="{k}"] > pre').text_content()
        parsed = found[(m, first)]["score"]["parse_error"] is None
        assert (json.loads(shown) == json.loads(content) and "\n  " in shown) if parsed else shown == content
    # the diff: one row per field, a cell per model coloured by that model's category for the field
    rows = detail.locator(".viewer-diff tbody tr")
    paths = rows.locator("td:first-child").all_text_contents()
    for m, column in (("good", 3), ("weak", 4)):
        if found[(m, first)]["score"]["parse_error"]:  # no field read: one cell says so (the test below)
            assert rows.locator("td.unusable").count() == 1
            continue
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
    assert json.loads(detail.locator(".output").nth(1).locator("pre.pretty").text_content()) == {"name": PAYLOAD}
    assert PAYLOAD in detail.locator(".output").nth(1).locator(".diff-gold").text_content()  # the JSON diff too
    assert PAYLOAD in detail.locator(".viewer-diff").text_content()
    injected = page.evaluate("document.querySelectorAll('#samples img, #samples svg, [onerror], [onload]').length")
    assert injected == 0 and tab.dialogs == [] and tab.errors == []
    assert page.title().startswith("Model Evaluation Report")
    page.close()


def test_ten_thousand_samples_stay_under_the_cap_and_render_one_page_of_rows(
    browser: Any, run: Path, tmp_path: Path
) -> None:
    big = replicate_run(run, tmp_path / "big", 10_000)
    report = html.write_report(read_run(big), big / "report.html")
    assert report.stat().st_size <= 10_000_000  # 10,000 samples x 2 models
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


def test_an_unusable_output_is_said_once_not_null_in_every_field(browser: Any, run: Path, report: Path) -> None:
    found = records(run)
    broken = next(sid for (m, sid), r in found.items() if m == "weak" and r["score"]["parse_error"])
    error = found[("weak", broken)]["score"]["parse_error"]
    tab = Tab(browser, report.as_uri())
    page = tab.page
    page.fill("#viewer-q", broken)
    page.locator("#viewer-table tbody tr", has_text=broken).first.click()
    detail = page.locator("#viewer-detail")
    weak = detail.locator('.output[data-column="1"]')
    assert weak.locator(".unusable").all_text_contents() == [f"Unusable output: {error}"]
    assert detail.text_content().count(error) == 1  # the error once, not again among the problems
    assert weak.locator("pre").text_content() == found[("weak", broken)]["response"]["content"]
    # the field diff: one cell down the weak column says so, no per-field "null"
    rows = detail.locator(".viewer-diff tbody tr")
    unusable = detail.locator(".viewer-diff td.unusable")
    assert unusable.count() == 1 and unusable.get_attribute("rowspan") == str(rows.count())
    assert "null" not in unusable.text_content()
    assert rows.count() == len(found[("good", broken)]["score"]["fields"])
    assert rows.locator("td:nth-child(3)").count() == rows.count()  # good's cells are all there
    assert tab.dialogs == [] and tab.errors == []
    page.close()


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory: pytest.TempPathFactory, run: Path) -> tuple[Path, Path, Path]:
    """The same two models in a current and a baseline run, their outputs swapped in the baseline, viewed together."""
    base = tmp_path_factory.mktemp("pair")
    samples = load_source(str(run.parent / "data.jsonl")).samples
    demo, weak = fixture_outputs("demo.jsonl"), fixture_outputs("weak.jsonl")
    current = make_run(base / "cur", {"good": demo, "weak": weak}, samples=samples)
    baseline = make_run(base / "base", {"good": weak, "weak": demo}, samples=samples)
    from pytest_extractbench.report.viewer import runs_from_dirs

    page = html.write_viewer(runs_from_dirs([current, baseline]), base / "viewer.html")
    return current, baseline, page


def test_view_sorts_by_the_same_models_delta_filters_buckets_and_steps_without_moving(
    browser: Any, two_runs: tuple[Path, Path, Path]
) -> None:
    current, baseline, viewer_page = two_runs
    now, then = records(current), records(baseline)
    ids = list(dict.fromkeys(sid for _, sid in now))
    delta = {s: now[("weak", s)]["score"]["eqs"] - then[("weak", s)]["score"]["eqs"] for s in ids}
    tab = Tab(browser, viewer_page.as_uri())
    page = tab.page
    # the header of weak's delta against weak in the baseline (columns: cur good, cur weak, base good, base weak)
    header = '#viewer-table th[data-key="delta-1-3"]'
    assert page.text_content(header) == "Δ weak (cur − base)"
    page.click(header + " button")
    assert page.get_attribute(header, "aria-sort") == "ascending"
    everything = sorted(ids, key=lambda s: (delta[s], ids.index(s)))
    page.fill("#viewer-q", "")
    shown = [c for c in tab.cells(1)]
    assert shown == everything[:100]
    page.click(header + " button")  # again: largest gain first
    assert page.get_attribute(header, "aria-sort") == "descending"
    assert tab.cells(1) == sorted(ids, key=lambda s: (-delta[s], ids.index(s)))[:100]

    # the bucket filter: each model against itself in the baseline, by the gate's rule
    def bucket(m: str, s: str) -> str:
        was, is_ = then[(m, s)]["passed"], now[(m, s)]["passed"]
        if was and not is_:
            return "regressed"
        if not was:
            return "fixed" if is_ else "still_failing"
        return "regressed" if then[(m, s)]["score"]["eqs"] - now[(m, s)]["score"]["eqs"] > 0.05 else "unchanged"

    by_gain = sorted(ids, key=lambda s: (-delta[s], ids.index(s)))  # the table's order still
    for m, name in (("weak", "regressed"), ("good", "fixed"), ("weak", "unchanged")):
        page.select_option("#viewer-col", label=f"cur / {m}")
        page.select_option("#viewer-bucket", label=name)
        want = [s for s in by_gain if bucket(m, s) == name]
        assert tab.cells(1) == want[:100], (m, name)
    assert any(bucket("weak", s) == "regressed" for s in ids) and any(bucket("good", s) == "fixed" for s in ids)

    # open a sample far down the table: the page does not move, the detail is beside it, j/k step through the rows
    page.select_option("#viewer-bucket", "")
    rows = page.locator("#viewer-table tbody tr")
    assert rows.count() > 32
    target = rows.nth(30)
    target.scroll_into_view_if_needed()
    page.evaluate("window.scrollBy(0, 37)")
    before = page.evaluate("window.scrollY")
    target.locator("td").nth(1).click()
    assert page.evaluate("window.scrollY") == before > 0
    detail = page.locator("#viewer-detail")
    box, viewport = detail.bounding_box(), page.viewport_size
    assert box["y"] >= 0 and box["y"] < viewport["height"] and box["x"] > 0
    order = tab.cells(1)
    assert detail.locator("h3 code").text_content() == order[30]
    page.keyboard.press("j")
    assert detail.locator("h3 code").text_content() == order[31]
    page.keyboard.press("ArrowDown")
    page.keyboard.press("k")
    page.keyboard.press("k")
    page.keyboard.press("ArrowUp")
    assert detail.locator("h3 code").text_content() == order[29]
    # its weak output diffed against the gold and against weak in the baseline
    sid = order[29]
    card = detail.locator('.output[data-column="1"]')
    assert card.locator(".diff-gold summary").text_content().startswith("Diff against the gold")
    assert card.locator(".diff-other summary").text_content().startswith("Diff against base / weak")
    other = card.locator(".diff-other")
    if now[("weak", sid)]["score"]["parse_error"] is None and then[("weak", sid)]["score"]["parse_error"] is None:
        mine = json.loads(now[("weak", sid)]["response"]["content"])
        theirs = json.loads(then[("weak", sid)]["response"]["content"])
        assert (other.locator("span.ins, span.del").count() == 0) == (mine == theirs)
    page.keyboard.press("Escape")
    assert detail.is_hidden() and page.evaluate("window.scrollY") == before
    # a chosen reference instead: every other column's delta against the current run's good
    page.select_option("#viewer-ref", label="cur / good")
    keys = page.locator("#viewer-table th[data-key^='delta-']").evaluate_all("hs => hs.map(h => h.dataset.key)")
    assert keys == ["delta-1-0", "delta-2-0", "delta-3-0"]
    headers = page.locator("#viewer-table th").evaluate_all("hs => hs.map(h => h.dataset.key)")
    shown = tab.cells(headers.index("delta-2-0") + 1)
    for sid, cell in zip(tab.cells(1), shown):
        want = then[("good", sid)]["score"]["eqs"] - now[("good", sid)]["score"]["eqs"]
        assert float(cell) == pytest.approx(want, abs=0.0011)  # the page keeps EQS to 4 places, shows 3
    assert len(set(shown)) > 1
    assert tab.dialogs == [] and tab.errors == []
    page.close()


def test_a_similarity_paired_lists_elements_show_under_its_cell_inert(
    browser: Any, tmp_path_factory: pytest.TempPathFactory
) -> None:
    from pytest_extractbench import ScoringOptions, StatsOptions
    from pytest_extractbench.dataset.samples import Sample

    schema = {"type": "object", "properties": {"parties": {"type": "array", "items": {"type": "string"}}}}
    gold = {"parties": ["Newgistics, Inc.", "Zeta"]}
    output = json.dumps({"parties": ["Newgistics Inc.", PAYLOAD]})
    base = tmp_path_factory.mktemp("elements")
    options = ScoringOptions(list_similarity=0.8, statistics=StatsOptions(resamples=100))
    run = make_run(
        base / "run",
        {"m": lambda s: output},
        samples=[Sample(id="nda", text="...", schema=schema, expected=gold)],
        options=options,
    )
    report = html.write_report(read_run(run), run / "report.html")
    tab = Tab(browser, report.as_uri())
    page = tab.page
    page.locator("#viewer-table tbody tr", has_text="nda").first.click()
    items = page.locator("#viewer-detail .viewer-diff ul.elements li")
    assert [items.nth(i).get_attribute("data-kind") for i in range(items.count())] == ["similar", "missed", "spurious"]
    assert items.nth(0).text_content() == "similar 0.94Newgistics, Inc. ~ Newgistics Inc."
    assert items.nth(1).text_content() == "missedZeta" and items.nth(2).text_content() == "spurious" + PAYLOAD
    assert page.locator("#viewer-detail img, #viewer-detail svg").count() == 0  # the payload stayed text
    assert tab.dialogs == [] and tab.errors == []
    page.close()


def test_view_shows_pass_at_k_deltas_and_sorts_by_runs_passed(browser: Any, tmp_path: Path) -> None:
    """Both runs repeated every sample 3 times: this run's first six pass 2 of 3 runs, the other run's all 3."""
    from pytest_extractbench.report.viewer import runs_from_dirs

    ids = [s.id for s in DATASET.samples[:8]]
    now = repeated_run(tmp_path / "now", {i: (3, 2 if n < 6 else 3) for n, i in enumerate(ids)})
    then = repeated_run(tmp_path / "then", {i: (3, 3) for i in ids})
    tab = Tab(browser, html.write_viewer(runs_from_dirs([now, then]), tmp_path / "viewer.html").as_uri())
    page = tab.page
    rows = page.locator("#viewer-repeats tbody tr")
    assert rows.count() == 2
    cells = [rows.nth(n).locator("td").all_text_contents() for n in range(2)]
    # model, against, k, samples, metric, other run, this run, delta, CI, p
    assert cells[0][:8] == ["m", "then", "3", "8", "pass@3", "1.000", "1.000", "0.000"]
    assert cells[1][:8] == ["m", "then", "3", "8", "pass^3", "1.000", "0.250", "-0.750"]
    assert cells[1][9] == "p = 0.031 (significant)"
    assert page.get_attribute('#viewer-repeats tr[data-metric="pass_hat_k"] td:nth-child(8)', "class") == "num down"
    # the runs-passed column of this run: fewest passes first once sorted
    header = '#viewer-table th[data-key="passes-0"]'
    assert page.text_content(header) == "runs passed now / m"
    page.click(header + " button")
    column = page.locator("#viewer-table thead th").all_text_contents().index("runs passed now / m") + 1
    assert tab.cells(column) == ["2 of 3"] * 6 + ["3 of 3"] * 2
    page.click(header + " button")  # descending: the two that passed every run first
    assert tab.cells(1)[:2] == ids[6:] and tab.cells(column)[:2] == ["3 of 3"] * 2
    assert not tab.dialogs and not tab.errors
    page.close()
