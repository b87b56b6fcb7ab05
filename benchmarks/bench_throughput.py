"""Throughput of `pytest --extractbench` against a bare asyncio client, on the same server, data and concurrency.

    python benchmarks/bench_throughput.py [--samples 208] [--delay 0.25] [--concurrency 8] [--repeat 3]

The server is tests/faultserver.py in its own process, answering every chat request with the
sample's gold JSON after a fixed ``--delay`` (a stand-in for a model that takes that long). The
dataset is the bundled one, repeated with unique texts up to ``--samples``. Each round runs
1. the bare client: ``openai.AsyncOpenAI`` with a semaphore of ``--concurrency``, sending the same
   messages and structured-output fields as the plugin and doing nothing else;
2. ``pytest --extractbench`` in a subprocess (``--extractbench-concurrency`` the same, no cache),
   which also scores every item, journals every response and writes the run directory.
Both are timed by the server, from the first chat request's arrival to the last answer sent, so
interpreter and pytest startup, collection and the session-end report do not count (the pytest
wall time, startup included, is printed too). Prints one row per round and the median ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pytest_extractbench.dataset import load_dataset  # noqa: E402
from pytest_extractbench.live.client import build_messages, structured_output_fields  # noqa: E402

# The server process: answers with the gold of the sample whose text is in the request,
# and reports (requests, first arrival, last answer) on "stats", forgetting them on "reset".
SERVER = r"""
import json, re, sys, threading, time
sys.path.insert(0, sys.argv[1])
from faultserver import Fault, FaultServer
gold = json.load(open(sys.argv[2]))
answered = []
lock = threading.Lock()
def answer(body):
    text = body["messages"][-1]["content"]
    ref = re.search(r"\[doc (\d+)\]", text).group(1)
    with lock:
        answered.append(time.monotonic())
    return gold[ref]
srv = FaultServer(default=Fault.ok(delay=float(sys.argv[3])), answer=answer).start()
print(srv.url, flush=True)
for line in sys.stdin:
    if line.strip() == "stats":
        with lock:
            print(json.dumps({"requests": len(srv.requests),
                              "seconds": (max(answered) - min(srv.received_at)) if answered else None}), flush=True)
    elif line.strip() == "reset":
        with lock:
            answered.clear()
        srv.reset()
        print("ok", flush=True)
srv.stop()
"""


def make_dataset(n: int, directory: Path) -> tuple[Path, Path, list[dict[str, Any]]]:
    """The bundled samples repeated up to n, each text tagged so the server can find its gold."""
    base = load_dataset("bundled").samples
    rows, gold = [], {}
    for i in range(n):
        sample = base[i % len(base)]
        rows.append(
            {
                "id": f"{sample.id}-{i}",
                "text": f"[doc {i}] {sample.text}",
                "schema": sample.schema,
                "expected": sample.expected,
            }
        )
        gold[str(i)] = sample.expected
    data, gold_file = directory / "data.jsonl", directory / "gold.json"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    gold_file.write_text(json.dumps(gold), encoding="utf-8")
    return data, gold_file, rows


class Server:
    def __init__(self, gold: Path, delay: float) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-c", SERVER, str(ROOT / "tests"), str(gold), str(delay)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        self.url = self.proc.stdout.readline().strip()

    def command(self, name: str) -> str:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(name + "\n")
        self.proc.stdin.flush()
        return self.proc.stdout.readline().strip()

    def stats(self) -> dict[str, Any]:
        return json.loads(self.command("stats"))

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=10)


async def bare_client(url: str, rows: list[dict[str, Any]], concurrency: int) -> None:
    import openai

    client = openai.AsyncOpenAI(
        base_url=url,
        api_key="none",
        max_retries=0,
        timeout=120,
        http_client=openai.DefaultAsyncHttpxClient(trust_env=False),
    )
    limit = asyncio.Semaphore(concurrency)
    # prompts built before the first request, so the loop does nothing but send
    requests = [
        (build_messages(row["text"], row["schema"]), structured_output_fields("json_schema", row["schema"]))
        for row in rows
    ]

    async def one(messages: Any, fields: dict[str, Any]) -> None:
        async with limit:
            await client.chat.completions.create(
                model="test-model", messages=messages, temperature=0.0, max_tokens=2048, seed=42, **fields
            )

    await asyncio.gather(*(one(messages, fields) for messages, fields in requests))
    await client.close()


def run_pytest(url: str, data: Path, concurrency: int, workdir: Path) -> float:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    started = time.perf_counter()
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:randomly",
            "-p",
            "no:xdist",
            "--extractbench",
            "--extractbench-dataset",
            str(data),
            "--extractbench-base-url",
            url,
            "--model",
            "test-model",
            "--extractbench-concurrency",
            str(concurrency),
            "--extractbench-no-cache",
            "--extractbench-sla",
            "none",
            "--extractbench-output",
            str(workdir / "out"),
        ],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode not in (0, 1):
        raise SystemExit(f"pytest failed ({result.returncode}):\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=208)
    parser.add_argument("--delay", type=float, default=0.25)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    ideal = args.samples / args.concurrency * args.delay
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        data, gold, rows = make_dataset(args.samples, workdir)
        server = Server(gold, args.delay)
        try:
            print(
                f"{args.samples} samples, {args.delay:g} s per request, concurrency {args.concurrency}; "
                f"ideal {ideal:.2f} s = {args.samples / ideal:.1f} req/s; load average {os.getloadavg()[0]:.1f}"
            )
            print(f"{'round':>5} | {'bare req/s':>10} | {'pytest req/s':>12} | {'ratio':>5} | {'pytest wall s':>13}")
            ratios = []
            for n in range(1, args.repeat + 1):
                server.command("reset")
                asyncio.run(bare_client(server.url, rows, args.concurrency))
                bare = server.stats()
                server.command("reset")
                wall = run_pytest(server.url, data, args.concurrency, workdir)
                plugin = server.stats()
                assert bare["requests"] == plugin["requests"] == args.samples, (bare, plugin)
                bare_rps, plugin_rps = args.samples / bare["seconds"], args.samples / plugin["seconds"]
                ratios.append(plugin_rps / bare_rps)
                print(f"{n:>5} | {bare_rps:>10.1f} | {plugin_rps:>12.1f} | {ratios[-1]:>5.3f} | {wall:>13.1f}")
            print(f"median ratio pytest / bare client: {statistics.median(ratios):.3f} (target >= 0.95)")
        finally:
            server.close()


if __name__ == "__main__":
    main()
