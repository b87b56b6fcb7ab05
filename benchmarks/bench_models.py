"""The embedded models on the bundled extraction set: quality, reliability, speed and memory, one table.

Each model runs the main job exactly as a user would (`pytest --extractbench --model NAME`, the
default structured output, default budget and timeout) in a subprocess; this script samples the
server process's peak RSS (VmHWM) from /proc while it runs and reads metrics.json and
responses.jsonl afterwards. The 1-minute load average before and after each run is printed: on a
shared machine, other work inflates the seconds (compare the models run back to back).

    python benchmarks/bench_models.py                        # every installed registered model
    python benchmarks/bench_models.py gemma3-270m smollm2-135m -- --extractbench-slots 2
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from pytest_extractbench.live.backends.llama_models import list_models

SERVER_MARKERS = ("llama-server", "extractbench-llama-server")


def _descends_from(pid: int, root: int) -> bool:
    for _ in range(16):
        if pid == root:
            return True
        try:
            pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return False
        if pid <= 1:
            return False
    return False


def _server_peak_rss_mb(root_pid: int, peaks: dict[int, float], cpu: dict[int, float], stop: threading.Event) -> None:
    """Poll the server processes; record each one's VmHWM (peak RSS) in MB and its CPU seconds so far."""
    tick = os.sysconf("SC_CLK_TCK")
    while not stop.wait(0.5):
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit() or not _descends_from(int(entry.name), root_pid):
                continue  # other people's servers on a shared machine are not ours to count
            try:
                cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                if not any(marker in cmdline for marker in SERVER_MARKERS) or "--model" not in cmdline:
                    continue
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                cpu[int(entry.name)] = (int(fields[11]) + int(fields[12])) / tick  # utime + stime
                for line in (entry / "status").read_text().splitlines():
                    if line.startswith("VmHWM:"):
                        peaks[int(entry.name)] = max(peaks.get(int(entry.name), 0.0), int(line.split()[1]) / 1024)
            except OSError:
                continue


def run_model(model: str, extra: list[str], workdir: Path) -> dict[str, Any]:
    out = workdir / model
    argv = [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "no:randomly",
        "-p",
        "no:cacheprovider",
        "-q",
        "--extractbench",
        "--model",
        model,
        "--extractbench-sla",
        "none",
        "--extractbench-output",
        str(out),
        *extra,
    ]
    load_before = os.getloadavg()[0]
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    peaks: dict[int, float] = {}
    cpu: dict[int, float] = {}
    stop = threading.Event()
    poller = threading.Thread(target=_server_peak_rss_mb, args=(proc.pid, peaks, cpu, stop), daemon=True)
    poller.start()
    output = proc.communicate()[0].decode(errors="replace")
    wall = time.perf_counter() - start
    stop.set()
    poller.join()
    metrics_path = out / "metrics.json"
    if not metrics_path.is_file():
        return {"model": model, "error": output[-2000:]}
    metrics = json.loads(metrics_path.read_text())["models"][model]
    responses = [json.loads(line)["response"] for line in (out / "responses.jsonl").read_text().splitlines()]
    classes = [r.get("error_class") for r in responses]
    perf = metrics.get("performance", {})
    completion = [r["usage"]["completion_tokens"] for r in responses if r.get("usage")]
    return {
        "model": model,
        "samples": metrics["num_samples"],
        "eqs": metrics["extraction_quality_score"],
        "validity": metrics["schema_validity_rate"],
        "f1": metrics["field_f1_partial"],
        "truncated": classes.count("truncated") / max(1, len(classes)),
        "timeouts": classes.count("timeout"),
        "errors": sum(1 for c in classes if c not in (None, "truncated")),
        "wall_s": wall,
        "s_per_sample": wall / max(1, metrics["num_samples"]),
        "p50_ms": perf.get("latency_ms", {}).get("p50"),
        "tokens_per_s": perf.get("throughput", {}).get("tokens_per_s"),
        "completion_mean": sum(completion) / max(1, len(completion)),
        "rss_mb": max(peaks.values(), default=float("nan")),
        # CPU seconds the server used: what a quiet machine needs, whatever else shared the cores
        "cpu_s": sum(cpu.values()),
        "load": (load_before, os.getloadavg()[0]),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("models", nargs="*", help="registered names or .gguf paths (default: every installed one)")
    args, extra = parser.parse_known_args()
    extra = [a for a in extra if a != "--"]
    models = args.models or [m.name for m in list_models(installed_only=True)]
    print(f"{os.cpu_count()} CPUs; load average before: {os.getloadavg()[0]:.2f}", flush=True)
    header = (
        f"| {'model':<20} | {'EQS':>5} | {'valid':>6} | {'F1':>5} | {'trunc':>6} | {'timeouts':>8} | "
        f"{'wall s':>7} | {'s/sample':>8} | {'p50 s':>6} | {'tok/s':>6} | {'compl. mean':>11} | "
        f"{'RSS MB':>6} | {'server CPU s':>12} | {'load 1m':>9} |"
    )
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-models-") as tmp:
        for model in models:
            result = run_model(model, extra, Path(tmp))
            rows.append(result)
            if "error" in result:
                print(f"{model}: the run wrote no metrics.json:\n{result['error']}", flush=True)
                continue
            print(f"{model}: done in {result['wall_s']:.0f} s", flush=True)
    print(header)
    print("|" + "|".join("-" * (len(cell) + 2) for cell in header.strip("|").split("|")[:-1] if cell) + "|")
    for r in rows:
        if "error" in r:
            continue
        print(
            f"| {r['model']:<20} | {r['eqs']:>5.3f} | {r['validity']:>6.1%} | {r['f1']:>5.3f} | "
            f"{r['truncated']:>6.1%} | {r['timeouts']:>8} | {r['wall_s']:>7.0f} | {r['s_per_sample']:>8.2f} | "
            f"{(r['p50_ms'] or 0) / 1000:>6.1f} | {r['tokens_per_s'] or 0:>6.1f} | {r['completion_mean']:>11.0f} | "
            f"{r['rss_mb']:>6.0f} | {r['cpu_s']:>12.0f} | "
            f"{r['load'][0]:>4.1f}-{r['load'][1]:<4.1f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
