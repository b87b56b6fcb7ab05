"""Where and how extraction goes wrong: hallucination types, error patterns.

Two halves:

- :func:`sample_diagnostics` runs where the item ran (it needs the source text, which
  records do not carry) and returns a small JSON-able dict that travels in the record,
  so aggregation is the same with and without xdist;
- the ``*_section`` functions aggregate records on the controller (``metrics.SECTIONS``).

Hallucination types (over spurious fields, so they add up to the spurious count behind
``hallucination_rate``):

1. fabricated: a field name the schema does not declare, with a value not in the text;
2. fabricated value: a declared field, with a value not in the text;
3. misplaced: the value does occur in the text, under a field where the gold has none;
4. excess array elements: fields of predicted array elements that match no gold element.

Severity: critical = types 1 + 2, moderate = type 3, minor = type 4. A value
"occurs in the text" when its normalized form (case-folded, whitespace collapsed) appears
with word boundaries; numbers are also looked for with thousands separators. Booleans
and nulls never count as found.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from ..dataset.records import SampleRecord
from ..scoring import ScoringOptions, parse_output
from ..scoring.budget import check as budget_check
from ..scoring.examples import example_key, schema_examples
from ..scoring.result import (
    ERROR,
    EXACT,
    INCORRECT,
    MISSED,
    ORIGIN_EXTRA_ELEMENT,
    ORIGIN_STRUCTURE,
    ORIGIN_UNKNOWN_KEY,
    PARTIAL,
    SPURIOUS,
    FieldResult,
    SampleScore,
)

HALLUCINATION_TYPES = ("type_1_fabricated", "type_2_fabricated_value", "type_3_misplaced", "type_4_excess_elements")
# Strings models write for "no value" (type_coercion_failed: "N/A" instead of null).
PLACEHOLDERS = frozenset(
    {
        "n/a",
        "na",
        "none",
        "null",
        "nil",
        "unknown",
        "-",
        "--",
        "—",
        "not available",
        "not specified",
        "not mentioned",
        "not provided",
        "not applicable",
        "tbd",
        "?",
    }
)
TOP_ERRORS = 10
MAX_EXAMPLE = 80


@lru_cache(maxsize=65536)
def field_name(path: str) -> str:
    """The index-free field name: ``items[2].sku`` -> ``items[].sku``."""
    return re.sub(r"\[\d+\]", "[]", path)


def _normal(text: str) -> str:
    return " ".join(text.casefold().split())


def _number_forms(value: float) -> list[str]:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    forms = [str(value)]
    if isinstance(value, int) and abs(value) >= 1000:
        forms.append(f"{value:,}")
    return forms


_WORD = re.compile(r"\w+")


class TextIndex:
    """The normalized source text, searchable for many values in about linear time.

    A value made of word characters only occurs, with word boundaries, exactly when it is one of
    the text's words: a set lookup. Other values are first ruled out by a plain substring test
    and only then searched with the boundary regex; answers are memoized per value. (10,000
    spurious keys against a 2 MB text took 202 s one regex scan each; this takes well under a second.)
    """

    def __init__(self, normal_text: str) -> None:
        self.text = normal_text
        self._words: set[str] | None = None
        self._seen: dict[str, bool] = {}

    def contains(self, needle: str) -> bool:
        found = self._seen.get(needle)
        if found is None:
            if _WORD.fullmatch(needle):
                if self._words is None:
                    self._words = set(_WORD.findall(self.text))
                found = needle in self._words
            else:
                found = _bounded_find(self.text, needle)
            self._seen[needle] = found
        return found


def _is_word(char: str) -> bool:
    return char.isalnum() or char == "_"  # what ``\w`` matches in a str pattern


def _bounded_find(text: str, needle: str) -> bool:
    r"""Whether ``needle`` occurs in ``text`` with no word character on either side, as the regex
    ``(?<!\w)needle(?!\w)`` says; found by ``str.find``, since compiling that regex for every
    distinct value took longer than the search itself."""
    start = text.find(needle)
    while start != -1:
        end = start + len(needle)
        if (start == 0 or not _is_word(text[start - 1])) and (end == len(text) or not _is_word(text[end])):
            return True
        start = text.find(needle, start + 1)
    return False


def occurs_in(value: Any, normal_text: str | TextIndex) -> bool:
    """Whether a predicted scalar appears in the (normalized) source text."""
    kind = type(value)
    if kind is str:
        needles = [_normal(value)]
    elif kind is int or kind is float:
        needles = _number_forms(value)
    else:
        return False
    index = normal_text if isinstance(normal_text, TextIndex) else TextIndex(normal_text)
    return any(needle and index.contains(needle) for needle in needles)


def hallucination_type(field: FieldResult, normal_text: str | TextIndex | None) -> int:
    """1-4 for one spurious field (``normal_text`` None: the text is unknown, so never type 3)."""
    budget_check()  # a hostile output can hold many thousands of spurious fields
    if field.origin == ORIGIN_EXTRA_ELEMENT:
        return 4
    if normal_text is not None and occurs_in(field.predicted, normal_text):
        return 3
    return 1 if field.origin == ORIGIN_UNKNOWN_KEY else 2


# The shapes a path holds somewhere, as bits (one int per path instead of a set).
_OBJECT, _ARRAY, _SCALAR = 1, 2, 4


def _kinds(value: Any, path: str, out: dict[str, int]) -> None:
    """Or into ``out[path]`` the shapes found at every index-free path of ``value``.

    Scalar children are handled in their container's loop: they are most of any value, and this
    spares them a call each.
    """
    kind = type(value)
    if kind is dict:
        out[path] = out.get(path, 0) | _OBJECT
        for key, child in value.items():
            child_path = f"{path}.{key}" if path else key
            child_kind = type(child)
            if child_kind is dict or child_kind is list:
                _kinds(child, child_path, out)
            elif child is not None:
                out[child_path] = out.get(child_path, 0) | _SCALAR
    elif kind is list:
        out[path] = out.get(path, 0) | _ARRAY
        element_path = f"{path}[]"
        for element in value:
            element_kind = type(element)
            if element_kind is dict or element_kind is list:
                _kinds(element, element_path, out)
            elif element is not None:
                out[element_path] = out.get(element_path, 0) | _SCALAR
    elif value is not None:
        out[path] = out.get(path, 0) | _SCALAR


def structure_mismatches(expected: Any, predicted: Any) -> dict[str, int]:
    """Places (index-free paths) where gold and prediction disagree on the shape: an array where the
    other has an object, or a container where the other has a scalar. Independent of array alignment."""
    gold: dict[str, int] = {}
    guess: dict[str, int] = {}
    _kinds(expected, "", gold)
    _kinds(predicted, "", guess)
    counts = {"array_vs_object": 0, "scalar_vs_container": 0}
    for path, kinds in gold.items():
        other = guess.get(path, 0)
        if not other or kinds & other:
            continue
        if (kinds | other) & (_ARRAY | _OBJECT) == _ARRAY | _OBJECT:
            counts["array_vs_object"] += 1
        else:
            counts["scalar_vs_container"] += 1
    return counts


def copied_examples(score: SampleScore, schema: Any, options: ScoringOptions) -> list[str]:
    """Paths of the fields whose predicted value is one of the schema's examples for that field while the gold
    differs (wrong, partial or hallucinated fields only: an example that is also the answer is no copy)."""
    examples = schema_examples(schema, options)
    if not examples:
        return []
    copied = []
    for f in score.fields:
        if f.category not in _COPYABLE:
            continue
        shown = examples.get(field_name(f.path))
        if shown and example_key(f.predicted, options) in shown:
            copied.append(f.path)
    return copied


_COPYABLE = frozenset({INCORRECT, PARTIAL, SPURIOUS})


def sample_diagnostics(
    score: SampleScore,
    text: str | None,
    expected: Any,
    output: Any,
    schema: Any = None,
    options: ScoringOptions | None = None,
) -> dict[str, Any]:
    """What needs the source text, the schema or the raw values, per sample: a hallucination type for each
    spurious field (in field order), the shape mismatches, and the fields copied from the schema's examples."""
    spurious = [f for f in score.fields if f.category == SPURIOUS]
    index = TextIndex(_normal(text)) if text and spurious else None
    types = [hallucination_type(f, index) for f in spurious]
    parsed = parse_output(output)
    shapes = structure_mismatches(expected, parsed.value) if parsed.json_valid else {}
    out: dict[str, Any] = {"hallucination_types": types, "structure": shapes}
    copied = copied_examples(score, schema, options or ScoringOptions()) if schema is not None else []
    if copied:  # absent when none: most samples copy nothing, and records stay as they were
        out["copied_examples"] = copied
    return out


def copied_example_section(records: Sequence[SampleRecord], options: ScoringOptions) -> dict[str, Any]:
    """Values copied from the schema's examples: how many, in how many samples, and on which fields."""
    by_field: Counter[str] = Counter()
    samples = 0
    for record in records:
        copied = record.diagnostics.get("copied_examples") if isinstance(record.diagnostics, dict) else None
        if isinstance(copied, list) and copied:
            samples += 1
            by_field.update(field_name(str(path)) for path in copied)
    ranked = sorted(by_field.items(), key=lambda item: (-item[1], item[0]))[:TOP_ERRORS]
    return {"copied_examples": {"total": sum(by_field.values()), "samples": samples, "by_field": dict(ranked)}}


def _types_of(record: SampleRecord) -> list[int]:
    found = record.diagnostics.get("hallucination_types")
    spurious = [f for f in record.score.fields if f.category == SPURIOUS]
    if isinstance(found, list) and len(found) == len(spurious):
        return found
    return [hallucination_type(f, None) for f in spurious]  # a record without its diagnostics


def hallucination_section(records: Sequence[SampleRecord], options: ScoringOptions) -> dict[str, Any]:
    """Hallucinations by type and severity."""
    counts: Counter[int] = Counter()
    for record in records:
        counts.update(_types_of(record))
    by_type = {name: counts[n] for n, name in enumerate(HALLUCINATION_TYPES, start=1)}
    severity = {"critical": counts[1] + counts[2], "moderate": counts[3], "minor": counts[4]}
    return {"hallucination_analysis": {"total": sum(counts.values()), "by_type": by_type, "severity": severity}}


def _clip(value: Any) -> Any:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return value if len(text) <= MAX_EXAMPLE else text[: MAX_EXAMPLE - 1] + "…"


def _is_placeholder(value: Any) -> bool:
    return type(value) is str and value.strip().casefold() in PLACEHOLDERS


def field_error(field: FieldResult) -> str | None:
    """The error kind of one field for the top-10 list (None for exact and excluded fields)."""
    category = field.category
    if category == INCORRECT:
        return "wrong_type" if field.type_ok is False else "wrong_value"
    if category == PARTIAL:
        return "partial_value"
    if category == MISSED:
        return "missing_value"
    if category == SPURIOUS:
        return "hallucinated_value"
    return None


def error_pattern_section(records: Sequence[SampleRecord], options: ScoringOptions) -> dict[str, Any]:
    """Every error category, counted over fields (shape errors over places), and the
    10 most common field-level errors. Categories are lenses, not a partition across groups: a
    truncated string is both a ``partial_value`` and an ``incomplete_extraction``."""
    extraction = dict.fromkeys(("wrong_value", "missing_value", "hallucinated_value", "partial_value"), 0)
    types = dict.fromkeys(("wrong_type", "type_coercion_failed"), 0)
    structure = dict.fromkeys(
        ("wrong_nesting", "array_vs_object", "scalar_vs_container", "missing_required_field", "extra_field"), 0
    )
    boundary = dict.fromkeys(("incomplete_extraction", "over_extraction"), 0)
    top: Counter[tuple[str, str]] = Counter()
    examples: dict[tuple[str, str], dict[str, Any]] = {}
    errors: Counter[str] = Counter()
    error_examples: list[dict[str, Any]] = []
    for record in records:
        missed_names: dict[str, set[str]] = {}
        spurious_fields: list[FieldResult] = []
        for field in record.score.fields:
            category = field.category
            if category == ERROR:
                errors[field.comparator or "?"] += 1
                if len(error_examples) < 5:
                    error_examples.append({"sample_id": record.sample_id, "field": field.path, "error": field.error})
                continue
            structural = field.origin == ORIGIN_STRUCTURE
            if category == INCORRECT:
                extraction["wrong_value"] += 1
            elif category == PARTIAL:
                extraction["partial_value"] += 1
            elif category == MISSED:
                if not structural:
                    extraction["missing_value"] += 1
                    name = field_name(field.path)
                    parent, _, leaf = name.rpartition(".")
                    missed_names.setdefault(leaf, set()).add(parent)
                if field.required:
                    structure["missing_required_field"] += 1
            elif category == SPURIOUS:
                if not structural:
                    extraction["hallucinated_value"] += 1
                    spurious_fields.append(field)
                if field.origin == ORIGIN_UNKNOWN_KEY:
                    structure["extra_field"] += 1
            if category in (EXACT, INCORRECT, PARTIAL, SPURIOUS) and not structural:
                if _is_placeholder(field.predicted) and field.expected_type != "string":
                    types["type_coercion_failed"] += 1
                elif field.type_ok is False:
                    types["wrong_type"] += 1
            if category in (INCORRECT, PARTIAL) and field.similarity is not None and not field.equal:
                containment = field.similarity[2]
                if containment >= 1.0:
                    boundary["over_extraction"] += 1
                elif containment > 0.0:
                    boundary["incomplete_extraction"] += 1
            kind = field_error(field)
            if kind is not None:
                key = (field_name(field.path), kind)
                top[key] += 1
                if key not in examples:
                    examples[key] = {
                        "sample_id": record.sample_id,
                        "expected": _clip(field.expected),
                        "predicted": _clip(field.predicted),
                    }
        for field in spurious_fields:  # a leaf the gold has elsewhere: found at the wrong depth
            parent, _, leaf = field_name(field.path).rpartition(".")
            if leaf in missed_names and parent not in missed_names[leaf]:
                structure["wrong_nesting"] += 1
        shapes = record.diagnostics.get("structure") or {}
        for shape in ("array_vs_object", "scalar_vs_container"):
            structure[shape] += int(shapes.get(shape, 0))
    ranked = sorted(top.items(), key=lambda item: (-item[1], item[0]))[:TOP_ERRORS]
    return {
        "error_patterns": {
            "extraction_errors": extraction,
            "type_errors": types,
            "structure_errors": structure,
            "boundary_errors": boundary,
        },
        "top_field_errors": [
            {"field": name, "error": kind, "count": count, "example": examples[(name, kind)]}
            for (name, kind), count in ranked
        ],
        "comparator_errors": {
            "total": sum(errors.values()),
            "by_comparator": dict(sorted(errors.items())),
            "examples": error_examples,
        },
    }
