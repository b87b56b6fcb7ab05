"""Where a mutation run of scoring/examples.py and scoring/flat.py found no test looking: the bounds of the example
search (how far into a description, how long a value, how many examples, how deep a schema), the schema cache's
identity and size, and the flat similarity's own branches called directly. Every value is worked out by hand in the
comments."""

from __future__ import annotations

import math
from typing import Any

import pytest

from pytest_extractbench.scoring import ScoringOptions, budget
from pytest_extractbench.scoring import examples as examples_module
from pytest_extractbench.scoring.budget import ScoringTimeout
from pytest_extractbench.scoring.examples import description_examples, example_key, schema_examples
from pytest_extractbench.scoring.flat import flat_similarity, prepared, prepared_similarity, similarity_rows

OPTIONS = ScoringOptions()


# -- the description's cues ----------------------------------------------------------------------------------


def test_a_cue_is_read_only_within_the_first_4000_characters() -> None:
    # "x" * 3995 + " " fills indexes 0-3995, so "e.g." takes 3996-3999: whole inside the first 4000 characters
    inside = "x" * 3995 + " " + "e.g. foo"
    assert description_examples(inside) == ["foo"]
    # one more "x": "e.g." takes 3997-4000, and the cut at 4000 leaves "e.g" without its dot, which is no cue
    cut = "x" * 3996 + " " + "e.g. foo"
    assert description_examples(cut) == []


def test_a_quoted_example_of_80_characters_is_read_whole_and_one_of_81_is_not() -> None:
    # the value after the cue is read from the next 80 + 2 characters: two quotes around at most 80
    assert description_examples('e.g. "' + "a" * 80 + '"') == ["a" * 80]
    # 81 characters fit no quote pair, and unquoted they run past 80 with no comma or sentence end: nothing
    assert description_examples('e.g. "' + "a" * 81 + '"') == []


def test_a_blank_quoted_example_is_skipped() -> None:
    # the first cue's value is " ", blank once stripped: skipped; the second cue gives "5"
    assert description_examples('e.g. " ". Or e.g. 5') == ["5"]


# -- how many examples a schema node gives --------------------------------------------------------------------


def _field(node: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": {"f": node}}


def test_only_the_first_50_listed_examples_are_read() -> None:
    # v0 ... v50 are 51 values: the first 50 (v0 to v49) are read, v50 is not
    found = schema_examples(_field({"examples": [f"v{i}" for i in range(51)]}), OPTIONS)["f"]
    assert found == {f"v{i}" for i in range(50)}


def test_only_the_first_50_openapi_examples_are_read() -> None:
    # the schema is read back from its canonical JSON text, whose keys are sorted: names e00 ... e50 sort in the
    # order they are written, so the first 50 are e00 to e49 and v50 is left out
    node = {"examples": {f"e{i:02d}": {"value": f"v{i}"} for i in range(51)}}
    assert schema_examples(_field(node), OPTIONS)["f"] == {f"v{i}" for i in range(50)}


def test_an_openapi_example_without_a_value_is_skipped() -> None:
    # OpenAPI lets an example name an external value instead: there is no value to read
    node = {"examples": {"a": {"externalValue": "https://example.com/a.json"}, "b": {"value": "v"}}}
    assert schema_examples(_field(node), OPTIONS) == {"f": {"v"}}


def test_the_root_node_has_no_field_path_and_no_examples() -> None:
    # the root's own examples are whole documents, not a field's value: only f's are kept
    schema = {"type": "object", "examples": [{"f": "a"}, "root"], "properties": {"f": {"examples": ["b"]}}}
    assert schema_examples(schema, OPTIONS) == {"f": {"b"}}


def test_a_reference_that_cannot_be_followed_leaves_the_node_s_own_examples() -> None:
    # a $ref that is no text, one to another document, and one through a value that is not an object resolve to
    # nothing: each field keeps the examples it states itself
    schema = {
        "type": "object",
        "properties": {
            "f": {"$ref": 5, "examples": ["a"]},
            "g": {"$ref": "other.json#/$defs/x", "examples": ["b"]},
            "h": {"$ref": "#/$defs/text/x", "examples": ["c"]},
        },
        "$defs": {"text": "not a schema"},
    }
    assert schema_examples(schema, OPTIONS) == {"f": {"a"}, "g": {"b"}, "h": {"c"}}


def test_a_schema_that_is_no_object_has_no_examples() -> None:
    assert schema_examples(None, OPTIONS) == {}
    assert schema_examples([{"examples": ["x"]}], OPTIONS) == {}


# -- how deep a schema is walked ----------------------------------------------------------------------------
# the root is at depth 0 and every properties, anyOf, items or $ref step goes one deeper; a node deeper than 32 is
# not walked


def _nested_properties(levels: int) -> dict[str, Any]:
    node: dict[str, Any] = {"examples": ["x"]}
    for _ in range(levels):
        node = {"type": "object", "properties": {"a": node}}
    return node


def test_properties_are_walked_to_depth_32_and_no_deeper() -> None:
    # 32 levels of properties put the example at path a.a...a (32 names) at depth 32: walked
    assert schema_examples(_nested_properties(32), OPTIONS) == {".".join(["a"] * 32): {"x"}}
    # 33 levels put it at depth 33: not walked, and no other node has an example
    assert schema_examples(_nested_properties(33), OPTIONS) == {}


@pytest.mark.parametrize("keyword", ["anyOf", "oneOf", "allOf"])
def test_each_branch_keyword_counts_one_level(keyword: str) -> None:
    def wrapped(levels: int) -> dict[str, Any]:
        node: dict[str, Any] = {"examples": ["x"]}
        for _ in range(levels):
            node = {keyword: [node]}
        return _field(node)

    # f is at depth 1 and each branch one deeper: 31 wraps put the example at 1 + 31 = 32, walked; 32 wraps at 33
    assert schema_examples(wrapped(31), OPTIONS) == {"f": {"x"}}
    assert schema_examples(wrapped(32), OPTIONS) == {}


def test_items_count_one_level() -> None:
    def wrapped(levels: int) -> dict[str, Any]:
        node: dict[str, Any] = {"examples": ["x"]}
        for _ in range(levels):
            node = {"type": "array", "items": node}
        return _field(node)

    # f at depth 1, each items one deeper and one "[]" longer: 31 at depth 32 (walked), 32 at depth 33 (not)
    assert schema_examples(wrapped(31), OPTIONS) == {"f" + "[]" * 31: {"x"}}
    assert schema_examples(wrapped(32), OPTIONS) == {}


def test_a_ref_counts_one_level() -> None:
    def chained(levels: int) -> dict[str, Any]:
        # f -> d1 -> d2 ... -> d<levels>, the last one holding the example
        defs: dict[str, Any] = {f"d{i}": {"$ref": f"#/$defs/d{i + 1}"} for i in range(1, levels)}
        defs[f"d{levels}"] = {"examples": ["x"]}
        return {"type": "object", "properties": {"f": {"$ref": "#/$defs/d1"}}, "$defs": defs}

    # f at depth 1, each $ref one deeper: 31 refs reach d31 at depth 32 (walked), 32 refs reach d32 at 33 (not)
    assert schema_examples(chained(31), OPTIONS) == {"f": {"x"}}
    assert schema_examples(chained(32), OPTIONS) == {}


# -- the cache of a schema object's examples ------------------------------------------------------------------


class _Counted:
    """Wraps ``_cached`` to count how often a schema's examples are worked out afresh."""

    def __init__(self) -> None:
        self.calls = 0
        self.inner = examples_module._cached

    def __call__(self, text: str, options: ScoringOptions) -> dict[str, frozenset[str]]:
        self.calls += 1
        return self.inner(text, options)


def test_the_same_schema_object_is_worked_out_once(monkeypatch: pytest.MonkeyPatch) -> None:
    counted = _Counted()
    monkeypatch.setattr(examples_module, "_cached", counted)
    monkeypatch.setattr(examples_module, "_by_identity", {})
    schema = _field({"examples": ["x"]})
    first = schema_examples(schema, OPTIONS)
    again = schema_examples(schema, OPTIONS)
    assert first == {"f": {"x"}}
    assert again is first  # the very dict the first call made
    assert counted.calls == 1
    # an equal schema that is another object is worked out again (its id is another key)
    assert schema_examples(_field({"examples": ["x"]}), OPTIONS) == {"f": {"x"}}
    assert counted.calls == 2


def test_equal_schemas_written_in_another_key_order_share_one_result() -> None:
    # the cache key is the schema's JSON text with its keys sorted, the same text for both
    first = {"type": "object", "properties": {"f": {"examples": ["a"]}, "g": {"default": "b"}}}
    second = {"properties": {"g": {"default": "b"}, "f": {"examples": ["a"]}}, "type": "object"}
    found = schema_examples(first, OPTIONS)
    assert found == {"f": {"a"}, "g": {"b"}}
    assert schema_examples(second, OPTIONS) is found


def test_the_schema_cache_is_emptied_when_full(monkeypatch: pytest.MonkeyPatch) -> None:
    counted = _Counted()
    held: dict[Any, Any] = {}
    monkeypatch.setattr(examples_module, "_cached", counted)
    monkeypatch.setattr(examples_module, "_by_identity", held)
    monkeypatch.setattr(examples_module, "_IDENTITY_LIMIT", 2)
    a, b, c = (_field({"examples": [name]}) for name in "abc")
    schema_examples(a, OPTIONS)
    schema_examples(b, OPTIONS)
    assert len(held) == 2  # under the limit of 2 until now: both kept
    schema_examples(a, OPTIONS)
    assert counted.calls == 2  # a is still held: not worked out again
    # c finds 2 entries, the limit: the cache is emptied and c alone is kept
    assert schema_examples(c, OPTIONS) == {"f": {"c"}}
    assert len(held) == 1


# -- comparison keys ------------------------------------------------------------------------------------------


def test_example_keys_of_each_kind() -> None:
    assert example_key("  ACME  Ltd ", OPTIONS) == "acme ltd"  # casefolded, whitespace collapsed
    assert example_key("   ", OPTIONS) is None  # blank text is no example
    assert example_key(True, OPTIONS) == "true"  # JSON's spelling
    assert example_key(False, ScoringOptions(case_sensitive=True)) == "false"  # JSON's, not Python's "False"
    assert example_key(None, OPTIONS) is None
    assert example_key([1], OPTIONS) is None
    assert example_key({"a": 1}, OPTIONS) is None
    assert example_key(9.0, OPTIONS) == "9"  # a whole float is written as the integer
    assert example_key(9.5, OPTIONS) == "9.5"
    assert example_key(7, OPTIONS) == "7"
    assert example_key(object(), OPTIONS) is None  # neither text, number, boolean nor container


# -- the flat similarity ------------------------------------------------------------------------------------


def test_a_nan_both_objects_hold_is_exact_as_the_objects_equality_says() -> None:
    # math.nan is one object, so {"x": nan, "w": 1} == {"x": nan, "w": 1} holds (identity first) and the walk's
    # identical-subtree path scores both leaves exact: (1 + 1) / 2 = 1.0; compared on its own, nan == nan is false and
    # compare_scalars would give x 0.0, a mean of (0 + 1) / 2 = 0.5
    gold, output = {"x": math.nan, "w": 1}, {"x": math.nan, "w": 1}
    assert flat_similarity(gold, output, OPTIONS) == 1.0
    leaves, found = prepared(gold, OPTIONS), prepared(output, OPTIONS)
    assert leaves is not None and found is not None
    assert prepared_similarity(gold, leaves, output, found, OPTIONS) == 1.0


def _expired() -> Any:
    return budget._deadline.set(-math.inf)  # a deadline every clock reading is past


def test_the_flat_similarity_checks_the_time_budget() -> None:
    token = _expired()
    try:
        with pytest.raises(ScoringTimeout):
            flat_similarity({"a": "x"}, {"a": "x"}, OPTIONS)  # equal leaves: no other comparison looks at the clock
    finally:
        budget._deadline.reset(token)


def test_the_similarity_rows_check_the_time_budget_for_each_prepared_pair() -> None:
    token = _expired()
    try:
        with pytest.raises(ScoringTimeout):
            similarity_rows([{"a": "x"}], [{"a": "x"}], OPTIONS, lambda g, o: 0.5, True)
    finally:
        budget._deadline.reset(token)


def test_the_similarity_rows_score_objects_of_scalars_from_their_leaves_only_when_flat() -> None:
    asked: list[tuple[Any, Any]] = []

    def similarity(gold: Any, output: Any) -> float:
        asked.append((gold, output))
        return -1.0  # no similarity gives this: a value from here is recognisable

    gold = [{"a": "x", "b": 1}, "x"]
    output = [{"a": "x", "b": 2}, {"a": "y"}]
    # flat: the two objects of scalars are scored from their leaves; a pair with the string "x" is asked of the
    # callable. {"a": "x", "b": 1} against {"a": "x", "b": 2}: a exact 1, b max(0, 1 - |2 - 1| / 1) = 0, mean
    # (1 + 0) / 2 = 0.5; against {"a": "y"}: a "x" vs "y" has token F1 0, edit similarity 1 - 1/1 = 0 and no
    # containment, 0, and b is missed, 0: mean 0.0
    assert similarity_rows(gold, output, OPTIONS, similarity, True) == [[0.5, 0.0], [-1.0, -1.0]]
    assert asked == [("x", output[0]), ("x", output[1])]
    asked.clear()
    # not flat (a rule applies inside the elements): every pair is asked of the callable, row by row
    assert similarity_rows(gold, output, OPTIONS, similarity, False) == [[-1.0, -1.0], [-1.0, -1.0]]
    assert asked == [(gold[0], output[0]), (gold[0], output[1]), ("x", output[0]), ("x", output[1])]


def test_two_empty_objects_are_alike() -> None:
    # no field to average: the walk's empty mean, 1.0; an empty object is not prepared (None), the walk scores it
    assert flat_similarity({}, {}, OPTIONS) == 1.0
    assert prepared({}, OPTIONS) is None


def _both(gold: dict[str, Any], output: dict[str, Any], options: ScoringOptions = OPTIONS) -> tuple[Any, Any]:
    """The flat similarity, and the same from the prepared leaves (the two must agree)."""
    leaves, found = prepared(gold, options), prepared(output, options)
    assert leaves is not None and found is not None
    return flat_similarity(gold, output, options), prepared_similarity(gold, leaves, output, found, options)


def test_an_object_holding_a_container_on_either_side_is_left_to_the_walk() -> None:
    assert flat_similarity({"a": [1]}, {"a": 1}, OPTIONS) is None
    assert flat_similarity({"a": 1}, {"a": {"b": 1}}, OPTIONS) is None
    assert flat_similarity({"a": 1}, {"a": None}, OPTIONS) is None  # null is no scalar type the flat path knows


def test_a_key_only_the_prediction_has_is_spurious() -> None:
    # a "x" = "x" exact 1, b only predicted: spurious 0; mean (1 + 0) / 2 = 0.5
    assert _both({"a": "x"}, {"a": "x", "b": "y"}) == (0.5, 0.5)
    # the same when the prediction also misses a gold key: a exact 1, c missed 0, b spurious 0: 1 / 3
    assert _both({"a": "x", "c": "z"}, {"a": "x", "b": "y"}) == (1 / 3, 1 / 3)


def test_a_blank_key_only_the_prediction_has_is_absent_when_blank_means_absent() -> None:
    # b " " counts as not given (the default): only a scores, exact: 1.0; with the option off b is spurious:
    # (1 + 0) / 2 = 0.5
    assert _both({"a": "x"}, {"a": "x", "b": " "}, ScoringOptions(empty_equals_absent=True)) == (1.0, 1.0)
    assert _both({"a": "x"}, {"a": "x", "b": " "}, ScoringOptions(empty_equals_absent=False)) == (0.5, 0.5)


def test_two_blank_values_when_blank_means_absent_leave_no_field_and_score_as_alike() -> None:
    # " " and "" are both absent under the option: no field is scored, and an object with none is alike, 1.0
    assert _both({"a": " "}, {"a": ""}, ScoringOptions(empty_equals_absent=True)) == (1.0, 1.0)


def test_a_number_and_its_text_are_compared_after_coercion_in_either_direction() -> None:
    # "35" against 35: the prediction written as text, "35", is the gold: 1.0; 35 against "35": the text read as a
    # number, 35.0, is the gold: 1.0 (only the string pair is scored from the prepared words)
    assert _both({"a": "35"}, {"a": 35}) == (1.0, 1.0)
    assert _both({"a": 35}, {"a": "35"}) == (1.0, 1.0)
