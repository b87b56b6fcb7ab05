"""Create by schema (Benchson's CreateBySchemaEvaluation): given only a JSON Schema, produce a valid instance.

Scored on JSON validity and schema compliance, overall and per schema feature:
each schema lists the features it uses (enum, format, pattern, nested objects,
arrays, required, numeric bounds, ...), and a sample complies with a feature
unless a validation error is attributed to it (jsonschema's ``error.validator``
keyword, and the error's location for ``nested_object`` and ``array``). Output
that is not JSON complies with nothing.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..core import jsonio
from ..scoring import check_schema, parse_output
from ..scoring.schema import get_validator
from .base import Messages, Track, TrackSample, iter_schema_nodes, mean

SYSTEM = "You generate JSON documents. Answer with the JSON only."
PROMPT = "Create one realistic JSON instance that is valid against this JSON Schema:\n{schema}"

# validation keyword -> schema feature
KEYWORD_FEATURES = {
    "enum": "enum",
    "const": "const",
    "format": "format",
    "pattern": "pattern",
    "required": "required",
    "type": "types",
    "minimum": "numeric_bounds",
    "maximum": "numeric_bounds",
    "exclusiveMinimum": "numeric_bounds",
    "exclusiveMaximum": "numeric_bounds",
    "multipleOf": "numeric_bounds",
    "minLength": "string_length",
    "maxLength": "string_length",
    "minItems": "array_bounds",
    "maxItems": "array_bounds",
    "uniqueItems": "array_bounds",
    "additionalProperties": "closed_object",
    "unevaluatedProperties": "closed_object",
    "anyOf": "composition",
    "oneOf": "composition",
    "allOf": "composition",
    "not": "composition",
    "$ref": "ref",
}
FEATURES = (
    "types",
    "required",
    "enum",
    "const",
    "format",
    "pattern",
    "numeric_bounds",
    "string_length",
    "array",
    "array_bounds",
    "nested_object",
    "closed_object",
    "composition",
    "ref",
)


def schema_features(schema: Any) -> list[str]:
    """The features ``schema`` uses, in :data:`FEATURES` order."""
    found: set[str] = set()
    for node, depth in iter_schema_nodes(schema):
        for keyword, feature in KEYWORD_FEATURES.items():
            if keyword in node and not (keyword == "required" and not node[keyword]):
                if keyword == "additionalProperties" and node[keyword] is not False:
                    continue
                found.add(feature)
        types = node.get("type")
        types = set(types) if isinstance(types, list) else {types}
        if "array" in types or "items" in node:
            found.add("array")
        if ("object" in types or "properties" in node) and depth >= 1:
            found.add("nested_object")
    return [f for f in FEATURES if f in found]


def violated_features(instance: Any, schema: Any) -> tuple[list[str], list[str]]:
    """(features an error is attributed to, the error messages) for a parsed instance."""
    validator = get_validator(schema)
    hit: set[str] = set()
    messages: list[str] = []
    for error in sorted(validator.iter_errors(instance), key=lambda e: (e.json_path, e.message)):
        messages.append(f"{error.json_path}: {error.message[:200]}")
        feature = KEYWORD_FEATURES.get(str(error.validator))
        if feature:
            hit.add(feature)
        path = list(error.absolute_path)
        if any(isinstance(p, int) for p in path) or error.validator in ("items", "prefixItems", "contains"):
            hit.add("array")
        if sum(isinstance(p, str) for p in path) >= 2 or (path and error.validator == "required"):
            hit.add("nested_object")
    return sorted(hit), messages


class GenerateTrack(Track):
    name = "generate"
    headline = ("json_valid_rate", "schema_compliance_rate")
    bundled_file = "generate.jsonl"
    description = "create a valid instance from a JSON Schema alone (Benchson create-by-schema)"
    json_answer = True

    def parse_row(self, row: Mapping[str, Any], sample_id: str, problem: Callable[..., None]) -> TrackSample | None:
        schema = row.get("schema")
        if isinstance(schema, str):
            try:
                schema = jsonio.loads(schema, allow_nonfinite=False)
            except jsonio.JsonInputError as exc:
                problem(f"'schema' is a string but {exc}", "schema")
                return None
        if not isinstance(schema, dict):
            problem("missing 'schema' (a JSON Schema object)", "schema")
            return None
        errors = check_schema(schema)
        if errors:
            problem("not a valid JSON Schema: " + "; ".join(errors[:3]), "schema")
            return None
        features = schema_features(schema)
        meta = {"topic": row.get("topic") or "", "features": features}
        return TrackSample(sample_id, {"schema": schema}, None, meta)

    def build_request(self, sample: TrackSample) -> tuple[Messages, dict[str, Any]]:
        prompt = PROMPT.format(schema=json.dumps(sample.data["schema"], ensure_ascii=False))
        return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}], {}

    def score(self, sample: TrackSample, prediction: Any, options: Any = None) -> dict[str, Any]:
        features = list(sample.meta.get("features") or schema_features(sample.schema))
        parsed = parse_output(prediction)
        errors: list[str]
        if not parsed.json_valid:
            violated, errors = list(features), []
        else:
            violated, errors = violated_features(parsed.value, sample.schema)
        compliant = {f: f not in violated for f in features}
        schema_valid = parsed.json_valid and not errors
        if not parsed.json_valid:
            failure: str | None = f"unusable output: {parsed.error}"
        elif errors:
            failure = f"instance violates the schema ({len(errors)} error(s)): {errors[0]}"
        else:
            failure = None
        return {
            "json_valid": parsed.json_valid,
            "schema_valid": schema_valid,
            "parse_error": parsed.error,
            "validation_errors": errors[:10],
            "features": compliant,
            "passed": failure is None,
            "failure": failure,
        }

    def aggregate(self, results: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        per_feature: dict[str, dict[str, Any]] = {}
        for feature in FEATURES:
            having = [r["features"][feature] for r in results if feature in r["features"]]
            if having:
                per_feature[feature] = {
                    "samples": len(having),
                    "compliant": sum(having),
                    "compliance_rate": sum(having) / len(having),
                }
        violated = Counter(f for r in results for f, ok in r["features"].items() if not ok)
        return {
            "num_samples": len(results),
            "json_valid_rate": mean([float(r["json_valid"]) for r in results]),
            "schema_compliance_rate": mean([float(r["schema_valid"]) for r in results]),
            "per_feature": per_feature,
            "most_violated": [{"feature": f, "samples": n} for f, n in violated.most_common(5)],
        }

    def summary_lines(self, section: Mapping[str, Any]) -> list[str]:
        features = ", ".join(
            f"{name} {100 * v['compliance_rate']:.0f}% ({v['samples']})" for name, v in section["per_feature"].items()
        )
        return [
            f"  JSON valid          {100 * section['json_valid_rate']:.1f}%   schema compliant "
            f"{100 * section['schema_compliance_rate']:.1f}%",
            f"  per feature         {features}",
        ]

    def failure_lines(self, result: Mapping[str, Any]) -> list[str]:
        lines = [f"  schema: {e}" for e in result.get("validation_errors", [])[:5]]
        bad = [f for f, ok in result.get("features", {}).items() if not ok]
        if bad:
            lines.append(f"  features violated: {', '.join(bad)}")
        return lines
