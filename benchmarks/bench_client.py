"""Overhead of the request layer: ExtractionClient.extract vs a bare AsyncOpenAI client.

Both send the same N structured-output requests at the same concurrency to the same loopback
server (tests/faultserver.py, answering at once, or after --delay seconds to mimic generation),
alternating rounds. Prints requests/s of each and their ratio; the client should be near 1.0.

    python benchmarks/bench_client.py --requests 2000 --concurrency 32 --rounds 3
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from faultserver import Fault, FaultServer  # noqa: E402

from pytest_extractbench.live.client import (  # noqa: E402
    ClientConfig,
    ExtractionClient,
    build_messages,
    structured_output_fields,
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer"}, "city": {"type": "string"}},
    "required": ["name"],
}


async def _bounded(n: int, concurrency: int, one: Any) -> float:
    semaphore = asyncio.Semaphore(concurrency)

    async def job(k: int) -> None:
        async with semaphore:
            await one(k)

    t0 = time.perf_counter()
    await asyncio.gather(*(job(k) for k in range(n)))
    return n / (time.perf_counter() - t0)


async def bare(url: str, n: int, concurrency: int) -> float:
    import openai

    client = openai.AsyncOpenAI(
        base_url=url, api_key="x", max_retries=0, http_client=openai.DefaultAsyncHttpxClient(trust_env=False)
    )
    fields = structured_output_fields("json_schema", SCHEMA)

    async def one(k: int) -> None:
        response = await client.chat.completions.create(
            model="test-model",
            messages=build_messages(f"doc {k}", SCHEMA),
            temperature=0.0,
            max_tokens=2048,
            seed=42,
            **fields,
        )
        assert response.choices[0].message.content

    try:
        return await _bounded(n, concurrency, one)
    finally:
        await client.close()


async def ours(url: str, n: int, concurrency: int) -> float:
    async with ExtractionClient(ClientConfig(url)) as client:

        async def one(k: int) -> None:
            response = await client.extract("test-model", build_messages(f"doc {k}", SCHEMA), SCHEMA)
            assert response.ok, response.error

        return await _bounded(n, concurrency, one)


def _serve(delay: float, urls: Any, stop: Any) -> None:
    with FaultServer(default=Fault.ok(delay=delay)) as server:
        urls.put(server.url)
        stop.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--delay", type=float, default=0.0, help="server-side seconds per answer")
    args = parser.parse_args()
    results: dict[str, list[float]] = {"bare AsyncOpenAI": [], "ExtractionClient": []}
    # the server runs in its own process, so that its threads do not share the clients' GIL
    urls: Any = multiprocessing.Queue()
    stop = multiprocessing.Event()
    process = multiprocessing.Process(target=_serve, args=(args.delay, urls, stop), daemon=True)
    process.start()
    try:
        url = urls.get(timeout=30)
        asyncio.run(bare(url, min(200, args.requests), args.concurrency))  # warm-up
        for _ in range(args.rounds):
            results["bare AsyncOpenAI"].append(asyncio.run(bare(url, args.requests, args.concurrency)))
            results["ExtractionClient"].append(asyncio.run(ours(url, args.requests, args.concurrency)))
    finally:
        stop.set()
        process.join(timeout=10)
    print(
        f"{args.requests} requests, concurrency {args.concurrency}, server delay {args.delay:g}s, {args.rounds} rounds"
    )
    print(f"| {'client':<18} | {'median req/s':>12} | {'best req/s':>10} |")
    print(f"|{'-' * 20}|{'-' * 13}:|{'-' * 11}:|")
    for name, values in results.items():
        print(f"| {name:<18} | {statistics.median(values):>12,.0f} | {max(values):>10,.0f} |")
    ratio = statistics.median(results["ExtractionClient"]) / statistics.median(results["bare AsyncOpenAI"])
    print(f"ratio ExtractionClient / bare (median): {ratio:.3f}")


if __name__ == "__main__":
    main()
