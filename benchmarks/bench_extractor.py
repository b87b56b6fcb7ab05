"""Overhead of the extractor pipeline per call: a trivial sync and async callable through ExtractorSource.

    python benchmarks/bench_extractor.py [N]

Each sync call runs on a daemon thread of its own (so that a hung call can be left behind) and each async
call in a task of its own under a deadline; this measures what that costs per call against a callable that
does nothing, with the journal written as in a run (no cache). Prints calls/s and microseconds per call.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path

from pytest_extractbench.dataset.samples import Sample
from pytest_extractbench.live.extractor import ExtractorSource

SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}}


def sync_extract(sample):
    return {"name": sample.text}


async def async_extract(sample):
    await asyncio.sleep(0)
    return {"name": sample.text}


def measure(fn, n: int) -> float:
    samples = [Sample(f"s{i}", f"text {i}", SCHEMA, {"name": f"text {i}"}) for i in range(n)]
    with tempfile.TemporaryDirectory() as tmp:
        source = ExtractorSource(fn, run_dir=Path(tmp), cache_dir=None, resume=False, concurrency=8)
        started = time.perf_counter()
        source.prepare([("m", s) for s in samples])
        for sample in samples:
            source.response("m", sample)
        elapsed = time.perf_counter() - started
        source.close()
    return elapsed


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    print("| callable | calls | wall s | calls/s | us/call |\n|---|---|---|---|---|")
    for fn in (sync_extract, async_extract):
        measure(fn, 100)  # warm-up
        elapsed = measure(fn, n)
        print(f"| {fn.__name__} | {n} | {elapsed:.2f} | {n / elapsed:,.0f} | {elapsed / n * 1e6:,.0f} |")


if __name__ == "__main__":
    main()
