"""Scoring throughput and memory on the deterministic 10,000-sample workload.

    python benchmarks/bench_scoring.py [--samples 10000] [--repeat 3] [--align hungarian] [--object-arrays-only]
                                       [--budget]

Prints a table: samples/s and field comparisons/s of ``score_sample`` (parse,
jsonschema validation, field alignment and comparison, all three F1 modes, EQS),
the time to aggregate the run's metrics, and peak Python memory of the whole run. On a
shared machine the samples per CPU second (process time) are steadier than wall-clock figures.
Like the plugin, the timed runs freeze the loaded dataset out of the cyclic GC
(``gc.freeze``); the figure without freezing is printed too. ``--align hungarian``
annotates every array of the workload's schemas with ``"x-eval-align": "hungarian"``
(``--object-arrays-only``: arrays of objects only). ``--budget`` scores each sample inside the per-item
time budget as the tracks do (a watchdog registration per sample): its overhead is the difference.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from workload import make_workload  # noqa: E402

from pytest_extractbench import SampleRecord, ScoringOptions, model_metrics, score_sample  # noqa: E402
from pytest_extractbench.scoring import budget  # noqa: E402


def score_all(rows, options):
    return [score_sample(output, gold, schema, options=options, sample_id=sid) for sid, gold, schema, output in rows]


def score_all_budgeted(rows, options):
    """As the tracks score an item: inside the per-item time budget (its watchdog registration included)."""
    out = []
    for sid, gold, schema, output in rows:
        with budget.time_budget(budget.ITEM_BUDGET_S):
            out.append(score_sample(output, gold, schema, options=options, sample_id=sid))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--align",
        choices=("ordered", "hungarian"),
        default=None,
        help="annotate the workload's arrays with this x-eval-align strategy",
    )
    parser.add_argument(
        "--harsh",
        action="store_true",
        help="a weak model's outputs: ~10%% truncated, ~80%% schema-invalid (wrong JSON types)",
    )
    parser.add_argument(
        "--budget",
        action="store_true",
        help="score each sample inside the per-item time budget, as the tracks do (its overhead)",
    )
    parser.add_argument(
        "--object-arrays-only",
        action="store_true",
        help="with --align: leave arrays of scalars to the default Jaccard score",
    )
    args = parser.parse_args()
    options = ScoringOptions()
    global score_all
    if args.budget:
        score_all = score_all_budgeted

    rows = make_workload(args.samples, align=args.align, scalar_arrays=not args.object_arrays_only, harsh=args.harsh)
    score_all(rows[:200], options)  # warm caches (compiled schemas and validators), as a long run would be

    cpu_timings: list[float] = []

    def timed(freeze: bool) -> list[float]:
        timings = []
        for _ in range(args.repeat):
            gc.collect()
            if freeze:  # what the plugin does once the dataset is loaded (session.py)
                gc.freeze()
            start, cpu_start = time.perf_counter(), time.process_time()
            results = score_all(rows, options)
            timings.append(time.perf_counter() - start)
            if freeze:
                cpu_timings.append(time.process_time() - cpu_start)
            gc.unfreeze()
            del results
        return timings

    unfrozen = timed(freeze=False)
    timings = timed(freeze=True)
    best = min(timings)
    scores = score_all(rows, options)
    fields = sum(len(s.fields) for s in scores)

    records = [SampleRecord(model="bench", sample_id=s.sample_id, score=s) for s in scores]
    start = time.perf_counter()
    metrics = model_metrics(records, options)
    aggregate_s = time.perf_counter() - start

    tracemalloc.start()
    score_all(rows, options)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()

    invalid = sum(not s.valid for s in scores)
    print(
        f"workload: {'harsh' if args.harsh else 'default'}; alignment: {args.align or 'default (ordered)'}"
        f"{'; each sample inside the per-item time budget' if args.budget else ''}"
        f"{' on arrays of objects only' if args.object_arrays_only else ''}"
    )
    print(
        f"workload: {len(rows)} samples, {fields} fields ({fields / len(rows):.1f} per sample), "
        f"{invalid} invalid outputs; EQS {metrics['extraction_quality_score']:.3f}, "
        f"F1 partial {metrics['field_f1_partial']:.3f}"
    )
    print()
    print(f"| {'measure':<42} | {'value':>12} |")
    print(f"|{'-' * 44}|{'-' * 14}|")
    print(f"| {'score_sample, samples/s (best of %d)' % args.repeat:<42} | {len(rows) / best:>12,.0f} |")
    print(f"| {'score_sample, samples/s (median)':<42} | {len(rows) / statistics.median(timings):>12,.0f} |")
    print(f"| {'samples per CPU second (best)':<42} | {len(rows) / min(cpu_timings):>12,.0f} |")
    print(f"| {'samples/s without gc.freeze (best)':<42} | {len(rows) / min(unfrozen):>12,.0f} |")
    print(f"| {'field comparisons/s':<42} | {fields / best:>12,.0f} |")
    print(f"| {'aggregate metrics of the run, s':<42} | {aggregate_s:>12.3f} |")
    print(f"| {'peak traced memory while scoring, MiB':<42} | {peak / 2**20:>12.1f} |")


if __name__ == "__main__":
    main()
