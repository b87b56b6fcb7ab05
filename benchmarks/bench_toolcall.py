"""Tool-call scoring speed on the public BFCL files (read from ../shared/data, never copied here).

    python benchmarks/bench_toolcall.py [--data ../shared/data/bfcl_tool_calls] [--repeat 3]

Every row of every BFCL file is scored twice: with its gold as the prediction (first
acceptable value of each parameter; parallel calls reversed, so the order-free matching
has work to do) and with a deterministic error (one argument dropped or changed, or a
call left out). Scoring = reading the output text into calls, validating each call's
arguments against the function's parameter schema, matching calls with
``linear_sum_assignment`` and counting arguments. Prints samples/s per file and in total,
the accuracy of both prediction sets (1.0 and well below it; an error on an optional or
free-form argument can still be acceptable) and the valid call rate of the gold calls (how many
gold argument sets the translated parameter schemas accept).
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path
from typing import Any

from pytest_extractbench.dataset.responses import ModelResponse
from pytest_extractbench.tracks.toolcall import ToolCallTrack

DEFAULT_DATA = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "bfcl_tool_calls"


def concrete(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: first(v) if isinstance(v, list) else concrete(v)
            for k, v in value.items()
            if not isinstance(v, list) or any(x != "" for x in v)
        }
    if isinstance(value, list):
        return [concrete(v) for v in value]
    return value


def first(options: list) -> Any:
    return concrete(next(o for o in options if o != ""))


def predictions(gold: list, rng: random.Random) -> tuple[str, str]:
    """(perfect output, output with one error) as model text."""
    calls = [
        {"name": name, "arguments": {k: first(v) for k, v in params.items() if any(x != "" for x in v)}}
        for entry in gold
        for name, params in entry.items()
    ][::-1]
    if not calls:
        return "I cannot help with that.", json.dumps([{"name": "unrelated", "arguments": {}}])
    wrong = json.loads(json.dumps(calls))
    target = rng.choice(wrong)
    if len(wrong) > 1 and rng.random() < 0.3:
        wrong.remove(target)
    elif target["arguments"]:
        key = rng.choice(sorted(target["arguments"]))
        if rng.random() < 0.5:
            del target["arguments"][key]
        else:
            target["arguments"][key] = "wrong value"
    else:
        target["name"] += "_x"
    return json.dumps(calls), json.dumps(wrong)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    track = ToolCallTrack()
    rng = random.Random(8)
    rows = []
    total_samples = total_calls = 0
    total_best = 0.0
    for path in sorted(args.data.glob("bfcl_v4_*.jsonl")):
        load_start = time.perf_counter()
        dataset = track.load(str(path))
        load_s = time.perf_counter() - load_start
        outputs = [(s, *predictions(s.expected, rng)) for s in dataset.samples]
        best = float("inf")
        for _ in range(args.repeat):
            start = time.perf_counter()
            results = []
            for sample, perfect, wrong in outputs:
                for text in (perfect, wrong):
                    prediction = track.read_response(sample, ModelResponse(content=text))
                    results.append(track.score(sample, prediction))
            best = min(best, time.perf_counter() - start)
        perfect_acc = track.aggregate(results[0::2])["accuracy"]
        wrong_acc = track.aggregate(results[1::2])["accuracy"]
        valid_gold = track.aggregate(results[0::2])["valid_call_rate"]
        scored = 2 * len(outputs)
        calls = sum(r["calls"] for r in results)
        total_samples, total_calls, total_best = total_samples + scored, total_calls + calls, total_best + best
        rows.append(
            (
                path.stem.removeprefix("bfcl_v4_"),
                len(dataset.samples),
                len(dataset.problems),
                load_s,
                scored,
                calls,
                scored / best,
                1e6 * best / scored,
                perfect_acc,
                wrong_acc,
                valid_gold,
            )
        )
    print(
        f"{'file':<24} {'rows':>5} {'bad':>4} {'load s':>7} {'scored':>7} {'calls':>6} {'samples/s':>10} "
        f"{'us/sample':>10} {'acc gold':>9} {'acc err':>8} {'valid gold':>10}"
    )
    for name, n, bad, load_s, scored, calls, rate, us, acc_gold, acc_err, valid in rows:
        valid_text = "-" if valid is None else f"{valid:.3f}"
        print(
            f"{name:<24} {n:>5} {bad:>4} {load_s:>7.3f} {scored:>7} {calls:>6} {rate:>10,.0f} {us:>10.1f} "
            f"{acc_gold:>9.3f} {acc_err:>8.3f} {valid_text:>10}"
        )
    print(
        f"{'total':<24} {total_samples // 2:>5} {'':>4} {'':>7} {total_samples:>7} {total_calls:>6} "
        f"{total_samples / total_best:>10,.0f} {1e6 * total_best / total_samples:>10.1f}"
    )


if __name__ == "__main__":
    main()
