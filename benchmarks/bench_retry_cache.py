"""A long prompt that times out and is retried: how much of it the retry reads again.

    python benchmarks/bench_retry_cache.py [--tokens 2500] [--model gemma3-270m] [--timeout-share 0.5]

Two ``pytest --extractbench`` runs in subprocesses, each on a fresh embedded llama-server (one slot), on one
NDA-style contract of about ``--tokens`` tokens (tests/longdocs.py, deterministic):

1. **cold**: a timeout long enough for the whole prompt: how long the server takes to read it;
2. **retried**: a timeout of ``--timeout-share`` of the cold run's prompt time, so the first attempt is given up
   mid-prompt, and two retries allowed.

llama-server keeps a slot's processed tokens in its prompt cache and gives a request the slot whose cache shares
the longest prefix with it (``cache_prompt``, on by default), so the retry should read only what the given-up
attempt had not. The table shows, from the runs' own responses.jsonl: attempts, the answering attempt's prompt
tokens read (``prompt_n``) and taken from the cache (``cache_n``), its prompt time, the end-to-end time, and what a
retry that read everything again would have cost (the timed-out attempt plus a cold read).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from pytest_runs import extractbench_command  # noqa: E402  (a sibling module of this script)

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from longdocs import write_dataset  # noqa: E402


def run(work: Path, out: str, model: str, timeout_s: float, retries: int) -> tuple[dict[str, Any], float]:
    command = extractbench_command(
        "docs.jsonl",
        out,
        "--model",
        model,
        "--extractbench-sla",
        "none",
        "--extractbench-slots",
        "1",
        "--extractbench-max-tokens",
        "64",
        "--extractbench-prompt-budget",
        "off",
        "--extractbench-timeout",
        f"{timeout_s:.1f}",
        "--extractbench-retries",
        str(retries),
    )
    started = time.perf_counter()
    result = subprocess.run(command, cwd=work, capture_output=True, text=True)
    wall = time.perf_counter() - started
    journal = work / out / "responses.jsonl"
    if not journal.is_file():
        sys.exit(f"no responses.jsonl; pytest said:\n{result.stdout[-3000:]}\n{result.stderr[-2000:]}")
    line = json.loads(journal.read_text(encoding="utf-8").splitlines()[-1])
    return line.get("response", line), wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tokens", type=int, default=2500, help="approximate tokens of the contract")
    parser.add_argument("--model", default="gemma3-270m")
    parser.add_argument("--timeout-share", type=float, default=0.5, help="retried run's timeout / cold prompt time")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-retry-") as tmp:
        work = Path(tmp)
        write_dataset(work / "docs.jsonl", {f"nda-{args.tokens}": args.tokens})
        cold, cold_wall = run(work, "cold", args.model, 3600.0, 0)
        cold_prompt_s = (cold.get("timings") or {}).get("prompt_ms", 0.0) / 1000
        if not cold_prompt_s:
            sys.exit(f"the cold run reported no prompt time: {cold.get('error_class')} {cold.get('error')}")
        timeout_s = max(5.0, args.timeout_share * cold_prompt_s)
        retried, retried_wall = run(work, "retried", args.model, timeout_s, 2)
    rows = []
    for name, response, wall in (("cold", cold, cold_wall), ("retried", retried, retried_wall)):
        timings = response.get("timings") or {}
        rows.append(
            (
                name,
                response.get("attempts"),
                response.get("error_class") or "ok",
                int(timings.get("prompt_n", 0)),
                int(timings.get("cache_n", 0)),
                timings.get("prompt_ms", 0.0) / 1000,
                response.get("end_to_end_s") or 0.0,
                wall,
            )
        )
    print(f"model {args.model}, one slot, contract of ~{args.tokens} tokens, retried run's timeout {timeout_s:.1f} s")
    print(
        f"{'run':<8} {'attempts':>8} {'outcome':>8} {'read':>6} {'cached':>6} {'prompt s':>9} {'end-to-end s':>12} "
        f"{'wall s':>7}"
    )
    for name, attempts, outcome, read, cached, prompt_s, e2e, wall in rows:
        print(
            f"{name:<8} {attempts!s:>8} {outcome:>8} {read:>6} {cached:>6} {prompt_s:>9.1f} {e2e:>12.1f} {wall:>7.1f}"
        )
    print(f"a retry reading the whole prompt again: about {timeout_s + cold_prompt_s:.1f} s end to end")


if __name__ == "__main__":
    main()
