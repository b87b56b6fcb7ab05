"""Where a harsh sample's scoring time goes, stage by stage, on the path this process runs (pure or compiled).

    python benchmarks/bench_stages.py [--workload DIR] [--samples 3000] [--repeats 5] [--align ordered|hungarian]
    EXTRACTBENCH_PURE=1 python benchmarks/bench_stages.py ...

cProfile cannot see inside compiled functions, so each stage of ``score_sample`` is timed on its own over the
same samples (CPU µs a sample, best of ``--repeats`` passes): parsing the raw output, schema validation
(jsonschema-rs: the verdict alone, and listing every error), the field walk, building the ``SampleScore`` from the
walk's fields (counts, P/R/F1, EQS), ``score_sample`` whole (the walk plus parsing, validation, rules and building
the score) with nothing read and with its metrics and validation errors read (what a pytest run reads, but ANLS*:
an invalid output's errors are listed at their first read), and ANLS* read from it. A checkout from before the
verdict runs too (``PYTHONPATH`` at it), without the verdict stage. The workload is the shared harsh one (``shared/bench/make_workload.py``), as in
``bench_side_by_side.py``.
"""

from __future__ import annotations

import argparse
import copy
import gc
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pytest_extractbench import ScoringOptions, score_sample
from pytest_extractbench.scoring import ABSENT, compile_rules, compiled, parse_output, validation_errors
from pytest_extractbench.scoring.anls_walk import anls_star_by_key
from pytest_extractbench.scoring.fields import FieldWalker
from pytest_extractbench.scoring.result import SampleScore

try:
    from pytest_extractbench.scoring.schema import validity
except ImportError:  # a checkout from before the verdict
    validity = None

GENERATOR = Path(__file__).resolve().parents[2] / "shared" / "bench" / "make_workload.py"


def best(passes: int, work: Callable[[], object], count: int) -> float:
    """CPU µs per sample of the fastest pass."""
    times = []
    for _ in range(passes):
        start = time.process_time()
        work()
        times.append(time.process_time() - start)
    return min(times) / count * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", type=Path, help="a directory with dataset.jsonl and predictions.jsonl")
    parser.add_argument("--samples", type=int, default=3000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--align", choices=("ordered", "hungarian"), default="ordered")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        directory = args.workload
        if directory is None:
            directory = Path(scratch)
            subprocess.run(
                [sys.executable, str(GENERATOR), str(args.samples), scratch], check=True, stdout=subprocess.DEVNULL
            )
        rows = [json.loads(line) for line in (directory / "dataset.jsonl").read_text().splitlines()]
        outputs = {
            row["id"]: row["output"]
            for row in map(json.loads, (directory / "predictions.jsonl").read_text().splitlines())
        }
    schema: dict[str, Any] = copy.deepcopy(rows[0]["schema"])
    if args.align == "hungarian":
        for key in ("items", "tags"):
            schema["properties"][key]["x-eval-align"] = "hungarian"
    options = ScoringOptions()
    work = [(row["expected"], outputs[row["id"]]) for row in rows]
    parsed = [parse_output(output) for _, output in work]
    # what score_sample walks and ANLS* reads for an output with no JSON: nothing (ABSENT), an empty object
    values = [p.value if p.json_valid else ABSENT for p in parsed]
    found = [p.value if p.json_valid else {} for p in parsed]
    node = compile_rules(schema).root
    walker = FieldWalker(options)
    walked = [walker.walk(gold, v, node) for (gold, _), v in zip(work, values)]
    valid = [p.json_valid and not validation_errors(v, schema) for p, v in zip(parsed, values)]
    gc.collect()
    gc.freeze()
    count = len(work)
    stages = {
        "parse": lambda: [parse_output(output) for _, output in work],
        "validate": lambda: [validation_errors(v, schema) for p, v in zip(parsed, values) if p.json_valid],
        "walk": lambda: [walker.walk(gold, v, node) for (gold, _), v in zip(work, values)],
        "SampleScore": lambda: [
            SampleScore(
                sample_id="",
                json_valid=p.json_valid,
                schema_valid=ok,
                parse_error=p.error,
                validation_errors=(),
                fields=fields,
                options=options,
            )
            for p, ok, fields in zip(parsed, valid, walked)
        ],
        "score_sample": lambda: [score_sample(output, gold, schema, options=options) for gold, output in work],
        "score, read": lambda: [_read(score_sample(output, gold, schema, options=options)) for gold, output in work],
        "ANLS*": lambda: [anls_star_by_key(gold, v) for (gold, _), v in zip(work, found)],
    }
    if validity is not None:  # jsonschema-rs's verdict alone, beside the listing
        verdict = validity
        stages = dict(stages)
        listing = stages.pop("validate")
        rest = {name: stages.pop(name) for name in list(stages) if name != "parse"}
        stages["verdict"] = lambda: [verdict(v, schema) for p, v in zip(parsed, values) if p.json_valid]
        stages["validate"] = listing
        stages.update(rest)
    print(f"{compiled.STATUS[1]}; {count} samples, {args.align}, CPU µs a sample (best of {args.repeats})")
    for name, stage in stages.items():
        print(f"{name:>13}: {best(args.repeats, stage, count):8.1f}")


def _read(score: SampleScore) -> object:
    """What a pytest run reads of a score besides ANLS*: its metrics and its validation errors."""
    return score.eqs, score.validation_errors


if __name__ == "__main__":
    main()
