"""Post-processors and the extension registries, rule by rule: each expected field written out in full from the
module's docstring, so a changed attribute (a score, a type, a flag) shows."""

from __future__ import annotations

import pytest

from pytest_extractbench.scoring import registry
from pytest_extractbench.scoring.options import ScoringOptions
from pytest_extractbench.scoring.postprocess import (
    POST_PROCESSORS,
    check_post_processors,
    nulls_as_absent,
    nulls_as_values,
    propagate_errors,
    register_post_processor,
)
from pytest_extractbench.scoring.registry import Registry, param_problems
from pytest_extractbench.scoring.result import (
    ERROR,
    EXACT,
    INCORRECT,
    MISSED,
    ORIGIN_KEY,
    ORIGIN_NULL,
    PARTIAL,
    SPURIOUS,
    FieldResult,
)

OPTIONS = ScoringOptions()
SIMILAR = (0.1, 0.2, 0.3)


def _compared(expected: object, predicted: object, e_type: str | None, p_type: str | None) -> FieldResult:
    return FieldResult(
        "a", INCORRECT, 0.4, expected, predicted, e_type, p_type, False, False, 1, True, ORIGIN_KEY, SIMILAR, "c", None
    )


# --- nulls_as_absent ---


def test_a_null_gold_makes_a_compared_field_a_hallucination_and_a_null_answer_an_omission() -> None:
    spurious, missed = nulls_as_absent(
        [_compared(None, "x", "null", "string"), _compared("y", None, "string", "null")], OPTIONS
    )
    # spurious: no score, no gold, no gold type, no type verdict, not equal, no similarity, its origin the null;
    # what was predicted, and everything else, kept
    assert spurious == FieldResult(
        "a", SPURIOUS, 0.0, None, "x", None, "string", None, False, 1, True, ORIGIN_NULL, None, "c", None
    )
    assert missed == FieldResult(
        "a", MISSED, 0.0, "y", None, "string", None, None, False, 1, True, ORIGIN_NULL, None, "c", None
    )


def test_a_field_equal_before_loses_its_equality_with_its_null() -> None:
    equal = _compared(None, 0, "null", "integer")._replace(category=EXACT, equal=True, type_ok=True, score=1.0)
    (out,) = nulls_as_absent([equal], OPTIONS)
    assert (out.category, out.score, out.equal, out.type_ok) == (SPURIOUS, 0.0, False, None)


def test_nulls_on_both_sides_or_a_null_left_out_disappear() -> None:
    both = _compared(None, None, "null", "null")
    missed_null = FieldResult("m", MISSED, 0.0, None, None)
    spurious_null = FieldResult("s", SPURIOUS, 0.0, None, None)
    missed_value = FieldResult("mv", MISSED, 0.0, "y", None)
    spurious_value = FieldResult("sv", SPURIOUS, 0.0, None, "z")
    error = FieldResult("e", ERROR, 0.0, None, None)
    out = nulls_as_absent([both, missed_null, spurious_null, missed_value, spurious_value, error], OPTIONS)
    assert [f.path for f in out] == ["mv", "sv", "e"]


def test_a_compared_field_without_nulls_is_left_as_it_is() -> None:
    field = _compared("y", "x", "string", "string")._replace(category=PARTIAL)
    assert nulls_as_absent([field], OPTIONS) == [field]


# --- nulls_as_values ---


def test_a_null_against_a_scalar_is_a_wrong_value_either_way() -> None:
    missed = FieldResult("a", MISSED, 0.0, "y", None, "string", None, None, False, 0, False, ORIGIN_NULL)
    spurious = FieldResult("b", SPURIOUS, 0.0, None, 5, None, "integer", None, False, 0, False, ORIGIN_NULL)
    assert nulls_as_values([missed, spurious], OPTIONS) == [
        FieldResult("a", INCORRECT, 0.0, "y", None, "string", "null", False, False, 0, False, ""),
        FieldResult("b", INCORRECT, 0.0, None, 5, "null", "integer", False, False, 0, False, ""),
    ]


def test_a_null_against_an_object_or_array_or_a_missing_key_stays_as_it_was() -> None:
    fields = [
        FieldResult("a", MISSED, 0.0, {"k": 1}, None, "object", None, None, False, 0, False, ORIGIN_NULL),
        FieldResult("b", MISSED, 0.0, [1], None, "array", None, None, False, 0, False, ORIGIN_NULL),
        FieldResult("c", SPURIOUS, 0.0, None, [2], None, "array", None, False, 0, False, ORIGIN_NULL),
        FieldResult("d", MISSED, 0.0, "y", None, "string", None, None, False, 0, False, ORIGIN_KEY),
        FieldResult("e", EXACT, 1.0, None, None, "null", "null", True, True, 0, False, ORIGIN_NULL),
    ]
    assert nulls_as_values(fields, OPTIONS) == fields


# --- propagate_errors ---


def test_a_failed_comparator_takes_every_field_it_judged_in_the_sample_out_of_the_metrics() -> None:
    failed = FieldResult("a", ERROR, 0.0, "x", "y", comparator="judge", error="judge is down")
    judged = FieldResult("b", EXACT, 1.0, "x", "x", "string", "string", True, True, comparator="judge")
    own_error = FieldResult("c", PARTIAL, 0.5, "x", "z", "string", "string", True, comparator="judge", error="own")
    other = FieldResult("d", EXACT, 1.0, "x", "x", "string", "string", True, True, comparator="other")
    missed = FieldResult("e", MISSED, 0.0, "x", None, comparator="judge")
    plain = FieldResult("f", EXACT, 1.0, "x", "x", "string", "string", True, True)
    out = propagate_errors([failed, judged, own_error, other, missed, plain], OPTIONS)
    reason = "excluded: comparator 'judge' failed on another field of this sample"
    assert out == [
        failed,
        FieldResult("b", ERROR, 0.0, "x", "x", "string", "string", None, True, comparator="judge", error=reason),
        FieldResult("c", ERROR, 0.0, "x", "z", "string", "string", None, comparator="judge", error="own"),
        other,
        missed,
        plain,
    ]


def test_without_a_failed_comparator_the_fields_are_returned_untouched() -> None:
    fields = [
        FieldResult("a", EXACT, 1.0, "x", "x", comparator="judge"),
        FieldResult("b", ERROR, 0.0, "x", "y"),  # an error of the default comparator names none
        FieldResult("c", INCORRECT, 0.0, "x", "y", comparator="judge", error="a note"),
    ]
    assert propagate_errors(fields, OPTIONS) is fields


# --- names ---


def test_unknown_post_processor_names_are_each_one_message() -> None:
    assert check_post_processors(["nulls_as_absent", "propagate_errors"]) == []
    (message,) = check_post_processors(["nulls_as_absent", "nulls_as_absnt"])
    assert message.startswith("unknown post-processor 'nulls_as_absnt' (did you mean 'nulls_as_absent'?); known: ")


def test_a_registered_name_is_not_replaced_unless_asked_and_a_built_in_one_never() -> None:
    def first(fields: list[FieldResult], options: ScoringOptions) -> list[FieldResult]:
        return fields

    def second(fields: list[FieldResult], options: ScoringOptions) -> list[FieldResult]:
        return fields[:1]

    register_post_processor("test_keep", first)
    try:
        with pytest.raises(ValueError, match="already registered"):
            register_post_processor("test_keep", second)
        register_post_processor("test_keep", second, overwrite=True)
        assert POST_PROCESSORS.get("test_keep").fn is second
    finally:
        POST_PROCESSORS.remove("test_keep")
    for name in ("nulls_as_absent", "nulls_as_values", "propagate_errors"):
        with pytest.raises(ValueError, match="is built in and cannot be replaced"):
            register_post_processor(name, first, overwrite=True)


# --- the registry ---


def test_every_change_of_any_registry_moves_the_generation_on() -> None:
    things: Registry[int] = Registry("thing")
    start = registry.generation()
    things.add("a", 1)
    assert registry.generation() == start + 1
    things.remove("a")
    things.remove("never-added")  # forgetting a name that is not there still counts as a change
    assert registry.generation() == start + 3
    assert list(things) == [] and "a" not in things


def test_a_registry_lists_names_sorted_and_refuses_empty_or_non_text_names() -> None:
    things: Registry[int] = Registry("thing")
    things.add("b", 1, builtin=True)
    things.add("a", 2)
    things.add("a", 2)  # the same entry again is no conflict
    with pytest.raises(ValueError, match="already registered"):
        things.add("a", 3)  # another entry under a taken name, unless asked to replace it
    assert list(things) == ["a", "b"]
    for bad in ("", 5, None):
        with pytest.raises(ValueError, match="a thing name must be a non-empty string"):
            things.add(bad, 3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="built in and cannot be removed"):
        things.remove("b")


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        (0, False),
        (1, False),
        (0.5, False),
        (1.0, False),
        (1.5, True),
        (-0.1, True),
        (True, True),
        ("0.5", True),
        (None, True),
    ],
)
def test_a_fraction_parameter_is_a_number_from_0_to_1_inclusive(value: object, problem: bool) -> None:
    found = param_problems({"f": value}, {"f"}, {"f": 0.5})
    assert found == ([f"'f' must be a number in [0, 1], got {value!r}"] if problem else [])
