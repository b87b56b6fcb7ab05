"""The normalisers for real documents (punctuation, company forms, dates, amounts), by hand, and in a sample."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_extractbench.scoring import score_sample
from pytest_extractbench.scoring.result import EXACT
from pytest_extractbench.scoring.transforms import amount, iso_date, no_legal_suffix, no_punctuation

NONE: dict = {}


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("Newgistics, Inc.", "Newgistics Inc"),
        ("A.B.C. Holdings", "A B C Holdings"),
        ("  O'Brien  &  Sons ", "O Brien Sons"),
        ("snake_case", "snake case"),
        ("«Société» Générale", "Société Générale"),
        ("", ""),
        (42, 42),
        (None, None),
    ],
)
def test_no_punctuation(value: object, expected: object) -> None:
    assert no_punctuation(value, NONE) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("Newgistics, Inc.", "Newgistics"),
        ("Newgistics Inc", "Newgistics"),
        ("Newgistics Incorporated", "Newgistics"),
        ("ACME TRADING SDN BHD", "ACME TRADING"),
        ("Foo Holdings Co., Ltd.", "Foo Holdings"),
        ("Bar L.L.C.", "Bar"),  # dots ignored: L.L.C. is LLC
        ("Bar LLC", "Bar"),
        ("Inc.", "Inc."),  # nothing but a company form: kept
        ("Limited Editions Ltd", "Limited Editions"),  # only trailing forms go
        ("Incorporated", "Incorporated"),
        (7, 7),
    ],
)
def test_no_legal_suffix(value: object, expected: object) -> None:
    assert no_legal_suffix(value, NONE) == expected


@pytest.mark.parametrize(
    ("value", "params", "expected"),
    [
        ("25/12/2018", NONE, "2018-12-25"),
        ("25.12.18", NONE, "2018-12-25"),
        ("2018-12-25", NONE, "2018-12-25"),
        ("2018-12-25", {"order": "mdy"}, "2018-12-25"),  # ISO is read whatever the order
        ("12/25/2018", {"order": "mdy"}, "2018-12-25"),
        ("12/25/2018", NONE, "12/25/2018"),  # no 25th month: not a dmy date, kept
        ("03/04/2018", NONE, "2018-04-03"),
        ("03/04/2018", {"order": "mdy"}, "2018-03-04"),
        ("25 December 2018", NONE, "2018-12-25"),
        ("Dec 25, 2018", NONE, "2018-12-25"),
        ("1 Jan 70", NONE, "1 Jan 70"),  # month names need a four-digit year
        ("31/02/2018", NONE, "31/02/2018"),  # no such day
        ("tomorrow", NONE, "tomorrow"),
        ("9" * 500, NONE, "9" * 500),
        (20181225, NONE, 20181225),
    ],
)
def test_iso_date(value: object, params: dict, expected: object) -> None:
    assert iso_date(value, params) == expected


@pytest.mark.parametrize(
    ("value", "params", "expected"),
    [
        ("RM 9.00", NONE, 9.0),
        ("Dec 25, 2018", NONE, "Dec 25, 2018"),  # a date, not 252018: groups after the first are three digits
        ("1,2345", NONE, "1,2345"),
        ("$1,234.50", NONE, 1234.5),
        ("1.234,50 EUR", {"decimal": ","}, 1234.5),
        ("-12.5", NONE, -12.5),
        ("USD 1 000", NONE, 1000.0),
        ("CHF 1'250.00", NONE, 1250.0),
        ("9.00", NONE, 9.0),
        ("12 apples and 3 pears", NONE, "12 apples and 3 pears"),  # two numbers: not one amount
        ("free", NONE, "free"),
        ("", NONE, ""),
        (9.5, NONE, 9.5),
        ("1" * 400, NONE, "1" * 400),
    ],
)
def test_amount(value: object, params: dict, expected: object) -> None:
    assert amount(value, params) == expected


@given(st.text(max_size=80))
def test_normalisers_never_raise_and_keep_strings_strings(text: str) -> None:
    assert isinstance(no_punctuation(text, NONE), str)
    assert isinstance(no_legal_suffix(text, NONE), str)
    assert isinstance(iso_date(text, NONE), str)
    assert isinstance(amount(text, NONE), (str, float))


@given(st.text(max_size=80))
def test_normalisers_are_idempotent(text: str) -> None:
    for fn in (no_punctuation, no_legal_suffix, iso_date):
        once = fn(text, NONE)
        assert fn(once, NONE) == once


def test_a_party_list_matches_through_punctuation_and_company_forms() -> None:
    schema = {
        "type": "object",
        "properties": {
            "parties": {
                "type": "array",
                "items": {"type": "string", "x-eval-transform": ["no_punctuation", "no_legal_suffix"]},
            }
        },
    }
    gold = {"parties": ["Newgistics Inc.", "Acme Corporation"]}
    prediction = {"parties": ["Newgistics, Inc.", "ACME CORP"]}
    plain = score_sample(
        prediction, gold, {"type": "object", "properties": {"parties": {"type": "array", "items": {"type": "string"}}}}
    )
    assert plain.f1["strict"] < 1.0
    normalised = score_sample(prediction, gold, schema)
    assert [f.category for f in normalised.fields] == [EXACT, EXACT]
    assert normalised.f1["strict"] == 1.0
    # the results keep what each side wrote
    assert normalised.fields[0].predicted == "Newgistics, Inc."


def test_a_receipt_date_and_total_match_after_normalising() -> None:
    schema = {
        "type": "object",
        "properties": {
            "date": {"type": "string", "x-eval-transform": ["iso_date"]},
            "total": {"type": "string", "x-eval-transform": ["amount"]},
        },
    }
    score = score_sample({"date": "25.12.2018", "total": "RM 9.00"}, {"date": "25/12/2018", "total": "9.00"}, schema)
    assert [f.category for f in score.fields] == [EXACT, EXACT]
    # amounts become numbers, scored as numbers: 19 against 9 is incorrect, 9.10 against 9.00 within the
    # composite's 0.95 (1 - 0.1/9) is still exact, as for any number field
    wrong = score_sample({"date": "26.12.2018", "total": "RM 19.00"}, {"date": "25/12/2018", "total": "9.00"}, schema)
    assert EXACT not in [f.category for f in wrong.fields]


@pytest.mark.parametrize(
    ("transform", "message"),
    [
        ({"iso_date": {"order": "ydm"}}, "'order' must be one of dmy, mdy, ymd"),
        ({"amount": {"decimal": ";"}}, "'decimal' must be '.' or ','"),
    ],
)
def test_bad_parameters_are_named(transform: dict, message: str) -> None:
    schema = {"type": "object", "properties": {"d": {"type": "string", "x-eval-transform": [transform]}}}
    with pytest.raises(Exception, match=message):
        score_sample({"d": "x"}, {"d": "y"}, schema)


# -- the same transforms named once for every compared string (ScoringOptions.normalisers, --extractbench-normalise)


def _categories(output: dict, gold: dict, *names: str) -> dict[str, str]:
    import json

    from pytest_extractbench import ScoringOptions

    score = score_sample(json.dumps(output), gold, options=ScoringOptions(normalisers=names))
    return {f.path: f.category for f in score.fields}


def test_normalisers_apply_to_strings_and_list_elements_in_order() -> None:
    gold = {"party": "Newgistics, Inc.", "parties": ["Acme Holdings LLC"], "date": "25/12/2018", "total": "9.00"}
    output = {"party": "Newgistics Incorporated", "parties": ["ACME HOLDINGS"], "date": "Dec 25, 2018", "total": "RM 9"}
    assert set(_categories(output, gold).values()) <= {"partial", "incorrect"}
    assert _categories(output, gold, "iso_date", "amount", "no_punctuation", "no_legal_suffix") == {
        "party": "exact",
        "parties": "exact",
        "date": "exact",
        "total": "exact",
    }
    # in order: punctuation removed before amounts are read turns "9.00" into "9 00", no amount; an amount read
    # before the date would take "Dec 25, 2018" for the number 252018
    assert _categories(output, gold, "no_punctuation", "no_legal_suffix", "iso_date", "amount")["total"] == "incorrect"


def test_a_number_a_normaliser_gives_is_written_as_json_writes_it() -> None:
    # "1,234.50" and "$1234.5" both become 1234.5; "9.00" and "9" both become 9 (an integral float written as 9)
    assert _categories({"t": "$1234.5"}, {"t": "1,234.50"}, "amount") == {"t": "exact"}
    assert _categories({"t": "9"}, {"t": "9.00"}, "amount") == {"t": "exact"}
    assert _categories({"t": "9.01"}, {"t": "9.00"}, "amount")["t"] != "exact"


def test_unknown_normalisers_and_ones_that_need_parameters_are_named() -> None:
    from pytest_extractbench.scoring.transforms import check_normalisers

    assert check_normalisers(["no_punctuation", "amount", "iso_date"]) == []
    problems = check_normalisers(["round_digits", "nope"])
    assert problems[0].startswith("round_digits cannot run with its defaults: needs {'digits'")
    assert problems[1].startswith("unknown transform 'nope'")
