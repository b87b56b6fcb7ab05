"""Hand-computed scoring cases, checked against the formulas of docs/metrics.md.

Every expected number below was worked out by hand from docs/metrics.md's definitions;
the comments show the arithmetic.
"""

from __future__ import annotations

import json

import pytest

from pytest_extractbench import ScoringOptions, score_sample
from pytest_extractbench.scoring import FieldResult

APPENDIX_A1_SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "age": {"type": "integer"},
        "occupation": {"type": "string"},
        "company": {"type": "string"},
    },
    "required": ["name"],
}
APPENDIX_A1_GOLD = {"name": "John Smith", "age": 35, "occupation": "software engineer", "company": "TechCorp"}

APPENDIX_A2_SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "title": {"type": "string"},
        "contact": {"type": "object", "properties": {"email": {"type": "string"}, "phone": {"type": "string"}}},
        "specialization": {"type": "string"},
        "workplace": {"type": "string"},
    },
}
APPENDIX_A2_GOLD = {
    "name": "Sarah Johnson",
    "title": "Dr.",
    "contact": {"email": "sarah.j@hospital.org", "phone": "+1-555-0123"},
    "specialization": "cardiology",
    "workplace": "Metro General Hospital",
}


def by_path(score) -> dict[str, FieldResult]:
    return {f.path: f for f in score.fields}


def test_perfect_output_scores_one_everywhere() -> None:
    score = score_sample(json.dumps(APPENDIX_A1_GOLD), APPENDIX_A1_GOLD, APPENDIX_A1_SCHEMA)
    assert score.valid and score.exact_match
    assert score.f1 == {"strict": 1.0, "partial": 1.0, "lenient": 1.0}
    assert score.type_accuracy == 1.0 and score.hallucination_rate == 0.0
    assert score.eqs == pytest.approx(1.0)


def test_partial_string_and_missed_field_in_all_three_modes() -> None:
    output = {"name": "John Smith", "age": 35, "occupation": "engineer"}
    score = score_sample(output, APPENDIX_A1_GOLD, APPENDIX_A1_SCHEMA)
    fields = by_path(score)
    # occupation: token F1 = 2*1/(1+2) = 2/3; Levenshtein = 1 - 9/17; containment = 8/17
    composite = 0.5 * (2 / 3) + 0.3 * (1 - 9 / 17) + 0.2 * (8 / 17)
    assert fields["occupation"].score == pytest.approx(composite)
    assert composite == pytest.approx(0.5686, abs=1e-4)
    assert fields["occupation"].category == "partial"
    assert fields["company"].category == "missed"
    assert fields["name"].category == fields["age"].category == "exact"
    # exact 2, partial 1, missed 1 -> predicted 3, expected 4
    assert score.precision["strict"] == pytest.approx(2 / 3)
    assert score.recall["strict"] == pytest.approx(2 / 4)
    assert score.f1["strict"] == pytest.approx(4 / 7)
    assert score.precision["partial"] == pytest.approx(2.5 / 3)
    assert score.recall["partial"] == pytest.approx(2.5 / 4)
    assert score.f1["partial"] == pytest.approx(5 / 7)
    assert score.f1["lenient"] == pytest.approx(6 / 7)
    assert score.omission_rate == pytest.approx(1 / 4)
    # EQS = 0.15*1 + 0.5*5/7 + 0.2*1 (3 typed fields, all right) + 0.15*(1-0)
    assert score.eqs == pytest.approx(0.15 + 0.5 * 5 / 7 + 0.2 + 0.15)
    assert not score.exact_match


def test_incorrect_in_partial_mode_is_partial_in_lenient_mode() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}}
    score = score_sample({"a": "abcd wxyz", "b": "zzzzzz"}, {"a": "abcd efgh", "b": "alpha"}, schema)
    fields = by_path(score)
    # a: token F1 = 0.5; Levenshtein = 1 - 4/9; containment = 0 -> 0.25 + 0.3*5/9 = 0.41667
    assert fields["a"].score == pytest.approx(0.25 + 0.3 * 5 / 9)
    # b: no common token, distance 6 over length 6, no containment -> 0
    assert fields["b"].score == pytest.approx(0.0)
    assert fields["a"].category == fields["b"].category == "incorrect"
    assert score.counts.partial_lenient == 1  # a is >= 0.3
    assert score.f1["strict"] == 0.0 and score.f1["partial"] == 0.0
    # lenient: tp = 1 of 2 predicted, 2 expected
    assert score.f1["lenient"] == pytest.approx(0.5)


def test_spurious_unknown_key_is_a_hallucination() -> None:
    output = dict(APPENDIX_A1_GOLD, salary="100k")
    score = score_sample(output, APPENDIX_A1_GOLD, APPENDIX_A1_SCHEMA)
    salary = by_path(score)["salary"]
    assert (salary.category, salary.origin) == ("spurious", "unknown_key")
    assert score.hallucination_rate == pytest.approx(1 / 5)
    # precision 4/5, recall 1 -> F1 = 8/9 in every mode
    assert score.f1["strict"] == pytest.approx(8 / 9)
    assert score.schema_valid  # additional properties are allowed by this schema
    assert not score.exact_match
    assert score.eqs == pytest.approx(0.15 + 0.5 * 8 / 9 + 0.2 + 0.15 * 0.8)


def test_null_equals_absent_by_default() -> None:
    schema = {"type": "object", "properties": {k: {"type": ["string", "null"]} for k in "abcd"}}
    gold = {"a": None, "b": None, "c": "x", "d": "y"}
    score = score_sample({"b": "invented", "c": None, "d": "y"}, gold, schema)
    fields = by_path(score)
    assert "a" not in fields  # null vs absent: nothing to score
    assert fields["b"].category == "spurious" and fields["b"].type_ok is True  # schema allows a string
    assert fields["c"].category == "missed"
    assert fields["d"].category == "exact"
    assert score.observed.expected == 2 and score.observed.predicted == 2


def test_null_as_value_option() -> None:
    options = ScoringOptions(null_equals_absent=False)
    schema = {"type": "object", "properties": {k: {"type": ["string", "null"]} for k in "abc"}}
    score = score_sample({"a": None, "c": "x"}, {"a": None, "b": None, "c": None}, schema, options=options)
    fields = by_path(score)
    assert fields["a"].category == "exact"
    assert fields["b"].category == "missed"
    assert fields["c"].category == "incorrect"


def test_array_of_scalars_is_one_field_scored_by_jaccard() -> None:
    schema = {"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string"}}}}
    score = score_sample({"tags": ["B", "a", "d"]}, {"tags": ["a", "b", "c"]}, schema)
    (tags,) = score.fields
    # {a, b, d} vs {a, b, c}: 2 shared of 4 -> 0.5, the lower edge of partial
    assert (tags.path, tags.score, tags.category) == ("tags", 0.5, "partial")
    assert tags.expected_type == "array"


def test_reordered_scalar_array_is_exact_but_breaks_ordered_exact_match() -> None:
    gold = {"tags": ["a", "b"]}
    reordered = {"tags": ["b", "a"]}
    score = score_sample(reordered, gold)
    assert score.fields[0].category == "exact" and score.f1["strict"] == 1.0
    assert not score.exact_match  # array order matters by default
    assert score_sample(reordered, gold, options=ScoringOptions(array_order_matters=False)).exact_match


def test_array_of_objects_aligned_in_order() -> None:
    schema = {
        "type": "object",
        "properties": {
            "items": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"sku": {"type": "string"}, "qty": {"type": "integer"}},
                    "required": ["sku"],
                },
            }
        },
    }
    gold = {"items": [{"sku": "A", "qty": 1}, {"sku": "B", "qty": 2}]}
    short = score_sample({"items": [{"sku": "A", "qty": 1}]}, gold, schema)
    fields = by_path(short)
    assert fields["items[1].sku"].category == "missed" and fields["items[1].sku"].origin == "missing_element"
    assert fields["items[1].sku"].required and not fields["items[1].qty"].required
    assert fields["items[0].qty"].depth == 1
    long = score_sample({"items": gold["items"] + [{"sku": "C", "qty": 9}]}, gold, schema)
    extra = by_path(long)["items[2].sku"]
    assert (extra.category, extra.origin) == ("spurious", "extra_element")
    assert long.hallucination_rate == pytest.approx(2 / 6)


def test_nested_objects_recurse_with_depth_and_required() -> None:
    output = json.loads(json.dumps(APPENDIX_A2_GOLD))
    output["contact"]["phone"] = "555-0123"
    output["workplace"] = "Metro General"
    score = score_sample(output, APPENDIX_A2_GOLD, APPENDIX_A2_SCHEMA)
    fields = by_path(score)
    assert set(fields) == {"name", "title", "contact.email", "contact.phone", "specialization", "workplace"}
    assert fields["contact.email"].depth == 1 and fields["name"].depth == 0
    # "555-0123" vs "+1-555-0123": one token each, no overlap (0); Levenshtein 1 - 3/11;
    # the prediction is contained in the gold: 8/11
    assert fields["contact.phone"].score == pytest.approx(0.3 * 8 / 11 + 0.2 * 8 / 11)
    # "Metro General" vs "Metro General Hospital": token F1 2*2/(2+3) = 0.8; Lev 1 - 9/22; containment 13/22
    assert fields["workplace"].score == pytest.approx(0.4 + 0.3 * 13 / 22 + 0.2 * 13 / 22)
    assert fields["workplace"].category == "partial"
    assert fields["contact.phone"].category == "incorrect"  # 0.3636 < 0.5


def test_numbers_use_relative_difference() -> None:
    schema = {"type": "object", "properties": {k: {"type": "number"} for k in "abcde"}}
    gold = {"a": 15, "b": 19.99, "c": 0, "d": 0, "e": 2.5}
    score = score_sample({"a": 12, "b": 19.9, "c": 0, "d": 1, "e": 2.5000000001}, gold, schema)
    fields = by_path(score)
    assert fields["a"].score == pytest.approx(0.8) and fields["a"].category == "partial"  # 1 - 3/15
    assert fields["b"].score == pytest.approx(1 - 0.09 / 19.99)
    assert fields["b"].category == "exact" and not fields["b"].equal  # >= 0.95 but not equal
    assert fields["c"].score == 1.0 and fields["d"].score == 0.0  # expected zero needs zero
    assert fields["e"].equal  # within the float epsilon
    assert not score.exact_match


def test_booleans_are_exact_or_wrong() -> None:
    score = score_sample({"ok": False, "paid": True}, {"ok": True, "paid": True})
    fields = by_path(score)
    assert (fields["ok"].score, fields["ok"].category) == (0.0, "incorrect")
    assert fields["paid"].category == "exact"


def test_string_for_integer_is_a_type_error_unless_lenient() -> None:
    schema = {"type": "object", "properties": {"age": {"type": ["integer", "string"]}}}
    strict = score_sample({"age": "35"}, {"age": 35}, schema)
    (age,) = strict.fields
    assert age.category == "exact" and age.type_ok is False
    assert strict.type_accuracy == 0.0 and not strict.exact_match
    assert strict.eqs == pytest.approx(0.15 + 0.5 + 0.0 + 0.15)
    lenient = score_sample({"age": "35"}, {"age": 35}, schema, options=ScoringOptions(strict_types=False))
    assert lenient.type_accuracy == 1.0 and lenient.exact_match


def test_unparseable_output_scores_zero_and_misses_everything() -> None:
    score = score_sample("I'm sorry, I cannot extract that.", APPENDIX_A1_GOLD, APPENDIX_A1_SCHEMA)
    assert not score.json_valid and "unparseable JSON" in score.parse_error
    assert [f.category for f in score.fields] == ["missed"] * 4
    assert score.f1 == {"strict": 0.0, "partial": 0.0, "lenient": 0.0}
    assert score.eqs == 0.0 and score.omission_rate == 1.0


def test_fenced_json_is_parsed() -> None:
    raw = "Here you go:\n```json\n" + json.dumps(APPENDIX_A1_GOLD) + "\n```\nDone."
    score = score_sample(raw, APPENDIX_A1_GOLD, APPENDIX_A1_SCHEMA)
    assert score.valid and score.exact_match


def test_schema_invalid_output_gets_no_credit_but_is_diagnosed() -> None:
    output = {"age": 35, "occupation": "software engineer", "nickname": "JS"}  # misses required "name"
    score = score_sample(output, APPENDIX_A1_GOLD, APPENDIX_A1_SCHEMA)
    assert score.json_valid and not score.schema_valid
    assert score.validation_errors == ('$: "name" is a required property',)
    assert score.observed.exact == 2  # the comparison still ran
    assert score.counts.exact == 0 and score.counts.incorrect == 2  # ... but earns nothing
    assert score.f1["lenient"] == 0.0 and score.type_accuracy == 0.0
    assert score.hallucination_rate == pytest.approx(1 / 3)  # still diagnosed
    # EQS = 0.15*0 + 0.5*0 + 0.2*0 + 0.15*(1 - 1/3)
    assert score.eqs == pytest.approx(0.1)


def test_structure_mismatch_keeps_gold_fields_and_flags_the_type() -> None:
    output = dict(APPENDIX_A2_GOLD, contact="sarah.j@hospital.org, +1-555-0123")
    score = score_sample(output, APPENDIX_A2_GOLD)
    fields = by_path(score)
    assert fields["contact.email"].category == "missed" and fields["contact.email"].origin == "structure"
    contact = fields["contact"]
    assert (contact.category, contact.expected_type, contact.predicted_type, contact.type_ok) == (
        "spurious",
        "object",
        "string",
        False,
    )
    assert score.observed.expected == 6  # gold leaves never depend on the prediction


def test_nothing_expected_and_nothing_predicted_is_perfect() -> None:
    score = score_sample("{}", {"note": None}, {"type": "object", "properties": {"note": {"type": ["string", "null"]}}})
    assert score.f1["partial"] == 1.0 and score.exact_match and score.eqs == pytest.approx(1.0)


def test_case_and_whitespace_normalization_is_configurable() -> None:
    gold = {"company": "TechCorp", "city": "San  Francisco"}
    default = score_sample({"company": "techcorp", "city": " San Francisco "}, gold)
    assert all(f.equal for f in default.fields)
    strict = score_sample({"company": "techcorp"}, {"company": "TechCorp"}, options=ScoringOptions(case_sensitive=True))
    (company,) = strict.fields
    # no shared token; Levenshtein 1 - 2/8; no containment
    assert company.score == pytest.approx(0.3 * 0.75) and company.category == "incorrect"


def test_missing_output_misses_every_field() -> None:
    from pytest_extractbench.scoring import MISSING

    score = score_sample(MISSING, APPENDIX_A1_GOLD, APPENDIX_A1_SCHEMA)
    assert score.parse_error == "no output" and score.counts.missed == 4 and score.eqs == 0.0


def test_format_is_asserted_by_default() -> None:
    schema = {"type": "object", "properties": {"when": {"type": "string", "format": "date"}}}
    assert not score_sample({"when": "March 3, 2024"}, {"when": "2024-03-03"}, schema).schema_valid
    relaxed = ScoringOptions(validate_formats=False)
    assert score_sample({"when": "March 3, 2024"}, {"when": "2024-03-03"}, schema, options=relaxed).schema_valid


def test_anls_star_is_computed_on_first_read_and_not_at_all_when_off(monkeypatch: pytest.MonkeyPatch) -> None:
    from pytest_extractbench.scoring import anls_star, sample

    calls: list[object] = []
    real = sample._anls_star

    def counted(expected: object, predicted: object) -> tuple[float, dict[str, float]]:
        calls.append(predicted)
        return real(expected, predicted)

    monkeypatch.setattr(sample, "_anls_star", counted)
    gold, output = {"name": "Ada Lovelace", "age": 36}, {"name": "Ada Lovelase", "age": 36}
    score = score_sample(output, gold)
    assert calls == [] and score.eqs < 1  # the field scores are there; ANLS* not yet
    assert score.anls_star == anls_star(gold, output) == pytest.approx((11 / 12 + 1) / 2)
    assert score.anls_star_fields == pytest.approx({"name": 11 / 12, "age": 1.0})
    assert score.as_dict()["anls_star_observed"] == score.anls_star_observed and len(calls) == 1  # read once
    off = ScoringOptions(anls_star=False)
    unmeasured = score_sample(output, gold, options=off)
    assert (unmeasured.anls_star, unmeasured.anls_star_fields, len(calls)) == (None, {}, 1)
    assert "anls_star" not in unmeasured.as_dict() and unmeasured.eqs == score.eqs
    assert ScoringOptions.from_dict(off.to_dict()) == off and "anls_star" not in ScoringOptions().to_dict()


def test_as_dict_round_trip() -> None:
    from pytest_extractbench import SampleScore

    score = score_sample({"name": "John", "extra": [1, 2]}, APPENDIX_A1_GOLD, APPENDIX_A1_SCHEMA, sample_id="s1")
    again = SampleScore.from_dict(json.loads(json.dumps(score.as_dict())), ScoringOptions())
    assert again.as_dict() == score.as_dict()


# -- exactness rules: the composite score (default) and --extractbench-exact-within -------------------------

NEAR_SCHEMA = {
    "type": "object",
    "properties": {
        "total": {"type": "number"},
        "budget": {"type": "number"},
        "name": {"type": "string"},
        "code": {"type": ["integer", "string"]},  # the output stays schema-valid with "12" for 12
    },
}
NEAR_GOLD = {"total": 100, "budget": 1_000_000, "name": "Ann Lee", "code": 12}
# 104 vs 100: number similarity 1 - 4/100 = 0.96; 950,000 vs 1,000,000: 1 - 50,000/1,000,000 = 0.95;
# "ann lee": equal after case folding; "12" vs 12: equal after coercion, but a string where the gold is an integer
NEAR_OUTPUT = {"total": 104, "budget": 950_000, "name": "ann lee", "code": "12"}


@pytest.mark.parametrize(
    "options, categories, f1",
    [
        # the default rule: every composite score >= 0.95 is exact, so all four count in strict F1
        (ScoringOptions(), ["exact", "exact", "exact", "exact"], (1.0, 1.0, 1.0)),
        # within 1%: 104 and 950,000 are near misses (partial by their 0.96 / 0.95 score), "12" is the wrong type
        # (partial by its 1.0 score): strict TP 1 -> P = R = 1/4; partial TP 1 + 0.5 x 3 = 2.5 -> 0.625;
        # lenient TP 1 + 3 (scores >= 0.3) = 4 -> 1.0
        (ScoringOptions(exact_within=0.01), ["partial", "partial", "exact", "partial"], (0.25, 0.625, 1.0)),
        # within 5%: both numbers are exact now (4% and 5% off); "12" still is not: strict 3/4, partial 3.5/4
        (ScoringOptions(exact_within=0.05), ["exact", "exact", "exact", "partial"], (0.75, 0.875, 1.0)),
        # lenient types accept the lossless "12": exact again; the numbers stay near misses: strict 2/4, partial 3/4
        (
            ScoringOptions(exact_within=0.01, strict_types=False),
            ["partial", "partial", "exact", "exact"],
            (0.5, 0.75, 1.0),
        ),
    ],
)
def test_near_miss_numbers_and_wrong_types(
    options: ScoringOptions, categories: list[str], f1: tuple[float, float, float]
) -> None:
    score = score_sample(json.dumps(NEAR_OUTPUT), NEAR_GOLD, NEAR_SCHEMA, options=options)
    assert score.valid
    by_path = {f.path: f.category for f in score.fields}
    assert [by_path[p] for p in ("total", "budget", "name", "code")] == categories
    assert (score.f1["strict"], score.f1["partial"], score.f1["lenient"]) == pytest.approx(f1)


def test_exact_within_zero_keeps_the_float_epsilon() -> None:
    options = ScoringOptions(exact_within=0.0)
    schema = {"type": "object", "properties": {"x": {"type": "number"}}}
    assert score_sample('{"x": 0.1000001}', {"x": 0.1}, schema, options=options).fields[0].category == "exact"
    assert score_sample('{"x": 0.1001}', {"x": 0.1}, schema, options=options).fields[0].category == "partial"
