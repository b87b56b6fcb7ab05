"""Diagnostics on hand-built samples: every number below is counted by hand in the comments."""

from __future__ import annotations

import json
import math

import pytest

from pytest_extractbench import SampleRecord, ScoringOptions, model_metrics, score_sample
from pytest_extractbench.analysis.breakdowns import breakdown_section, omission_section
from pytest_extractbench.analysis.diagnostics import (
    error_pattern_section,
    field_name,
    hallucination_section,
    occurs_in,
    sample_diagnostics,
    structure_mismatches,
)
from pytest_extractbench.analysis.distributions import (
    complexity_correlation_section,
    pearson,
    string_similarity_section,
)

OPTIONS = ScoringOptions()
SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "city": {"type": "string"},
        "age": {"type": "integer"},
        "address": {"type": "object", "properties": {"street": {"type": "string"}, "zip": {"type": "string"}}},
        "items": {"type": "array", "items": {"type": "object", "properties": {"sku": {"type": "string"}}}},
        "phone": {"type": "string"},
    },
    "required": ["name", "age"],
}
TEXT = "Ann Lee (41) lives at 5 Elm Road, Oslo. She ordered A-1 and B-2. Call 555-0100."
GOLD = {"name": "Ann Lee", "age": 41, "address": {"street": "5 Elm Road", "zip": "0150"}, "items": [{"sku": "A-1"}]}


def record(output: dict, *, gold=GOLD, text=TEXT, sample_id="s1", meta=None, response=None) -> SampleRecord:
    score = score_sample(json.dumps(output), gold, SCHEMA, options=OPTIONS, sample_id=sample_id)
    return SampleRecord(
        model="m",
        sample_id=sample_id,
        score=score,
        meta=meta or {},
        response=response or {},
        diagnostics=sample_diagnostics(score, text, gold, json.dumps(output)),
    )


def test_field_names_drop_indexes() -> None:
    assert field_name("items[12].sku") == "items[].sku" and field_name("a.b[0][3]") == "a.b[][]"


def test_occurs_in_uses_word_boundaries_and_number_forms() -> None:
    text = " ".join("Paid 1,200 dollars to ACME Corp on day 7.".casefold().split())
    assert occurs_in("acme corp", text) and occurs_in(1200, text) and occurs_in(7.0, text)
    assert not occurs_in("acm", text) and not occurs_in(12, text) and not occurs_in(True, text)


def test_hallucination_types_and_severity() -> None:
    output = {
        "name": "Ann Lee",
        "age": 41,
        "address": {"street": "5 Elm Road", "zip": "0150"},
        "items": [{"sku": "A-1"}, {"sku": "B-2"}],  # B-2: an extra element -> type 4
        "city": "Oslo",  # declared field, gold has none, value is in the text -> type 3
        "phone": "555-9999",  # declared field, value not in the text -> type 2
        "email": "ann@example.com",  # undeclared field, not in the text -> type 1
    }
    rec = record(output)
    assert sorted(rec.diagnostics["hallucination_types"]) == [1, 2, 3, 4]
    out = hallucination_section([rec], OPTIONS)["hallucination_analysis"]
    assert out == {
        "total": 4,
        "by_type": {
            "type_1_fabricated": 1,
            "type_2_fabricated_value": 1,
            "type_3_misplaced": 1,
            "type_4_excess_elements": 1,
        },
        "severity": {"critical": 2, "moderate": 1, "minor": 1},
    }
    # the total is the spurious count behind hallucination_rate
    assert out["total"] == rec.score.observed.spurious


def test_without_the_text_nothing_is_misplaced() -> None:
    rec = record({"name": "Ann Lee", "age": 41, "city": "Oslo"}, text="")
    assert rec.diagnostics["hallucination_types"] == [2]
    rec.diagnostics = {}  # a record from elsewhere: classified without the text
    assert hallucination_section([rec], OPTIONS)["hallucination_analysis"]["by_type"]["type_2_fabricated_value"] == 1


def test_structure_mismatches_count_places_not_leaves() -> None:
    gold = {"address": {"street": "x", "zip": "y"}, "items": [{"sku": "a"}], "tags": ["t"]}
    output = {"address": [{"street": "x"}], "items": "a", "tags": ["t"]}
    assert structure_mismatches(gold, output) == {"array_vs_object": 1, "scalar_vs_container": 1}


def test_every_error_category_on_one_sample() -> None:
    output = {
        "name": "Ann",  # partial (composite 0.5*0.667+0.3*0.429+0.2*0.429 = 0.548) and incomplete extraction
        "age": "N/A",  # placeholder where a number is expected: type coercion failed, wrong value
        "address": {"street": "5 Elm Road, Oslo, Norway"},  # over-extraction (partial or incorrect); zip missed
        "zip": "0150",  # a leaf the gold has at address.zip: wrong nesting; also a hallucinated value
        "items": {"sku": "A-1"},  # object instead of array: array_vs_object
        "note": "x",  # undeclared: extra field
    }
    rec = record(output)
    got = error_pattern_section([rec], OPTIONS)
    patterns = got["error_patterns"]
    fields = {f.path: f for f in rec.score.fields}
    assert fields["name"].category == "partial" and fields["age"].category == "incorrect"
    assert patterns["extraction_errors"] == {
        "wrong_value": 1 + (fields["address.street"].category == "incorrect"),
        "partial_value": 1 + (fields["address.street"].category == "partial"),
        "missing_value": 1,  # address.zip (items[0].sku is missed through the structure error)
        "hallucinated_value": 2,  # zip, note
    }
    assert patterns["type_errors"] == {"wrong_type": 0, "type_coercion_failed": 1}
    # zip and note are both undeclared at the top level: two extra fields
    assert patterns["structure_errors"] == {
        "wrong_nesting": 1,
        "array_vs_object": 1,
        "scalar_vs_container": 0,
        "missing_required_field": 0,
        "extra_field": 2,
    }
    assert patterns["boundary_errors"] == {"incomplete_extraction": 1, "over_extraction": 1}
    assert got["comparator_errors"]["total"] == 0


def test_top_field_errors_rank_by_frequency() -> None:
    records = [record({"name": "Ann Lee", "age": age}, sample_id=f"s{i}") for i, age in enumerate((10, 20, 41))]
    records.append(
        record(
            {"name": "Bob", "age": 41, "address": {"street": "5 Elm Road", "zip": "0150"}, "items": [{"sku": "A-1"}]},
            sample_id="s9",
        )
    )
    top = error_pattern_section(records, OPTIONS)["top_field_errors"]
    # address.street, address.zip, items[].sku missed 3 times each; age wrong twice (1 - 31/41 and 1 - 21/41
    # are below 0.5; 41 is right); "Bob" for "Ann Lee" once
    assert [(t["field"], t["error"], t["count"]) for t in top] == [
        ("address.street", "missing_value", 3),
        ("address.zip", "missing_value", 3),
        ("items[].sku", "missing_value", 3),
        ("age", "wrong_value", 2),
        ("name", "wrong_value", 1),
    ]
    assert top[0]["example"] == {"sample_id": "s0", "expected": "5 Elm Road", "predicted": None}


def test_breakdowns_and_omissions_by_type_depth_name_required() -> None:
    # name, age, address.street exact; address.zip and items[0].sku missed; city spurious
    rec = record({"name": "Ann Lee", "age": 41, "address": {"street": "5 Elm Road"}, "city": "Oslo"})
    out = breakdown_section([rec], OPTIONS)
    by_depth = out["field_metrics_by_depth"]
    # depth 0: name, age exact, city spurious -> P = 2/3, R = 1
    assert by_depth["0"]["precision_strict"] == pytest.approx(2 / 3) and by_depth["0"]["recall_strict"] == 1.0
    # depth 1 (inside address and inside an items element): street exact, zip and sku missed -> P = 1, R = 1/3
    assert by_depth["1"]["precision_strict"] == 1.0 and by_depth["1"]["recall_strict"] == pytest.approx(1 / 3)
    assert out["field_metrics_by_type"]["number"] == {
        **out["field_metrics_by_type"]["number"],
        "support": 1,
        "recall_partial": 1.0,
    }
    # strings: name, street exact, zip, sku missed, city spurious -> P = 2/3, R = 2/4
    assert out["field_metrics_by_type"]["string"]["precision_partial"] == pytest.approx(2 / 3)
    assert out["field_metrics_by_type"]["string"]["recall_partial"] == 0.5
    assert out["field_metrics_by_required"]["required"]["support"] == 2  # name, age
    assert set(out["field_metrics_by_name"]) == {"name", "age", "address.street", "address.zip", "items[].sku", "city"}
    omissions = omission_section([rec], OPTIONS)["omission_analysis"]
    assert omissions["by_field_name"]["items[].sku"] == {"omission_rate": 1.0, "missed": 1, "total_occurrences": 1}
    assert omissions["by_nesting_depth"] == {"0": 0.0, "1": pytest.approx(2 / 3)}
    assert omissions["by_required_vs_optional"] == {"required": 0.0, "optional": pytest.approx(2 / 3)}
    assert omissions["by_field_type"] == {"number": 0.0, "string": 0.5}


def test_invalid_outputs_earn_no_credit_in_breakdowns() -> None:
    rec = record({"name": "Ann Lee"})  # "age" is required: schema-invalid
    assert not rec.score.valid
    assert breakdown_section([rec], OPTIONS)["field_metrics_by_name"]["name"]["precision_strict"] == 0.0


def test_string_similarity_distribution() -> None:
    rec = record(
        {"name": "Ann", "age": 41, "address": {"street": "5 Elm Road", "zip": "0150"}, "items": [{"sku": "A-1"}]}
    )
    sim = string_similarity_section([rec], OPTIONS)["string_similarity"]
    tokens = sim["token_overlap_f1"]
    # 4 string pairs: 3 identical (1.0) and "ann" vs "ann lee": token F1 = 2*1/(1+2) = 0.667
    assert tokens["count"] == 4 and tokens["mean"] == pytest.approx((3 + 2 / 3) / 4)
    assert tokens["median"] == 1.0 and sum(tokens["histogram"]["counts"]) == 4
    assert tokens["non_exact"]["count"] == 1 and tokens["non_exact"]["mean"] == pytest.approx(2 / 3)
    assert sim["containment_score"]["non_exact"]["mean"] == pytest.approx(3 / 7)  # "ann" in "ann lee"


def test_pearson_matches_the_formula_and_never_returns_nan() -> None:
    x, y = [1, 2, 3, 4], [2, 4, 5, 9]
    mx, my = sum(x) / 4, sum(y) / 4
    r = sum((a - mx) * (b - my) for a, b in zip(x, y)) / math.sqrt(
        sum((a - mx) ** 2 for a in x) * sum((b - my) ** 2 for b in y)
    )
    assert pearson(x, y)["r"] == pytest.approx(r)
    assert pearson([1, 1, 1], [1, 2, 3]) == {"r": None, "p_value": None, "n": 3, "note": "constant input"}
    assert pearson([1, 2], [1, 2])["note"] == "fewer than 3 samples"


def test_complexity_correlation_handles_missing_latency() -> None:
    records = [
        record(
            {"name": "Ann Lee", "age": 41},
            sample_id=f"s{i}",
            meta={"complexity": {"total_fields": i, "has_arrays": True, "complexity_bin": "simple"}},
            response={"latency_s": 0.5 + i} if i < 3 else {},
        )
        for i in range(4)
    ]
    out = complexity_correlation_section(records, OPTIONS)["complexity_correlation"]
    assert set(out) == {"f1_vs_total_fields", "latency_vs_total_fields", "f1_vs_has_arrays", "latency_vs_has_arrays"}
    assert out["f1_vs_total_fields"]["note"] == "constant input"  # same output, same F1
    assert out["latency_vs_total_fields"]["r"] == pytest.approx(1.0) and out["latency_vs_total_fields"]["n"] == 3
    assert out["latency_vs_has_arrays"]["note"] == "constant input"
    json.dumps(out, allow_nan=False)


def test_model_metrics_carry_every_diagnostic_key() -> None:
    metrics = model_metrics([record({"name": "Ann Lee", "age": 41})], OPTIONS)
    for key in (
        "hallucination_analysis",
        "error_patterns",
        "top_field_errors",
        "comparator_errors",
        "field_metrics_by_type",
        "field_metrics_by_depth",
        "field_metrics_by_name",
        "field_metrics_by_required",
        "omission_analysis",
        "string_similarity",
        "complexity_correlation",
    ):
        assert key in metrics
    json.dumps(metrics, allow_nan=False)
