"""The helpers that keep the per-sample work fast and small: shared field paths, field results built from
whole tuples, the shape bits of the structure diagnostics, the word-bounded search of the text index."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from test_scoring_properties import _near, gold_objects, json_values, option_sets

from pytest_extractbench import FieldResult, ScoringOptions, score_sample
from pytest_extractbench.analysis.diagnostics import _bounded_find, structure_mismatches
from pytest_extractbench.scoring import FieldWalker, emit

SCHEMA = {
    "type": "object",
    "properties": {
        "customer": {"type": "object", "properties": {"city": {"type": "string"}}},
        "items": {"type": "array", "items": {"type": "object", "properties": {"sku": {"type": "string"}}}},
    },
}
GOLD = {"customer": {"city": "Oslo"}, "items": [{"sku": "A"}, {"sku": "B"}]}


def paths(output: Any) -> list[str]:
    return [f.path for f in score_sample(json.dumps(output), GOLD, SCHEMA).fields]


def test_samples_share_their_path_strings() -> None:
    first = paths({"customer": {"city": "Oslo"}, "items": [{"sku": "A"}, {"sku": "X"}]})
    second = paths({"customer": {"city": "Bergen"}, "items": [{"sku": "A"}]})  # other routes through the walk
    assert first == second == ["customer.city", "items[0].sku", "items[1].sku"]
    assert all(a is b for a, b in zip(first, second))


def test_the_path_cache_is_bounded_and_stays_right_when_cleared(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(emit, "_PATHS_LIMIT", 5)
    emit._KEY_PATHS.clear()  # caches: emptying them only costs the next samples a rebuild
    emit._INDEX_PATHS.clear()
    gold = {"o": {f"k{i}": i for i in range(12)}, "a": [{"x": i} for i in range(12)]}
    fields = FieldWalker(ScoringOptions()).walk(gold, {"o": {}, "a": []}, None)
    assert [f.path for f in fields] == [f"o.k{i}" for i in range(12)] + [f"a[{i}].x" for i in range(12)]
    assert len(emit._KEY_PATHS) <= 5 and len(emit._INDEX_PATHS) <= 5


def test_keys_equal_as_dict_keys_keep_their_own_paths() -> None:
    # 1 == 1.0 == True, so they are one dict key, but each is written its own way (gold from Python code)
    assert emit._join("p", "1") == "p.1"
    assert [emit._join("p", key) for key in (1, 1.0, True)] == ["p.1", "p.1.0", "p.True"]
    assert emit._join("", "k") == "k" and emit._element("", 3) == "[3]"


def test_a_root_key_named_empty_is_dollar_on_both_walks() -> None:
    fast, slow = FieldWalker(ScoringOptions()), FieldWalker(ScoringOptions())
    slow.fast_paths = False
    gold = {"": "x", "b": 1}
    assert [f.path for f in fast.walk(gold, dict(gold), None)] == ["$", "b"]
    assert fast.walk(gold, dict(gold), None) == slow.walk(gold, dict(gold), None)


@given(gold=gold_objects, choice=st.integers(0, 1000), options=option_sets)
def test_every_field_result_of_the_walk_is_whole(gold: dict, choice: int, options: ScoringOptions) -> None:
    for predicted in (gold, _near(gold, choice), {}):
        for field in FieldWalker(options).walk(gold, predicted, None):
            assert len(field) == len(FieldResult._fields)
            assert FieldResult(*field) == field == FieldResult.from_dict(field.as_dict())


def _reference_shapes(expected: Any, predicted: Any) -> dict[str, int]:
    """structure_mismatches as first written: a set of shape names per path."""

    def kinds(value: Any, path: str, out: dict[str, set[str]]) -> None:
        if isinstance(value, dict):
            out.setdefault(path, set()).add("object")
            for key, child in value.items():
                kinds(child, f"{path}.{key}" if path else key, out)
        elif isinstance(value, list):
            out.setdefault(path, set()).add("array")
            for element in value:
                kinds(element, f"{path}[]", out)
        elif value is not None:
            out.setdefault(path, set()).add("scalar")

    gold: dict[str, set[str]] = {}
    guess: dict[str, set[str]] = {}
    kinds(expected, "", gold)
    kinds(predicted, "", guess)
    counts = {"array_vs_object": 0, "scalar_vs_container": 0}
    for path, found in gold.items():
        other = guess.get(path)
        if other and not found & other:
            counts["array_vs_object" if {"array", "object"} <= found | other else "scalar_vs_container"] += 1
    return counts


@given(expected=json_values, predicted=json_values)
def test_shape_bits_count_what_shape_sets_counted(expected: Any, predicted: Any) -> None:
    assert structure_mismatches(expected, predicted) == _reference_shapes(expected, predicted)


def test_shape_mismatches_by_hand() -> None:
    gold = {"a": [{"x": 1}], "b": {"c": 1}, "d": "s", "e": [1, None]}
    guess = {"a": {"x": 1}, "b": "c", "d": {"s": 1}, "e": [[1]]}
    # a: array vs object; b: object vs scalar; d: scalar vs object; e[]: scalar vs array (b.c, d.s one-sided)
    assert structure_mismatches(gold, guess) == {"array_vs_object": 1, "scalar_vs_container": 3}


_text = st.text(alphabet="ab _-.1é ", max_size=30)


@given(text=_text, needle=st.text(alphabet="ab _-.1é", min_size=1, max_size=4))
def test_the_bounded_find_agrees_with_the_word_boundary_regex(text: str, needle: str) -> None:
    expected = re.search(r"(?<!\w)" + re.escape(needle) + r"(?!\w)", text) is not None
    assert _bounded_find(text, needle) is expected


@pytest.mark.parametrize(
    "text, needle, found",
    [
        ("a-b a-bc", "a-b", True),
        ("xa-b a-bc", "a-b", False),
        ("a-b_", "a-b", False),
        ("é a-b", "a-b", True),
        ("éa-b", "a-b", False),
        ("(a b)", "a b", True),
        ("a b", "a b", True),
        ("1,234.", "1,234", True),
    ],
)
def test_the_bounded_find_by_hand(text: str, needle: str, found: bool) -> None:
    assert _bounded_find(text, needle) is found


def test_validation_paths_are_written_once_and_read_back_the_same() -> None:
    from pytest_extractbench.scoring.schema import _rs_path, validation_errors

    schema = {"type": "object", "properties": {"items": {"type": "array", "items": {"type": "integer"}}}}
    assert validation_errors({"items": [1, "x"]}, schema) == ['$.items[1]: "x" is not of type "integer"']
    assert validation_errors({"items": [1, 2]}, schema) == []
    assert _rs_path(["items", 1]) is _rs_path(["items", 1]) == "$.items[1]"
    assert _rs_path(["items", "1"]) == "$.items.1" and _rs_path([]) == "$"
