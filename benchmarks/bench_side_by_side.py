"""Scoring throughput of this project beside struct-extract-eval, measured in one session on one machine.

    python benchmarks/bench_side_by_side.py [--samples 3000] [--repeats 7] [--align ordered|hungarian|both]
                                            [--peer-python PATH] [--workload DIR] [--anls lazy|read|both]
                                            [--baseline DIR] [--paths pure,compiled]

A ratio between two libraries means something only when both ran on the same machine at the same time:
this script alternates fresh processes of each (peer first, then ours, ``--repeats`` times) on the same
workload and prints every run and the median ratio. Each process times only the scoring call over all
samples after a warm-up on the first 200 (loading excluded for both; ``score_sample`` parses the raw text
itself, so our figure includes parsing, the peer's does not). ANLS*, which the peer does not compute, is computed
when a score's ``anls_star`` is first read: ``--anls read`` reads it in the timed loop, as a pytest run does (``both``:
one process of each a round). ``--baseline DIR`` measures another checkout of this project in the same rounds (a
worktree of main beside a branch), so a change is judged against the code it replaces on the same machine load.
``--paths pure,compiled`` measures this project's pure-Python modules (``EXTRACTBENCH_PURE=1``) and its compiled
build (``python -m pytest_extractbench.scoring.build_compiled``) in the same rounds, the baseline's too (each checkout
needs its own build); each process reports which it ran, and a column that asked for the compiled build and did not
get it stops the benchmark.

The peer is optional: give the python of a virtualenv where it is installed (``--peer-python``, or the
``EXTRACTBENCH_PEER_PYTHON`` environment variable). Install it from a clone of its repository
(FAIRmat-NFDI/extract-eval) with ``python3 -m venv PEERVENV && PEERVENV/bin/pip install CLONE``; it is not
on PyPI. Without it, only this project's figures are printed, with a line saying why.

The workload is the harsh one of ``shared/bench/make_workload.py`` (about 29 leaf fields a sample, ~2%
truncated JSON, ~89% schema-invalid outputs): pass ``--workload DIR`` holding its ``dataset.jsonl`` and
``predictions.jsonl``, or let the script make one with that generator when it sits at ``../shared/bench``
beside the repository.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GENERATOR = ROOT.parent / "shared" / "bench" / "make_workload.py"
WARM_UP = 200

# Both sides read the same files and time the same loop; only the scoring call differs.
_LOAD = r"""
import gc, json, sys, time
directory, align = sys.argv[1], sys.argv[2]
read_anls = len(sys.argv) > 3 and sys.argv[3] == "read"
rows = [json.loads(line) for line in open(directory + "/dataset.jsonl")]
outputs = {}
for line in open(directory + "/predictions.jsonl"):
    row = json.loads(line)
    outputs[row["id"]] = row["output"]
"""

PROJECT = (
    _LOAD
    + r"""
from pytest_extractbench import ScoringOptions, score_sample
schema = json.loads(json.dumps(rows[0]["schema"]))
if align == "hungarian":
    for key in ("items", "tags"):
        schema["properties"][key]["x-eval-align"] = "hungarian"
options = ScoringOptions()
try:
    from pytest_extractbench.scoring.compiled import active
except ImportError:  # a checkout from before the compiled build
    def active(): return False
work = [(row["id"], row["expected"], outputs[row["id"]]) for row in rows]
for sid, gold, output in work[:200]:
    score_sample(output, gold, schema, options=options, sample_id=sid).anls_star
gc.collect(); gc.freeze()
start = time.perf_counter()
if read_anls:
    for sid, gold, output in work:
        score_sample(output, gold, schema, options=options, sample_id=sid).anls_star
else:
    for sid, gold, output in work:
        score_sample(output, gold, schema, options=options, sample_id=sid)
print("compiled" if active() else "pure", len(work) / (time.perf_counter() - start))
"""
)

PEER = (
    _LOAD
    + r"""
import copy
from struct_extract_eval import annotate_xeval, evaluate
def as_object(text):
    try:
        value = json.loads(text)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}
schema = annotate_xeval(copy.deepcopy(rows[0]["schema"]))
if align == "hungarian":
    for key in ("items", "tags"):
        schema["properties"][key]["x-eval-align"] = {"match_by": "hungarian"}
gold = [row["expected"] for row in rows]
extracted = [as_object(outputs[row["id"]]) for row in rows]
evaluate(gold[:200], extracted[:200], schema)
start = time.perf_counter()
evaluate(gold, extracted, schema)
print(len(gold) / (time.perf_counter() - start))
"""
)


def samples_per_second(
    python: str,
    code: str,
    workload: Path,
    align: str,
    anls: str = "lazy",
    tree: Path | None = None,
    path: str | None = None,
) -> float:
    """One fresh process's figure (``tree``: the checkout of this project to import; ``path``: ``pure`` or
    ``compiled``, None for what the environment gives); a failed run stops the benchmark with the process's own
    error."""
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    if path is not None:
        env.pop("EXTRACTBENCH_PURE", None)
        if path == "pure":
            env["EXTRACTBENCH_PURE"] = "1"
    # ``python -c`` puts its working directory first on sys.path: it is the tree measured, or it would win
    done = subprocess.run(
        [python, "-c", code, str(workload), align, anls], capture_output=True, text=True, cwd=tree or ROOT, env=env
    )
    if done.returncode:
        sys.exit(f"{python} failed:\n{done.stderr[-2000:]}")
    words = done.stdout.split()
    if path is not None and words[-2] != path:
        sys.exit(f"asked for the {path} scoring core, the process ran the {words[-2]} one (a current build?)")
    return float(words[-1])


def peer_python(given: str | None) -> tuple[str | None, str]:
    """The peer's interpreter, or None with the reason it is skipped."""
    python = given or os.environ.get("EXTRACTBENCH_PEER_PYTHON")
    if not python:
        return None, "no --peer-python or EXTRACTBENCH_PEER_PYTHON given"
    probe = subprocess.run([python, "-c", "import struct_extract_eval"], capture_output=True, text=True)
    if probe.returncode:
        return None, f"struct_extract_eval does not import in {python}"
    return python, ""


def make_workload(samples: int, directory: Path) -> Path:
    if not GENERATOR.exists():
        sys.exit(f"no --workload given and no generator at {GENERATOR}")
    subprocess.run(
        [sys.executable, str(GENERATOR), str(samples), str(directory)], check=True, stdout=subprocess.DEVNULL
    )
    return directory


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=3000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--align", choices=("ordered", "hungarian", "both"), default="both")
    parser.add_argument("--peer-python", help="python of a virtualenv with struct-extract-eval installed")
    parser.add_argument("--workload", type=Path, help="a directory with dataset.jsonl and predictions.jsonl")
    parser.add_argument(
        "--anls",
        choices=("lazy", "read", "both"),
        default="lazy",
        help="read each score's ANLS* in the timed loop (a pytest run computes it for every item; "
        "default: not read, so not computed, as a caller of the field scores alone); both: a process of each a round",
    )
    parser.add_argument(
        "--paths",
        help="comma-separated: pure, compiled (this project's scoring core measured each way in the same rounds; "
        "default: what the environment gives)",
    )
    parser.add_argument(
        "--baseline",
        type=Path,
        help="another checkout of this project (a git worktree of main, say), measured in the same rounds",
    )
    args = parser.parse_args()

    peer, why_not = peer_python(args.peer_python)
    if peer is None:
        print(f"peer skipped: {why_not}; printing this project's figures only")
    modes = ("lazy", "read") if args.anls == "both" else (args.anls,)
    trees: list[tuple[str, Path | None]] = [("baseline", args.baseline)] if args.baseline else []
    trees.append(("project", ROOT))
    paths: list[str | None] = list(args.paths.split(",")) if args.paths else [None]
    columns = [
        (name if path is None else f"{name} {path}", tree, mode, path)
        for mode in modes
        for name, tree in trees
        for path in paths
    ]
    with tempfile.TemporaryDirectory() as scratch:
        workload = args.workload or make_workload(args.samples, Path(scratch))
        aligns = ("ordered", "hungarian") if args.align == "both" else (args.align,)
        rows = []
        for align in aligns:
            theirs: list[float] = []
            ours: dict[tuple[str, str], list[float]] = {(name, mode): [] for name, _, mode, _ in columns}
            for run in range(1, args.repeats + 1):
                if peer is not None:
                    theirs.append(samples_per_second(peer, PEER, workload, align))
                line = [f"peer {theirs[-1]:,.0f}/s"] if theirs else []
                for name, tree, mode, path in columns:
                    found = ours[name, mode]
                    found.append(samples_per_second(sys.executable, PROJECT, workload, align, mode, tree, path))
                    ratio = f" ({found[-1] / theirs[-1]:.2f}x)" if theirs else ""
                    line.append(f"{name} ANLS* {mode} {found[-1]:,.0f}/s{ratio}")
                load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
                print(f"{align} run {run}: {', '.join(line)}; load {load:.1f}", flush=True)
            for (name, mode), found in ours.items():
                ratios = [a / b for a, b in zip(found, theirs)]
                rows.append(
                    (
                        align,
                        f"{name}, ANLS* {mode}",
                        statistics.median(found),
                        statistics.median(theirs) if theirs else None,
                        statistics.median(ratios) if ratios else None,
                    )
                )

    print()
    print("| alignment | code | samples/s (median) | peer samples/s (median) | ratio to the peer (median of runs) |")
    print("|---|---|---:|---:|---:|")
    for align, name, ours_median, theirs_median, ratio in rows:
        theirs_text = f"{theirs_median:,.0f}" if theirs_median is not None else "-"
        ratio_text = f"{ratio:.2f}x" if ratio is not None else "-"
        print(f"| {align} | {name} | {ours_median:,.0f} | {theirs_text} | {ratio_text} |")


if __name__ == "__main__":
    main()
