"""Speed and memory of the performance aggregation over one model's records.

    python benchmarks/bench_performance.py [--samples 10000] [--repeat 5]

Records are the scored synthetic workload (``workload.py``, not timed) with a simulated live
response each: log-normal latencies, token usage, 8 requests in flight, 2% timeouts, 1% truncated,
0.5% connection errors, 4% retried, 5% cached, text lengths and schema complexity in the metadata.
Prints a table: wall-clock seconds of ``performance_metrics`` (best and median), records per
second, peak traced memory of one aggregation, and the whole ``model_metrics`` for context.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
import tracemalloc
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from workload import make_workload  # noqa: E402

from pytest_extractbench import SampleRecord, ScoringOptions, model_metrics, score_sample  # noqa: E402
from pytest_extractbench.analysis.performance import Prices, performance_metrics  # noqa: E402
from pytest_extractbench.dataset.complexity import complexity_features  # noqa: E402
from pytest_extractbench.dataset.responses import ModelResponse  # noqa: E402


def simulated_response(rng: random.Random, output: str, clock: list[float]) -> ModelResponse:
    """One request of a server with 8 slots: the clock advances by a slot's share of each latency."""
    latency = rng.lognormvariate(-0.5, 0.6)
    started = clock[0]
    clock[0] += latency / 8
    prompt = 300 + rng.randrange(900)
    completion = len(output) // 4
    usage = {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}
    common = dict(
        latency_s=latency,
        started_at=started,
        finished_at=started + latency,
        usage=usage,
        attempts=2 if rng.random() < 0.04 else 1,
        cached=rng.random() < 0.05,
    )
    draw = rng.random()
    if draw < 0.02:
        return ModelResponse(error_class="timeout", error="timed out", **{**common, "attempts": 4, "usage": {}})
    if draw < 0.03:
        cut = output[: len(output) // 2]
        return ModelResponse(content=cut, error_class="truncated", finish_reason="length", **common)
    if draw < 0.035:
        return ModelResponse(error_class="connection", error="reset", **{**common, "usage": {}})
    return ModelResponse(content=output, finish_reason="stop", **common)


def build_records(n: int) -> list[SampleRecord]:
    rng = random.Random(7)
    clock = [1_700_000_000.0]
    options = ScoringOptions()
    complexity: dict[int, dict] = {}
    records = []
    for sample_id, gold, schema, output in make_workload(n):
        response = simulated_response(rng, output, clock)
        content = response.content if response.error_class is None else None
        score = score_sample(content, gold, schema, options=options, sample_id=sample_id)
        features = complexity.setdefault(id(schema), complexity_features(schema))
        meta = {"text_chars": 400 + rng.randrange(4000), "complexity": features}
        records.append(SampleRecord("m", sample_id, score, meta=meta, response=response.as_dict()))
    return records


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    records = build_records(args.samples)
    prices = Prices(0.0005, 0.0015)
    timings = []
    for _ in range(args.repeat):
        start = time.perf_counter()
        perf = performance_metrics(records, prices)
        timings.append(time.perf_counter() - start)
    tracemalloc.start()
    performance_metrics(records, prices)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    start = time.perf_counter()
    model_metrics(records, ScoringOptions())
    whole = time.perf_counter() - start

    rel, lat = perf["reliability"], perf["latency_ms"]
    print(
        f"{len(records)} records: {lat['count']} timed, p95 {lat['p95']:.0f} ms, success {rel['success_rate']:.3f}, "
        f"{perf['throughput']['requests_per_s']:.1f} req/s, cost ${perf['cost']['estimated_cost_usd']:.2f}"
    )
    print()
    print(f"| {'measure':<44} | {'value':>10} |")
    print(f"|{'-' * 46}|{'-' * 12}|")
    rows = [
        ("performance_metrics, best of %d, s" % args.repeat, f"{min(timings):.4f}"),
        ("performance_metrics, median, s", f"{statistics.median(timings):.4f}"),
        ("records per second (best)", f"{len(records) / min(timings):,.0f}"),
        ("peak traced memory of one aggregation, MiB", f"{peak / 2**20:.2f}"),
        ("whole model_metrics (all sections), s", f"{whole:.3f}"),
    ]
    for label, value in rows:
        print(f"| {label:<44} | {value:>10} |")


if __name__ == "__main__":
    main()
