"""Speed of the statistics: bootstrap CIs, paired bootstrap + permutation tests, against scipy and a plain Python loop.

    python benchmarks/bench_stats.py [--samples 10000] [--resamples 10000] [--repeat 5]

Per-sample rows come from scoring the deterministic synthetic workload (not timed).
Prints a table of wall-clock seconds (best and median of ``--repeat`` runs) for:
the bootstrap CI of one mean (EQS), the CIs of all resampled metrics from one
resampling (micro F1 etc. recomputed from resampled field counts), the paired
comparison of two runs (paired bootstrap CIs + permutation tests of the headline metrics),
``scipy.stats.bootstrap`` (percentile, vectorized) on the same mean, and the
a plain loop (``np.random.choice`` per resample, one resample at a time) for reference.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from workload import make_workload  # noqa: E402

from pytest_extractbench import ScoringOptions, StatsOptions, score_sample
from pytest_extractbench.analysis import catalog, stats
from pytest_extractbench.analysis.resampled import confidence_intervals, paired_deltas, sample_row  # noqa: E402

METRICS = catalog.resampled()
HEADLINE = catalog.names("headline")


def timed(fn: Callable[[], object], repeat: int) -> list[float]:
    timings = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        timings.append(time.perf_counter() - start)
    return timings


def plain_loop(scores: np.ndarray, resamples: int) -> tuple[float, float]:
    """The textbook percentile bootstrap, one resample per loop step: the reference the vectorized code beats."""
    means = [np.mean(np.random.choice(scores, size=len(scores), replace=True)) for _ in range(resamples)]
    return float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    options = ScoringOptions()
    rows = [
        sample_row(score_sample(out, gold, schema, options=options, sample_id=sid))
        for sid, gold, schema, out in make_workload(args.samples)
    ]
    # a second run of "the same model": the workload with another seed's perturbations
    other = [
        sample_row(score_sample(out, gold, schema, options=options, sample_id=sid))
        for sid, gold, schema, out in make_workload(args.samples, seed=1)
    ]
    eqs = np.array([row["eqs"] for row in rows])
    settings = StatsOptions(resamples=args.resamples)
    n, r = args.samples, args.resamples

    cases: list[tuple[str, Callable[[], object], int]] = [
        ("bootstrap CI of one mean (EQS)", lambda: stats.bootstrap_ci(eqs, resamples=r, rng=0), args.repeat),
        (
            f"CIs of all {len(METRICS)} metrics, one resampling",
            lambda: confidence_intervals(rows, settings, METRICS),
            args.repeat,
        ),
        (
            f"paired bootstrap + permutation, {len(HEADLINE)} metrics",
            lambda: paired_deltas(rows, other, settings, HEADLINE),
            args.repeat,
        ),
    ]
    try:
        from scipy.stats import bootstrap

        cases.append(
            (
                "scipy.stats.bootstrap, one mean (percentile)",
                lambda: bootstrap((eqs,), np.mean, n_resamples=r, method="percentile", rng=0),
                args.repeat,
            )
        )
    except ImportError:  # pragma: no cover
        pass
    cases.append(("plain loop (np.random.choice), one mean", lambda: plain_loop(eqs, r), 1))

    ci = stats.bootstrap_ci(eqs, resamples=r, rng=0)
    print(f"{n} samples x {r} resamples; EQS {ci.format()}")
    print()
    print(f"| {'measure':<48} | {'best s':>8} | {'median s':>8} |")
    print(f"|{'-' * 50}|{'-' * 10}|{'-' * 10}|")
    for label, fn, repeat in cases:
        timings = timed(fn, repeat)
        print(f"| {label:<48} | {min(timings):>8.3f} | {statistics.median(timings):>8.3f} |")


if __name__ == "__main__":
    main()
