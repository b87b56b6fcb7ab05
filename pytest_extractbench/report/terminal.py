"""Plain-text output: a failing sample's explanation and the end-of-session summary."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from ..gates import GateCheck
from ..scoring.result import EXACT

if TYPE_CHECKING:
    from ..dataset import DatasetProblem
    from ..record import SampleRecord

MAX_FAILING_FIELDS = 25
VALUE_WIDTH = 32


def clip(value: Any, width: int = VALUE_WIDTH) -> str:
    """A one-line JSON rendering of ``value``, cut to ``width`` characters."""
    if value is None:
        text = "-"
    else:
        text = json.dumps(value, ensure_ascii=False, default=str)
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def failure_text(record: SampleRecord) -> str:
    """Why a sample item failed, with expected vs predicted for each failing field."""
    score = record.score
    lines = [f"sample {record.sample_id!r} (model {record.model!r}): {record.failure}"]
    if score.parse_error:
        lines.append(f"  output: {score.parse_error}")
    for error in score.validation_errors[:10]:
        lines.append(f"  schema: {error}")
    if len(score.validation_errors) > 10:
        lines.append(f"  schema: ... {len(score.validation_errors) - 10} more")
    failing = [f for f in score.fields if f.category != EXACT]
    if failing:
        width = min(max(5, *(len(f.path) for f in failing)), 40)
        lines.append(f"  {'field':<{width}}  {'expected':<{VALUE_WIDTH}}  {'predicted':<{VALUE_WIDTH}}  category   score")
        for field in failing[:MAX_FAILING_FIELDS]:
            lines.append(
                f"  {field.path[:width]:<{width}}  {clip(field.expected):<{VALUE_WIDTH}}  "
                f"{clip(field.predicted):<{VALUE_WIDTH}}  {field.category:<9}  {field.score:.2f}"
            )
        if len(failing) > MAX_FAILING_FIELDS:
            lines.append(f"  ... {len(failing) - MAX_FAILING_FIELDS} more fields")
    lines.append(
        f"  eqs {score.eqs:.3f}  f1 partial {score.f1['partial']:.3f}  exact {score.observed.exact}/"
        f"{score.observed.expected} fields"
    )
    return "\n".join(lines)


def pct(value: float) -> str:
    return f"{100 * value:.1f}%"


def model_lines(model: str, metrics: Mapping[str, Any], checks: Sequence[GateCheck], tier: str) -> list[str]:
    """The headline block of one model (spec 4.5.1) and its SLA verdict."""
    lines = [
        f"model {model}: {metrics['num_samples']} samples",
        f"  EQS                 {metrics['extraction_quality_score']:.3f}  ({metrics['eqs_band']})",
        f"  schema validity     {pct(metrics['schema_validity_rate'])}   JSON valid {pct(metrics['json_valid_rate'])}",
        f"  field F1 (partial)  {metrics['field_f1_partial']:.3f}   strict {metrics['field_f1_strict']:.3f}"
        f"   lenient {metrics['field_f1_lenient']:.3f}",
        f"  exact match         {pct(metrics['exact_match_rate'])}",
        f"  hallucination rate  {pct(metrics['hallucination_rate'])}   omission rate {pct(metrics['field_omission_rate'])}",
        f"  type accuracy       {pct(metrics['type_accuracy'])}",
    ]
    if tier != "none":
        missed = [c for c in checks if c.passed is False]
        if missed:
            lines.append(f"  SLA {tier}: FAILED")
            lines.extend(f"    {c.describe()}" for c in missed)
        else:
            lines.append(f"  SLA {tier}: passed")
    lines.append(f"  recommendation: {metrics['recommendation']}")
    return lines


def problem_lines(problems: Sequence[DatasetProblem], limit: int = 20) -> list[str]:
    """Dataset and predictions problems, most important first."""
    if not problems:
        return []
    ordered = sorted(problems, key=lambda p: p.severity != "error")
    lines = [f"{len(problems)} input problem(s):"]
    lines.extend(f"  [{p.severity}] {p}" for p in ordered[:limit])
    if len(problems) > limit:
        lines.append(f"  ... {len(problems) - limit} more in metrics.json")
    return lines
