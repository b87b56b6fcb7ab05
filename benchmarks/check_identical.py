"""Every scoring result of a set of workloads as one digest per workload, to compare two versions of the code.

    PYTHONPATH=/path/to/main python benchmarks/check_identical.py dump before.json [--samples 10000]
    python benchmarks/check_identical.py dump after.json [--samples 10000]
    python benchmarks/check_identical.py compare before.json after.json

The same two dumps with ``EXTRACTBENCH_PURE=1`` and without compare the compiled scoring core with the pure one.

A speed-up of the scoring core must not change a single result. Each workload's ``SampleScore.as_dict()``
(every field result, count and metric, ANLS* and its per-key scores included), its repr and the per-sample
diagnostics are serialized with ``repr`` floats and hashed, one digest per sample, so ``compare`` names the
first sample that differs. Workloads: ``benchmarks/workload.py`` default and harsh, ordered and Hungarian on
every array, plus the shared harsh generator (``shared/bench/make_workload.py``) ordered and Hungarian when
it sits beside the repository.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from workload import make_workload  # noqa: E402

from pytest_extractbench import ScoringOptions, score_sample  # noqa: E402
from pytest_extractbench.analysis.diagnostics import sample_diagnostics  # noqa: E402

GENERATOR = Path(__file__).resolve().parents[2] / "shared" / "bench" / "make_workload.py"


def shared_harsh(samples: int, align: str | None) -> list[tuple[str, Any, Any, str]]:
    """The shared generator's workload (written to a scratch folder by the generator itself) as rows."""
    with tempfile.TemporaryDirectory() as scratch:
        subprocess.run([sys.executable, str(GENERATOR), str(samples), scratch], check=True, stdout=subprocess.DEVNULL)
        rows = [json.loads(line) for line in (Path(scratch) / "dataset.jsonl").read_text().splitlines()]
        outputs = [
            json.loads(line)["output"] for line in (Path(scratch) / "predictions.jsonl").read_text().splitlines()
        ]
    schema = copy.deepcopy(rows[0]["schema"])
    if align:
        for key in ("items", "tags"):
            schema["properties"][key]["x-eval-align"] = align
    return [(row["id"], row["expected"], schema, output) for row, output in zip(rows, outputs)]


def workloads(samples: int) -> dict[str, list[tuple[str, Any, Any, str]]]:
    found = {
        f"{kind}-{align or 'ordered'}": make_workload(samples, align=align, harsh=kind == "harsh")
        for kind in ("default", "harsh")
        for align in (None, "hungarian")
    }
    if GENERATOR.exists():
        for align in (None, "hungarian"):
            found[f"shared-harsh-{align or 'ordered'}"] = shared_harsh(samples, align)
    return found


def digest(rows: list[tuple[str, Any, Any, str]], options: ScoringOptions) -> list[str]:
    out = []
    for sid, gold, schema, output in rows:
        score = score_sample(output, gold, schema, options=options, sample_id=sid)
        text = repr((score.as_dict(), repr(score), sample_diagnostics(score, None, gold, output, schema, options)))
        out.append(hashlib.sha256(text.encode()).hexdigest()[:16])
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    dump = sub.add_parser("dump")
    dump.add_argument("out", type=Path)
    dump.add_argument("--samples", type=int, default=10_000)
    compare = sub.add_parser("compare")
    compare.add_argument("before", type=Path)
    compare.add_argument("after", type=Path)
    args = parser.parse_args()
    if args.command == "dump":
        options = {"defaults": ScoringOptions(), "lenient": ScoringOptions(null_equals_absent=False)}
        result = {
            f"{name}/{label}": digest(rows, option)
            for name, rows in workloads(args.samples).items()
            for label, option in options.items()
        }
        args.out.write_text(json.dumps(result))
        print(f"{sum(map(len, result.values()))} samples in {len(result)} workloads written to {args.out}")
        try:  # pure or compiled (EXTRACTBENCH_PURE=1 against a build: docs/development.md)
            from pytest_extractbench.scoring.compiled import STATUS

            print(STATUS[1])
        except ImportError:  # a checkout from before the compiled build
            print("pure Python")
        return
    before, after = json.loads(args.before.read_text()), json.loads(args.after.read_text())
    bad = 0
    for name in sorted(set(before) | set(after)):
        a, b = before.get(name), after.get(name)
        if a == b:
            print(f"{name}: {len(a or [])} samples identical")
            continue
        bad += 1
        if a is None or b is None or len(a) != len(b):
            print(f"{name}: missing or different length")
            continue
        first = next(i for i, (x, y) in enumerate(zip(a, b)) if x != y)
        print(f"{name}: {sum(x != y for x, y in zip(a, b))} samples differ, first at index {first}")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
