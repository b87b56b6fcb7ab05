"""The results half of the field walk (scoring/emit.py) where a mutation run found no test looking: the bound and the
sharing of the path caches, the categories at their thresholds, one-sided subtrees and null elements. Every value is
worked out by hand in the comments."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_extractbench import FieldResult, ScoringOptions, score_sample
from pytest_extractbench.scoring import emit, register_comparator
from pytest_extractbench.scoring.comparators import COMPARATORS
from pytest_extractbench.scoring.emit import FieldEmitter
from pytest_extractbench.scoring.rules import compile_rules


def obj(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties}


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


@pytest.mark.parametrize(
    ("value", "default", "kept"),
    [
        (emit.ABSENT, True, True),  # a key that is not there is absent whatever the options
        (None, True, False),  # null is absent unless null_equals_absent is off
        ("  ", True, False),  # blank text, [] and {} are absent unless empty_equals_absent is off
        ([], True, False),
        ({}, True, False),
        ("x", False, False),  # values are present under both
        (0, False, False),
        (False, False, False),
        ([None], False, False),
        ({"a": None}, False, False),
    ],
)
def test_what_is_absent_by_default_and_with_nulls_and_empties_kept(value: Any, default: bool, kept: bool) -> None:
    kept_options = ScoringOptions(null_equals_absent=False, empty_equals_absent=False)
    assert FieldEmitter(ScoringOptions()).is_absent(value) is default
    assert FieldEmitter(kept_options).is_absent(value) is kept


def test_a_comparator_without_similarities_gets_the_three_string_similarities() -> None:
    # exact gives only a score; the field carries token F1, edit similarity and containment of the normalized texts.
    # "york" against "new york": 1 common word of 1 + 2 -> 2 * 1 / 3; 4 insertions of 8 characters -> 1 - 4/8;
    # "york" sits inside "new york" -> 4/8
    schema = obj(a={"type": "string", "x-eval-compare": "exact"})
    [field] = score_sample(json.dumps({"a": "york"}), {"a": "new york"}, schema).fields
    assert (field.category, field.score) == ("incorrect", 0.0)
    assert field.similarity == pytest.approx((2 / 3, 1 - 4 / 8, 4 / 8))


def test_a_batch_comparator_without_similarities_gets_them_for_strings_only() -> None:
    def scores(items: Any, options: Any) -> list[float]:
        return [0.0 for _ in items]

    register_comparator("test_batch_bare", scores, batch=True, overwrite=True)
    try:
        schema = obj(
            a={"type": "string", "x-eval-compare": "test_batch_bare"},
            n={"type": "number", "x-eval-compare": "test_batch_bare"},
        )
        text, number = score_sample(json.dumps({"a": "york", "n": 2}), {"a": "new york", "n": 1}, schema).fields
        # "york" against "new york", as worked out above; two numbers have no text similarity
        assert (text.category, text.comparator) == ("incorrect", "test_batch_bare")
        assert text.similarity == pytest.approx((2 / 3, 1 - 4 / 8, 4 / 8))
        assert (number.category, number.similarity) == ("incorrect", None)
    finally:
        COMPARATORS.remove("test_batch_bare")


def test_a_failing_comparator_leaves_an_error_field_with_nothing_compared() -> None:
    def broken(expected: Any, predicted: Any, params: Any, options: Any) -> float:
        raise RuntimeError("down")

    register_comparator("test_broken_error_field", broken, overwrite=True)
    try:
        schema = obj(a={"type": "string", "x-eval-compare": "test_broken_error_field"})
        [field] = score_sample(json.dumps({"a": "y"}), {"a": "x"}, schema).fields
        assert (field.path, field.category, field.score, field.equal) == ("a", "error", 0.0, False)
        assert (field.expected_type, field.predicted_type, field.type_ok, field.similarity) == (
            "string",
            "string",
            None,
            None,
        )
        assert field.comparator == "test_broken_error_field" and "RuntimeError: down" in field.error
    finally:
        COMPARATORS.remove("test_broken_error_field")


@pytest.mark.parametrize("batch", [False, True], ids=["plain", "batch"])
def test_a_batch_comparator_follows_the_exact_within_rule_as_a_plain_one_does(batch: bool) -> None:
    # the comparator scores every pair 0.97, over the 0.95 exact threshold but not equal (a score under 1). By the
    # default rule both fields are exact; under exact_within a number is exact only when equal (n: partial, 0.97 >=
    # 0.5) and a value of the wrong type never is (t: gold text, predicted number: partial), batch or not
    def near(expected: Any, predicted: Any, params: Any, options: Any) -> float:
        return 0.97

    def near_batch(items: Any, options: Any) -> list[float]:
        return [0.97 for _ in items]

    register_comparator("test_near", near_batch if batch else near, batch=batch, overwrite=True)
    try:
        schema = obj(
            n={"type": "number", "x-eval-compare": "test_near"}, t={"type": "string", "x-eval-compare": "test_near"}
        )
        output, gold = json.dumps({"n": 2, "t": 5}), {"n": 1, "t": "x"}
        by_default = score_sample(output, gold, schema).fields
        assert [(f.path, f.category, f.score, f.type_ok) for f in by_default] == [
            ("n", "exact", 0.97, True),
            ("t", "exact", 0.97, False),
        ]
        within = score_sample(output, gold, schema, options=ScoringOptions(exact_within=0.0)).fields
        assert [(f.path, f.category) for f in within] == [("n", "partial"), ("t", "partial")]
    finally:
        COMPARATORS.remove("test_near")


# every pairing of these predictions and golds: numbers of both Python types, a numeric text, a boolean, a text
PAIRS = [(output, gold) for output in (2, 1, 2.0, "2", True, "x") for gold in (1, 1.5, "x", True)]


@given(
    score=st.one_of(st.sampled_from([0.0, 0.49, 0.5, 0.94, 0.95, 0.97, 1.0]), st.floats(0.0, 1.0)),
    within=st.sampled_from([None, 0.0, 0.1]),
)
def test_a_batch_comparator_and_a_plain_one_giving_one_score_give_one_category(
    score: float, within: float | None
) -> None:
    register_comparator("test_any_plain", lambda expected, predicted, params, options: score, overwrite=True)
    register_comparator("test_any_batch", lambda items, options: [score] * len(items), batch=True, overwrite=True)
    try:
        keys = range(len(PAIRS))
        schema = obj(
            **{f"p{i}": {"x-eval-compare": "test_any_plain"} for i in keys},
            **{f"b{i}": {"x-eval-compare": "test_any_batch"} for i in keys},
        )
        output = {**{f"p{i}": o for i, (o, _) in enumerate(PAIRS)}, **{f"b{i}": o for i, (o, _) in enumerate(PAIRS)}}
        gold = {**{f"p{i}": g for i, (_, g) in enumerate(PAIRS)}, **{f"b{i}": g for i, (_, g) in enumerate(PAIRS)}}
        fields = score_sample(json.dumps(output), gold, schema, options=ScoringOptions(exact_within=within)).fields
        assert len(fields) == 2 * len(PAIRS)  # one field a key, the plain ones first (gold order)
        plain, batch = fields[: len(PAIRS)], fields[len(PAIRS) :]
        for p, b in zip(plain, batch):
            assert p._replace(path=b.path, comparator=None) == b._replace(comparator=None)
    finally:
        COMPARATORS.remove("test_any_plain")
        COMPARATORS.remove("test_any_batch")


# Each element of this array is a field (its items carry a comparator), so a null element is an element: every
# attribute of its field is spelled out, by the rules of _null_element and _null_field: a side that has no element
# shows None and has no type; only two nulls match (score 1, equal, type_ok True); a lone null is missed or
# spurious with no type verdict (None); null against a scalar is a wrong value of the wrong type.
RULED = obj(t={"type": "array", "items": {"type": "string", "x-eval-compare": "exact"}})


def _field(
    path: str, category: str, values: tuple[Any, Any], types: tuple[Any, Any], origin: str, type_ok: Any = None
) -> FieldResult:
    exact = category == "exact"
    score = 1.0 if exact else 0.0
    return FieldResult(path, category, score, *values, *types, type_ok, exact, 0, False, origin, None, None, None)


# the other side of a null, walked on its own: one field, as the items' whole comparator makes an element
OBJECT_SPURIOUS = _field("t[0]", "spurious", (None, {"a": "x"}), (None, "object"), "null", type_ok=False)
OBJECT_MISSED = _field("t[0]", "missed", ({"a": "x"}, None), ("object", None), "null")
B_FOR_A = FieldResult(
    "t[1]", "incorrect", 0.0, "a", "b", "string", "string", True, False, 0, False, "", (0.0, 0.0, 0.0), "exact", None
)
A_EXACT = FieldResult(
    "t[0]", "exact", 1.0, "a", "a", "string", "string", True, True, 0, False, "", (1.0, 1.0, 1.0), "exact", None
)


@pytest.mark.parametrize(
    ("output", "gold", "fields"),
    [
        # two nulls paired in arrays that differ elsewhere ("b" against "a": the exact comparator says wrong, and the
        # two texts share no word, no character in place and neither holds the other)
        ([None, "b"], [None, "a"], [_field("t[0]", "exact", (None, None), ("null", "null"), "", True), B_FOR_A]),
        # the gold's null against an object: the null missed, the object spurious (not of the declared string type)
        ([{"a": "x"}], [None], [_field("t[0]", "missed", (None, None), ("null", None), "null"), OBJECT_SPURIOUS]),
        # the prediction's null against an object: the null spurious, the object missed
        ([None], [{"a": "x"}], [_field("t[0]", "spurious", (None, None), (None, "null"), "null"), OBJECT_MISSED]),
        # the gold's null against a blank text, which is absent: the null missed, nothing else
        (["  "], [None], [_field("t[0]", "missed", (None, None), ("null", None), "null")]),
        # null against a scalar, either way: a wrong value, of the wrong type
        (["x"], [None], [_field("t[0]", "incorrect", (None, "x"), ("null", "string"), "", False)]),
        ([None], ["x"], [_field("t[0]", "incorrect", ("x", None), ("string", "null"), "", False)]),
        # a null element with no partner: missed or spurious, numbered as elements are
        (["a"], ["a", None], [A_EXACT, _field("t[1]", "missed", (None, None), ("null", None), "missing_element")]),
        (["a", None], ["a"], [A_EXACT, _field("t[1]", "spurious", (None, None), (None, "null"), "extra_element")]),
    ],
)
def test_every_attribute_of_a_null_element_field(output: Any, gold: Any, fields: list[FieldResult]) -> None:
    assert list(score_sample(json.dumps({"t": output}), {"t": gold}, RULED).fields) == fields


@pytest.mark.parametrize(("score", "category"), [(0.95, "exact"), (0.94, "partial")])
def test_under_exact_within_a_text_is_exact_from_the_exact_threshold_on(score: float, category: str) -> None:
    # not a number, so the score decides as by default: 0.95 reaches the 0.95 threshold, 0.94 does not (and is
    # over the 0.5 partial threshold); neither is equal (a score under 1)
    register_comparator("test_fixed_score", lambda expected, predicted, params, options: score, overwrite=True)
    try:
        schema = obj(a={"type": "string", "x-eval-compare": "test_fixed_score"})
        options = ScoringOptions(exact_within=0.0)
        [field] = score_sample(json.dumps({"a": "y"}), {"a": "x"}, schema, options=options).fields
        assert (field.category, field.score, field.equal) == (category, score, False)
    finally:
        COMPARATORS.remove("test_fixed_score")


def test_two_unequal_scalars_without_a_rule_name_no_comparator_and_no_error() -> None:
    # "y" against "x": no word in common, 1 edit of 1 character, neither holds the other: (0, 0, 0)
    [field] = score_sample(json.dumps({"a": "y"}), {"a": "x"}).fields
    assert field == FieldResult(
        "a", "incorrect", 0.0, "x", "y", "string", "string", True, False, 0, False, "", (0.0, 0.0, 0.0), None, None
    )


def test_every_attribute_of_a_missed_and_of_a_spurious_field() -> None:
    # a one-sided field has nothing compared: no value, type, type verdict or similarity on the side it lacks
    assert score_sample(json.dumps({}), {"a": "x"}).fields == (
        FieldResult("a", "missed", 0.0, "x", None, "string", None, None, False, 0, False, "", None, None, None),
    )
    assert score_sample(json.dumps({"b": "y"}), {}).fields == (
        FieldResult("b", "spurious", 0.0, None, "y", None, "string", None, False, 0, False, "", None, None, None),
    )


@pytest.mark.parametrize(
    ("items", "fields"),
    [
        # lowercase on both sides: "a" = "a" exact; "b" against "c" shares nothing, 0
        (
            {"type": "string", "x-eval-transform": "lowercase"},
            [("tags[0]", "exact", 1.0), ("tags[1]", "incorrect", 0.0)],
        ),
        # exact is case-sensitive: "A" against "a" and "B" against "c" both 0
        ({"type": "string", "x-eval-compare": "exact"}, [("tags[0]", "incorrect", 0.0), ("tags[1]", "incorrect", 0.0)]),
        ({"type": "string", "x-eval-skip": True}, []),  # skipped elements are no fields at all
    ],
)
@pytest.mark.parametrize("annotation", [{}, {"x-eval-compare": "partial"}])
def test_an_explicit_partial_on_an_array_scores_as_the_default_walk(items, fields, annotation) -> None:
    # "partial" names the default comparator (docs/explanation/eval-schemas.md: "`partial` keeps the default
    # field-by-field walk"; annotate_defaults writes it on every field): items that carry a rule make each element a
    # field with it as without it. It used to make the array one Jaccard field that ignored the items' rules
    # (with lowercase: one incorrect field scoring 1/3 instead of tags[0] exact).
    schema = {"type": "object", "properties": {"tags": {"type": "array", **annotation, "items": items}}}
    got = score_sample('{"tags": ["a", "c"]}', {"tags": ["A", "B"]}, schema)
    assert [(f.path, f.category, f.score) for f in got.fields] == fields
