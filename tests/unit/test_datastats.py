"""Dataset statistics, computed by hand on a small dataset."""

from __future__ import annotations

import pytest

from pytest_extractbench.dataset.complexity import complexity_features
from pytest_extractbench.dataset.samples import Sample
from pytest_extractbench.dataset.statistics import dataset_statistics, gold_field_count, statistics_lines

FLAT = {"type": "object", "properties": {"a": {"type": "string"}}}
NESTED = {
    "type": "object",
    "properties": {"p": {"type": "object", "properties": {"q": {"type": "string"}, "r": {"type": "integer"}}}},
}


def sample(sid: str, text: str, schema: dict, expected: object, topic: str | None) -> Sample:
    meta = {"complexity": complexity_features(schema)}
    if topic:
        meta["topic"] = topic
    return Sample(sid, text, schema, expected, meta)


def test_statistics_by_hand() -> None:
    samples = [
        sample("1", "one two", FLAT, {"a": "x"}, "news"),
        sample("2", "three", FLAT, {"a": None}, "news"),
        sample("3", "four five six", NESTED, {"p": {"q": "y", "r": 2}}, None),
    ]
    stats = dataset_statistics(samples)
    assert stats["num_samples"] == 3 and stats["num_schemas"] == 2
    assert stats["by_topic"] == {"news": 2, "(none)": 1}
    assert stats["depth_histogram"] == {"1": 2, "2": 1}
    assert stats["by_complexity_bin"] == {"simple": 2, "medium": 1, "complex": 0}  # depth 2 -> 0.33
    assert stats["text_length_chars"] == {
        "count": 3,
        "mean": round(25 / 3, 4),
        "median": 7.0,
        "min": 5.0,
        "p95": pytest.approx(12.4),
        "max": 13.0,
    }  # 7 + 0.9 * (13 - 7)
    assert stats["text_length_words"]["max"] == 3.0
    assert stats["gold_fields"]["min"] == 0.0 and stats["gold_fields"]["max"] == 2.0
    assert stats["features"]["total_fields"]["max"] == 3.0  # p, p.q, p.r
    assert (stats["with_arrays"], stats["with_nested_objects"]) == (0, 1)
    text = "\n".join(statistics_lines(stats))
    assert "samples: 3 (2 distinct schemas)" in text and "by topic: 'news'=2, '(none)'=1" in text


def test_empty_dataset() -> None:
    stats = dataset_statistics([])
    assert stats["num_samples"] == 0 and stats["text_length_chars"]["mean"] is None
    assert statistics_lines(stats)[0] == "samples: 0 (0 distinct schemas)"


def test_gold_field_count_is_iterative() -> None:
    deep: object = "leaf"
    for _ in range(5000):
        deep = {"k": [deep, None]}
    assert gold_field_count(deep) == 1
    assert gold_field_count({"a": [1, 2, {"b": None}], "c": "x"}) == 3


def test_schemas_are_counted_by_content_whether_their_objects_are_shared_or_not() -> None:
    """Samples sharing one schema object and samples holding equal copies (keys in another order) count once."""
    copy = dict(reversed(list(NESTED.items())))
    samples = [
        sample("1", "a", FLAT, {"a": "x"}, None),
        sample("2", "b", FLAT, {"a": "y"}, None),
        sample("3", "c", NESTED, {"p": {"q": "y", "r": 2}}, None),
        sample("4", "d", copy, {"p": {"q": "z", "r": 3}}, None),
        sample("5", "e", {"type": "object", "properties": {"b": {"type": "string"}}}, {"b": "w"}, None),
    ]
    assert dataset_statistics(samples)["num_schemas"] == 3
