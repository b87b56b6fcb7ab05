"""The run directory of one offline workload written by two versions of the code, compared file by file.

    git archive BASE | tar -x -C /tmp/base
    python benchmarks/compare_outputs.py --before /tmp/base --samples 10000

Writes ``bench_scale.py``'s workload (harsh by default) once, runs ``pytest --extractbench`` on it with each
version first on ``PYTHONPATH``, in the same folder and to the same output path (so paths agree), and compares
metrics.json, samples.jsonl, summary.md, the CSVs and report.html after the golden tests' normalisation
(timestamps, durations, library versions). Prints the files that differ and exits 1 if any does.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "tests" / "golden"))

from bench_scale import write_inputs  # noqa: E402
from test_golden_outputs import FILES, normalize  # noqa: E402

COMPARED = (*FILES, "report.html")
_CLOCK = re.compile(r"<time> \d\d:\d\d UTC")  # report.html's "generated" minute (the date is <time> already)
_CELL_DURATION = re.compile(r"(<td>(?:duration|duration_s|elapsed_s|wall_s)</td><td>)[\d.]+ ?s?(</td>)")


def run(code: Path, folder: Path, dataset: Path, predictions: Path, extra: list[str]) -> Path:
    output = folder / "run"
    shutil.rmtree(output, ignore_errors=True)
    env = {**os.environ, "PYTHONPATH": str(code)}
    argv = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-p", "no:randomly", "-q", "--extractbench"]
    argv += ["--extractbench-dataset", str(dataset), "--extractbench-predictions", str(predictions)]
    argv += ["--extractbench-output", str(output), "--extractbench-sla", "none", *extra]
    subprocess.run(argv, cwd=folder, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return output


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", type=Path, required=True, help="a checkout of the code to compare with")
    parser.add_argument("--after", type=Path, default=ROOT, help="the code compared (this checkout)")
    parser.add_argument("--samples", type=int, default=10000)
    parser.add_argument("--mode", choices=("harsh", "friendly"), default="harsh")
    parser.add_argument("--extra", default="", help="more pytest arguments, space-separated")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="compare-outputs-"))
    try:
        dataset, predictions = write_inputs(folder, args.samples, args.mode == "harsh")
        kept: dict[str, dict[str, str]] = {}
        for label, code in (("before", args.before), ("after", args.after)):
            output = run(code.resolve(), folder, dataset, predictions, args.extra.split())
            roots = (str(folder), str(code.resolve()))
            kept[label] = {
                name: _CELL_DURATION.sub(
                    r"\1<duration>\2",
                    _CLOCK.sub("<time> UTC", normalize(name, (output / name).read_text(encoding="utf-8"), roots)),
                )
                for name in COMPARED
                if (output / name).exists()
            }
        differ = [name for name in COMPARED if kept["before"].get(name) != kept["after"].get(name)]
        for name in COMPARED:
            state = "DIFFERS" if name in differ else "same"
            sizes = "/".join(str(len(kept[label].get(name) or "")) for label in ("before", "after"))
            print(f"{name}: {state} ({sizes} characters)")
            if name in differ:
                pairs = list(
                    zip((kept["before"].get(name) or "").splitlines(), (kept["after"].get(name) or "").splitlines())
                )
                print(f"  {sum(old != new for old, new in pairs)} line(s) differ")
                for line, (old, new) in enumerate(pairs, start=1):
                    if old != new:
                        at = next(i for i, (a, b) in enumerate(zip(old, new)) if a != b) if old[:1] else 0
                        print(
                            f"  line {line}: {old[max(0, at - 60) : at + 60]!r}\n       vs {new[max(0, at - 60) : at + 60]!r}"
                        )
                        break
        sys.exit(1 if differ else 0)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
