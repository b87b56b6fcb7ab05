"""Consistency across repeated runs and confidence calibration from logprobs."""

from __future__ import annotations

import json
import math
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_extractbench.analysis.calibration import field_confidences, reliability, token_offsets, value_spans
from pytest_extractbench.analysis.consistency import aggregate_consistency, consistency, flatten

# -- consistency ---------------------------------------------------------------------------------


def test_flatten_uses_seed_001_paths() -> None:
    assert dict(flatten({"user": {"name": "Alice", "age": 30}, "items": ["a", "b"]})) == {
        "user.name": "Alice",
        "user.age": 30,
        "items[0]": "a",
        "items[1]": "b",
    }


def test_consistency_by_hand() -> None:
    runs = [
        '{"name": "Ann", "age": 40}',
        '{"age": 40, "name": "Ann"}',
        '{"name": "Ann", "age": 44}',
        '{"name": "Anne"}',
    ]
    found = consistency(runs)
    assert found["runs"] == 4 and found["distinct_outputs"] == 3
    assert found["exact_match_consistency"] == 0.5  # two of four equal the modal output (key order ignored)
    # name: Ann x3 -> 3/4; age: 40, 40, 44, absent -> 2/4
    assert found["field_agreement"] == {"age": 0.5, "name": 0.75}
    assert found["field_level_consistency"] == pytest.approx(0.625)
    # age over the three runs that gave it: population std of 40, 40, 44
    assert found["value_variance"] == pytest.approx(math.sqrt(96 / 27))
    assert found["field_std"] == {"age": pytest.approx(math.sqrt(96 / 27))}
    numeric = consistency(['{"t": 1}', '{"t": 3}'])
    assert numeric["value_variance"] == pytest.approx(1.0)  # population std of 1 and 3


def test_unparseable_runs_compare_as_text() -> None:
    found = consistency(["oops", "oops", '{"a": 1}'])
    assert found["exact_match_consistency"] == pytest.approx(2 / 3)
    assert found["field_agreement"] == {"a": pytest.approx(2 / 3)}  # absent in two runs: absent is the mode


def test_aggregate_consistency() -> None:
    a = consistency(['{"x": 1}', '{"x": 1}'])
    b = consistency(['{"x": 1}', '{"x": 2}'])
    section = aggregate_consistency([a, b])
    assert section["exact_match_consistency"] == 0.75
    assert section["field_level_consistency"] == 0.75
    assert section["value_variance"] == pytest.approx(0.25)  # mean of std 0 and std 0.5
    assert section["fully_consistent_samples"] == 1
    assert section["least_consistent_fields"] == [{"field": "x", "agreement": 0.75}]


leaves = st.one_of(st.integers(-100, 100), st.sampled_from(["a", "b"]), st.booleans(), st.none())
objects = st.dictionaries(st.sampled_from(["p", "q", "r"]), leaves, max_size=3)


@given(st.lists(objects, min_size=1, max_size=6), st.randoms())
def test_consistency_invariants(values: list, rnd: random.Random) -> None:
    texts = [json.dumps(v) for v in values]
    found = consistency(texts)
    assert 1 / len(texts) <= found["exact_match_consistency"] <= 1.0
    assert 0.0 < found["field_level_consistency"] <= 1.0
    shuffled = list(texts)
    rnd.shuffle(shuffled)
    again = consistency(shuffled)
    assert again["exact_match_consistency"] == found["exact_match_consistency"]
    assert again["field_level_consistency"] == pytest.approx(found["field_level_consistency"])
    same = consistency([texts[0]] * len(texts))
    assert same["exact_match_consistency"] == 1.0 and same["field_level_consistency"] == 1.0
    assert same["value_variance"] in (None, 0.0)


# -- calibration ---------------------------------------------------------------------------------


def logprobs(*pairs: tuple[str, float]) -> dict:
    return {"content": [{"token": t, "logprob": lp, "bytes": None, "top_logprobs": []} for t, lp in pairs]}


def test_token_offsets_and_value_spans() -> None:
    text, tokens = token_offsets(
        logprobs(('{"', -0.1), ("a", 0.0), ('":', 0.0), (' "', 0.0), ("xy", -0.5), ('"}', 0.0))
    )
    assert text == '{"a": "xy"}'
    assert tokens[4] == (7, 9, -0.5)
    spans = value_spans('```json\n{"a": "xy", "b": {"c": [1, 2.5e1]}, "t": [true, null]}\n```')
    text2 = '```json\n{"a": "xy", "b": {"c": [1, 2.5e1]}, "t": [true, null]}\n```'
    assert {k: text2[s:e] for k, (s, e) in spans.items()} == {
        "a": '"xy"',
        "b.c[0]": "1",
        "b.c[1]": "2.5e1",
        "b.c": "[1, 2.5e1]",
        "b": '{"c": [1, 2.5e1]}',
        "t[0]": "true",
        "t[1]": "null",
        "t": "[true, null]",
        "$": text2[8:-4],
    }
    assert value_spans("no json here") == {}


def test_field_confidence_is_the_joint_probability_of_the_value_tokens() -> None:
    lp = logprobs(
        ('{"', 0.0),
        ("name", 0.0),
        ('": "', -0.2),
        ("Ann", -0.3),
        (" Lee", -0.4),
        ('", "', -0.1),
        ("age", 0.0),
        ('": ', 0.0),
        ("4", -1.0),
        ("1", -0.5),
        ("}", 0.0),
    )
    found = field_confidences(lp, ["name", "age", "missing"])
    # name's span '"Ann Lee"' overlaps the tokens '": "', 'Ann', ' Lee', '", "'
    assert found["name"] == pytest.approx(math.exp(-0.2 - 0.3 - 0.4 - 0.1))
    assert found["age"] == pytest.approx(math.exp(-1.5))
    assert "missing" not in found


def test_reliability_table_and_ece_by_hand() -> None:
    conf = [0.95, 0.95, 0.95, 0.95, 0.55, 0.55, 0.15]
    correct = [True, True, True, False, True, False, False]
    table = reliability(conf, correct)
    bins = {round(b["low"], 1): b for b in table["bins"] if b["count"]}
    assert bins[0.9]["accuracy"] == 0.75 and bins[0.9]["confidence"] == pytest.approx(0.95)
    assert bins[0.5]["accuracy"] == 0.5 and bins[0.1]["accuracy"] == 0.0
    expected = (4 * 0.2 + 2 * 0.05 + 1 * 0.15) / 7
    assert table["ece"] == pytest.approx(expected)
    assert table["mce"] == pytest.approx(0.2)
    assert table["brier"] == pytest.approx(sum((c - o) ** 2 for c, o in zip(conf, correct)) / 7)
    assert reliability([1.0], [True])["bins"][-1]["count"] == 1  # 1.0 lands in the last bin


@given(st.lists(st.tuples(st.floats(0, 1), st.booleans()), min_size=1, max_size=50))
def test_ece_is_bounded_and_perfect_calibration_scores_zero(pairs: list) -> None:
    table = reliability([c for c, _ in pairs], [o for _, o in pairs])
    assert 0.0 <= table["ece"] <= table["mce"] + 1e-12 <= 1.0 + 1e-12
    assert sum(b["count"] for b in table["bins"]) == len(pairs)
    hits = [o for _, o in pairs]
    certain = reliability([1.0 if o else 0.0 for o in hits], hits)
    assert certain["ece"] == 0.0 and certain["brier"] == 0.0
