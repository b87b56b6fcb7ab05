"""The sample viewer at scale: report.html's size and how long chromium takes to show its first rows.

    python benchmarks/bench_viewer.py [--samples 1000 10000] [--repeat 3] [--chromium /usr/bin/chromium]

Two models (the bundled demo predictions, good and weak) are scored on the bundled samples once; the
run is then replicated to each size (ids ``ID~N``, with a dataset file of the matching rows, so every
sample carries its source text, schema and gold). For each size it times writing report.html, then
opens it in headless chromium (Playwright on Debian's browser) and measures, from the start of the
navigation, the time until the viewer's first table row is visible (``performance.now()`` in the page,
median of the repeats). Needs the dev extra (playwright) and chromium.
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


def load_time(browser, page_path: Path) -> float:
    """Seconds from navigation start until the first viewer row is visible."""
    page = browser.new_page(viewport={"width": 1300, "height": 1000})
    try:
        page.goto(page_path.as_uri(), wait_until="commit")
        page.locator("#viewer-table tbody tr").first.wait_for(state="visible", timeout=60_000)
        return page.evaluate("performance.now()") / 1000
    finally:
        page.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as scratch, sync_playwright() as p:
        base = make_run(Path(scratch) / "base", {"good": fixture_outputs("demo.jsonl"),
                                                 "weak": fixture_outputs("weak.jsonl")})
        browser = p.chromium.launch(executable_path=args.chromium, args=["--no-sandbox"])
        print("| samples | models | report.html | write (s) | first rows visible (s, median) |")
        print("|---:|---:|---:|---:|---:|")
        for n in args.samples:
            run = replicate_run(base, Path(scratch) / f"run{n}", n)
            started = time.perf_counter()
            report = write_report(read_run(run), run / "report.html")
            written = time.perf_counter() - started
            times = [load_time(browser, report) for _ in range(args.repeat)]
            size = report.stat().st_size / 1e6
            print(f"| {n:,} | 2 | {size:.1f} MB | {written:.1f} | {statistics.median(times):.2f} |")
        browser.close()


if __name__ == "__main__":
    main()
