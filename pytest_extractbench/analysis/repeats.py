"""Is it flaky? Pass counts over repeated runs of each sample (``--extractbench-repeats N``), pass@k and pass^k, and
the fields whose category changes between runs. Pure functions, no pytest.

For a sample run ``n`` times of which ``c`` passed, the unbiased estimators (Chen et al. 2021, HumanEval) are

* pass@k = 1 - C(n-c, k) / C(n, k): the chance that at least one of k runs drawn from the n passes;
* pass^k = C(c, k) / C(n, k): the chance that all k of them pass;

and a run's figure is their mean over samples, with k the repeats (the smallest run count of any sample). pass@1
equals pass^1, the mean share of passing runs. A field flips when its category (exact, partial, missed, ...) is
not the same in every run of a sample whose output parsed; a run whose output did not parse counts against the
sample's passes, not against its fields.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .diagnostics import field_name
from .stats import bootstrap_ci

ABSENT = "absent"  # the field is not in that run's scored fields (a spurious field another run invented, say)
MAX_FLAKY_FIELDS = 20
MAX_FLAKY_SAMPLES = 50


def pass_at_k(n: int, c: int, k: int) -> float:
    """The chance that at least one of ``k`` of the ``n`` runs (``c`` passing) passes."""
    _check(n, c, k)
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """The chance that all ``k`` of the ``n`` runs (``c`` passing) pass."""
    _check(n, c, k)
    return math.comb(c, k) / math.comb(n, k)


def _check(n: int, c: int, k: int) -> None:
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"need 0 <= c <= n and 1 <= k <= n, got n={n}, c={c}, k={k}")


def sample_repeats(passes: Sequence[bool], categories: Sequence[Mapping[str, str] | None]) -> dict[str, Any]:
    """One sample's runs: which passed, and per field path its category in each run whose output parsed
    (``None`` for a run that did not). Kept compact for samples.jsonl: only the paths that flipped, and how many
    paths each field name had (the flake rates' denominators)."""
    usable = [c for c in categories if c is not None]
    paths = sorted({path for run in usable for path in run})
    flips = {path: [run.get(path, ABSENT) for run in usable] for path in paths}
    flips = {path: seen for path, seen in flips.items() if len(set(seen)) > 1}
    return {
        "runs": len(passes),
        "passed": sum(bool(p) for p in passes),
        "passes": [bool(p) for p in passes],
        "compared_runs": len(usable),
        "fields": dict(Counter(field_name(path) for path in paths)) if len(usable) > 1 else {},
        "flips": flips,
    }


def _transitions(seen: Sequence[str]) -> list[str]:
    """The distinct category changes of one path, in run order: exact -> missed, missed -> exact."""
    out: list[str] = []
    for before, after in zip(seen, seen[1:]):
        if before != after and f"{before} -> {after}" not in out:
            out.append(f"{before} -> {after}")
    return out


def repeats_section(
    per_sample: Mapping[str, Mapping[str, Any]], *, confidence: float = 0.95, resamples: int = 10_000, seed: Any = 0
) -> dict[str, Any]:
    """The ``repeats`` section of one model (sample id -> :func:`sample_repeats`), and its pass@k and pass^k with
    bootstrap CIs over samples; empty when no sample ran more than once."""
    found = {sid: s for sid, s in per_sample.items() if s.get("runs", 0) > 1}
    if not found:
        return {}
    k = min(s["runs"] for s in found.values())
    counts = {sid: (s["runs"], s["passed"]) for sid, s in sorted(found.items())}
    at = {j: [pass_at_k(n, c, j) for n, c in counts.values()] for j in range(1, k + 1)}
    hat = {j: [pass_hat_k(n, c, j) for n, c in counts.values()] for j in range(1, k + 1)}
    histogram = Counter(c for _, c in counts.values())
    flaky = sorted((c / n, sid) for sid, (n, c) in counts.items() if 0 < c < n)  # fewest passes first
    occurrences: Counter[str] = Counter()
    flipped: Counter[str] = Counter()
    samples_flipped: Counter[str] = Counter()
    transitions: dict[str, Counter[str]] = {}
    for sample in found.values():
        occurrences.update(sample.get("fields") or {})
        names = set()
        for path, seen in (sample.get("flips") or {}).items():
            name = field_name(path)
            flipped[name] += 1
            names.add(name)
            transitions.setdefault(name, Counter()).update(_transitions(seen))
        samples_flipped.update(names)
    fields: list[dict[str, Any]] = [
        {
            "field": name,
            "occurrences": occurrences[name],
            "flipped": flipped[name],
            "rate": flipped[name] / occurrences[name] if occurrences[name] else 1.0,
            "samples": samples_flipped[name],
            "transitions": dict(transitions[name].most_common()),
        }
        for name in flipped
    ]
    fields.sort(key=lambda f: (-f["rate"], -f["flipped"], f["field"]))
    intervals = {
        name: bootstrap_ci(values[k], confidence=confidence, resamples=resamples, rng=seed)
        for name, values in (("pass_at_k", at), ("pass_hat_k", hat))
    }
    section = {
        "runs": k,
        "samples": len(counts),
        # samples by how many of their runs passed
        "pass_counts": {str(c): histogram.get(c, 0) for c in range(max(n for n, _ in counts.values()) + 1)},
        "pass_at": {str(j): float(np.mean(v)) for j, v in at.items()},
        "pass_hat": {str(j): float(np.mean(v)) for j, v in hat.items()},
        "flaky_samples": len(flaky),
        "flaky_sample_list": [
            {"sample_id": sid, "passed": counts[sid][1], "runs": counts[sid][0]} for _, sid in flaky[:MAX_FLAKY_SAMPLES]
        ],
        "fields_compared": sum(occurrences.values()),
        "flaky_fields": fields[:MAX_FLAKY_FIELDS],
        "more_flaky_fields": max(0, len(fields) - MAX_FLAKY_FIELDS),
    }
    return {
        "pass_at_k": section["pass_at"][str(k)],
        "pass_hat_k": section["pass_hat"][str(k)],
        "repeats": section,
        "confidence_intervals": {name: interval.as_dict() for name, interval in intervals.items()},
    }
