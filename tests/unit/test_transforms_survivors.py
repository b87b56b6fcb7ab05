"""The built-in transforms at their edges, each expected value read off the docstrings and worked by hand: rounding
integers, converting to booleans and integers, a name without a company form, and the length caps of dates and
amounts; registering a transform without a parameter check and twice under one name."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from pytest_extractbench.scoring.transforms import (
    TRANSFORMS,
    TransformSpec,
    amount,
    lowercase,
    no_legal_suffix,
    register_transform,
    round_digits,
    type_convert,
)


@pytest.fixture
def scratch_name() -> Iterator[str]:
    name = "test-scratch-transform"
    yield name
    if name in TRANSFORMS:
        TRANSFORMS.remove(name)


def test_a_transform_registered_without_a_check_has_none(scratch_name: str) -> None:
    register_transform(scratch_name, lowercase)
    assert TRANSFORMS.get(scratch_name).check_params is None
    assert TRANSFORMS.get(scratch_name).fn is lowercase


def test_a_second_transform_under_one_name_needs_overwrite(scratch_name: str) -> None:
    register_transform(scratch_name, lowercase)
    with pytest.raises(ValueError, match="already registered"):
        register_transform(scratch_name, round_digits)
    assert TRANSFORMS.get(scratch_name).fn is lowercase
    register_transform(scratch_name, round_digits, overwrite=True)
    assert TRANSFORMS.get(scratch_name).fn is round_digits


@pytest.mark.parametrize(
    ("value", "digits", "expected"),
    [
        (1234, -2, 1200),  # to the hundreds
        (1250, -2, 1200),  # Python rounds half to even: 12.5 hundreds -> 12
        (1234, 0, 1234),  # an integer already has no decimals
        (1234, 2, 1234),
        (-1234, -1, -1230),
        (2.675, 2, 2.67),  # the float 2.675 is stored just below 2.675
        ("12.34", 1, "12.34"),  # not a number: unchanged
        (None, 1, None),
    ],
)
def test_rounding_integers_only_changes_them_to_negative_digits(value: Any, digits: int, expected: Any) -> None:
    found = round_digits(value, {"digits": digits})
    assert found == expected
    assert type(found) is type(expected)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1, True),
        (0, False),
        (1.0, True),
        (0.0, False),
        (" TRUE ", True),
        ("0", False),
        (True, True),
        (2, 2),  # neither 0 nor 1: unchanged
        (0.5, 0.5),
        ("yes", "yes"),
        ([1], [1]),
    ],
)
def test_converting_to_a_boolean(value: Any, expected: Any) -> None:
    found = type_convert(value, {"to": "bool"})
    assert found == expected
    assert type(found) is type(expected)  # 1 == True in Python: the type tells a conversion from none


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (" 12 ", 12),
        ("12.5", "12.5"),  # not an int: it stays a string
        (12.7, 12),  # Python's int() truncates
        (float("inf"), float("inf")),  # OverflowError: unchanged
        (None, None),  # TypeError: unchanged
    ],
)
def test_converting_to_an_integer(value: Any, expected: Any) -> None:
    found = type_convert(value, {"to": "int"})
    assert found == expected
    assert type(found) is type(expected)


def test_a_name_without_a_company_form_is_returned_as_written() -> None:
    # no suffix to drop: not even the comma and the doubled space are touched
    assert no_legal_suffix("Acme,  Widgets", {}) == "Acme,  Widgets"
    assert no_legal_suffix("Acme,  Widgets Ltd.", {}) == "Acme Widgets"  # words joined by one space once one is cut


def test_an_amount_of_64_characters_is_read_and_one_of_65_is_left_alone() -> None:
    assert amount("9" * 64, {}) == float("9" * 64)
    assert amount("9" * 65, {}) == "9" * 65
    padded = " " * 63 + "5"  # the cap counts the value as given, spaces included
    assert amount(padded, {}) == 5.0
    assert amount(" " + padded, {}) == " " + padded


def test_a_spec_made_without_a_check_has_none() -> None:
    spec = TransformSpec(lowercase)
    assert spec.check_params is None
    assert spec.fn("AbC", {}) == "abc"


BUILT_IN = (
    "lowercase",
    "strip",
    "normalize_whitespace",
    "sort_tokens",
    "no_punctuation",
    "no_legal_suffix",
    "round_digits",
    "type_convert",
    "iso_date",
    "amount",
)


@pytest.mark.parametrize("name", BUILT_IN)
def test_a_built_in_transform_can_be_neither_replaced_nor_removed(name: str) -> None:
    spec = TRANSFORMS.get(name)
    with pytest.raises(ValueError, match="built in"):
        register_transform(name, lowercase, overwrite=True)
    with pytest.raises(ValueError, match="built in"):
        TRANSFORMS.remove(name)
    assert TRANSFORMS.get(name) is spec


def test_an_amount_called_with_a_decimal_mark_the_rules_would_refuse_leaves_a_value_float_cannot_read() -> None:
    # decimal ";" (the rules accept only "." or ","): the thousands mark is then "."; "1,234" has no ";", so its whole
    # part is all of it and reads as grouped (1 then ,234); nothing is dropped or replaced, float("1,234") fails
    assert amount("1,234", {"decimal": ";"}) == "1,234"
