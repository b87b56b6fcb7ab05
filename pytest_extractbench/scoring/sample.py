"""Score one model output against one gold object: parse, validate, compare every field."""

from __future__ import annotations

from functools import partial
from typing import Any

from .anls_walk import anls_star_by_key
from .emit import ABSENT
from .fields import FieldWalker
from .options import DEFAULT_OPTIONS, ScoringOptions
from .parse import parse_output
from .postprocess import apply_post_processors
from .result import SampleScore
from .rules import EvalSchemaError, compile_rules, warn_ignored
from .schema import validation_errors, validity

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
    rule_errors: str = "raise",
) -> SampleScore:
    """Score ``output`` (raw model text, or an already-parsed JSON value) against ``expected``.

    ``schema`` (a JSON Schema dict) is used to validate the output, to tell required
    from optional fields, and for its x-eval-* rules (comparators, transforms, skip,
    alignment). Broken x-eval-* keys raise :class:`~.rules.EvalSchemaError` (ignored ones warn)
    unless ``rule_errors="ignore"`` (then their defaults apply). Never raises on odd output:
    unusable output is a result, not an error. ANLS* is computed when the score's ``anls_star`` (or
    its per-key scores, or ``as_dict``) is first read, from ``expected`` and the parsed output as they
    are then: it costs as much as the rest of scoring, and most callers of a field-level score never read it.
    With ``options.anls_star`` off it is not measured (None). Likewise an invalid output's validation errors are
    listed when first read (whether it is valid is known at once, from jsonschema-rs's verdict).
    """
    options = options or DEFAULT_OPTIONS
    parsed = parse_output(output)
    errors: list[str] = []
    # an invalid output's errors are listed when first read (jsonschema-rs's verdict alone decides validity), from
    # the parsed output as it is then, as ANLS* is; where the verdict alone cannot tell, they are listed now
    listing: partial[list[str]] | None = None
    if parsed.json_valid and schema is not None:
        verdict = validity(parsed.value, schema, validate_formats=options.validate_formats)
        if verdict is None:
            errors = validation_errors(parsed.value, schema, validate_formats=options.validate_formats)
        elif not verdict:
            listing = partial(validation_errors, parsed.value, schema, validate_formats=options.validate_formats)
    node = None
    if schema is not None:
        ruleset = compile_rules(schema)
        if rule_errors != "ignore":
            if ruleset.errors:
                raise EvalSchemaError(ruleset.errors)
            warn_ignored(ruleset)
        node = ruleset.root
    walker = _walker(options)
    try:
        fields = walker.walk(expected, parsed.value if parsed.json_valid else ABSENT, node)
    except RecursionError:
        fields = walker.walk(expected, ABSENT, node)
        if listing is not None:
            errors, listing = listing(), None
        errors.append("$: output is nested too deeply to compare")
        parsed = parsed._replace(json_valid=False, error="output is nested too deeply to compare")
    if options.post_processors:
        fields = apply_post_processors(fields, options.post_processors, options)
    return SampleScore(
        sample_id=sample_id,
        json_valid=parsed.json_valid,
        schema_valid=parsed.json_valid and not errors and listing is None,
        parse_error=parsed.error,
        validation_errors=errors,
        validation_errors_source=listing,
        fields=fields,
        options=options,
        anls_star_source=(
            partial(_anls_star, expected, parsed.value if parsed.json_valid else _NOTHING)
            if options.anls_star
            else None
        ),
    )


_NOTHING = object()


def _anls_star(expected: Any, predicted: Any) -> tuple[float, dict[str, float]]:
    """ANLS* of the raw output and per key path; an output with no JSON extracted nothing (an empty object when
    the gold is one, so each gold key shows what it lost, else null)."""
    if predicted is _NOTHING:
        predicted = {} if isinstance(expected, dict) else None
    try:
        return anls_star_by_key(expected, predicted)
    except RecursionError:
        return 0.0, {}


SCORING_ERROR = "scoring_error"
"""The outcome of a sample whose scoring raised or ran out of time (counted, never dropped)."""


def scoring_error_score(
    expected: Any, reason: str, *, options: ScoringOptions | None = None, sample_id: str = ""
) -> SampleScore:
    """The score of a sample that could not be scored: invalid output, so 0 on every accuracy metric,
    with the gold's fields missed when they can still be listed."""
    options = options or DEFAULT_OPTIONS
    try:
        fields = _walker(options).walk(expected, ABSENT, None)
    except Exception:  # noqa: BLE001 - the gold itself may be what failed
        fields = []
    return SampleScore(
        sample_id=sample_id,
        json_valid=False,
        schema_valid=False,
        parse_error=f"{SCORING_ERROR}: {reason}",
        validation_errors=(),
        fields=fields,
        options=options,
        anls_star=0.0 if options.anls_star else None,
    )
