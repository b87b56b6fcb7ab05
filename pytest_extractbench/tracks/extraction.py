"""The extraction track: structured extraction of a document under its JSON Schema, scored field by field.

Its records (:class:`~pytest_extractbench.dataset.records.SampleRecord`) carry the whole per-field score,
and its metrics are metrics.json's extraction format (P/R/F1, EQS, breakdowns, performance, subsets),
which the SLA tiers, baselines and reports read.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ..analysis import catalog
from ..analysis.diagnostics import sample_diagnostics
from ..analysis.metrics import metrics_by_model
from ..analysis.performance import apply_prices
from ..analysis.repeats import sample_repeats
from ..analysis.sample_extras import extra_diagnostics
from ..dataset.documents import DocumentReader
from ..dataset.records import SampleRecord, records_by_model
from ..dataset.responses import ModelResponse
from ..dataset.rules import rule_problems
from ..dataset.samples import Dataset, DatasetProblem, parse_rows
from ..dataset.sources import load_source
from ..gating.subsets import subset_metrics
from ..scoring import MISSING, budget, score_sample
from ..scoring.sample import SCORING_ERROR, scoring_error_score
from .base import EXTRACTION, Track


def _documents(data: Any) -> DocumentReader:
    return DocumentReader(cache_dir=getattr(data, "documents_cache", None), input_mode=getattr(data, "input", "text"))


class ExtractionTrack(Track):
    name = EXTRACTION
    bundled_file = "extraction.jsonl"
    description = "structured extraction under a JSON Schema"
    json_answer = True
    gated = True
    own_request = False  # the run's prompt templates (--extractbench-system-prompt/-user-prompt) build it

    def headline_metrics(self) -> tuple[str, ...]:
        """The metric catalog's headline metrics (those with CIs in every summary)."""
        return catalog.names("headline")

    def load_samples(self, spec: str | None, *, base_dir: Path, data: Any) -> Dataset:
        return load_source(
            spec, base_dir=base_dir, columns=dict(data.columns), cache_dir=data.cache_dir, documents=_documents(data)
        )

    def samples_from_rows(self, label: str, rows: Iterable[tuple[str, Any]], *, data: Any) -> Dataset:
        """Rows given in memory: their documents must be bytes (there is no dataset folder to find paths in)."""
        return parse_rows(label, label, rows, columns=dict(data.columns), documents=_documents(data))

    def input_problems(self, samples: Sequence[Any]) -> list[DatasetProblem]:
        """Broken x-eval-* rules of the samples' schemas (each sample is scored with the defaults instead)."""
        return rule_problems(samples)

    def score_item(self, model: str, sample: Any, responses: list[ModelResponse], settings: Any) -> SampleRecord:
        """The first response scored field by field; the others feed consistency."""
        response = responses[0]
        meta = {**sample.meta, "text_chars": len(sample.text or "")}  # input length, for the latency correlations
        try:
            with budget.time_budget(budget.ITEM_BUDGET_S):
                score = score_sample(
                    response.content,
                    sample.expected,
                    sample.schema,
                    options=settings.scoring,
                    sample_id=sample.id,
                    rule_errors="ignore",  # reported once per sample as an input problem instead
                )
                score.anls_star_observed  # noqa: B018 - computed now, inside the item's time budget
                failure = failure_reason(score, response, settings.sample_min_eqs)
                record = SampleRecord(
                    model=model,
                    sample_id=sample.id,
                    score=score,
                    meta=meta,
                    response=response.as_dict(),
                    passed=failure is None,
                    failure=failure,
                    # needs the source text, which only this process has: computed here, carried in the record
                    diagnostics=sample_diagnostics(
                        score, sample.text, sample.expected, response.content, sample.schema, settings.scoring
                    ),
                )
                extra_diagnostics(record, responses)  # calibration and consistency, when there is data
                if len(responses) > 1:
                    record.diagnostics["repeats"] = repeat_diagnostics(score, sample, responses, settings)
        except (Exception, budget.ScoringTimeout) as exc:  # noqa: BLE001 - any failure or overrun: its scoring_error
            record = _scoring_error_record(settings, model, sample, meta, response, exc)
        return record

    def record_from_dict(self, data: dict[str, Any], settings: Any) -> SampleRecord:
        return SampleRecord.from_dict(data, settings.scoring)

    def aggregate_records(self, records: Sequence[Any], settings: Any) -> dict[str, dict[str, Any]]:
        """metrics.json's per-model extraction metrics, priced, with the subsets' sections."""
        metrics = metrics_by_model(records, settings.scoring)
        for section in metrics.values():
            apply_prices(section, settings.prices)  # before the comparison reads the cost
        if settings.subsets is not None:
            grouped = records_by_model(records)
            for model, section in metrics.items():
                section.update(subset_metrics(grouped[model], settings.subsets, settings.scoring.statistics))
        return metrics


def repeat_diagnostics(first: Any, sample: Any, responses: Sequence[ModelResponse], settings: Any) -> dict[str, Any]:
    """Every run of one sample scored as the first one is (``first``: its score): which passed the item's rule,
    and each field's category per run whose output parsed (:func:`..analysis.repeats.sample_repeats`)."""
    passes, categories = [], []
    for index, response in enumerate(responses):
        score = (
            first
            if index == 0
            else score_sample(
                response.content,
                sample.expected,
                sample.schema,
                options=settings.scoring,
                sample_id=sample.id,
                rule_errors="ignore",
            )
        )
        passes.append(failure_reason(score, response, settings.sample_min_eqs) is None)
        categories.append({f.path: f.category for f in score.fields} if score.json_valid else None)
    return sample_repeats(passes, categories)


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


def _scoring_error_record(
    settings: Any, model: str, sample: Any, meta: dict[str, Any], response: Any, exc: BaseException
) -> SampleRecord:
    """The record of a sample whose scoring failed: invalid output (EQS 0, every gold field missed)."""
    reason = budget.failure_reason(exc)
    score = scoring_error_score(sample.expected, reason, options=settings.scoring, sample_id=sample.id)
    try:
        content = response.as_dict()
    except Exception:  # noqa: BLE001 - the response itself may be what broke scoring
        content = {"content": None, "error_class": response.error_class, "error": response.error}
    return SampleRecord(
        model=model,
        sample_id=sample.id,
        score=score,
        meta=meta,
        response=content,
        passed=False,
        failure=f"scoring failed ({SCORING_ERROR}): {reason}",
        scoring_error=reason,
    )
