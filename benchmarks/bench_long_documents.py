"""Long documents on the embedded server: the context chosen for them, llama-server's peak memory, the answers.

    python benchmarks/bench_long_documents.py [--sizes 5000,7500,10000] [--slots 4] [--max-tokens 256]

Writes NDA-style contracts of about that many tokens each (tests/longdocs.py, deterministic), runs
``pytest --extractbench`` on them in a subprocess against the embedded default model (no cache, a
long per-request timeout: prompt processing of thousands of tokens on a shared CPU is slow), and
prints one table from the run's metrics.json: the context per slot and the slot count the plugin
chose and why, the longest prompt as counted by the model's tokenizer, the estimated KV cache,
llama-server's peak resident memory (VmHWM, read by the plugin before it stops the server), how
many samples were answered, and the wall time.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from longdocs import write_dataset  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="5000,7500,10000", help="approximate tokens of each document")
    parser.add_argument("--slots", type=int, default=4)
    parser.add_argument("--max-tokens", type=int, default=256)
    parser.add_argument("--timeout", type=float, default=1800.0)
    args = parser.parse_args()
    sizes = {f"nda-{n}": int(n) for n in args.sizes.split(",")}
    with tempfile.TemporaryDirectory(prefix="bench-long-") as tmp:
        work = Path(tmp)
        write_dataset(work / "docs.jsonl", sizes)
        command = [sys.executable, "-m", "pytest", "-p", "no:randomly", "-p", "no:cacheprovider", "-q",
                   "--extractbench", "--extractbench-dataset", "docs.jsonl", "--extractbench-output", "out",
                   "--extractbench-sla", "none", "--extractbench-no-cache", "--extractbench-slots", str(args.slots),
                   "--extractbench-max-tokens", str(args.max_tokens),
                   "--extractbench-timeout", str(args.timeout)]  # fmt: skip
        started = time.perf_counter()
        result = subprocess.run(command, cwd=work, capture_output=True, text=True)
        wall = time.perf_counter() - started
        metrics_file = work / "out" / "metrics.json"
        if not metrics_file.is_file():
            sys.exit(f"no metrics.json; pytest said:\n{result.stdout[-3000:]}\n{result.stderr[-2000:]}")
        document = json.loads(metrics_file.read_text())
    live = document["run"]["live"]
    for model, facts in live["embedded"].items():
        plan = facts["context"]
        perf = document["models"][model]["performance"]
        rel = perf["reliability"]
        answered = (
            rel["outcome_counts"]["valid"]
            + rel["outcome_counts"]["parse_failure"]
            + rel["outcome_counts"]["schema_failure"]
        )
        rows = [
            ("model", model),
            ("documents (approx. tokens)", ", ".join(str(n) for n in sizes.values())),
            ("longest prompt, counted", f"{plan['longest_prompt_tokens']} tokens ({plan['longest_prompt_sample']})"),
            ("context per slot x slots", f"{plan['ctx_per_slot']} x {plan['slots']}"),
            ("why", plan["reason"]),
            ("trained context", plan["trained_context"]),
            ("KV cache estimate (upper bound)", f"{plan['kv_cache_bytes'] / 2**20:.0f} MB"),
            ("llama-server peak RSS (VmHWM)", f"{(facts.get('peak_rss_bytes') or 0) / 2**20:.0f} MB"),
            ("answered / samples", f"{answered} / {len(sizes)}"),
            ("errors", ", ".join(f"{k} {v}" for k, v in rel["error_counts"].items() if v) or "none"),
            ("mean prompt tokens (server usage)", f"{perf['tokens']['prompt']['mean']}"),
            ("p50 latency", f"{perf['latency_ms']['p50'] / 1000:.1f} s" if perf["latency_ms"]["p50"] else "-"),
            ("wall time, pytest", f"{wall:.0f} s"),
        ]
        width = max(len(k) for k, _ in rows)
        for key, value in rows:
            print(f"| {key:<{width}} | {value} |")


if __name__ == "__main__":
    main()
