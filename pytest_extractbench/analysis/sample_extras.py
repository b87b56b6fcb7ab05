"""Calibration and consistency on the extraction track: per-sample data where the item ran, sections on the controller.

Both only appear when there is data for them (logprobs in the response,
several runs per sample), so ordinary runs are unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..dataset.records import SampleRecord
from ..scoring import MISSING, ScoringOptions
from ..scoring.result import EXACT, SPURIOUS
from .calibration import field_confidences, reliability
from .consistency import aggregate_consistency, consistency
from .repeats import repeats_section as _repeats


def extra_diagnostics(record: SampleRecord, responses: Sequence[Any]) -> None:
    """Add ``calibration`` (field confidence, correct) and ``consistency`` to the record's diagnostics."""
    first = responses[0]
    logprobs = getattr(first, "logprobs", None)
    if logprobs:
        scored = [f for f in record.score.fields if f.category in (EXACT, "partial", "incorrect", SPURIOUS)]
        confidence = field_confidences(logprobs, [f.path for f in scored])
        record.diagnostics["calibration"] = [
            # correct = equal after normalization: a near number is in the "exact" category (>= 0.95) but wrong
            [f.path, confidence[f.path], bool(f.equal and f.type_ok is not False)]
            for f in scored
            if f.path in confidence
        ]
    if len(responses) > 1:
        outputs = [r.content for r in responses if r.content is not MISSING]
        if outputs:
            found = consistency(outputs)
            found["failed_runs"] = len(responses) - len(outputs)
            record.diagnostics["consistency"] = found


def calibration_section(records: Sequence[SampleRecord], options: ScoringOptions) -> dict[str, Any]:
    """``calibration``: reliability table and ECE over every field with a confidence."""
    pairs = [(conf, ok) for r in records for _, conf, ok in r.diagnostics.get("calibration", ())]
    if not pairs:
        return {}
    section = reliability([c for c, _ in pairs], [ok for _, ok in pairs])
    section["samples"] = sum(1 for r in records if r.diagnostics.get("calibration"))
    return {"calibration": section}


def consistency_section(records: Sequence[SampleRecord], options: ScoringOptions) -> dict[str, Any]:
    """``consistency``: means over samples run several times."""
    found = [r.diagnostics["consistency"] for r in records if r.diagnostics.get("consistency")]
    return {"consistency": aggregate_consistency(found)} if found else {}


def repeats_section(records: Sequence[SampleRecord], options: ScoringOptions) -> dict[str, Any]:
    """``repeats`` (pass counts, pass@k, pass^k, flaky fields) with ``pass_at_k`` and ``pass_hat_k`` and their CIs."""
    found = {r.sample_id: r.diagnostics["repeats"] for r in records if r.diagnostics.get("repeats")}
    statistics = options.statistics
    return _repeats(found, confidence=statistics.confidence, resamples=statistics.resamples, seed=statistics.seed)
