"""ANLS*: hand cases worked out in the comments, agreement with the reference package ``anls-star`` on generated
JSON (nested objects, lists, nulls, tuples of alternatives, unicode), and the metric's way through a run."""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_extractbench import score_sample
from pytest_extractbench.scoring import anls_star, anls_star_details
from pytest_extractbench.scoring.anls import key_occurrences

# --- hand cases ---


@pytest.mark.parametrize(
    ("gold", "predicted", "expected"),
    [
        # "hello world" vs "hello wrold": two substitutions in 11 characters -> 1 - 2/11
        ("Hello World", "Hello Wrold", 9 / 11),
        # case and spacing are normalized away
        ("  New   York ", "new york", 1.0),
        # "abcd" vs "abxy": 2 of 4 -> 0.5, exactly the threshold, kept; "axyz": 3 of 4 -> 0.25, under it -> 0
        ("abcd", "abxy", 0.5),
        ("abcd", "axyz", 0.0),
        # numbers and booleans compare as text: "1" vs "1.0" is 2 edits of 3 -> 1/3 -> 0; true vs "TRUE" -> 1
        (1, 1.0, 0.0),
        (True, "TRUE", 1.0),
        # a null gold accepts null, "", [] and {}; anything else scores 0
        (None, "", 1.0),
        (None, [], 1.0),
        (None, "x", 0.0),
        ("x", None, 0.0),
        # None against a two-element list: 0 over max(1, 2)
        (None, ["a", "b"], 0.0),
        # an empty gold list against null is a structure mismatch: 0 over max(0, 1) = 1 -> 0
        ([], None, 0.0),
        ([], [], 1.0),
        ({}, {}, 1.0),
        # lists pair by the Hungarian method, order free: 2 of 3 gold elements found -> 2/3
        (["apple", "banana", "cherry"], ["banana", "apple"], 2 / 3),
        # an invented element adds 1 to the length: 3 found, length 4 -> 3/4
        (["apple", "banana", "cherry"], ["cherry", "banana", "apple", "date"], 3 / 4),
        # a missing key reads as null against "World": 1 of 2; an invented key: 2 of 3
        ({"a": "Hello", "b": "World"}, {"a": "Hello"}, 1 / 2),
        ({"a": "Hello", "b": "World"}, {"a": "Hello", "b": "World", "c": "Great"}, 2 / 3),
        # a gold null left out by the prediction is right: 2 of 2
        ({"a": "x", "b": None}, {"a": "x"}, 1.0),
        # an invented key with an empty value earns nothing and counts 1 (the reference package's rule): 1 of 2
        ({"a": "x"}, {"a": "x", "b": None}, 1 / 2),
        # a list where a scalar came: 0 over max(3, 1) = 3; with the other key right: 1 of 4
        ({"a": ["x", "y", "z"], "b": "q"}, {"a": "x", "b": "q"}, 1 / 4),
        # alternatives: "wolrd" vs "world" is 2 of 5 -> 0.6; vs "hello" it is under the threshold -> the best is 0.6
        ({"a": ("Hello", "World")}, {"a": "Wolrd"}, 0.6),
        # line items: k1 1, k2 "mock" vs "kcom" (3+ edits of 4 -> 0), {e: f} pairs with {e: f} (1), and
        # {a: b, c: d} with {a: y, c: d} (0 + 1): 3 of 5
        (
            {"k1": 1, "k2": "mock", "items": [{"a": "b", "c": "d"}, {"e": "f"}]},
            {"k1": 1, "k2": "kcom", "items": [{"e": "f"}, {"a": "y", "c": "d"}]},
            3 / 5,
        ),
        # the top-level list of strings against one string is the classic ANLS's list of accepted answers
        (["Paris", "paris, France"], "PARIS", 1.0),
    ],
)
def test_hand_cases(gold: Any, predicted: Any, expected: float) -> None:
    assert anls_star(gold, predicted) == pytest.approx(expected, abs=1e-12)


def test_per_key_scores_closest_gold_and_the_list_marker() -> None:
    gold = {"name": "Acme", "items": [{"sku": "A1", "qty": 2}, {"sku": "B2", "qty": 1}], "note": None}
    predicted = {"name": "ACME", "items": [{"sku": "B2", "qty": 1}, {"sku": "A7", "qty": 2}], "extra": "x"}
    found = anls_star_details(gold, predicted)
    # sku: B2/B2 1, A1/A7 1 - 1/2 = 0.5 -> mean 0.75; qty 1 both times; each item: (1 + 1) / 2 and (0.5 + 1) / 2
    assert found.fields == pytest.approx(
        {
            "name": 1.0,
            "items[].sku": 0.75,
            "items[].qty": 1.0,
            "items": (1 + 1 + 0.5 + 1) / 4,
            "note": 1.0,
            "extra": 0.0,
        }
    )
    # name 1, four item leaves 3.5, note 1 (null left out), extra 0 over 1: 5.5 of 7
    assert found.score == pytest.approx(5.5 / 7)
    # the gold as the prediction laid it out: items in its order, the invented key as null, the left-out null gone
    assert found.closest == {"name": "Acme", "items": [{"sku": "B2", "qty": 1}, {"sku": "A1", "qty": 2}], "extra": None}


def test_a_tuple_tie_prefers_the_alternative_equal_to_the_prediction() -> None:
    # both alternatives score 1 on their own ({"k": "A", "z": None}: k 1, z null-null 1); the second equals the
    # prediction, so it counts: its length 1 rather than 2, which the sibling key's 0 then weighs against
    gold = {"t": ({"k": "A", "z": None}, {"k": "a"}), "u": "x"}
    assert anls_star(gold, {"t": {"k": "a"}, "u": "y"}) == pytest.approx(1 / 2)


def test_no_alternative_at_all_is_a_gold_error() -> None:
    with pytest.raises(ValueError, match="at least one alternative"):
        anls_star((), "x")


def test_long_lists_stay_cheap() -> None:
    import random
    import time

    from pytest_extractbench.scoring import anls

    rng = random.Random(3)
    gold = [f"item {i}" for i in range(3000)]
    predicted = gold[:2900] + [f"itme {i}" for i in range(2900, 3000)]  # 100 typos: "item" -> "itme"
    rng.shuffle(predicted)
    start = time.process_time()
    # 2,900 identical strings pair by hash; the 100 typos by the assignment: 2 edits in 8-9 characters each
    expected = (2900 + sum(1 - 2 / len(f"item {i}") for i in range(2900, 3000))) / 3000
    assert anls_star(gold, predicted) == pytest.approx(expected)
    # 600 x 600 objects that all differ: past MAX_CELLS they pair in order, each object's own key matches
    objects = [{"k": f"v{i}", "x": "a"} for i in range(600)]
    assert len(objects) ** 2 > anls.MAX_CELLS
    assert anls_star(objects, [{"k": f"v{i}", "x": "b"} for i in range(600)]) == pytest.approx(0.5)
    assert time.process_time() - start < 20  # seconds; without the hash and the cap this is minutes


# --- agreement with the reference package ---

LEAVES = (
    st.none()
    | st.booleans()
    | st.integers(-1000, 1000)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=8)
    | st.sampled_from(["Acme", "ACME ", "acme inc", "Zürich", "東京", "", " "])
)
KEYS = st.sampled_from(["a", "b", "c", "naïve", "日付"])


def _json(alternatives: bool) -> st.SearchStrategy[Any]:
    def extend(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
        found = st.lists(children, max_size=4) | st.dictionaries(KEYS, children, max_size=4)
        return found | st.tuples(children) | st.tuples(children, children) if alternatives else found

    return st.recursive(LEAVES, extend, max_leaves=12)


@st.composite
def _near(draw: st.DrawFn, gold: Any) -> Any:
    """A prediction made from ``gold`` the way extractors err: typos, case, dropped and invented keys and elements,
    reordered lists, nulls, a wrong structure now and then; one alternative of a tuple."""
    if isinstance(gold, tuple):
        return draw(_near(draw(st.sampled_from(gold))))
    how = draw(st.integers(0, 9))
    if how == 0:
        return draw(_json(alternatives=False))  # anything at all
    if how == 1:
        return draw(st.sampled_from([None, "", [], {}]))
    if isinstance(gold, dict):
        out = {k: draw(_near(v)) for k, v in gold.items() if draw(st.integers(0, 4))}
        out.update(draw(st.dictionaries(KEYS, LEAVES, max_size=2)))
        return out
    if isinstance(gold, list):
        kept = [draw(_near(v)) for v in gold if draw(st.integers(0, 4))]
        return draw(st.permutations(kept + draw(st.lists(LEAVES, max_size=2))))
    if isinstance(gold, str) and how < 7:
        text = list(gold.upper() if how == 2 else gold)
        for _ in range(draw(st.integers(0, 2))):
            where = draw(st.integers(0, len(text)))
            edit = draw(st.sampled_from(["insert", "delete", "replace"]))
            if edit == "insert" or not text:
                text.insert(where, draw(st.characters()))
            else:
                text[min(where, len(text) - 1)] = draw(st.characters()) if edit == "replace" else ""
        return "".join(text)
    return gold if how < 8 else draw(LEAVES)


def _reversed_lists(value: Any) -> Any:
    if isinstance(value, list):
        return [_reversed_lists(v) for v in reversed(value)]
    if isinstance(value, dict):
        return {k: _reversed_lists(v) for k, v in value.items()}
    if isinstance(value, tuple):
        return tuple(_reversed_lists(v) for v in value)
    return value


def _variants(score: Any, gold: Any, predicted: Any) -> list[Any]:
    """``score`` with the lists of either side reversed and identical elements paired first or not: the same
    unless pairings tie (then which one counts is the solver's choice)."""
    from pytest_extractbench.scoring import anls

    try:
        found = []
        for first in (True, False):
            anls.PAIR_IDENTICAL_FIRST = first
            found += [
                score(g, p) for g in (gold, _reversed_lists(gold)) for p in (predicted, _reversed_lists(predicted))
            ]
        return found
    finally:
        anls.PAIR_IDENTICAL_FIRST = True


def _orderings(gold: Any, predicted: Any) -> list[float]:
    return _variants(anls_star, gold, predicted)


def _top_level_orders(value: Any) -> list[Any]:
    """A list in a few orders (every order up to 4 elements; else reversed and rotated), nested lists reversed too."""
    if not isinstance(value, list) or len(value) < 2:
        return [value, _reversed_lists(value)]
    orders = list(itertools.permutations(value)) if len(value) <= 4 else [value, value[::-1], value[1:] + value[:1]]
    return [list(o) for o in orders] + [_reversed_lists(list(o)) for o in orders]


def _reference_orderings(reference: Callable[..., Any], gold: Any, predicted: Any) -> list[float]:
    """The package's own score with the elements in other orders: ANLS* does not depend on order, so differing
    values mean equally good pairings that score differently, and munkres picked one by position."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [reference(g, p) for g in _top_level_orders(gold) for p in _top_level_orders(predicted)]


def _flat(nodes: Any, prefix: tuple[str, ...] = ()) -> dict[tuple[str, ...], float]:
    out = {}
    for key, node in nodes.items():
        out[(*prefix, key)] = node.anls_score
        out.update(_flat(node.children, (*prefix, key)))
    return out


def _merged_keys(gold: Any, predicted: Any) -> dict[tuple[str, ...], float]:
    merged: dict[tuple[str, ...], list[float]] = {}
    for path, value in key_occurrences(gold, predicted):  # no key of KEYS holds "." or "[]"
        merged.setdefault(tuple(p for p in path.replace("[]", ".").split(".") if p), []).append(value)
    return {key: sum(values) / len(values) for key, values in merged.items()}


def _same_keys(ours: dict[tuple[str, ...], float], theirs: dict[tuple[str, ...], float]) -> bool:
    return set(ours) == set(theirs) and all(abs(ours[k] - theirs[k]) <= 1e-9 for k in ours)


def _key_variants(gold: Any, predicted: Any) -> list[dict[tuple[str, ...], float]]:
    return _variants(_merged_keys, gold, predicted)


@pytest.fixture(scope="module")
def reference() -> Callable[..., Any]:
    from _require import import_or_skip

    return import_or_skip("anls_star", "the reference package anls-star (the dev extra) is not installed").anls_score


TIES: list[tuple[Any, Any]] = []  # cases where equally good pairings give different scores (shown if any)


CASES = st.one_of(
    _json(alternatives=True).flatmap(lambda gold: st.tuples(st.just(gold), _near(gold))),
    st.tuples(_json(alternatives=True), _json(alternatives=False)),
)


# Held at 40 draws of 8 cases in every profile: the ci profile's 4,000 cases take minutes of the reference package.
# Where the two differ, a tie is shown by reordering either side (_orderings for ours, _reference_orderings for the
# package: its munkres picks among equal pairings by position), and then some ordering of each must agree.
@settings(max_examples=40, deadline=None)
@given(st.lists(CASES, min_size=8, max_size=8))
def test_agrees_with_the_reference_package(reference: Callable[..., Any], cases: list[tuple[Any, Any]]) -> None:
    for gold, predicted in cases:
        if isinstance(predicted, str) and gold == []:
            continue  # the package raises here (an empty list of accepted answers)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the package warns when it reads a list as accepted answers
            expected, keys = reference(gold, predicted, return_key_scores=True)
        ours = anls_star(gold, predicted)
        if abs(ours - expected) > 1e-9:
            # pairings that tie on their sum of scores but differ in length: the score depends on which one the
            # solver returns (munkres there, scipy here); then the package's value is one of the other choices
            orderings = _orderings(gold, predicted)
            theirs = [expected, *_reference_orderings(reference, gold, predicted)]
            # a tie shows as a value that moves with the order, on either side; then the two agree on some order
            spread = max(orderings + theirs) - min(orderings + theirs)
            assert spread > 1e-9, (gold, predicted, ours, expected)
            assert any(abs(v - w) <= 1e-9 for v in orderings for w in theirs), (gold, predicted, orderings, theirs)
            TIES.append((gold, predicted))
            continue
        # per key: ours, list markers dropped and averaged the way the package merges them; where list pairings
        # tie (every candidate scoring 0, say) the per-key scores can follow another choice: one of ours then agrees
        ours_keys = _merged_keys(gold, predicted)
        if not _same_keys(ours_keys, _flat(keys)):
            assert any(_same_keys(k, _flat(keys)) for k in _key_variants(gold, predicted)), (gold, predicted)
            TIES.append((gold, predicted))


# --- through scoring, the catalog and the gates ---

SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}}},
}


def test_a_sample_carries_its_anls_star_credited_like_every_accuracy_metric() -> None:
    gold = {"name": "Hello World", "tags": ["a", "b"]}
    score = score_sample('{"name": "Hello Wrold", "tags": ["b"]}', gold, SCHEMA)
    # name 9/11, tags 1 of 2: (9/11 + 1) / 3
    assert score.anls_star == pytest.approx((9 / 11 + 1) / 3)
    assert score.anls_star_fields == pytest.approx({"name": 9 / 11, "tags": 1 / 2})
    invalid = score_sample('{"name": 5, "tags": ["a", "b"]}', gold, SCHEMA)  # name is no string
    assert not invalid.valid and invalid.anls_star == 0.0 and invalid.anls_star_observed == pytest.approx(2 / 3)
    broken = score_sample("{not json", gold, SCHEMA)  # extracted nothing: every gold key scores 0
    assert broken.anls_star == 0.0 and broken.anls_star_fields == {"name": 0.0, "tags": 0.0}
    again = type(score).from_dict(score.as_dict(), _options())
    assert again.anls_star == score.anls_star and again.anls_star_fields == score.anls_star_fields


def _options() -> Any:
    from pytest_extractbench import ScoringOptions

    return ScoringOptions()


def test_it_reaches_metrics_json_with_a_ci_and_the_gates_by_its_alias() -> None:
    import argparse

    from pytest_extractbench import SampleRecord, model_metrics
    from pytest_extractbench.analysis import resampled
    from pytest_extractbench.gating.regression import parse_compare_fail
    from pytest_extractbench.gating.requirements import evaluate_requirements, parse_requirement

    gold = {"name": "Hello World", "tags": ["a", "b"]}
    outputs = ['{"name": "Hello World", "tags": ["a", "b"]}', '{"name": "Hello Wrold", "tags": ["b"]}', "{broken"]
    records = [
        SampleRecord(model="m", sample_id=str(i), score=score_sample(o, gold, SCHEMA, sample_id=str(i)))
        for i, o in enumerate(outputs)
    ]
    metrics = model_metrics(records, _options())
    # macro: (1 + (9/11 + 1)/3 + 0) / 3
    assert metrics["anls_star"] == pytest.approx((1 + (9 / 11 + 1) / 3) / 3)
    interval = metrics["confidence_intervals"]["anls_star"]
    assert interval["low"] <= metrics["anls_star"] <= interval["high"]
    # per field, observed: name 1, 9/11 and 0 (nothing extracted)
    assert metrics["anls_star_by_field"]["name"] == {"anls_star": pytest.approx((1 + 9 / 11) / 3), "samples": 3}
    assert resampled.resolve_metric("anls").name == "anls_star"
    assert parse_compare_fail("anls:-0.02").metric == "anls_star"
    (check,) = evaluate_requirements(metrics, [parse_requirement("anls>=0.9")])
    assert check.passed is False and check.metric == "anls_star"
    with pytest.raises(argparse.ArgumentTypeError):
        parse_requirement("anls_starr>=0.9")


def test_records_written_before_it_existed_do_not_measure_it() -> None:
    from pytest_extractbench import SampleRecord, model_metrics

    score = score_sample('{"name": "x"}', {"name": "x"}, SCHEMA)
    data = score.as_dict()
    for key in ("anls_star", "anls_star_observed", "anls_star_fields"):
        data.pop(key)
    old = type(score).from_dict(data, _options())
    assert old.anls_star is None
    metrics = model_metrics([SampleRecord(model="m", sample_id="s", score=old)], _options())
    assert "anls_star" not in metrics and "anls_star" not in metrics["confidence_intervals"]


_flat_values = st.one_of(
    st.booleans(), st.integers(-2, 2), st.sampled_from([0.5, 1.0]), st.sampled_from(["", "a", "A", "ab", "1", "abc d"])
)
_flat_objects = st.dictionaries(st.sampled_from("abcd"), _flat_values, max_size=4)


@given(_flat_objects, _flat_objects)
def test_an_assignment_scores_flat_objects_as_the_full_comparison_does(gold: dict, predicted: dict) -> None:
    from pytest_extractbench.scoring.anls import _compare, _flat_score

    node = _compare(gold, predicted)
    assert _flat_score(gold, predicted) == (node.total, node.length, node.equal)
    assert _flat_score({**gold, "z": None}, predicted) is None  # anything but scalars: compared in full


# --- the one pass that scored samples use: the tree's numbers, bit for bit ---


def _both_passes(gold: Any, predicted: Any) -> tuple[str, str]:
    """repr of the tree's and of the one pass's (score, per-key scores), with and without identical-first pairing."""
    from pytest_extractbench.scoring import anls
    from pytest_extractbench.scoring.anls_walk import anls_star_by_key

    tree, one_pass = [], []
    try:
        for first in (True, False):
            anls.PAIR_IDENTICAL_FIRST = first
            tree.append(anls.anls_star_by_key(gold, predicted))
            one_pass.append(anls_star_by_key(gold, predicted))
    finally:
        anls.PAIR_IDENTICAL_FIRST = True
    return repr(tree), repr(one_pass)  # repr: every float to the last bit, key order included


@given(CASES)
def test_the_one_pass_scores_exactly_as_the_tree(case: tuple[Any, Any]) -> None:
    tree, one_pass = _both_passes(*case)
    assert one_pass == tree


_items = st.lists(_flat_objects, min_size=1, max_size=5)


@st.composite
def _line_items(draw: st.DrawFn) -> tuple[Any, Any]:
    """Lists of objects of scalars, the prediction's elements edited, dropped, added and reordered: every candidate
    pair goes through the assignment's text cells."""
    gold = draw(_items)
    predicted = [
        {k: draw(st.sampled_from([v, draw(_flat_values)])) for k, v in element.items() if draw(st.integers(0, 5))}
        for element in gold
        if draw(st.integers(0, 5))
    ]
    predicted = draw(st.permutations(predicted + draw(st.lists(_flat_objects, max_size=2))))
    return {"items": gold, "n": draw(_flat_values)}, {"items": predicted, "n": draw(_flat_values)}


@given(_line_items())
def test_the_one_pass_scores_line_items_exactly_as_the_tree(case: tuple[Any, Any]) -> None:
    from pytest_extractbench.scoring.anls import _compare, _keys
    from pytest_extractbench.scoring.anls_walk import _flat_cell, _texts

    tree, one_pass = _both_passes(*case)
    assert one_pass == tree
    for gold in case[0]["items"]:  # every cell of the assignment, its occurrences included
        for predicted in case[1]["items"]:
            node, keys, found = _compare(gold, predicted), [], []
            _keys(node, "e", keys)
            cell = _flat_cell(gold, _texts(gold), predicted, _texts(predicted), "e", found)
            assert repr((cell, found)) == repr(((node.total, node.length, node.equal), keys))


def test_values_json_does_not_have_take_the_tree() -> None:
    from decimal import Decimal

    from pytest_extractbench.scoring.anls_walk import _measure, _Tree

    for gold, predicted in [({"a": ("x", "y")}, {"a": "x"}), ({"a": 1}, {"a": Decimal(1)}), (["a"], "a")]:
        tree, one_pass = _both_passes(gold, predicted)
        assert one_pass == tree
    with pytest.raises(_Tree):
        _measure({"a": ("x", "y")}, {"a": "x"}, "", None)


@given(st.text(max_size=12), st.text(max_size=12))
def test_the_similarity_cut_short_by_lengths_is_the_full_one(a: str, b: str) -> None:
    from Levenshtein import distance

    from pytest_extractbench.scoring.anls import THRESHOLD, text_similarity

    longest = max(len(a), len(b))
    full = 1.0 if a == b else 1 - distance(a, b) / longest
    assert repr(text_similarity(a, b)) == repr(0.0 if full < THRESHOLD else full)


@given(st.one_of(st.booleans(), st.integers(), st.floats()))
def test_a_number_as_text_is_its_written_form_folded(value: Any) -> None:
    from pytest_extractbench.scoring.anls import _text

    assert _text(value) == " ".join(str(value).lower().split())
