"""Cost of hostile inputs to scoring and reading: each case must stay near-linear and bounded.

    python benchmarks/bench_hostile.py [--keys 10000] [--text-mb 2]

Prints a table of wall and CPU seconds for one item each:

- spurious keys: an output with KEYS keys the gold lacks, scored against a TEXT-MB document
  (score_sample + the per-sample diagnostics, whose hallucination typing searches the text);
- catastrophic regex: ``^(a+)+$`` and a backreference pattern against 41 and 5,000 characters;
- deep JSON: an output nested 990 and 100,000 levels deep (refused with a message);
- dataset reading: a JSONL file with a 50 MB line that is not JSON (skipped, never echoed).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pytest_extractbench.analysis.diagnostics import sample_diagnostics  # noqa: E402
from pytest_extractbench.dataset.samples import iter_rows  # noqa: E402
from pytest_extractbench.scoring import score_sample  # noqa: E402


def timed(fn):  # type: ignore[no-untyped-def]
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn()
    return time.perf_counter() - wall, time.process_time() - cpu, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--keys", type=int, default=10_000)
    parser.add_argument("--text-mb", type=float, default=2.0)
    args = parser.parse_args()

    rows: list[tuple[str, float, float, str]] = []
    words = [f"word{i}" for i in range(int(args.text_mb * 1024 * 1024 / 10))]
    text = " ".join(words)
    gold = {"name": "word1"}
    # absent values that share a prefix with every word of the text: a regex scan tries each position
    output = {f"key{i}": (f"word{i * 7}" if i % 2 else f"word{i}x") for i in range(args.keys)}

    def spurious() -> str:
        score = score_sample(output, gold, {"type": "object"})
        types = sample_diagnostics(score, text, gold, output)["hallucination_types"]
        return f"{len(types)} spurious fields typed"

    wall, cpu, note = timed(spurious)
    rows.append((f"{args.keys:,} spurious keys vs {len(text) / 1e6:.1f} MB text", wall, cpu, note))

    for pattern in ("^(a+)+$", r"(a|aa)+\1b"):
        schema = {"type": "object", "properties": {"code": {"type": "string", "pattern": pattern}}}
        for length in (41, 5000):
            value = {"code": "a" * length + "!"}
            wall, cpu, score = timed(lambda: score_sample(value, {"code": "x"}, schema))
            rows.append(
                (f"pattern {pattern} vs {length} chars", wall, cpu, (score.validation_errors or ["valid"])[0][:60])
            )

    for depth in (990, 100_000):
        raw = '{"a": ' + "[" * depth + "]" * depth + "}"
        wall, cpu, score = timed(lambda: score_sample(raw, {"a": []}, None))
        rows.append((f"output nested {depth:,} deep", wall, cpu, str(score.parse_error)[:60]))

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "data.jsonl"
        with path.open("wb") as handle:
            handle.write(b'{"id": "junk", "text": "' + b"A" * 50_000_000 + b'", oops}\n')
            handle.write(json.dumps({"id": "ok", "text": "t", "schema": {}, "expected": {}}).encode() + b"\n")
        wall, cpu, found = timed(lambda: list(iter_rows(path)))
        rows.append(("JSONL with a 50 MB bad line", wall, cpu, str(found[0][1])[:60]))

    print(f"| {'case':<44} | {'wall s':>7} | {'cpu s':>7} | result |")
    print(f"|{'-' * 46}|{'-' * 9}:|{'-' * 9}:|---|")
    for name, wall, cpu, note in rows:
        print(f"| {name:<44} | {wall:7.3f} | {cpu:7.3f} | {note} |")


if __name__ == "__main__":
    main()
