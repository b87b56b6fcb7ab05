"""Per-sample buckets against a baseline: which samples regressed, were fixed, still fail, stayed the same, are
new, were removed or changed, and which fields flipped category (``exact -> missed``).

A reviewer asks "which samples and which fields got worse"; the metric deltas say only "how much". A sample
regresses when it goes from pass to fail, or its EQS drops by more than ``delta``. A sample whose content
changed since the baseline (its content hash differs) is its own bucket and is not compared. Pure functions over
baseline snapshots, no pytest.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from .baseline import SampleSnapshot

__all__ = ["BUCKETS", "Buckets", "FieldFlip", "SampleBucket", "bucket_samples", "field_flips", "sample_bucket"]

REGRESSED, FIXED, STILL_FAILING, UNCHANGED = "regressed", "fixed", "still_failing", "unchanged"
NEW, REMOVED, CHANGED = "new", "removed", "changed"
BUCKETS = (REGRESSED, FIXED, STILL_FAILING, UNCHANGED, NEW, REMOVED, CHANGED)
DEFAULT_DELTA = 0.05
ABSENT = "-"  # a path one side does not have: a spurious field that came or went
# how good a field's category is; a path neither gold nor prediction has is as good as exact
_RANK = {"exact": 3, "partial": 2, "incorrect": 1, "missed": 0, "spurious": 0, ABSENT: 3}
_INDEX = re.compile(r"\[\d+\]")


def passed(snapshot: SampleSnapshot) -> bool:
    """Whether the sample's item passed; a baseline saved before pass/fail was kept: its output was schema-valid."""
    return snapshot.passed if snapshot.passed is not None else snapshot.row.get("schema_valid", 0.0) > 0


@dataclass(frozen=True)
class FieldFlip:
    """One field whose category differs between the baseline and this run."""

    path: str
    before: str
    after: str

    @property
    def worse(self) -> bool:
        return _RANK.get(self.after, 0) < _RANK.get(self.before, 0)

    @property
    def transition(self) -> str:
        return f"{self.before} -> {self.after}"

    def __str__(self) -> str:
        return f"{self.path}: {self.transition}"


def field_flips(current: SampleSnapshot, baseline: SampleSnapshot) -> tuple[FieldFlip, ...]:
    """The fields whose category changed, the worsened first, then by path."""
    now = {path: category for path, category, _ in current.fields}
    then = {path: category for path, category, _ in baseline.fields}
    flips = [
        FieldFlip(path, then.get(path, ABSENT), now.get(path, ABSENT))
        for path in set(now) | set(then)
        if now.get(path, ABSENT) != then.get(path, ABSENT)
    ]
    return tuple(sorted(flips, key=lambda f: (not f.worse, f.path)))


@dataclass(frozen=True)
class SampleBucket:
    """One sample of one model: its bucket, and what changed between the baseline and this run."""

    sample_id: str
    bucket: str
    baseline_eqs: float | None = None
    current_eqs: float | None = None
    baseline_passed: bool | None = None
    current_passed: bool | None = None
    flips: tuple[FieldFlip, ...] = ()

    @property
    def eqs_delta(self) -> float | None:
        if self.baseline_eqs is None or self.current_eqs is None:
            return None
        return self.current_eqs - self.baseline_eqs

    def as_dict(self) -> dict[str, Any]:
        return {
            "sample_id": self.sample_id,
            "bucket": self.bucket,
            "baseline_eqs": self.baseline_eqs,
            "current_eqs": self.current_eqs,
            "eqs_delta": self.eqs_delta,
            "baseline_passed": self.baseline_passed,
            "current_passed": self.current_passed,
            "field_flips": [[f.path, f.before, f.after] for f in self.flips],
        }

    def describe(self) -> str:
        """``s2 1.000 -> 0.400, pass -> fail (age: exact -> missed, +1 more flip)``."""
        parts = [self.sample_id]
        if self.baseline_eqs is not None and self.current_eqs is not None:
            parts.append(f"{self.baseline_eqs:.3f} -> {self.current_eqs:.3f}")
        text = " ".join(parts)
        if self.baseline_passed and self.current_passed is False:
            text += ", pass -> fail"
        if self.flips:
            shown = ", ".join(str(f) for f in self.flips[:2])
            more = f", +{len(self.flips) - 2} more" if len(self.flips) > 2 else ""
            text += f" ({shown}{more})"
        return text


def sample_bucket(
    sample_id: str,
    current: SampleSnapshot | None,
    baseline: SampleSnapshot | None,
    *,
    changed: bool = False,
    delta: float = DEFAULT_DELTA,
) -> SampleBucket:
    """The bucket of one sample; ``changed``: its content hash differs from the baseline's (not compared)."""
    if current is None and baseline is None:
        raise ValueError(f"sample {sample_id!r}: in neither run")
    if baseline is None:
        assert current is not None
        return SampleBucket(sample_id, NEW, current_eqs=current.row.get("eqs"), current_passed=passed(current))
    if current is None:
        return SampleBucket(sample_id, REMOVED, baseline_eqs=baseline.row.get("eqs"), baseline_passed=passed(baseline))
    was, now = passed(baseline), passed(current)
    before, after = baseline.row.get("eqs"), current.row.get("eqs")  # None on a track without EQS: pass/fail only
    if changed:
        return SampleBucket(sample_id, CHANGED, before, after, was, now)
    if was and not now:
        bucket = REGRESSED
    elif not was and now:
        bucket = FIXED
    elif not was:
        bucket = STILL_FAILING
    elif _dropped(before, after, delta):
        bucket = REGRESSED  # passes still, but its EQS dropped by more than the delta
    else:
        bucket = UNCHANGED
    return SampleBucket(sample_id, bucket, before, after, was, now, field_flips(current, baseline))


def _dropped(before: float | None, after: float | None, delta: float) -> bool:
    """Whether EQS dropped by more than ``delta`` (never on a track without EQS, nor on a value that is not a number)."""
    if before is None or after is None or not (math.isfinite(before) and math.isfinite(after)):
        return False
    return before - after > delta + 1e-12


def _severity(sample: SampleBucket) -> tuple[Any, ...]:
    # pass -> fail first, then the largest EQS drop, then the most worsened fields
    drop = sample.eqs_delta if sample.eqs_delta is not None and math.isfinite(sample.eqs_delta) else 0.0
    lost = bool(sample.baseline_passed and sample.current_passed is False)
    return (not lost, drop, -sum(f.worse for f in sample.flips), sample.sample_id)


@dataclass
class Buckets:
    """Every sample of one model, bucketed against its baseline counterpart."""

    delta: float
    samples: dict[str, SampleBucket]

    def counts(self) -> dict[str, int]:
        found = Counter(s.bucket for s in self.samples.values())
        return {bucket: found.get(bucket, 0) for bucket in BUCKETS}

    def ids(self, bucket: str) -> list[str]:
        return sorted(i for i, s in self.samples.items() if s.bucket == bucket)

    def worst(self, limit: int | None = None) -> list[SampleBucket]:
        """The regressed samples, worst first."""
        found = sorted((s for s in self.samples.values() if s.bucket == REGRESSED), key=_severity)
        return found if limit is None else found[:limit]

    def flip_counts(self) -> dict[str, int]:
        """How often each category transition happened over the compared samples, most frequent first."""
        found = Counter(f.transition for s in self.samples.values() for f in s.flips)
        return dict(sorted(found.items(), key=lambda kv: (-kv[1], kv[0])))

    def field_counts(self) -> dict[str, dict[str, int]]:
        """Per field path (array indices as ``[]``): how many samples it worsened and improved in, worst first."""
        found: dict[str, Counter[str]] = {}
        for sample in self.samples.values():
            for flip in sample.flips:
                found.setdefault(_INDEX.sub("[]", flip.path), Counter())["worse" if flip.worse else "better"] += 1
        rows = {path: {"worse": c["worse"], "better": c["better"]} for path, c in found.items()}
        return dict(sorted(rows.items(), key=lambda kv: (-kv[1]["worse"], kv[1]["better"], kv[0])))

    def describe(self) -> str:
        """``2 regressed, 1 fixed, 0 still failing, 45 unchanged, 0 new, 0 removed, 1 changed``."""
        return ", ".join(f"{n} {bucket.replace('_', ' ')}" for bucket, n in self.counts().items())

    def as_dict(self) -> dict[str, Any]:
        return {
            "eqs_delta": self.delta,
            "counts": self.counts(),
            "samples": {bucket: self.ids(bucket) for bucket in BUCKETS if bucket != UNCHANGED},
            "regressions": [s.as_dict() for s in self.worst()],
            "field_flips": self.flip_counts(),
            "fields": self.field_counts(),
        }


def bucket_samples(
    current: Mapping[str, SampleSnapshot],
    baseline: Mapping[str, SampleSnapshot],
    *,
    changed: Collection[str] = (),
    delta: float = DEFAULT_DELTA,
) -> Buckets:
    """Bucket every sample either run scored; ``changed``: ids whose content changed since the baseline."""
    edited = set(changed)
    return Buckets(
        delta,
        {
            sample_id: sample_bucket(
                sample_id, current.get(sample_id), baseline.get(sample_id), changed=sample_id in edited, delta=delta
            )
            for sample_id in sorted(set(current) | set(baseline))
        },
    )
