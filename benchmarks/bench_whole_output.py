"""Whole-output scores on the bundled extraction set: what the LLM judge and the embeddings say, and what they cost.

The outputs judged are a predictions file (default: fixtures/predictions/demo.jsonl, and the weak model's
fixtures/predictions/weak.jsonl); the judge is an embedded model served by llama.cpp's server (default: the
embedded default model), the embeddings the bundled all-MiniLM-L6-v2. The judge cache is a fresh temporary
directory, so every grade is asked for. One row per predictions file:

    python benchmarks/bench_whole_output.py [--judge qwen2.5-coder-0.5b] [--sample N] [PREDICTIONS ...]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from pytest_extractbench import evaluate
from pytest_extractbench.live.backends.llama_models import DEFAULT_EMBEDDED_MODEL
from pytest_extractbench.live.backends.llama_process import EmbeddedServer

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "predictions",
        nargs="*",
        default=[str(ROOT / "fixtures/predictions/demo.jsonl"), str(ROOT / "fixtures/predictions/weak.jsonl")],
    )
    parser.add_argument("--judge", default=DEFAULT_EMBEDDED_MODEL)
    parser.add_argument("--sample", type=int, default=None)
    args = parser.parse_args()
    started = time.perf_counter()
    server = EmbeddedServer(model=args.judge).start()
    print(
        f"judge {args.judge} at {server.base_url} (started in {time.perf_counter() - started:.1f} s); "
        f"load average {os.getloadavg()[0]:.2f}"
    )
    print(
        "| outputs | samples | EQS | similarity [95% CI] | judge grade/7 [95% CI] | mean grade | judge requests "
        "| prompt tokens | completion tokens | judge s | embedding s | run s |"
    )
    print("|---|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---:|")
    try:
        for path in args.predictions:
            with tempfile.TemporaryDirectory() as tmp:
                clock = time.perf_counter()
                result = evaluate(
                    "bundled",
                    predictions=path,
                    output=Path(tmp) / "run",
                    rootdir=tmp,
                    sla="none",
                    semantic="local",
                    judge=args.judge,
                    judge_url=server.base_url,
                    sample=args.sample,
                )
                seconds = time.perf_counter() - clock
                metrics, cost = result.metrics["predictions"], result.document["whole_output_cost"]
                cis = metrics["confidence_intervals"]

                def with_ci(name: str) -> str:
                    ci = cis.get(name) or {}
                    nan = float("nan")
                    return f"{metrics.get(name, nan):.3f} [{ci.get('low', nan):.3f}, {ci.get('high', nan):.3f}]"

                print(
                    f"| {Path(path).name} | {metrics['num_samples']} | {metrics['extraction_quality_score']:.3f} "
                    f"| {with_ci('semantic_similarity')} | {with_ci('judge_score')} | {7 * metrics['judge_score']:.2f} "
                    f"| {cost['judge_requests']} | {cost['judge_prompt_tokens']:,} "
                    f"| {cost['judge_completion_tokens']:,} "
                    f"| {cost['judge_seconds']:.0f} | {cost['embedding_seconds']:.1f} | {seconds:.0f} |"
                )
    finally:
        server.stop()
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
