"""Consistency of repeated runs of one sample: pure functions, no pytest.

With temperature > 0 the same input gives different outputs. For N outputs of
one sample:

* ``exact_match_consistency``: the share of runs whose output equals the most
  common output (JSON outputs compare as parsed values, key order ignored; an
  unparseable output compares as its text);
* ``field_level_consistency``: over every leaf path seen in any run, the share of
  runs that agree with the path's most common value (absent is a value), averaged;
* ``value_variance``: the population standard deviation of each numeric leaf
  across the runs that gave a number, averaged over numeric leaves (``None`` when
  there is none), with the per-field figures.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from ..scoring import parse_output

_ABSENT = "\x00absent"


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def flatten(value: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """Leaf paths, written the usual way: ``user.name``, ``items[0]``; empty containers are leaves."""
    if isinstance(value, dict) and value:
        for key, child in value.items():
            yield from flatten(child, f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(value, list) and value:
        for index, child in enumerate(value):
            yield from flatten(child, f"{prefix}[{index}]")
    else:
        yield prefix or "$", value


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def consistency(outputs: Sequence[Any], *, parsed: bool = False) -> dict[str, Any]:
    """Consistency of the outputs of N runs of one sample (raw texts, or values when ``parsed``)."""
    n = len(outputs)
    if n == 0:
        raise ValueError("consistency needs at least one output")
    values: list[Any] = []
    keys: list[str] = []
    for output in outputs:
        if parsed:
            values.append(output)
            keys.append(_canonical(output))
            continue
        result = parse_output(output)
        values.append(result.value if result.json_valid else None)
        keys.append(_canonical(result.value) if result.json_valid else "\x00text:" + str(output))
    modal_count = Counter(keys).most_common(1)[0][1]
    leaves = [dict(flatten(v)) if v is not None else {} for v in values]
    paths = sorted({path for leaf in leaves for path in leaf})
    agreement: dict[str, float] = {}
    spread: dict[str, float] = {}
    for path in paths:
        column = [leaf.get(path, _ABSENT) for leaf in leaves]
        agreement[path] = Counter(_canonical(v) for v in column).most_common(1)[0][1] / n
        numbers = [float(v) for v in column if _is_number(v)]
        if len(numbers) >= 2 and len(numbers) == sum(v is not _ABSENT for v in column):
            spread[path] = float(np.std(numbers))
    return {
        "runs": n,
        "distinct_outputs": len(set(keys)),
        "exact_match_consistency": modal_count / n,
        "field_level_consistency": float(np.mean(list(agreement.values()))) if agreement else 1.0,
        "value_variance": float(np.mean(list(spread.values()))) if spread else None,
        "field_agreement": agreement,
        "field_std": spread,
    }


def aggregate_consistency(per_sample: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Means over samples; the fields that agree least."""
    if not per_sample:
        return {"samples": 0}
    variances = [s["value_variance"] for s in per_sample if s.get("value_variance") is not None]
    by_field: dict[str, list[float]] = {}
    for sample in per_sample:
        for path, share in sample.get("field_agreement", {}).items():
            by_field.setdefault(path, []).append(share)
    least = sorted(((float(np.mean(v)), p) for p, v in by_field.items()))[:10]
    return {
        "samples": len(per_sample),
        "runs_per_sample": max(s["runs"] for s in per_sample),
        "exact_match_consistency": float(np.mean([s["exact_match_consistency"] for s in per_sample])),
        "field_level_consistency": float(np.mean([s["field_level_consistency"] for s in per_sample])),
        "value_variance": float(np.mean(variances)) if variances else None,
        "fully_consistent_samples": sum(s["exact_match_consistency"] == 1.0 for s in per_sample),
        "least_consistent_fields": [{"field": p, "agreement": a} for a, p in least if a < 1.0],
    }
