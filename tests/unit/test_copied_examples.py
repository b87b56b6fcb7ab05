"""Values copied from the schema's examples: found in examples, defaults and "e.g." descriptions, counted only
when the gold differs, and reported per field."""

from __future__ import annotations

import pytest

from pytest_extractbench.analysis.diagnostics import copied_example_section, copied_examples, sample_diagnostics
from pytest_extractbench.dataset.records import SampleRecord
from pytest_extractbench.scoring import ScoringOptions, score_sample
from pytest_extractbench.scoring.examples import description_examples, schema_examples

OPTIONS = ScoringOptions()

RECEIPT = {
    "type": "object",
    "properties": {
        "date": {"type": "string", "description": "Date of the receipt, e.g. 25/12/2018."},
        "total": {"type": "string", "description": 'Total amount paid (e.g., "9.00")'},
        "company": {"type": "string", "examples": ["ACME SDN BHD", "Foo Ltd"]},
        "currency": {"type": "string", "default": "MYR"},
        "items": {"type": "array", "items": {"$ref": "#/$defs/item"}},
        "term": {"type": "string", "description": "An example of the term of the contract"},
    },
    "$defs": {"item": {"type": "object", "properties": {"qty": {"type": "integer", "examples": [1]}}}},
}


@pytest.mark.parametrize(
    ("description", "found"),
    [
        ("Date of the receipt, e.g. 25/12/2018.", ["25/12/2018"]),
        ('Total (e.g., "9.00")', ["9.00"]),
        ("term; for example: 2 years; or longer", ["2 years"]),
        ("e.g. John Smith. The name as printed", ["John Smith"]),
        ("Examples: USD, EUR", ["USD"]),
        ("An example of the term", []),  # "example" without a colon is a word, not a cue
        ("no cue at all", []),
        ("e.g." + "x" * 5000, []),  # nothing within reach of the cue ends: no example
    ],
)
def test_examples_in_descriptions(description: str, found: list[str]) -> None:
    assert description_examples(description) == found


def test_schema_examples_by_field_path() -> None:
    found = schema_examples(RECEIPT, OPTIONS)
    assert found["date"] == {"25/12/2018"}
    assert found["total"] == {"9.00", "9"}  # the number it spells too
    assert found["company"] == {"acme sdn bhd", "foo ltd"}  # normalized as fields are compared
    assert found["currency"] == {"myr"}
    assert found["items[].qty"] == {"1"}  # through the $ref
    assert "term" not in found


def test_a_self_referencing_schema_is_walked_to_a_bound() -> None:
    schema = {
        "$defs": {"n": {"type": "object", "description": "e.g. x", "properties": {"next": {"$ref": "#/$defs/n"}}}},
        "$ref": "#/$defs/n",
    }
    found = schema_examples(schema, OPTIONS)
    assert found["next"] == {"x"}
    assert max(path.count(".") for path in found) < 40


def test_a_copied_value_is_flagged_only_where_the_gold_differs() -> None:
    gold = {"date": "03/01/2019", "total": "15.50", "company": "ACME SDN BHD", "currency": "MYR", "items": [{"qty": 2}]}
    prediction = {
        "date": "25/12/2018",
        "total": "9.00",
        "company": "ACME SDN BHD",
        "currency": "MYR",
        "items": [{"qty": 1}],
        "term": "2 years",
    }
    score = score_sample(prediction, gold, RECEIPT)
    # company and currency are examples too, but the gold says the same: no copy
    assert copied_examples(score, RECEIPT, OPTIONS) == ["date", "total", "items[0].qty"]


def test_a_number_output_matches_a_number_example_in_text() -> None:
    score = score_sample(
        {"total": 9.0},
        {"total": 15.5},
        {"type": "object", "properties": {"total": {"type": "number", "description": "e.g. 9.00"}}},
    )
    assert copied_examples(
        score, {"type": "object", "properties": {"total": {"type": "number", "description": "e.g. 9.00"}}}, OPTIONS
    ) == ["total"]


def test_diagnostics_carry_copies_only_when_there_are_some() -> None:
    gold = {"date": "03/01/2019"}
    copied = score_sample({"date": "25/12/2018"}, gold, RECEIPT)
    found = sample_diagnostics(copied, "text", gold, '{"date": "25/12/2018"}', RECEIPT, OPTIONS)
    assert found["copied_examples"] == ["date"]
    clean = score_sample({"date": "03/01/2019"}, gold, RECEIPT)
    assert "copied_examples" not in sample_diagnostics(clean, "text", gold, '{"date": "03/01/2019"}', RECEIPT, OPTIONS)
    assert "copied_examples" not in sample_diagnostics(copied, "text", gold, "{}")  # no schema given


def _record(sample_id: str, copied: list[str]) -> SampleRecord:
    score = score_sample({}, {}, None, sample_id=sample_id)
    diagnostics = {"hallucination_types": [], "structure": {}}
    if copied:
        diagnostics["copied_examples"] = copied
    return SampleRecord(model="m", sample_id=sample_id, score=score, diagnostics=diagnostics)


def test_the_run_section_counts_values_samples_and_fields() -> None:
    records = [
        _record("a", ["date", "total"]),
        _record("b", ["date"]),
        _record("c", []),
        _record("d", ["items[0].qty", "items[3].qty"]),
    ]
    section = copied_example_section(records, OPTIONS)["copied_examples"]
    assert section == {"total": 5, "samples": 3, "by_field": {"date": 2, "items[].qty": 2, "total": 1}}


def test_no_copies_is_a_zero_section() -> None:
    assert copied_example_section([_record("a", [])], OPTIONS) == {
        "copied_examples": {"total": 0, "samples": 0, "by_field": {}}
    }
