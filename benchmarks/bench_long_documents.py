"""Long documents on the embedded server: the context chosen for them, llama-server's peak memory, the answers.

    python benchmarks/bench_long_documents.py [--sizes 5000,7500,10000] [--slots 4] [--max-tokens 256]
        [--timeout SECONDS|default] [--busy N]

The twelve-contract run (the four longest first, the plugin's own timeout, slots and prompt budget):

    python benchmarks/bench_long_documents.py --sizes 12000,11000,10000,9000,8000,7500,7000,6500,6000,5500,5000,5000 \
        --slots default --timeout default [--busy 2]

Writes NDA-style contracts of about that many tokens each (tests/longdocs.py, deterministic), runs
``pytest --extractbench`` on them in a subprocess against the embedded default model (no cache, a
long per-request timeout: prompt processing of thousands of tokens on a shared CPU is slow), and
prints one table from the run's metrics.json: the context per slot and the slot count the plugin
chose and why, the longest prompt as counted by the model's tokenizer, the estimated KV cache,
llama-server's peak resident memory (VmHWM, read by the plugin before it stops the server), how
many samples were answered, the attempts (and how many timed out), end-to-end latency (first attempt
to answer) and the wall time. ``--busy N`` keeps N processes spinning on the CPU for the whole run,
as a machine shared with other jobs would be.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from pytest_runs import extractbench_command  # noqa: E402  (a sibling module of this script)

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from longdocs import write_dataset  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="5000,7500,10000", help="approximate tokens of each document")
    parser.add_argument("--slots", default="4", help="slots of the server, or 'default' for the plugin's")
    parser.add_argument("--max-tokens", type=int, default=256)
    parser.add_argument("--timeout", default="1800", help="seconds per attempt, or 'default' for the plugin's")
    parser.add_argument("--busy", type=int, default=0, help="processes kept busy on the CPU during the run")
    args = parser.parse_args()
    sizes = {f"nda-{i:02d}-{n}": int(n) for i, n in enumerate(args.sizes.split(","), 1)}
    with tempfile.TemporaryDirectory(prefix="bench-long-") as tmp:
        work = Path(tmp)
        write_dataset(work / "docs.jsonl", sizes)
        command = extractbench_command(
            "docs.jsonl",
            "out",
            "--extractbench-sla",
            "none",
            "--extractbench-no-cache",
            "--extractbench-max-tokens",
            str(args.max_tokens),
        )
        if args.slots != "default":
            command += ["--extractbench-slots", args.slots]
        if args.timeout != "default":
            command += ["--extractbench-timeout", args.timeout]
        spinners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.busy)]
        try:
            load_before = os.getloadavg()[0]
            started = time.perf_counter()
            result = subprocess.run(command, cwd=work, capture_output=True, text=True)
            wall = time.perf_counter() - started
            load_after = os.getloadavg()[0]
        finally:
            for spinner in spinners:
                spinner.kill()
                spinner.wait()
        metrics_file = work / "out" / "metrics.json"
        if not metrics_file.is_file():
            sys.exit(f"no metrics.json; pytest said:\n{result.stdout[-3000:]}\n{result.stderr[-2000:]}")
        document = json.loads(metrics_file.read_text())
        print("\n".join(result.stdout.splitlines()[-30:]))
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
            ("mean prompt tokens (server usage)", f"{perf['tokens']['prompt']['mean'] or 0:,.0f}"),
            (
                "attempts (timed out, other errors)",
                f"{rel['attempts_counted']} ({rel['attempt_timeouts']}, {rel['attempt_errors']})",
            ),
            (
                "end to end p50 / p95 / max",
                " / ".join(_seconds(perf["end_to_end_ms"].get(k)) for k in ("p50", "p95", "max")),
            ),
            ("prompt budget: speed, held, longest wait", _budget(live, model)),
            ("attempts given longer than the timeout", _stretched(live, model)),
            ("busy processes beside it", str(args.busy)),
            ("load average, 1 min, at start / end", f"{load_before:.1f} / {load_after:.1f}"),
            ("wall time, pytest", f"{wall:.0f} s"),
        ]
        width = max(len(k) for k, _ in rows)
        for key, value in rows:
            print(f"| {key:<{width}} | {value} |")


def _budget(live: dict, model: str) -> str:
    found = ((live.get("prompt_budget") or {}).get("by_model") or {}).get(model) or {}
    return (
        f"{found.get('prompt_tokens_per_s')} tokens/s, {found.get('held', 0)} held, "
        f"up to {found.get('longest_wait_s', 0):,.0f} s"
    )


def _stretched(live: dict, model: str) -> str:
    found = ((live.get("prompt_budget") or {}).get("by_model") or {}).get(model) or {}
    if not found.get("stretched_attempts"):
        return "0"
    return f"{found['stretched_attempts']} (up to {found['longest_attempt_timeout_s']:.0f} s)"


def _seconds(ms: float | None) -> str:
    return "-" if ms is None else f"{ms / 1000:.0f} s"


if __name__ == "__main__":
    main()
