"""The bundled dataset and the JSONL/JSON loaders."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from pytest_extractbench import BUNDLED, load_dataset
from pytest_extractbench.dataset.samples import bundled_path
from pytest_extractbench.scoring import check_schema, compile_schema, validation_errors


@pytest.fixture(scope="module")
def bundled():
    return load_dataset(BUNDLED)


def test_bundled_dataset_is_clean_and_large_enough(bundled) -> None:
    assert bundled.problems == []
    assert len(bundled.samples) >= 40
    topics = Counter(s.topic for s in bundled.samples)
    assert len(topics) >= 6 and min(topics.values()) >= 3, topics
    for sample in bundled.samples:
        assert check_schema(sample.schema) == [], sample.id
        assert validation_errors(sample.expected, sample.schema) == [], sample.id
        assert sample.text.strip() and sample.meta["title"] and sample.meta["medium"]


def test_bundled_dataset_is_in_paraloq_format() -> None:
    for line in bundled_path().read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        assert {"title", "topic", "schema", "item", "text", "medium"} <= set(row)
        assert isinstance(row["schema"], str) and isinstance(row["item"], str)  # JSON strings, as paraloq


def test_bundled_dataset_contains_appendix_a(bundled) -> None:
    by_id = {s.id: s for s in bundled.samples}
    first = by_id["appendix-a-1"]
    assert first.text == "John Smith is 35 years old and works as a software engineer at TechCorp."
    assert first.expected == {"name": "John Smith", "age": 35, "occupation": "software engineer", "company": "TechCorp"}
    second = by_id["appendix-a-2"]
    assert second.expected["contact"] == {"email": "sarah.j@hospital.org", "phone": "+1-555-0123"}


def _features(schema: dict, gold) -> set[str]:
    found: set[str] = set()

    def walk(node, value) -> None:
        if isinstance(value, dict):
            if node is not None and set(node.properties) - set(node.required):
                found.add("optional")
            if node is not None and node.required:
                found.add("required")
            for key, child in value.items():
                child_node = node.properties.get(key) if node is not None else None
                if child is None:
                    found.add("null")
                if isinstance(child, dict):
                    found.add("nested_object")
                if child_node is not None and "enum" in child_node.annotations:
                    found.add("enum")
                walk(child_node, child)
        elif isinstance(value, list):
            found.add("array_of_objects" if value and isinstance(value[0], dict) else "array_of_scalars")
            for child in value:
                walk(node.items if node is not None else None, child)
        elif isinstance(value, bool):
            found.add("boolean")
        elif isinstance(value, int):
            found.add("integer")
        elif isinstance(value, float):
            found.add("float")

    walk(compile_schema(schema), gold)
    return found


def test_bundled_dataset_covers_every_feature(bundled) -> None:
    coverage = Counter(f for s in bundled.samples for f in _features(s.schema, s.expected))
    for feature in (
        "nested_object",
        "array_of_objects",
        "array_of_scalars",
        "enum",
        "integer",
        "float",
        "boolean",
        "null",
        "required",
        "optional",
    ):
        assert coverage[feature] >= 3, (feature, coverage)


def test_json_files_load_as_lists_or_wrapped(tmp_path: Path) -> None:
    rows = [
        {"id": "a", "text": "t", "schema": {"type": "object"}, "expected_output": {"x": 1}},
        {"text": "u", "schema": {"type": "object"}, "expected": {}},
    ]
    (tmp_path / "list.json").write_text(json.dumps(rows))
    (tmp_path / "wrapped.json").write_text(json.dumps({"samples": rows}))
    for name in ("list.json", "wrapped.json"):
        dataset = load_dataset(str(tmp_path / name))
        assert [s.id for s in dataset.samples] == ["a", "row-2"]
        assert dataset.samples[0].expected == {"x": 1}
        assert dataset.samples[1].meta["location"] == "row 2"


def test_a_missing_file_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="no-such.jsonl"):
        load_dataset(str(tmp_path / "no-such.jsonl"))


def test_schema_and_gold_may_be_json_strings_and_bad_strings_are_reported(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text(
        "\n".join(
            json.dumps(r)
            for r in [
                {"id": "ok", "text": "t", "schema": json.dumps({"type": "object"}), "item": json.dumps({"a": 1})},
                {"id": "broken", "text": "t", "schema": "{not json", "item": "{}"},
                ["not", "an", "object"],
            ]
        )
    )
    dataset = load_dataset(str(path))
    assert [s.id for s in dataset.samples] == ["ok"]
    assert [str(p) for p in dataset.problems] == [
        f"{path}:line 2, sample 'broken', field 'schema': is a string but not valid JSON: "
        "Expecting property name enclosed in double quotes (column 2)",
        f"{path}:line 3: a row must be a JSON object, got list",
    ]
