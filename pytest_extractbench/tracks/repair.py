"""Fix errors (Benchson's FixErrorsEvaluation): repair broken JSON so it is valid and keeps every value.

A sample is a valid instance, its schema and a breakage kind; the broken text is
made by :func:`.breakage.break_json` (or given as ``broken``). The repaired output
is scored with :func:`~pytest_extractbench.scoring.score_sample` against the
original, so "field agreement" is the extraction track's field F1 and exact match.
An item passes when the repair gives back exactly the original.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..scoring import FieldCounts, FieldResult, check_schema, score_sample, validation_errors
from .base import Messages, Track, TrackSample, mean
from .breakage import BREAKAGE_KINDS, BreakageError, break_json

SYSTEM = "You repair broken JSON documents. Answer with the corrected JSON only."
PROMPT = (
    "The JSON document below is broken. Fix it so that it is valid JSON that conforms to the schema, "
    "keeping every key and value as it is.\n\nSchema:\n{schema}\n\nBroken JSON:\n{broken}"
)


class RepairTrack(Track):
    name = "repair"
    headline = ("json_valid_rate", "schema_validity_rate", "exact_match_rate", "field_f1_partial")
    bundled_file = "repair.jsonl"
    description = "repair broken JSON against its schema (Benchson fix-errors)"
    json_answer = True

    def parse_row(self, row: Mapping[str, Any], sample_id: str, problem: Callable[..., None]) -> TrackSample | None:
        schema, original, kind = row.get("schema"), row.get("original"), row.get("kind")
        if not isinstance(schema, dict) or check_schema(schema):
            problem("'schema' must be a valid JSON Schema object", "schema")
            return None
        if "original" not in row:
            problem("missing 'original' (the valid instance)", "original")
            return None
        for message in validation_errors(original, schema)[:3]:
            problem(f"'original' violates its own schema at {message}", "original")
        broken = row.get("broken")
        if broken is None:
            try:
                broken = break_json(original, str(kind), seed=sample_id)
            except BreakageError as exc:
                problem(f"'kind': {exc}", "kind")
                return None
        elif not isinstance(broken, str):
            problem("'broken' must be a string", "broken")
            return None
        meta = {"topic": kind or "given", "kind": kind or "given"}
        return TrackSample(sample_id, {"schema": schema, "broken": broken}, original, meta)

    def build_request(self, sample: TrackSample) -> tuple[Messages, dict[str, Any]]:
        schema = json.dumps(sample.data["schema"], ensure_ascii=False)
        prompt = PROMPT.format(schema=schema, broken=sample.data["broken"])
        return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}], {}

    def score(self, sample: TrackSample, prediction: Any, options: Any = None) -> dict[str, Any]:
        score = score_sample(
            prediction, sample.expected, sample.schema, options=options, sample_id=sample.id, rule_errors="ignore"
        )
        # agreement is equality (after normalization): 6380 for 6379 is "exact" by the 0.95 composite, but changed
        differ = [f for f in score.fields if not (f.equal and f.type_ok is not False)]
        equal = sum(1 for f in score.fields if f.equal and f.type_ok is not False and f.category != "spurious")
        if not score.json_valid:
            failure: str | None = f"still not JSON: {score.parse_error}"
        elif not score.schema_valid:
            failure = f"repaired JSON violates the schema: {score.validation_errors[0]}"
        elif not score.exact_match:
            failure = f"values changed: {len(differ)} field(s) differ"
        else:
            failure = None
        return {
            "kind": sample.meta.get("kind"),
            "json_valid": score.json_valid,
            "schema_valid": score.schema_valid,
            "exact_match": score.exact_match,
            "field_f1_partial": score.f1["partial"],
            "field_f1_strict": score.f1["strict"],
            "fields_equal": equal if score.schema_valid else 0,
            "fields_expected": score.observed.expected,
            "observed": score.observed.as_dict(),
            "counts": score.counts.as_dict(),
            "parse_error": score.parse_error,
            "validation_errors": list(score.validation_errors[:5]),
            "failing_fields": [f.as_dict() for f in differ[:20]],
            "passed": failure is None,
            "failure": failure,
        }

    def aggregate(self, results: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        counts = sum((FieldCounts(**r["counts"]) for r in results), FieldCounts())
        precision, recall, f1 = counts.precision_recall_f1("partial")
        by_kind: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
        for result in results:
            by_kind[str(result["kind"])].append(result)
        return {
            "num_samples": len(results),
            "json_valid_rate": mean([float(r["json_valid"]) for r in results]),
            "schema_validity_rate": mean([float(r["schema_valid"]) for r in results]),
            "exact_match_rate": mean([float(r["exact_match"]) for r in results]),
            "field_precision_partial": precision,
            "field_recall_partial": recall,
            "field_f1_partial": f1,
            "field_f1_partial_macro": mean([r["field_f1_partial"] for r in results]),
            # the share of the original's fields given back unchanged (0 for invalid repairs)
            "field_agreement_rate": (sum(r["fields_equal"] for r in results) / expected)
            if (expected := sum(r["fields_expected"] for r in results))
            else 0.0,
            "by_kind": {
                kind: {
                    "samples": len(group),
                    "json_valid_rate": mean([float(r["json_valid"]) for r in group]),
                    "exact_match_rate": mean([float(r["exact_match"]) for r in group]),
                }
                for kind, group in sorted(by_kind.items())
            },
            "kinds": list(BREAKAGE_KINDS),
        }

    def summary_lines(self, section: Mapping[str, Any]) -> list[str]:
        kinds = ", ".join(f"{k} {100 * v['exact_match_rate']:.0f}%" for k, v in section["by_kind"].items())
        return [
            f"  JSON valid          {100 * section['json_valid_rate']:.1f}%   schema valid "
            f"{100 * section['schema_validity_rate']:.1f}%",
            f"  restored exactly    {100 * section['exact_match_rate']:.1f}%   fields unchanged "
            f"{100 * section['field_agreement_rate']:.1f}%   field F1 (partial) {section['field_f1_partial']:.3f}",
            f"  exact by kind       {kinds}",
        ]

    def failure_lines(self, result: Mapping[str, Any]) -> list[str]:
        lines = [f"  schema: {e}" for e in result.get("validation_errors", [])[:3]]
        for field in result.get("failing_fields", [])[:10]:
            f = FieldResult.from_dict(field)
            lines.append(
                f"  {f.path}: expected {json.dumps(f.expected, default=str)[:60]}, "
                f"got {json.dumps(f.predicted, default=str)[:60]} ({f.category})"
            )
        return lines
