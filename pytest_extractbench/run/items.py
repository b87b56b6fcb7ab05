"""One (model, sample): get its answers, score them, decide pass or fail, as a plain record.

Any failure or overrun while scoring becomes that sample's ``scoring_error`` (invalid output, EQS 0),
never a lost sample.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..analysis.consistency import consistency
from ..analysis.diagnostics import sample_diagnostics
from ..analysis.sample_extras import extra_diagnostics
from ..dataset.records import SampleRecord, TrackRecord
from ..dataset.responses import ModelResponse
from ..scoring import MISSING, budget, score_sample
from ..scoring.sample import SCORING_ERROR, scoring_error_score

if TYPE_CHECKING:
    from ..config.settings import Settings
    from ..tracks.base import Track
    from .context import RunContext


def run_item(context: RunContext, model: str, sample: Any) -> SampleRecord | TrackRecord:
    """Ask the context's source for the sample's answers, score them and announce the record."""
    responses = context.responses(model, sample)
    if context.track is not None:
        record: SampleRecord | TrackRecord = score_track_item(context.track, context.settings, model, sample, responses)
    else:
        record = score_extraction(context.settings, model, sample, responses)
    context.events.sample_scored(record)
    return record


def score_extraction(settings: Settings, model: str, sample: Any, responses: list[ModelResponse]) -> SampleRecord:
    """The record of one extraction sample; the first response is scored, the others feed consistency."""
    response = responses[0]
    meta = {**sample.meta, "text_chars": len(sample.text or "")}  # input length, for the latency correlations
    try:
        with budget.time_budget(budget.ITEM_BUDGET_S):
            score = score_sample(
                response.content, sample.expected, sample.schema, options=settings.scoring,
                sample_id=sample.id, rule_errors="ignore",  # reported once per sample as an input problem instead
            )
            failure = failure_reason(score, response, settings.sample_min_eqs)
            record = SampleRecord(
                model=model, sample_id=sample.id, score=score, meta=meta, response=response.as_dict(),
                passed=failure is None, failure=failure,
                # needs the source text, which only this process has: computed here, carried in the record
                diagnostics=sample_diagnostics(score, sample.text, sample.expected, response.content),
            )
            extra_diagnostics(record, responses)  # calibration and consistency, when there is data
    except Exception as exc:  # noqa: BLE001 - see the module docstring
        record = _extraction_scoring_error(settings, model, sample, meta, response, exc)
    return record


def failure_reason(score: Any, response: ModelResponse, min_eqs: float | None) -> str | None:
    """Why an extraction item fails, or None when it passes."""
    if response.content is MISSING:
        return f"no output ({response.error_class}): {response.error}"
    if not score.json_valid:
        return f"unusable output: {score.parse_error}"
    if not score.schema_valid:
        return f"output violates the schema ({len(score.validation_errors)} error(s))"
    if min_eqs is not None and score.eqs < min_eqs:
        return f"EQS {score.eqs:.3f} is below the per-sample bar {min_eqs:.3f}"
    return None


def _extraction_scoring_error(settings: Settings, model: str, sample: Any, meta: dict[str, Any], response: Any,
                              exc: BaseException) -> SampleRecord:
    """The record of a sample whose scoring failed: invalid output (EQS 0, every gold field missed)."""
    reason = budget.failure_reason(exc)
    score = scoring_error_score(sample.expected, reason, options=settings.scoring, sample_id=sample.id)
    try:
        content = response.as_dict()
    except Exception:  # noqa: BLE001 - the response itself may be what broke scoring
        content = {"content": None, "error_class": response.error_class, "error": response.error}
    return SampleRecord(
        model=model, sample_id=sample.id, score=score, meta=meta, response=content, passed=False,
        failure=f"scoring failed ({SCORING_ERROR}): {reason}", scoring_error=reason,
    )


def score_track_item(track: Track, settings: Settings, model: str, sample: Any,
                     responses: list[ModelResponse]) -> TrackRecord:
    """The record of one sample of a non-extraction track: the first run scored, consistency over all."""
    found = None
    try:
        with budget.time_budget(budget.ITEM_BUDGET_S):
            predictions = [track.read_response(sample, r) for r in responses]
            result = track.score(sample, predictions[0], settings.scoring)
            if len(predictions) > 1:
                found = consistency([track.consistency_value(p) for p in predictions], parsed=track.compare_parsed)
    except Exception as exc:  # noqa: BLE001 - see the module docstring
        result = _track_scoring_error(track, settings, sample, budget.failure_reason(exc))
    return TrackRecord(
        model=model,
        sample_id=sample.id,
        track=track.name,
        result=result,
        meta=_plain_meta(sample.meta),
        response=responses[0].as_dict(),
        passed=bool(result["passed"]),
        failure=result["failure"],
        consistency=found,
        details=track.failure_lines(result) + track.expected_lines(sample) if not result["passed"] else [],
    )


def _track_scoring_error(track: Track, settings: Settings, sample: Any, reason: str) -> dict[str, Any]:
    """The result of a sample whose scoring failed: scored as no output, failed, with the reason."""
    try:
        result = dict(track.score(sample, track.read_response(sample, ModelResponse()), settings.scoring))
    except Exception:  # noqa: BLE001 - a track that cannot score "no output" either
        result = {}
    result.update(passed=False, failure=f"scoring failed ({SCORING_ERROR}): {reason}", scoring_error=reason)
    return result


def _plain_meta(meta: Any) -> dict[str, Any]:
    return {k: v for k, v in dict(meta).items() if k != "features"} | (
        {"features": list(meta["features"])} if "features" in meta else {}
    )
