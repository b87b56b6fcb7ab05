"""The sample viewer at scale: report.html's size and how long chromium takes to show its first rows.

    python benchmarks/bench_viewer.py [--samples 1000 10000] [--repeat 3] [--chromium /usr/bin/chromium]
    python benchmarks/bench_viewer.py --page old/report.html new/report.html   # time pages written elsewhere

Two models (the bundled demo predictions, good and weak) are scored on the bundled samples once; the
run is then replicated to each size (ids ``ID~N``, with a dataset file of the matching rows, so every
sample carries its source text, schema and gold). For each size it times writing report.html, then
opens it in headless chromium (Playwright on Debian's browser) and measures, from the start of the
navigation (``performance.now()`` in the page, median of the repeats):

- first rows: the frame that first draws a row of the viewer's table (a script Playwright adds before the
  page's own sees the row inserted and stamps the next animation frame, whatever page version it watches);
- all data: when the viewer has unpacked every sample's texts and outputs (``#viewer[data-ready]``; a page
  that reads all its data at once has it with its first rows);
- Playwright sees a row: what a test waiting for the row sees, later than the first rows when the page is
  busy unpacking the rest.

Needs the dev extra (playwright) and chromium (``apt-get install -y chromium``).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "report")]

from _runs import fixture_outputs, make_run, replicate_run  # noqa: E402

from pytest_extractbench.report.html import write_report  # noqa: E402
from pytest_extractbench.report.rows import read_run  # noqa: E402

# added before the page's scripts: stamps the frame that first draws a table row, and the moment all data is in
WATCH = """
window.__viewer = {};
new MutationObserver(function (changes, watch) {
  var root = document.getElementById("viewer");
  if (!window.__viewer.rows && document.querySelector("#viewer-table tbody tr")) {
    window.__viewer.rows = -1;
    requestAnimationFrame(function () { window.__viewer.rows = performance.now(); });
  }
  if (!window.__viewer.ready && root && root.dataset.ready) window.__viewer.ready = performance.now();
}).observe(document, {childList: true, subtree: true, attributes: true, attributeFilter: ["data-ready"]});
"""


def load_times(browser, page_path: Path) -> tuple[float, float, float]:
    """Seconds from navigation start until the first rows are drawn, all data is in, and Playwright sees a row."""
    page = browser.new_page(viewport={"width": 1300, "height": 1000})
    try:
        page.add_init_script(WATCH)
        page.goto(page_path.as_uri(), wait_until="commit")
        page.locator("#viewer-table tbody tr").first.wait_for(state="visible", timeout=60_000)
        seen = page.evaluate("performance.now()")
        page.wait_for_function("window.__viewer.rows > 0", timeout=60_000)
        if page.evaluate("!!document.getElementById('viewer-body')"):  # a page that unpacks its data in two steps
            page.wait_for_function("window.__viewer.ready > 0", timeout=60_000)
        rows, ready = page.evaluate("[window.__viewer.rows, window.__viewer.ready || window.__viewer.rows]")
        return rows / 1000, ready / 1000, seen / 1000
    finally:
        page.close()


def row(label: str, size: int, written: float | None, times: list[tuple[float, float, float]]) -> str:
    median = [statistics.median(t[i] for t in times) for i in range(3)]
    write = "—" if written is None else f"{written:.1f}"
    return f"| {label} | {size / 1e6:.1f} MB | {write} | {median[0]:.2f} | {median[1]:.2f} | {median[2]:.2f} |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--page", type=Path, nargs="+", help="time these pages instead of writing new ones")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as scratch, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=args.chromium, args=["--no-sandbox"])
        print("| page | report.html | write (s) | first rows drawn (s) | all data in (s) | Playwright sees a row (s) |")
        print("|---|---:|---:|---:|---:|---:|")
        if args.page:
            for path in args.page:
                times = [load_times(browser, path) for _ in range(args.repeat)]
                print(row(str(path), path.stat().st_size, None, times))
        else:
            base = make_run(
                Path(scratch) / "base", {"good": fixture_outputs("demo.jsonl"), "weak": fixture_outputs("weak.jsonl")}
            )
            for n in args.samples:
                run = replicate_run(base, Path(scratch) / f"run{n}", n)
                started = time.perf_counter()
                report = write_report(read_run(run), run / "report.html")
                written = time.perf_counter() - started
                times = [load_times(browser, report) for _ in range(args.repeat)]
                print(row(f"{n:,} samples x 2 models", report.stat().st_size, written, times))
        browser.close()


if __name__ == "__main__":
    main()
