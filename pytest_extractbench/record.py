"""The per-(model, sample) record: what travels from an item to the session and into samples.jsonl.

It is a plain JSON-able dict on the wire (xdist serializes test reports), and a
:class:`SampleRecord` in memory for aggregation.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .scoring import SampleScore, ScoringOptions


@dataclass
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

    def to_dict(self) -> dict[str, Any]:
        """The wire/journal form."""
        return {
            "model": self.model,
            "sample_id": self.sample_id,
            "passed": self.passed,
            "failure": self.failure,
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
        )

    @property
    def sort_key(self) -> tuple[str, str]:
        return (self.model, self.sample_id)
