"""The default output budget derived from a JSON Schema (budget.py), checked against hand-computed sizes."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from pytest_extractbench.live.max_tokens import MAX_BUDGET, MIN_BUDGET, estimate_tokens, max_tokens_for_schema


def test_scalars_strings_and_objects_add_up_by_hand() -> None:
    schema = {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}}}
    # braces 2 + "name" (6 chars -> 2 tokens) + line 2 + free string 32 + "age" (5 chars -> 2) + line 2 + number 6
    assert estimate_tokens(schema) == 2 + (2 + 2 + 32) + (2 + 2 + 6)
    assert max_tokens_for_schema(schema) == MIN_BUDGET  # 1.5 x 48 = 72, raised to the floor


def test_arrays_enums_formats_and_max_length() -> None:
    item = {"type": "object", "properties": {"sku": {"type": "string", "maxLength": 12}, "ok": {"type": "boolean"}}}
    # item: 2 + ("sku" 2 + 2 + (12/3 + 2)) + ("ok" 2 + 2 + 2) = 18
    assert estimate_tokens(item) == 18
    assert estimate_tokens({"type": "array", "items": item, "maxItems": 3}) == 2 + 3 * (2 + 18)
    assert estimate_tokens({"type": "array", "items": item}) == 2 + 4 * (2 + 18)  # four items when unbounded
    assert estimate_tokens({"type": "array", "items": item, "minItems": 9}) == 2 + 9 * (2 + 18)
    assert estimate_tokens({"type": "array", "items": item, "maxItems": 500}) == 2 + 20 * (2 + 18)  # capped
    assert estimate_tokens({"enum": ["a", "longer value"]}) == 6  # '"longer value"' is 14 chars -> 5, + 1
    assert estimate_tokens({"type": "string", "format": "date"}) == 6
    assert estimate_tokens({"type": ["string", "null"]}) == 32


def test_refs_are_followed_and_recursion_stops() -> None:
    schema = {
        "$defs": {"node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/node"}}}},
        "$ref": "#/$defs/node",
    }
    assert 0 < estimate_tokens(schema) < 10_000
    assert max_tokens_for_schema(schema) <= MAX_BUDGET


def test_a_schema_given_as_json_text_or_unreadable() -> None:
    schema = {"type": "object", "properties": {"notes": {"type": "array", "items": {"type": "string"}}}}
    assert max_tokens_for_schema(json.dumps(schema)) == max_tokens_for_schema(schema)
    assert max_tokens_for_schema("{not json") == MAX_BUDGET


def test_the_bundled_gold_answers_fit_their_budget_with_room_to_spare() -> None:
    from importlib.resources import files

    rows = [json.loads(line) for line in files("pytest_extractbench").joinpath("data/extraction.jsonl").open()]
    for row in rows:
        gold_chars = len(json.dumps(json.loads(row["item"]), indent=2))
        # twice the gold's size at ~3 characters of pretty-printed JSON per token
        assert max_tokens_for_schema(row["schema"]) >= 2 * gold_chars / 3, row["id"]


_schemas = st.recursive(
    st.sampled_from([{"type": "string"}, {"type": "integer"}, {"type": "boolean"}, {}, {"enum": [1, "x"]}]),
    lambda inner: st.one_of(
        st.dictionaries(st.text(min_size=1, max_size=12), inner, max_size=6).map(
            lambda props: {"type": "object", "properties": props}
        ),
        inner.map(lambda items: {"type": "array", "items": items}),
        st.lists(inner, min_size=1, max_size=3).map(lambda options: {"anyOf": options}),
    ),
    max_leaves=20,
)


@given(_schemas)
def test_the_budget_is_always_within_its_clamp(schema: Any) -> None:
    assert MIN_BUDGET <= max_tokens_for_schema(schema) <= MAX_BUDGET


@given(_schemas, st.text(min_size=1, max_size=12), _schemas)
def test_adding_a_property_never_lowers_the_estimate(schema: Any, name: str, extra: Any) -> None:
    base = {"type": "object", "properties": {"a": schema}}
    grown = {"type": "object", "properties": {"a": schema, "b" + name: extra}}
    assert estimate_tokens(grown) > estimate_tokens(base)
