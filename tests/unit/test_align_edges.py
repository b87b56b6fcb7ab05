"""Array aligners at their edges: the assignment's size limit, values with no canonical form, the order of the pairs
they return, which keys never pair, the parameters they refuse and the registry of names.

Every expected pairing is worked out by hand in the comments; elements carry an ``id`` and a similarity that is 1 for
equal ids, so the best assignment is known without scipy.
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_extractbench.scoring import (
    AlignContext,
    EvalSchemaError,
    ScoringOptions,
    align_hungarian,
    align_key_field,
    align_ordered,
    get_aligner,
    parse_eval_schema,
    register_aligner,
)
from pytest_extractbench.scoring.align import ALIGNERS

OPTIONS = ScoringOptions()


def same_id(gold: Any, predicted: Any) -> float:
    return 1.0 if gold["id"] == predicted["id"] else 0.0


def hungarian(expected: list[Any], predicted: list[Any], **params: Any) -> list[Any]:
    return align_hungarian(expected, predicted, None, OPTIONS, AlignContext(params=params, similarity=same_id))


def key_field(expected: list[Any], predicted: list[Any], key: Any = "sku") -> list[Any]:
    return align_key_field(expected, predicted, None, OPTIONS, AlignContext(params={"key": key}))


def records(ids: list[int], x: int) -> list[dict[str, int]]:
    return [{"id": i, "x": x} for i in ids]  # gold x=0, predictions x=1: never identical, so the assignment decides


def test_hungarian_with_no_similarity_to_ask_pairs_in_order() -> None:
    gold, predicted = records([1, 2], 0), records([2, 1], 1)
    assert hungarian(gold, predicted) == [(0, 1), (1, 0)]  # by id
    # no context, or a context without a similarity function: the ordered fallback, element i with element i
    assert align_hungarian(gold, predicted, None, OPTIONS) == [(0, 0), (1, 1)]
    assert align_hungarian(gold, predicted, None, OPTIONS, AlignContext(params={})) == [(0, 0), (1, 1)]


def test_the_assignment_is_built_up_to_2500_cells_and_not_one_more() -> None:
    # 50 x 50 = 2,500 cells, exactly the default limit: the assignment pairs gold i with the reversed id's place
    gold, predicted = records(list(range(50)), 0), records(list(range(49, -1, -1)), 1)
    assert hungarian(gold, predicted) == [(i, 49 - i) for i in range(50)]
    # 41 x 61 = 2,501 cells: over the limit, the rest pairs in order and the last 20 predictions stay unmatched
    gold, predicted = records(list(range(41)), 0), records(list(range(60, -1, -1)), 1)
    expected_in_order = [(i, i) for i in range(41)] + [(None, j) for j in range(41, 61)]
    assert hungarian(gold, predicted) == expected_in_order
    # with the limit raised by one the same arrays get the assignment: id i sits at place 60 - i
    by_id = [(i, 60 - i) for i in range(41)] + [(None, j) for j in range(20)]
    assert hungarian(gold, predicted, max_cells=2501) == by_id


def test_elements_with_no_canonical_form_are_never_paired_as_identical() -> None:
    big = 2**70  # past orjson's 64-bit integers: these elements have no canonical form
    gold = [{"id": 1, "v": big}, {"id": 2, "v": big}]
    predicted = [{"id": 2, "v": big}, {"id": 1, "v": big}]
    # neither the whole arrays nor any two elements count as identical (no form to compare): the similarity decides
    assert hungarian(gold, predicted) == [(0, 1), (1, 0)]


def test_key_field_returns_matched_pairs_in_gold_order_then_the_unmatched_in_their_order() -> None:
    # gold[1] pairs by its key with predicted[0]; gold[0] has no key and pairs as identical with predicted[1]: the
    # identical pair is found second but comes first, in gold order
    gold = [{"name": "n"}, {"sku": 1, "q": 1}]
    predicted = [{"sku": 1, "q": 2}, {"name": "n"}]
    assert key_field(gold, predicted) == [(0, 1), (1, 0)]
    # nothing pairs: predicted[1] (no key) is set aside before predicted[0] (an unmatched key), yet they are listed
    # in their own order
    assert key_field([{"sku": 2}], [{"sku": 1}, {"x": 1}]) == [(0, None), (None, 0), (None, 1)]


def test_key_field_never_pairs_by_a_missing_null_or_structured_key() -> None:
    # scalars have no key property at all
    assert key_field(["a"], ["b"]) == [(0, None), (None, 0)]
    # a null key, and an object as the key's value, are no key: nothing pairs (the elements differ in "a")
    gold = [{"sku": None, "a": 1}, {"sku": {"x": 1}, "a": 1}]
    predicted = [{"sku": None, "a": 2}, {"sku": {"x": 1}, "a": 2}]
    assert key_field(gold, predicted) == [(0, None), (1, None), (None, 0), (None, 1)]


def problems(align: Any) -> list[str]:
    """The errors of an array property aligned by ``align`` (warnings, such as unknown parameters, raise nothing)."""
    array = {"type": "array", "items": {"type": "object"}, "x-eval-align": align}
    try:
        parse_eval_schema({"type": "object", "properties": {"items": array}})
    except EvalSchemaError as exc:
        return [str(e) for e in exc.errors]
    return []


@pytest.mark.parametrize(
    ("key", "refused"),
    [
        ("sku", False),
        (["sku", "id"], False),
        ("", True),
        (["sku", ""], True),
        ([], True),
        ([1], True),
        (3, True),
    ],
)
def test_key_field_needs_a_property_name_or_a_list_of_them(key: Any, refused: bool) -> None:
    found = problems({"match_by": "key_field", "key": key})
    assert bool(found) is refused, found
    assert all("key_field needs 'key'" in p for p in found)


@pytest.mark.parametrize(
    ("cells", "refused"),
    [(1, False), (2500, False), (0, True), (-3, True), (True, True), ("10", True), (2.5, True)],
)
def test_hungarian_max_cells_must_be_a_positive_integer(cells: Any, refused: bool) -> None:
    found = problems({"match_by": "hungarian", "max_cells": cells})
    assert bool(found) is refused, found
    assert all("'max_cells' must be a positive integer" in p for p in found)


@pytest.mark.parametrize("name", ["ordered", "key_field", "hungarian"])
def test_a_built_in_aligner_cannot_be_replaced(name: str) -> None:
    with pytest.raises(ValueError, match="is built in and cannot be replaced"):
        register_aligner(name, align_ordered)
    assert get_aligner(name).__name__ == f"align_{name}"


def test_a_registered_aligner_is_found_by_name_and_replaced_only_when_asked() -> None:
    def reverse(expected: Any, predicted: Any, node: Any, options: Any, context: Any = None) -> list[Any]:
        return [(i, len(predicted) - 1 - i) for i in range(len(expected))]

    register_aligner("test-reverse", reverse)
    try:
        assert get_aligner("test-reverse") is reverse
        with pytest.raises(ValueError, match="already registered"):
            register_aligner("test-reverse", align_ordered)
        register_aligner("test-reverse", align_ordered, overwrite=True)
        assert get_aligner("test-reverse") is align_ordered
    finally:
        ALIGNERS.remove("test-reverse")
    with pytest.raises(ValueError, match="unknown array alignment 'test-reverse'"):
        get_aligner("test-reverse")
