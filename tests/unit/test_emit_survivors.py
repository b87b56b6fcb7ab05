"""The results half of the field walk (scoring/emit.py) where a mutation run found no test looking: the bound and the
sharing of the path caches, the categories at their thresholds, one-sided subtrees and null elements. Every value is
worked out by hand in the comments."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_extractbench import ScoringOptions, score_sample
from pytest_extractbench.scoring import emit
from pytest_extractbench.scoring.rules import compile_rules


def obj(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


def walk(output: Any, gold: Any, schema: Any = None, **options: Any) -> list[tuple[str, str, float, int]]:
    score = score_sample(json.dumps(output), gold, schema, options=ScoringOptions(**options))
    return [(f.path, f.category, round(f.score, 3), f.depth) for f in score.fields]


def test_the_key_path_cache_never_holds_more_than_its_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    # a limit of 5: the sixth distinct path finds 5 entries and empties the cache before it is kept
    monkeypatch.setattr(emit, "_PATHS_LIMIT", 5)
    emit._KEY_PATHS.clear()  # a cache: emptying it only costs the next samples a rebuild
    for i in range(12):
        assert emit._join("p", f"k{i}") == f"p.k{i}"
        assert 1 <= len(emit._KEY_PATHS) <= 5


def test_an_index_path_is_built_once_and_shared_while_the_cache_holds_it() -> None:
    emit._INDEX_PATHS.clear()
    first = emit._element("shared", 0)
    emit._element("shared", 1)  # another path in between: a cache that kept only the last would lose the first
    assert emit._element("shared", 0) is first == "shared[0]"


def _node(array: dict[str, Any]) -> Any:
    return compile_rules(obj(t={"type": "array", **array})).root.properties["t"]


@pytest.mark.parametrize(
    ("array", "elementwise"),
    [
        ({"items": {"type": "string"}}, False),  # a plain array of scalars: one Jaccard field
        ({"items": {"type": "string"}, "x-eval-compare": "exact"}, False),  # judged whole by its comparator
        ({"items": {"type": "string"}, "x-eval-compare": "exact", "x-eval-align": "hungarian"}, False),  # whole wins
        ({"items": {"type": "string"}, "x-eval-align": "hungarian"}, True),  # aligned: each element a field
        ({"items": {"type": "string"}, "x-eval-compare": "partial"}, False),  # partial is the default, no change
        ({"items": {"type": "string", "x-eval-compare": "exact"}}, True),  # items with a comparator
        # a transform on the array is no comparator: its items' comparator still makes each element a field
        ({"items": {"type": "string", "x-eval-compare": "exact"}, "x-eval-transform": ["lowercase"]}, True),
        ({"items": {"type": "string", "x-eval-transform": ["lowercase"]}}, True),  # items with a transform
        ({"items": {"type": "string", "x-eval-skip": True}}, True),  # items skipped one by one
    ],
)
def test_which_arrays_of_scalars_have_elements_that_are_fields(array: dict[str, Any], elementwise: bool) -> None:
    assert emit._elementwise(_node(array)) is elementwise


def test_no_schema_makes_no_element_a_field_and_a_container_is_no_scalar() -> None:
    assert emit._elementwise(None) is False
    assert emit._scalars_only(["a", 1, None]) is True
    assert emit._scalars_only(["a", [1]]) is False and emit._scalars_only([{}]) is False
