"""An invalid output's validation errors listed at their first read, against the eager listing they replace:
jsonschema-rs's verdict alone decides validity where it is what the listing says, and the listing runs when read."""

from __future__ import annotations

from typing import Any

import pytest
from _recursion import frames_to_spare
from hypothesis import assume, given
from hypothesis import strategies as st

from pytest_extractbench import ScoringOptions, score_sample
from pytest_extractbench.scoring.result import SampleScore
from pytest_extractbench.scoring.schema import validation_errors, validity

# -- validation errors listed when read ---------------------------------------------------------------------------

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "maxLength": 5},
        "age": {"type": "integer", "minimum": 0},
        "email": {"type": "string", "format": "email"},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["name"],
    "additionalProperties": False,
}
PATTERNED = {"type": "object", "properties": {"code": {"type": "string", "pattern": "^[A-Z]{3}$"}}}

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=8,
)
instances = st.one_of(
    json_values,
    st.fixed_dictionaries(
        {},
        optional={
            "name": json_values | st.text(max_size=8),
            "age": json_values | st.integers(-3, 3),
            "email": st.sampled_from(["a@b.co", "not an email", ""]) | json_values,
            "tags": st.lists(st.text(max_size=3) | st.integers(), max_size=3),
            "code": st.sampled_from(["ABC", "abc", "ABCD"]) | json_values,
            "other": json_values,
        },
    ),
)


@given(instances, st.sampled_from([SCHEMA, PATTERNED, {"type": "array"}, True]), st.booleans())
def test_the_verdict_is_what_the_listing_says_or_none(instance: Any, schema: Any, formats: bool) -> None:
    verdict = validity(instance, schema, validate_formats=formats)
    listed = validation_errors(instance, schema, validate_formats=formats)
    assert verdict is None or verdict == (not listed)
    if schema is PATTERNED:
        assert verdict is None  # a regular expression may take the reference validator to decide


@given(instances, st.sampled_from([SCHEMA, PATTERNED]), st.booleans())
def test_score_sample_lists_the_same_errors_when_they_are_read(instance: Any, schema: Any, formats: bool) -> None:
    assume(not isinstance(instance, str))  # a string is raw model text to parse, not a parsed value
    options = ScoringOptions(validate_formats=formats)
    listed = validation_errors(instance, schema, validate_formats=formats)
    score = score_sample(instance, {"name": "Ann"}, schema, options=options)
    assert score.schema_valid == (not listed)
    assert score.validation_errors == tuple(listed)
    assert score.as_dict()["validation_errors"] == listed


def test_a_verdict_is_none_where_jsonschema_rs_cannot_decide_alone() -> None:
    assert validity({"code": "ABC"}, PATTERNED) is None  # a pattern: the listing decides
    assert validity({"a": 1}, {"properties": {"patternless": {}}}) is None  # any text starting "pattern" counts
    assert validity({"a": 1}, {"$ref": "https://example.com/remote.json"}) is None  # no jsonschema-rs validator
    assert validity({"name": "Ann"}, SCHEMA) is True
    assert validity({"name": "Annabel"}, SCHEMA) is False  # 7 characters > maxLength 5
    # a schema JSON cannot write (a bound past 64 bits) is not searched for patterns: the listing decides
    assert validity(1, {"type": "integer", "maximum": 2**70}) is None
    assert validity({1: "x"}, {"type": "object"}) is None  # jsonschema-rs raises on a key that is not text


def test_the_lazy_listing_runs_once_and_lets_the_output_go() -> None:
    calls = []

    def listing() -> list[str]:
        calls.append(1)
        return ["$.a: wrong"]

    score = SampleScore(
        sample_id="s",
        json_valid=True,
        schema_valid=False,
        parse_error=None,
        validation_errors=(),
        fields=(),
        options=ScoringOptions(),
        validation_errors_source=listing,
    )
    assert calls == []  # nothing listed until read
    assert score.validation_errors == ("$.a: wrong",) and score.validation_errors == ("$.a: wrong",)
    assert calls == [1] and score._errors == ("$.a: wrong",)  # the callable (and what it holds) let go
    score.validation_errors = ("$: assigned",)  # as a held score sets it
    assert score.validation_errors == ("$: assigned",)
    assert score.as_dict()["validation_errors"] == ["$: assigned"]


def test_an_invalid_outputs_error_reads_in_jsonschema_rs_words() -> None:
    score = score_sample({"name": "Annabel"}, {"name": "Ann"}, SCHEMA)
    assert score.validation_errors == ('$.name: "Annabel" is longer than 5 characters',)
    with pytest.raises(AttributeError):
        score.validation_errorz  # noqa: B018 - a misspelt attribute is still an error


def test_errors_are_listed_at_the_first_read_from_the_output_as_it_is_then() -> None:
    output = {"name": "Annabel", "age": -1}  # too long a name (7 > 5), an age under the minimum 0
    score = score_sample(output, {"name": "Ann"}, SCHEMA)
    assert score.schema_valid is False
    output["age"] = 3  # an already-parsed output is read when the errors are (as ANLS* reads it): the name's only
    assert [error.split(":")[0] for error in score.validation_errors] == ["$.name"]
    output["age"] = -1
    assert len(score.validation_errors) == 1  # listed once, then kept


def test_an_output_too_deep_to_walk_lists_its_schema_errors_before_saying_so() -> None:
    # jsonschema-rs judges the 100 levels without Python frames (invalid: b is not a string); the walk runs out
    # of the 60 frames left, so the listing runs before the note is added
    with frames_to_spare(60):
        score = score_sample({"b": 1, "extra": _deep(100)}, {"b": 1}, {"properties": {"b": {"type": "string"}}})
    assert score.json_valid is False and score.schema_valid is False
    assert score.validation_errors == (
        '$.b: 1 is not of type "string"',
        "$: output is nested too deeply to compare",
    )
    assert score.eqs == 0.0  # not even JSON as scored: no EQS component earns anything


def _deep(levels: int) -> Any:
    value: Any = "y"
    for _ in range(levels):
        value = {"a": value}
    return value
