"""Report generation for a big run: report.html, summary.md, metrics.csv, samples.csv.

    python benchmarks/bench_report.py [--samples 10000] [--models 2] [--repeat 3]

The run directory (metrics.json, samples.jsonl) is built first, not timed: the deterministic
synthetic workload scored for each model (model k perturbs the gold with its own seed), with
latencies and completion times so the performance charts are drawn too. Then it times
``extractbench report`` (reading the run directory, HTML with every chart) and the other
files, and prints their sizes.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from workload import _perturb, make_workload

from pytest_extractbench import SampleRecord, ScoringOptions, StatsOptions, metrics_by_model, score_sample
from pytest_extractbench.analysis.metrics import run_level_metrics
from pytest_extractbench.core import files
from pytest_extractbench.dataset.complexity import complexity_features
from pytest_extractbench.report.exports import write_exports
from pytest_extractbench.report.html import write_report
from pytest_extractbench.report.rows import read_run


def build_run(path: Path, samples: int, models: int) -> None:
    options = ScoringOptions(statistics=StatsOptions(resamples=1000))
    rows = make_workload(samples)
    complexity = {}
    records = []
    for m in range(models):
        rng = random.Random(1000 + m)
        for i, (sample_id, gold, schema, output) in enumerate(rows):
            raw = output if m == 0 else _perturb(rng, gold)
            key = id(schema)
            if key not in complexity:
                complexity[key] = complexity_features(schema)
            latency = 0.3 + 0.4 * rng.random() + 0.2 * m
            response = {
                "content": raw,
                "latency_s": latency,
                "started_at": 1000 + i * 0.05,
                "finished_at": 1000 + i * 0.05 + latency,
            }
            score = score_sample(raw, gold, schema, options=options, sample_id=sample_id)
            records.append(
                SampleRecord(
                    model=f"model-{chr(97 + m)}",
                    sample_id=sample_id,
                    score=score,
                    meta={"topic": ("orders", "clinical", "trips")[i % 3], "complexity": complexity[key]},
                    response=response,
                    passed=score.valid,
                )
            )
    metrics = metrics_by_model(records, options)
    document = {
        "format_version": 1,
        "run": {"dataset": {"name": "workload", "num_samples": samples}, "options": {"scoring": options.to_dict()}},
        "models": metrics,
        **run_level_metrics(metrics, records, options),
    }
    files.write_json(path / files.METRICS_FILE, document)
    files.write_jsonl(path / files.SAMPLES_FILE, (r.to_dict() for r in records))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--models", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp)
        start = time.perf_counter()
        build_run(run, args.samples, args.models)
        print(
            f"built the run directory ({args.samples:,} samples x {args.models} models) in "
            f"{time.perf_counter() - start:.1f} s (not timed below)"
        )
        html_times, export_times = [], []
        for _ in range(args.repeat):
            start = time.perf_counter()
            write_report(read_run(run), run / "report.html")
            html_times.append(time.perf_counter() - start)
            data = read_run(run)
            start = time.perf_counter()
            write_exports(run, data.document, data.records)
            export_times.append(time.perf_counter() - start)
        size = {
            name: (run / name).stat().st_size
            for name in ("metrics.json", "samples.jsonl", "report.html", "summary.md", "metrics.csv", "samples.csv")
        }
    print("| measure | best | median |\n|---|---:|---:|")
    print(f"| report.html from the run directory, s | {min(html_times):.2f} | {statistics.median(html_times):.2f} |")
    print(
        f"| summary.md + metrics.csv + samples.csv, s | {min(export_times):.2f} "
        f"| {statistics.median(export_times):.2f} |"
    )
    print("\n| file | size |\n|---|---:|")
    for name, n in size.items():
        print(f"| {name} | {n / 1e6:.2f} MB |")


if __name__ == "__main__":
    main()
