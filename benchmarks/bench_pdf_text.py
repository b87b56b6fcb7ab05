"""PDF to text: pypdfium2 against pdfplumber (pdfminer.six) on fixtures/documents.

Run it once per library, in an environment that has that library (each in its own process, so the peak
memory is that library's):

    python benchmarks/bench_pdf_text.py pypdfium2
    python benchmarks/bench_pdf_text.py pdfplumber

It reads every fixture PDF ``--repeat`` times and prints pages per second, the process's resident memory after
the import and at its peak (ru_maxrss), and text quality: the share of the gold's string and number values found
in the page text (whitespace and case folded; a number also matches in its printed form with thousands commas).
"""

from __future__ import annotations

import argparse
import json
import re
import resource
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "documents"


def _rss_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def pypdfium2_pages(path: Path) -> list[str]:
    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument(path)
    try:
        return [page.get_textpage().get_text_range() for page in pdf]
    finally:
        pdf.close()


def pdfplumber_pages(path: Path) -> list[str]:
    import pdfplumber

    with pdfplumber.open(path) as pdf:
        return [page.extract_text() or "" for page in pdf.pages]


READERS: dict[str, Callable[[Path], list[str]]] = {"pypdfium2": pypdfium2_pages, "pdfplumber": pdfplumber_pages}


def _fold(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().lower()


def _forms(value: Any) -> list[str]:
    if isinstance(value, bool) or value is None:
        return []
    if isinstance(value, int):
        return [str(value), f"{value:,}"]
    if isinstance(value, float):
        return [f"{value:.2f}", f"{value:,.2f}"]
    return [str(value)]


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in _leaves(v)]
    if isinstance(value, list):
        return [leaf for v in value for leaf in _leaves(v)]
    return [value]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("library", choices=sorted(READERS))
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    read = READERS[args.library]
    __import__(args.library)
    after_import = _rss_mb()
    rows = [json.loads(line) for line in (FIXTURE / "dataset.jsonl").read_text(encoding="utf-8").splitlines()]
    found = total = pages = 0
    per_doc = []
    for row in rows:
        text = _fold(" ".join(read(FIXTURE / row["document"])))
        leaves = [leaf for leaf in _leaves(row["expected"]) if _forms(leaf)]
        hits = sum(any(_fold(form) in text for form in _forms(leaf)) for leaf in leaves)
        found, total = found + hits, total + len(leaves)
        per_doc.append(f"{row['id']} {hits}/{len(leaves)}")
    start = time.perf_counter()
    for _ in range(args.repeat):
        for row in rows:
            pages += len(read(FIXTURE / row["document"]))
    elapsed = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"| {args.library} | {pages / elapsed:.1f} | {after_import:.0f} | {peak:.0f} | {found}/{total} "
        f"({'; '.join(per_doc)}) |"
    )
    sys.stdout.flush()


if __name__ == "__main__":
    main()
