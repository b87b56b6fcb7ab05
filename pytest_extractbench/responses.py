"""What a model returned for one sample, and the seam that produces it (offline file or live server)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Protocol, Sequence

from .dataset import Sample
from .scoring import MISSING


@dataclass
class ModelResponse:
    """One model answer; errors are data (DESIGN decision 5), never exceptions."""

    content: Any = MISSING  # raw text, or an already-parsed JSON value from a predictions file
    error_class: str | None = None  # "missing", "timeout", "connection", "http_error", "truncated", ...
    error: str | None = None
    latency_s: float | None = None
    usage: dict[str, int] = field(default_factory=dict)
    finish_reason: str | None = None
    attempts: int = 0
    cached: bool = False

    @property
    def ok(self) -> bool:
        return self.content is not MISSING and self.error_class is None

    def as_dict(self) -> dict[str, Any]:
        """JSON-able form; a missing output is ``null``."""
        data = asdict(self)
        data["content"] = None if self.content is MISSING else self.content
        return data


class OutputSource(Protocol):
    """Produces model outputs for (model, sample) pairs."""

    def prepare(self, work: Sequence[tuple[str, Sample]]) -> None:
        """Called once with every pair this process will run, before the first item (prefetch here)."""

    def response(self, model: str, sample: Sample) -> ModelResponse:
        """The output for one pair; blocks until it is available."""
        ...

    def close(self) -> None:
        """Release servers, threads and files."""
