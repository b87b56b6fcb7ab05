"""Per-field F1 (partial) of a run and its baseline on the same samples: which fields got worse, and by how much.

Array indices are folded (``items[]``), so a field is compared across samples whatever its position. Pure functions
over baseline snapshots, no pytest.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from ..scoring import prf
from ..scoring.result import EXACT, PARTIAL, SPURIOUS
from ..scoring.result import MISSED as MISSED_FIELD
from .baseline import SampleSnapshot

_INDEX = re.compile(r"\[\d+\]")


def field_scores(samples: Iterable[SampleSnapshot]) -> dict[str, dict[str, float]]:
    """Per field path (array indices as ``[]``): occurrences and partial-mode F1 with the sample's credit rules."""
    counts: dict[str, list[float]] = {}  # path -> [credit, predicted, expected]
    for sample in samples:
        valid = sample.row.get("schema_valid", 0.0) > 0  # a track's snapshot has neither fields nor this
        for path, category, _score in sample.fields:
            slot = counts.setdefault(_INDEX.sub("[]", path), [0.0, 0.0, 0.0])
            if category != MISSED_FIELD:
                slot[1] += 1
            if category != SPURIOUS:
                slot[2] += 1
            if valid:  # invalid output earns no credit
                slot[0] += 1.0 if category == EXACT else 0.5 if category == PARTIAL else 0.0
    return {
        path: {
            "f1_partial": prf(credit, int(predicted), int(expected))[2],
            "expected": expected,
            "predicted": predicted,
        }
        for path, (credit, predicted, expected) in sorted(counts.items())
    }


def field_deltas(current: Sequence[SampleSnapshot], baseline: Sequence[SampleSnapshot]) -> dict[str, dict[str, Any]]:
    """Per-field F1 (partial) of both runs on the same samples, worst change first."""
    now, before = field_scores(current), field_scores(baseline)
    out: dict[str, dict[str, Any]] = {}
    for path in sorted(set(now) | set(before)):
        c = now.get(path, {}).get("f1_partial")
        b = before.get(path, {}).get("f1_partial")
        out[path] = {
            "baseline": b,
            "current": c,
            "delta": None if b is None or c is None else c - b,
            "expected": now.get(path, before.get(path, {})).get("expected", 0),
        }
    # worst first; among equal drops, the field with more occurrences first
    return dict(
        sorted(
            out.items(),
            key=lambda item: (item[1]["delta"] is None, item[1]["delta"] or 0.0, -item[1]["expected"], item[0]),
        )
    )
