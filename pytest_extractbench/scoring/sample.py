"""Score one model output against one gold object: parse, validate, compare every field."""

from __future__ import annotations

from typing import Any

from .fields import ABSENT, FieldWalker
from .options import DEFAULT_OPTIONS, ScoringOptions
from .parse import parse_output
from .result import SampleScore
from .schema import compile_schema, validation_errors

_walkers: dict[int, tuple[ScoringOptions, FieldWalker]] = {}


def _walker(options: ScoringOptions) -> FieldWalker:
    entry = _walkers.get(id(options))
    if entry is None or entry[0] is not options:
        entry = (options, FieldWalker(options))
        _walkers[id(options)] = entry
    return entry[1]


def score_sample(
    output: Any,
    expected: Any,
    schema: Any = None,
    *,
    options: ScoringOptions | None = None,
    sample_id: str = "",
) -> SampleScore:
    """Score ``output`` (raw model text, or an already-parsed JSON value) against ``expected``.

    ``schema`` (a JSON Schema dict) is used to validate the output and to tell
    required from optional fields; without it, any parseable JSON counts as valid.
    Never raises on odd output: unusable output is a result, not an error.
    """
    options = options or DEFAULT_OPTIONS
    parsed = parse_output(output)
    errors: list[str] = []
    if parsed.json_valid and schema is not None:
        errors = validation_errors(parsed.value, schema, validate_formats=options.validate_formats)
    node = compile_schema(schema) if schema is not None else None
    walker = _walker(options)
    try:
        fields = walker.walk(expected, parsed.value if parsed.json_valid else ABSENT, node)
    except RecursionError:
        fields = walker.walk(expected, ABSENT, node)
        errors.append("$: output is nested too deeply to compare")
        parsed = parsed._replace(json_valid=False, error="output is nested too deeply to compare")
    return SampleScore(
        sample_id=sample_id,
        json_valid=parsed.json_valid,
        schema_valid=parsed.json_valid and not errors,
        parse_error=parsed.error,
        validation_errors=errors,
        fields=fields,
        options=options,
    )
