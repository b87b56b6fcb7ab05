"""Per-sample diagnostics and their sections at their edges, each expected value worked out by hand: an example
clipped at exactly 80 characters, the shapes walked from the root, the defaults of ``sample_diagnostics``, the
copied-example ranking, the severities summed per type and a spurious field that is not misplaced."""

from __future__ import annotations

from typing import Any

from pytest_extractbench.analysis.diagnostics import (
    _clip,
    _kinds,
    copied_example_section,
    copied_examples,
    error_pattern_section,
    hallucination_section,
    sample_diagnostics,
    structure_mismatches,
)
from pytest_extractbench.dataset.records import SampleRecord
from pytest_extractbench.scoring.options import ScoringOptions
from pytest_extractbench.scoring.result import (
    INCORRECT,
    MISSED,
    ORIGIN_UNKNOWN_KEY,
    SPURIOUS,
    FieldResult,
    SampleScore,
)

OPTIONS = ScoringOptions()
SCHEMA = {"type": "object", "properties": {"company": {"type": "string", "examples": ["ACME"]}}}


def _field(path: str, category: str, **kw: object) -> FieldResult:
    return FieldResult(path, category, 0.0)._replace(**kw)


def _score(fields: list[FieldResult]) -> SampleScore:
    return SampleScore(
        sample_id="s", json_valid=True, schema_valid=True, parse_error=None, validation_errors=(),
        fields=fields, options=OPTIONS,
    )  # fmt: skip


def _record(fields: list[FieldResult], diagnostics: dict[str, Any]) -> SampleRecord:
    return SampleRecord("m", "s", _score(fields), diagnostics=diagnostics)


# --- examples clipped for the top-ten list ---


def test_an_example_of_exactly_80_characters_is_kept_and_one_of_81_is_clipped_to_80() -> None:
    eighty = "a" * 78  # its JSON text is '"' + 78 + '"': 80 characters, the limit
    assert _clip(eighty) == eighty
    eighty_one = "a" * 79  # 81 characters of JSON: cut to the first 79 and an ellipsis, 80 in all
    clipped = _clip(eighty_one)
    assert clipped == '"' + "a" * 78 + "…"
    assert len(clipped) == 80


def test_non_ascii_text_is_measured_by_its_characters_not_its_escapes() -> None:
    accents = "é" * 60  # 62 characters of JSON; escaped as \u00e9 it would be 2 + 6 x 60 = 362
    assert _clip(accents) == accents
    clipped = _clip("é" * 100)  # 102 characters: '"' and 78 of the accents, then the ellipsis
    assert clipped == '"' + "é" * 78 + "…"


# --- shapes walked from the root ---


def test_the_shapes_of_a_value_are_keyed_by_dotted_paths_from_the_root() -> None:
    out: dict[str, int] = {}
    _kinds({"a": {"b": 1, "c": [2, {"d": None}]}, "e": "x"}, "", out)
    # object 1, array 2, scalar 4; a null adds no shape, so a.c[].d never appears
    assert out == {"": 1, "a": 1, "a.b": 4, "a.c": 2, "a.c[]": 4 | 1, "e": 4}


def test_the_same_leaf_name_under_two_parents_is_two_places() -> None:
    gold = {"a": {"x": 1}, "b": {"x": {}}}
    guess = {"a": {"x": {}}, "b": {"x": 1}}
    # a.x: scalar vs object, b.x: object vs scalar; were both x one place, the shapes would match (scalar|object)
    assert structure_mismatches(gold, guess) == {"array_vs_object": 0, "scalar_vs_container": 2}


# --- copied examples ---


def test_a_schema_without_examples_copies_an_empty_list() -> None:
    score = _score([_field("company", INCORRECT, expected="Foo", predicted="ACME")])
    assert copied_examples(score, {"type": "object"}, OPTIONS) == []


def test_copied_examples_are_judged_with_the_options_given_and_by_default_the_defaults() -> None:
    # the prediction is the example in another case: the defaults fold case, case_sensitive does not
    score = _score([_field("company", INCORRECT, expected="Foo", predicted="acme")])
    folded = sample_diagnostics(score, "text", {"company": "Foo"}, '{"company": "acme"}', SCHEMA)
    assert folded["copied_examples"] == ["company"]
    exact = sample_diagnostics(
        score, "text", {"company": "Foo"}, '{"company": "acme"}', SCHEMA, ScoringOptions(case_sensitive=True)
    )
    assert "copied_examples" not in exact


def test_without_source_text_spurious_fields_are_typed_without_looking_for_them() -> None:
    score = _score(
        [_field("note", SPURIOUS, predicted="Ann", origin=ORIGIN_UNKNOWN_KEY), _field("name", SPURIOUS, predicted="x")]
    )
    # no text: never misplaced (3); an undeclared key is fabricated (1), a declared one a fabricated value (2)
    found = sample_diagnostics(score, None, {}, '{"note": "Ann", "name": "x"}')
    assert found == {"hallucination_types": [1, 2], "structure": {"array_vs_object": 0, "scalar_vs_container": 0}}


def test_an_empty_copied_list_is_no_sample_that_copied() -> None:
    records = [_record([], {"copied_examples": []}), _record([], {"copied_examples": ["a"]})]
    found = copied_example_section(records, OPTIONS)
    assert found == {"copied_examples": {"total": 1, "samples": 1, "by_field": {"a": 1}}}


def test_copied_fields_with_equal_counts_are_ranked_by_name() -> None:
    # seen first: b then a, once each, and items[0].q twice (one field, items[].q): ranked by count, then name
    records = [
        _record([], {"copied_examples": ["b", "items[0].q"]}),
        _record([], {"copied_examples": ["a", "items[3].q"]}),
    ]
    by_field = copied_example_section(records, OPTIONS)["copied_examples"]["by_field"]
    assert list(by_field.items()) == [("items[].q", 2), ("a", 1), ("b", 1)]


# --- hallucination severity ---


def test_severity_sums_types_one_and_two_then_three_then_four() -> None:
    types = [1, 2, 2, 3, 3, 3, 4, 4, 4, 4]
    record = _record([_field(f"f{n}", SPURIOUS) for n in range(len(types))], {"hallucination_types": types})
    found = hallucination_section([record], OPTIONS)["hallucination_analysis"]
    assert found["by_type"] == {
        "type_1_fabricated": 1,
        "type_2_fabricated_value": 2,
        "type_3_misplaced": 3,
        "type_4_excess_elements": 4,
    }
    # critical = type 1 + type 2 = 1 + 2, moderate = type 3, minor = type 4; 10 in all
    assert found["severity"] == {"critical": 3, "moderate": 3, "minor": 4}
    assert found["total"] == 10


# --- wrong nesting ---


def test_a_spurious_field_whose_leaf_is_missed_nowhere_is_not_wrongly_nested() -> None:
    fields = [
        _field("a.name", MISSED, expected="Ann"),
        _field("c.note", SPURIOUS, predicted="Ann"),  # "note" is missed nowhere: a plain hallucination
        _field("a.age", SPURIOUS, predicted=3),  # not missed either
    ]
    structure = error_pattern_section([_record(fields, {})], OPTIONS)["error_patterns"]["structure_errors"]
    assert structure["wrong_nesting"] == 0
