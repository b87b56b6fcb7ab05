"""The error-pattern section counted by hand over two records whose fields are written out: every counter, the
comparator errors and their five examples, the top-ten list's order and cut."""

from __future__ import annotations

import math

import pytest

from pytest_extractbench.analysis.diagnostics import (
    _normal,
    error_pattern_section,
    hallucination_type,
    occurs_in,
    structure_mismatches,
)
from pytest_extractbench.dataset.records import SampleRecord
from pytest_extractbench.scoring import budget
from pytest_extractbench.scoring.budget import ScoringTimeout
from pytest_extractbench.scoring.options import ScoringOptions
from pytest_extractbench.scoring.result import (
    ERROR,
    EXACT,
    INCORRECT,
    MISSED,
    ORIGIN_KEY,
    ORIGIN_STRUCTURE,
    ORIGIN_UNKNOWN_KEY,
    PARTIAL,
    SPURIOUS,
    FieldResult,
    SampleScore,
)

OPTIONS = ScoringOptions()


def _field(path: str, category: str, **kw: object) -> FieldResult:
    return FieldResult(path, category, 0.0)._replace(**kw)


def _record(sample_id: str, fields: list[FieldResult], diagnostics: dict[str, object]) -> SampleRecord:
    score = SampleScore(
        sample_id=sample_id, json_valid=True, schema_valid=True, parse_error=None, validation_errors=(),
        fields=fields, options=OPTIONS,
    )  # fmt: skip
    return SampleRecord("m", sample_id, score, diagnostics=diagnostics)


FIRST = [
    _field("x1", ERROR, comparator="judge", error="down"),
    _field("x2", ERROR, error="boom"),  # the default comparator: counted under "?"
    _field("h", INCORRECT, expected="a", predicted="b", type_ok=True, similarity=(0.0, 0.0, 0.0)),
    _field("a.name", MISSED, expected="Ann", required=True),
    _field("b", MISSED, expected={"k": 1}, origin=ORIGIN_STRUCTURE),
    _field("c.name", SPURIOUS, predicted="Ann"),  # "name" is missed under a, found under c: wrong nesting
    _field("d", SPURIOUS, predicted=5, origin=ORIGIN_UNKNOWN_KEY),
    _field("e", INCORRECT, expected="x", predicted=3, expected_type="string", type_ok=False),
    _field("f", PARTIAL, expected="ab", predicted="abc", type_ok=True, similarity=(0.8, 0.8, 1.0)),
    _field("g", PARTIAL, expected="abc", predicted="ab", type_ok=True, similarity=(0.8, 0.8, 0.6)),
    _field("i", EXACT, expected=None, predicted="N/A", expected_type="number", type_ok=True, equal=True),
]
SECOND = [
    *(_field(f"p{n}", ERROR, comparator="judge", error=f"e{n}") for n in range(5)),
    _field("e", INCORRECT, expected="y", predicted=7, expected_type="string", type_ok=False),
    *(_field(f"k{n}", MISSED, expected=n, origin=ORIGIN_KEY) for n in range(4)),
]


def test_every_error_pattern_is_counted_once_where_it_applies() -> None:
    records = [
        _record("r1", FIRST, {"structure": {"array_vs_object": 2, "scalar_vs_container": 1}}),
        _record("r2", SECOND, {}),  # no structure mismatches recorded: none counted
    ]
    found = error_pattern_section(records, OPTIONS)
    assert found["error_patterns"] == {
        # wrong: h, e (r1), e (r2); missing: a.name, k0-k3 (b is a structure mismatch); hallucinated: c.name, d
        "extraction_errors": {"wrong_value": 3, "missing_value": 5, "hallucinated_value": 2, "partial_value": 2},
        # e twice by its type verdict; "N/A" where a number was asked for
        "type_errors": {"wrong_type": 2, "type_coercion_failed": 1},
        "structure_errors": {
            "wrong_nesting": 1,
            "array_vs_object": 2,
            "scalar_vs_container": 1,
            "missing_required_field": 1,
            "extra_field": 1,
        },
        # f contains all of the gold (containment 1.0): over; g part of it (0.6): incomplete; h nothing (0.0)
        "boundary_errors": {"incomplete_extraction": 1, "over_extraction": 1},
    }
    errors = found["comparator_errors"]
    assert (errors["total"], errors["by_comparator"]) == (7, {"?": 1, "judge": 6})
    assert errors["examples"] == [  # the first five, in record order
        {"sample_id": "r1", "field": "x1", "error": "down"},
        {"sample_id": "r1", "field": "x2", "error": "boom"},
        {"sample_id": "r2", "field": "p0", "error": "e0"},
        {"sample_id": "r2", "field": "p1", "error": "e1"},
        {"sample_id": "r2", "field": "p2", "error": "e2"},
    ]
    # 12 distinct (field, kind) pairs: e twice first, then the ones seen once by name; ten kept
    top = [(t["field"], t["error"], t["count"]) for t in found["top_field_errors"]]
    assert top == [
        ("e", "wrong_type", 2),
        ("a.name", "missing_value", 1),
        ("b", "missing_value", 1),
        ("c.name", "hallucinated_value", 1),
        ("d", "hallucinated_value", 1),
        ("f", "partial_value", 1),
        ("g", "partial_value", 1),
        ("h", "wrong_value", 1),
        ("k0", "missing_value", 1),
        ("k1", "missing_value", 1),
    ]
    assert found["top_field_errors"][0]["example"] == {"sample_id": "r1", "expected": "x", "predicted": 3}


@pytest.mark.parametrize(
    ("value", "text", "found"),
    [
        (1000, "total 1,000 eur", True),  # from 1,000 on, the thousands-separated form counts too
        (999, "total 999 eur", True),
        (1000.0, "total 1000 eur", True),  # a whole float is looked for as its integer
        (1500.5, "total 1,500.5 eur", False),  # only integers get the separated form
        (1500.5, "total 1500.5 eur", True),
        ([1], "1", False),  # a container is never "in the text"
    ],
)
def test_a_number_is_found_in_the_text_in_its_plain_or_separated_form(value: object, text: str, found: bool) -> None:
    assert occurs_in(value, _normal(text)) is found


def test_classifying_a_hallucination_checks_the_time_budget() -> None:
    token = budget._deadline.set(-math.inf)  # a deadline every clock reading is past
    try:
        with pytest.raises(ScoringTimeout):
            hallucination_type(_field("d", SPURIOUS, predicted=5), None)
    finally:
        budget._deadline.reset(token)


@pytest.mark.parametrize(
    ("expected", "predicted", "counts"),
    [
        ([{"a": 1}], [{"a": [1]}], (0, 1)),  # "[].a": a scalar in the gold, an array in the output
        ([{"a": 1}], [[1]], (1, 0)),  # "[]": objects against arrays
        ([1], [[1]], (0, 1)),  # "[]": scalars against arrays
        ([None, {"a": 1}], [None, {"a": {"b": 1}}], (0, 1)),  # null elements hold no shape
        ({"a": 1}, {"a": {"b": 1}}, (0, 1)),
    ],
)
def test_shape_mismatches_are_counted_per_index_free_place(
    expected: object, predicted: object, counts: tuple[int, int]
) -> None:
    found = structure_mismatches(expected, predicted)
    assert (found["array_vs_object"], found["scalar_vs_container"]) == counts
