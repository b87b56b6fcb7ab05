"""One (model, sample): get its answers from the run's source and let the run's track score them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .context import RunContext


def run_item(context: RunContext, model: str, sample: Any) -> Any:
    """Ask the context's source for the sample's answers, score them and announce the record."""
    responses = context.responses(model, sample)
    record = context.track.score_item(model, sample, responses, context.settings)
    context.note_sample(sample)
    context.events.sample_scored(record)
    return record
