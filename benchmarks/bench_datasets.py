"""Speed of loading and validating a dataset: 10,000 paraloq-format rows from JSONL, Parquet and ``hf:`` (datasets).

    python benchmarks/bench_datasets.py [--samples 10000] [--repeat 3]

Rows cycle through the bundled dataset's 52 samples with fresh ids; like paraloq's, every row
carries its schema and gold as JSON strings, so every row's schema is parsed, meta-validated
(Draft 2020-12 / its ``$schema``), compiled for complexity features and used to validate its
gold (no cache hits across rows). ``hf:`` goes through ``datasets.load_dataset("parquet")``
with an empty cache each time (it converts the file to Arrow first). Also timed: dataset
statistics and seeded subsampling of the loaded samples. Wall-clock seconds, best and median.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from pytest_extractbench.dataset.samples import bundled_path, subsample  # noqa: E402
from pytest_extractbench.dataset.sources import load_source  # noqa: E402
from pytest_extractbench.dataset.statistics import dataset_statistics  # noqa: E402


def rows(n: int) -> list[dict]:
    base = [json.loads(line) for line in bundled_path().read_text(encoding="utf-8").splitlines()]
    out = []
    for i in range(n):
        row = dict(base[i % len(base)])
        row["id"] = f"s{i:05d}"
        out.append(row)
    return out


def timed(fn: Callable[[], object], repeat: int) -> tuple[list[float], object]:
    timings, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        timings.append(time.perf_counter() - start)
    return timings, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-datasets-"))
    try:
        data = rows(args.samples)
        jsonl = work / "data.jsonl"
        jsonl.write_text("".join(json.dumps(r) + "\n" for r in data), encoding="utf-8")
        parquet = work / "data.parquet"
        pq.write_table(pa.Table.from_pylist(data), parquet)

        def through_datasets() -> object:
            cache = work / "hf-cache"
            shutil.rmtree(cache, ignore_errors=True)
            return load_source(f"hf:{parquet}", cache_dir=cache)

        cases: list[tuple[str, Callable[[], object]]] = [
            ("JSONL file", lambda: load_source(str(jsonl))),
            ("Parquet file (pyarrow)", lambda: load_source(str(parquet))),
            ("hf:PATH.parquet (datasets, cold cache)", through_datasets),
        ]
        print(f"{args.samples} samples, best/median of {args.repeat} runs, wall-clock seconds\n")
        print(f"{'source':<42}{'best s':>9}{'median s':>10}{'samples/s':>11}{'loaded':>8}{'problems':>10}")
        loaded = None
        for name, fn in cases:
            timings, loaded = timed(fn, args.repeat)
            best = min(timings)
            print(
                f"{name:<42}{best:>9.2f}{statistics.median(timings):>10.2f}{args.samples / best:>11.0f}"
                f"{len(loaded.samples):>8}{len(loaded.problems):>10}"
            )  # type: ignore[attr-defined]
        samples = loaded.samples  # type: ignore[attr-defined]
        for name, fn in (
            ("dataset statistics", lambda: dataset_statistics(samples)),
            ("subsample 1,000 (seeded SHA-256)", lambda: subsample(samples, 1000, 42)),
        ):
            timings, _ = timed(fn, args.repeat)
            print(
                f"{name:<42}{min(timings):>9.2f}{statistics.median(timings):>10.2f}{args.samples / min(timings):>11.0f}"
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
