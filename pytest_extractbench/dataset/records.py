"""The per-(model, sample) record: what travels from an item to the session and into samples.jsonl.

It is a plain JSON-able dict on the wire (xdist serializes test reports), and a
:class:`SampleRecord` in memory for aggregation.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple

from ..scoring import SampleScore, ScoringOptions


class HeldOutput(NamedTuple):
    """A held record's raw output once samples.jsonl has it: the finish reads only its length (``content``
    stays not None, so the request still counts as answered)."""

    chars: float


@dataclass(slots=True)  # 100,000 of them may be held until the run is aggregated: no per-instance __dict__
class SampleRecord:
    """One model's result on one sample: the score plus what is known about the sample and the request."""

    model: str
    sample_id: str
    score: SampleScore
    # sample metadata: topic, title, medium, source location, complexity, ...
    meta: dict[str, Any] = field(default_factory=dict)
    # request facts: raw output, latency, usage, finish_reason, attempts, error class, ...
    response: dict[str, Any] = field(default_factory=dict)
    passed: bool = True
    failure: str | None = None
    # per-sample diagnostics computed where the item ran (diagnostics.sample_diagnostics)
    diagnostics: dict[str, Any] = field(default_factory=dict)
    # why scoring itself failed (an exception or the time budget): the sample counts as a scoring_error
    scoring_error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The wire/journal form."""
        return {
            "model": self.model,
            "sample_id": self.sample_id,
            "passed": self.passed,
            "failure": self.failure,
            "scoring_error": self.scoring_error,
            "meta": self.meta,
            "response": self.response,
            "score": self.score.as_dict(),
            "diagnostics": self.diagnostics,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any], options: ScoringOptions) -> SampleRecord:
        """Inverse of :meth:`to_dict`."""
        return cls(
            model=data["model"],
            sample_id=data["sample_id"],
            score=SampleScore.from_dict(data["score"], options),
            meta=dict(data.get("meta") or {}),
            response=dict(data.get("response") or {}),
            passed=bool(data.get("passed", True)),
            failure=data.get("failure"),
            diagnostics=dict(data.get("diagnostics") or {}),
            scoring_error=data.get("scoring_error"),
        )

    @property
    def sort_key(self) -> tuple[str, str]:
        return (self.model, self.sample_id)

    def headline(self) -> dict[str, Any]:
        """A short form of :meth:`to_dict`: who, whether it passed, and the scores shown while items run (the
        progress line, the JUnit properties). What a test report carries when the record reaches the session
        by other means, so that each record is converted to its wire form at most once."""
        score = self.score
        return {
            "model": self.model,
            "sample_id": self.sample_id,
            "passed": self.passed,
            "score": {"eqs": score.eqs, "schema_valid": score.schema_valid, "f1": {"partial": score.f1["partial"]}},
        }


# --- tracks ---


@dataclass
class TrackRecord:
    """One model's result on one sample of a non-extraction track (toolcall, generate, repair)."""

    model: str
    sample_id: str
    track: str
    result: dict[str, Any]  # the track's per-sample result (Track.score)
    meta: dict[str, Any] = field(default_factory=dict)
    response: dict[str, Any] = field(default_factory=dict)
    passed: bool = True
    failure: str | None = None
    consistency: dict[str, Any] | None = None  # with --extractbench-repeats N > 1
    details: list[str] = field(default_factory=list)  # lines shown under a failing item
    repeats: dict[str, Any] | None = None  # which runs passed, with --extractbench-repeats N > 1

    def to_dict(self) -> dict[str, Any]:
        out = {
            "model": self.model,
            "sample_id": self.sample_id,
            "track": self.track,
            "passed": self.passed,
            "failure": self.failure,
            "meta": self.meta,
            "response": self.response,
            "result": self.result,
            "consistency": self.consistency,
            "details": self.details,
        }
        if self.repeats is not None:
            out["repeats"] = self.repeats
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TrackRecord:
        return cls(
            model=data["model"],
            sample_id=data["sample_id"],
            track=data["track"],
            result=dict(data.get("result") or {}),
            meta=dict(data.get("meta") or {}),
            response=dict(data.get("response") or {}),
            passed=bool(data.get("passed", True)),
            failure=data.get("failure"),
            consistency=data.get("consistency"),
            details=list(data.get("details") or []),
            repeats=data.get("repeats"),
        )

    @property
    def sort_key(self) -> tuple[str, str]:
        return (self.model, self.sample_id)

    def headline(self) -> dict[str, Any]:
        """See :meth:`SampleRecord.headline`; a track's result has no extraction scores."""
        return {"model": self.model, "sample_id": self.sample_id, "passed": self.passed}

    def failure_headline(self) -> str:
        """Why the item failed, in one line."""
        return f"sample {self.sample_id!r} (model {self.model!r}, track {self.track}): {self.failure}"

    def failure_text(self) -> str:
        """Why the item failed, with the track's details."""
        return "\n".join([self.failure_headline(), *self.details])


def records_by_model(records: Any) -> dict[str, list[Any]]:
    """Records grouped by model, each group in the order given; models in first-seen order."""
    grouped: dict[str, list[Any]] = {}
    for record in records:
        grouped.setdefault(record.model, []).append(record)
    return grouped
