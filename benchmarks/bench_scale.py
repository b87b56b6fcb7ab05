"""A whole offline run at scale against the pytest floor: time, peak memory, run-directory size.

    python benchmarks/bench_scale.py                          # 10,000 harsh samples
    python benchmarks/bench_scale.py --samples 1000,10000,100000 --mode harsh
    python benchmarks/bench_scale.py --samples 10000 --mode friendly

For each size it writes a dataset and a predictions file (``workload.py``; ``harsh``: about 90% of the
outputs truncated or schema-invalid, so about 90% of the items fail) into a temporary directory, then
runs two fresh pytest processes there and times each from start to exit:

- the floor: one test file with that many trivial parametrized tests (``pass``), plugin installed;
- the run: ``pytest --extractbench`` on the dataset with the predictions, SLA off, default terminal output.

Peak RSS is each child's own (``os.wait4``). The run's ``pytest_sessionfinish`` (where the plugin aggregates,
gates and writes the run directory) is timed by a conftest wrapper: the finish column, wall seconds and the
process's CPU seconds (steadier than wall time on a shared machine). Prints one table: seconds,
samples/s, ratio to the floor of the same size, peak RSS, finish seconds, run-directory and samples.jsonl sizes,
the terminal output's size in lines and the one-minute load average when the run ended (the machine may be shared).

``--phases`` adds where the run's memory peaks: a thread samples the run's RSS every 20 ms and keeps the
highest value of each phase: the items (collection and every item, up to ``pytest_sessionfinish``), the
aggregation (the finish up to the reports: metrics, gates, metrics.json and samples.jsonl) and the reports.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from workload import make_workload  # noqa: E402

FLOOR_TEST = """
import pytest

@pytest.mark.parametrize("i", range({n}))
def test_trivial(i):
    pass
"""


# outermost wrapper of pytest_sessionfinish: the plugin's finish (aggregation, gates, files, reports) inside it
FINISH_TIMER = """
import time
import pytest

@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_sessionfinish(session):
    started, cpu = time.perf_counter(), time.process_time()
    try:
        return (yield)
    finally:
        with open("finish_s", "w") as out:
            out.write(f"{time.perf_counter() - started} {time.process_time() - cpu}")
"""


# with --phases: the highest RSS of each phase of the run, sampled by a thread (see the module docstring)
PHASES = """
import os
import threading

from pytest_extractbench.report import outputs

_PAGE = os.sysconf("SC_PAGE_SIZE")
_PEAKS = {"items": 0, "aggregation": 0, "reports": 0, "after": 0}
_PHASE = ["items"]


def _sample():
    with open("/proc/self/statm") as statm:
        while True:
            statm.seek(0)
            rss = int(statm.read().split()[1]) * _PAGE
            _PEAKS[_PHASE[0]] = max(_PEAKS[_PHASE[0]], rss)
            threading.Event().wait(0.02)


threading.Thread(target=_sample, daemon=True).start()
_write_reports = outputs.write_reports


def _reports(*args, **kwargs):
    _PHASE[0] = "reports"
    try:
        return _write_reports(*args, **kwargs)
    finally:
        _PHASE[0] = "after"


outputs.write_reports = _reports


class _Phases:  # a plugin object: this conftest's own pytest_sessionfinish is the finish timer's
    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_sessionfinish(self, session):
        _PHASE[0] = "aggregation"
        try:
            return (yield)
        finally:
            threading.Event().wait(0.05)
            with open("phases", "w") as out:
                out.write(" ".join(str(_PEAKS[name]) for name in ("items", "aggregation", "reports")))


def pytest_configure(config):
    config.pluginmanager.register(_Phases(), "bench-scale-phases")
"""


def write_inputs(folder: Path, n: int, harsh: bool) -> tuple[Path, Path]:
    dataset, predictions = folder / "dataset.jsonl", folder / "predictions.jsonl"
    with dataset.open("w") as data, predictions.open("w") as preds:
        for sample_id, gold, schema, output in make_workload(n, harsh=harsh):
            text = "Extract the record. " + json.dumps(gold)
            data.write(json.dumps({"id": sample_id, "text": text, "schema": schema, "expected": gold}) + "\n")
            preds.write(json.dumps({"id": sample_id, "output": output}) + "\n")
    return dataset, predictions


def timed(argv: list[str], cwd: Path) -> tuple[float, int, int, str]:
    """Wall seconds, peak RSS in bytes, exit code and stdout of one child process."""
    started = time.perf_counter()
    with tempfile.TemporaryFile() as out:
        child = subprocess.Popen(argv, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - started
        out.seek(0)
        text = out.read().decode("utf-8", "replace")
    return wall, usage.ru_maxrss * 1024, child.returncode, text


def tree_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def run_argv(base: list[str], dataset: Path, predictions: Path, output: Path, extra: str) -> list[str]:
    """The benchmark run: ``pytest --extractbench`` on the dataset with the predictions, SLA off."""
    return [
        *base,
        "--extractbench",
        "--extractbench-dataset",
        str(dataset),
        "--extractbench-predictions",
        str(predictions),
        "--extractbench-output",
        str(output),
        "--extractbench-sla",
        "none",
        *extra.split(),
    ]


def warm_up(base: list[str], args: argparse.Namespace) -> None:
    """A small floor and run, not timed. In a new virtualenv the first process to import pytest, the plugin and
    their libraries compiles their bytecode (seen: a 10,000-item floor took 13.8 s first, 10.6 s after), which
    would otherwise land on the first timing, the floor's. (With PYTHONDONTWRITEBYTECODE set every process compiles
    again: unset it for timings, as .ci/run does.)"""
    folder = Path(tempfile.mkdtemp(prefix="bench-scale-warm-up-"))
    try:
        dataset, predictions = write_inputs(folder, 20, args.mode == "harsh")
        (folder / "test_floor.py").write_text(FLOOR_TEST.format(n=20))
        timed([*base, "-q", "test_floor.py"], folder)
        (folder / "test_floor.py").unlink()
        timed(run_argv(base, dataset, predictions, folder / "run", args.extra), folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", default="10000", help="comma-separated sizes")
    parser.add_argument("--mode", choices=("harsh", "friendly"), default="harsh")
    parser.add_argument("--extra", default="", help="more pytest arguments for the run, space-separated")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directories")
    parser.add_argument("--phases", action="store_true", help="peak RSS of the items, the aggregation, the reports")
    parser.add_argument("--no-floor", action="store_true", help="skip the floor (its columns show nan)")
    args = parser.parse_args()
    base = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly"]
    warm_up(base, args)
    rows = []
    for n in (int(s) for s in args.samples.split(",")):
        folder = Path(tempfile.mkdtemp(prefix=f"bench-scale-{n}-"))
        dataset, predictions = write_inputs(folder, n, args.mode == "harsh")
        (folder / "test_floor.py").write_text(FLOOR_TEST.format(n=n))
        floor = (float("nan"), 0, 0, "") if args.no_floor else timed([*base, "-q", "test_floor.py"], folder)
        (folder / "test_floor.py").unlink()
        output = folder / "run"
        (folder / "conftest.py").write_text(FINISH_TIMER + (PHASES if args.phases else ""))
        run = timed(run_argv(base, dataset, predictions, output, args.extra), folder)
        tail = [line for line in run[3].splitlines() if line.strip()][-1:]
        load = os.getloadavg()[0]
        finish, finish_cpu = (
            map(float, (folder / "finish_s").read_text().split())
            if (folder / "finish_s").is_file()
            else (float("nan"), float("nan"))
        )
        samples = output / "samples.jsonl"
        phases = (folder / "phases").read_text().split() if (folder / "phases").is_file() else []
        rows.append(
            (
                n,
                floor,
                run,
                tree_size(output) if output.exists() else 0,
                len(run[3].splitlines()),
                tail,
                samples.stat().st_size if samples.is_file() else 0,
                finish,
                finish_cpu,
                load,
                phases,
            )
        )
        print(
            f"{n}: floor {floor[0]:.1f} s, run {run[0]:.1f} s (finish {finish:.1f} s, {finish_cpu:.1f} s CPU), "
            f"exit {run[2]}, "
            f"load {load:.1f}; {tail[0] if tail else ''}",
            file=sys.stderr,
            flush=True,
        )
        if args.keep:
            print(f"kept {folder}", file=sys.stderr)
        else:
            shutil.rmtree(folder, ignore_errors=True)
    print(f"\nmode: {args.mode}; {os.cpu_count()} CPUs\n")
    print(
        "| samples | floor s | floor peak RSS MB | run s | samples/s | ratio to floor | run peak RSS MB | finish s (CPU s) "
        "| run directory MB | samples.jsonl MB | terminal lines | exit | load avg |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n, floor, run, size, lines, _tail, samples_size, finish, finish_cpu, load, _phases in rows:
        print(
            f"| {n:,} | {floor[0]:.1f} | {floor[1] / 2**20:.0f} | {run[0]:.1f} | {n / run[0]:,.0f} "
            f"| {run[0] / floor[0]:.2f} | {run[1] / 2**20:.0f} | {finish:.2f} ({finish_cpu:.2f}) | {size / 2**20:.1f} "
            f"| {samples_size / 2**20:.1f} | {lines:,} | {run[2]} | {load:.1f} |"
        )

    if args.phases:
        print("\n| samples | peak RSS MB: items | aggregation | reports |\n|---:|---:|---:|---:|")
        for n, *_, phases in rows:
            shown = " | ".join(f"{int(b) / 2**20:.0f}" for b in phases) if phases else "- | - | -"
            print(f"| {n:,} | {shown} |")


if __name__ == "__main__":
    main()
