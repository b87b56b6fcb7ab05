"""ANLS*: agreement with the reference package ``anls-star`` and the cost per sample of both, same cases, same run.

    python benchmarks/bench_anls.py [--samples 2000] [--generated 2000] [--repeat 3] [--seed 7]

Two sets of cases: the deterministic extraction workload (gold objects and their perturbed model outputs,
parsed; unparseable outputs left out) and seeded generated JSON (nested objects, lists, nulls, tuples of
alternatives in the gold, unicode text, predictions made from the gold by typos, dropped and invented keys and
elements, reordered lists). Prints, per set: cases, how many agree to 1e-9, the largest absolute difference,
the cases whose score depends on which of several equally good list pairings the solver returns (the package
uses munkres, we use scipy; counted when another choice of ours gives the package's value), and the process-time microseconds per case of each implementation (best of
``--repeat``, the two interleaved). Then the cost ANLS* adds to ``score_sample`` on the workload.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from workload import make_workload  # noqa: E402

from pytest_extractbench import score_sample  # noqa: E402
from pytest_extractbench.scoring import anls, anls_star  # noqa: E402
from pytest_extractbench.scoring import sample as sample_module  # noqa: E402

TEXTS = ["Acme", "ACME ", "acme inc", "Zürich", "東京", "naïve café", "", " ", "hello world", "12.50", "x"]
KEYS = ["a", "b", "c", "naïve", "日付"]


def _leaf(rng: random.Random) -> Any:
    kind = rng.randrange(6)
    if kind == 0:
        return None
    if kind == 1:
        return rng.random() < 0.5
    if kind == 2:
        return rng.randint(-1000, 1000)
    if kind == 3:
        return round(rng.uniform(-100, 100), rng.randint(0, 4))
    if kind == 4:
        return "".join(
            chr(rng.choice([rng.randint(32, 126), rng.randint(0xA0, 0x2FF), rng.randint(0x4E00, 0x4E40)]))
            for _ in range(rng.randint(0, 8))
        )
    return rng.choice(TEXTS)


def _gold(rng: random.Random, depth: int = 0, alternatives: bool = True) -> Any:
    kind = rng.randrange(6) if depth < 3 else 0
    if kind <= 1:
        return _leaf(rng)
    if kind == 2:
        return [_gold(rng, depth + 1, alternatives) for _ in range(rng.randint(0, 4))]
    if kind in (3, 4):
        return {k: _gold(rng, depth + 1, alternatives) for k in rng.sample(KEYS, rng.randint(0, 4))}
    if alternatives:
        return tuple(_gold(rng, depth + 1, alternatives) for _ in range(rng.randint(1, 2)))
    return _leaf(rng)


def _typo(rng: random.Random, text: str) -> str:
    chars = list(text.upper() if rng.random() < 0.2 else text)
    for _ in range(rng.randint(0, 2)):
        where = rng.randint(0, len(chars))
        if chars and rng.random() < 0.5:
            chars[min(where, len(chars) - 1)] = rng.choice(["", "x", "é", " "])
        else:
            chars.insert(where, rng.choice("abcxyz é"))
    return "".join(chars)


def _near(rng: random.Random, gold: Any) -> Any:
    if isinstance(gold, tuple):
        return _near(rng, rng.choice(gold))
    roll = rng.random()
    if roll < 0.05:
        return _gold(rng, 2, alternatives=False)
    if roll < 0.10:
        return rng.choice([None, "", [], {}])
    if isinstance(gold, dict):
        out = {k: _near(rng, v) for k, v in gold.items() if rng.random() > 0.2}
        if rng.random() < 0.3:
            out[rng.choice(KEYS)] = _leaf(rng)
        return out
    if isinstance(gold, list):
        out = [_near(rng, v) for v in gold if rng.random() > 0.2]
        out += [_leaf(rng) for _ in range(rng.randint(0, 1))]
        rng.shuffle(out)
        return out
    if isinstance(gold, str):
        return _typo(rng, gold)
    return gold if roll < 0.8 else _leaf(rng)


def generated_cases(n: int, seed: int) -> list[tuple[Any, Any]]:
    rng = random.Random(seed)
    cases = []
    while len(cases) < n:
        gold = _gold(rng)
        predicted = _near(rng, gold) if rng.random() < 0.8 else _gold(rng, alternatives=False)
        if isinstance(predicted, str) and gold == []:
            continue  # the package raises on an empty list of accepted answers
        cases.append((gold, predicted))
    return cases


def workload_cases(n: int) -> list[tuple[Any, Any]]:
    cases = []
    for _, gold, _, output in make_workload(n):
        try:
            cases.append((gold, json.loads(output)))
        except ValueError:
            continue
    return cases


def _reversed(value: Any) -> Any:
    if isinstance(value, list):
        return [_reversed(v) for v in reversed(value)]
    if isinstance(value, dict):
        return {k: _reversed(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return tuple(_reversed(v) for v in value)
    return value


def _time(fn: Callable[[Any, Any], Any], cases: list[tuple[Any, Any]]) -> float:
    start = time.process_time()
    for gold, predicted in cases:
        fn(gold, predicted)
    return time.process_time() - start


def measure(name: str, cases: list[tuple[Any, Any]], reference: Callable[..., float], repeat: int) -> list[str]:
    agree, ties, worst = 0, 0, 0.0
    for gold, predicted in cases:
        ours, theirs = anls_star(gold, predicted), reference(gold, predicted)
        diff = abs(ours - theirs)
        if diff <= 1e-9:
            agree += 1
            continue
        orderings = set()
        for first in (True, False):  # identical elements paired first or left to the assignment
            anls.PAIR_IDENTICAL_FIRST = first
            orderings |= {
                round(anls_star(g, p), 12) for g in (gold, _reversed(gold)) for p in (predicted, _reversed(predicted))
            }
        anls.PAIR_IDENTICAL_FIRST = True
        if len(orderings) > 1 and any(abs(v - theirs) <= 1e-9 for v in orderings):
            ties += 1
        else:
            worst = max(worst, diff)
    mine, package = [], []
    for _ in range(repeat):
        mine.append(_time(anls_star, cases))
        package.append(_time(reference, cases))
    per_case = 1e6 / len(cases)
    return [
        f"| {name} | {len(cases)} | {agree} | {ties} | {worst:.1e} | {min(mine) * per_case:.1f} | "
        f"{min(package) * per_case:.1f} | {min(package) / min(mine):.1f}x |"
    ]


def score_sample_cost(n: int, repeat: int) -> str:
    rows = make_workload(n)

    def run() -> float:
        start = time.process_time()
        for sid, gold, schema, output in rows:
            score_sample(output, gold, schema, sample_id=sid)
        return time.process_time() - start

    with_anls = min(run() for _ in range(repeat))
    real = sample_module._anls_star
    sample_module._anls_star = lambda expected, predicted: (0.0, {})
    try:
        without = min(run() for _ in range(repeat))
    finally:
        sample_module._anls_star = real
    per = 1e6 / n
    return (
        f"score_sample on the workload ({n} samples): {with_anls * per:.0f} µs with ANLS*, {without * per:.0f} µs "
        f"without: ANLS* adds {(with_anls - without) * per:.0f} µs ({(with_anls / without - 1) * 100:.0f}%)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=2000)
    parser.add_argument("--generated", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    try:
        from anls_star import anls_score
    except ImportError:
        sys.exit("the reference package is not installed: pip install anls-star (it is in the dev extra)")
    warnings.simplefilter("ignore")  # the package warns when it reads a gold list as accepted answers
    print(
        "| cases | n | agree to 1e-9 | solver ties | max abs diff (others) | ours µs/case | anls-star µs/case | speed-up |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for line in (
        *measure("extraction workload", workload_cases(args.samples), anls_score, args.repeat),
        *measure("generated JSON", generated_cases(args.generated, args.seed), anls_score, args.repeat),
    ):
        print(line)
    print()
    print(score_sample_cost(args.samples, args.repeat))


if __name__ == "__main__":
    main()
