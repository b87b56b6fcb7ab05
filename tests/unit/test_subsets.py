"""Subsets (match rules) and group_by: operators, validation, files, metrics."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from pytest_extractbench import SampleRecord, StatsOptions, load_subsets, score_sample
from pytest_extractbench.dataset import load_dataset
from pytest_extractbench.gating.subsets import (
    MISSING_GROUP,
    SubsetConfig,
    SubsetConfigError,
    gate_scopes,
    subset_metrics,
)

ROOT = Path(__file__).resolve().parents[2]
FAST = StatsOptions(resamples=500)

SCHEMA = {
    "type": "object",
    "properties": {
        "vendor": {"type": "string"},
        "total": {"type": "number"},
        "tags": {"type": "array", "items": {"type": "string"}},
        "date": {"type": "string"},
    },
}
GOLD = {
    "a": {"vendor": "Acme Corp", "total": 12000, "tags": ["urgent", "eu"], "date": "2024-03-01"},
    "b": {"vendor": "Beta LLC", "total": 800, "tags": ["eu"], "date": "2023-12-31"},
    "c": {"vendor": "Acme Corp", "total": 50, "date": "2024-07-15"},
    "d": {"vendor": "Delta", "tags": []},
}
PREDICTED = {"a": GOLD["a"], "b": {"vendor": "Beta"}, "c": {"vendor": "Acme Corp", "total": 50}, "d": {"vendor": "x"}}
META = {
    "a": {"topic": "invoice", "complexity": {"complexity_bin": "medium"}},
    "b": {"topic": "invoice"},
    "c": {"topic": "receipt"},
    "d": {"topic": "receipt", "complexity": {"complexity_bin": "simple"}},
}


# made in the tests that use them: the scorer run while pytest collects would be outside every test, and the
# mutation tool would judge each of its mutants in a fresh import (tests/mutation/README.md)
def records() -> list[SampleRecord]:
    return [
        SampleRecord(
            model="m", sample_id=i, score=score_sample(PREDICTED[i], GOLD[i], SCHEMA, sample_id=i), meta=META[i]
        )
        for i in GOLD
    ]


def matching(*conditions: dict) -> list[str]:
    config = SubsetConfig.from_data({"subsets": [{"name": "r", "conditions": list(conditions)}]})
    return subset_metrics(records(), config, FAST)["subsets"]["r"].get("sample_ids", [])


@pytest.mark.parametrize(
    ("condition", "expected"),
    [
        ({"field": "vendor", "operator": "eq", "value": "Acme Corp"}, ["a", "c"]),
        ({"field": "vendor", "operator": "neq", "value": "Acme Corp"}, ["b", "d"]),
        ({"field": "total", "operator": "gt", "value": 800}, ["a"]),
        ({"field": "total", "operator": "gte", "value": 800}, ["a", "b"]),
        ({"field": "total", "operator": "lt", "value": 800}, ["c"]),  # d has no total: no match
        ({"field": "total", "operator": "lte", "value": 800.0}, ["b", "c"]),
        ({"field": "total", "operator": "neq", "value": 800}, ["a", "c", "d"]),  # missing is "not equal"
        ({"field": "date", "operator": "gte", "value": "2024-01-01"}, ["a", "c"]),  # ISO dates as strings
        ({"field": "vendor", "operator": "contains", "value": "Corp"}, ["a", "c"]),
        ({"field": "tags", "operator": "contains", "value": "eu"}, ["a", "b"]),
        ({"field": "tags", "operator": "not_contains", "value": "urgent"}, ["b", "c", "d"]),
        ({"field": "vendor", "operator": "regex", "value": "^(Acme|Delta)"}, ["a", "c", "d"]),
        ({"field": "topic", "operator": "eq", "value": "receipt"}, ["c", "d"]),  # metadata
        ({"field": "complexity_bin", "operator": "eq", "value": "simple"}, ["d"]),  # complexity features by name
        ({"field": "meta.complexity.complexity_bin", "operator": "eq", "value": "medium"}, ["a"]),
        ({"field": "gold.topic", "operator": "eq", "value": "receipt"}, []),  # the gold has no topic
        ({"field": "id", "operator": "regex", "value": "[ab]"}, ["a", "b"]),
    ],
)
def test_operators(condition: dict, expected: list[str]) -> None:
    assert matching(condition) == expected


def test_conditions_combine_with_and() -> None:
    assert matching(
        {"field": "topic", "operator": "eq", "value": "invoice"}, {"field": "total", "operator": "lt", "value": 1000}
    ) == ["b"]


def test_subset_and_group_metrics() -> None:
    config = SubsetConfig.from_data(
        {
            "subsets": [
                {
                    "name": "acme",
                    "conditions": [{"field": "vendor", "operator": "eq", "value": "Acme Corp"}],
                    "aggregation": "median",
                },
                {"name": "none", "conditions": [{"field": "vendor", "operator": "eq", "value": "Zed"}]},
            ],
            "group_by": ["topic", "total"],
        }
    )
    found = subset_metrics(records(), config, FAST)
    acme = found["subsets"]["acme"]
    eqs = {r.sample_id: r.score.eqs for r in records()}
    assert acme["count"] == 2 and acme["aggregation"] == "median"
    assert acme["score"] == pytest.approx(np.median([eqs["a"], eqs["c"]]))
    assert acme["metrics"]["extraction_quality_score"] == pytest.approx(np.mean([eqs["a"], eqs["c"]]))
    assert set(acme["confidence_intervals"]) >= {"extraction_quality_score", "field_f1_partial"}
    assert found["subsets"]["none"] == {"count": 0, "aggregation": "mean"}
    topics = found["groups"]["topic"]
    assert {k: v["count"] for k, v in topics.items()} == {"invoice": 2, "receipt": 2}
    assert topics["receipt"]["score"] == pytest.approx(np.mean([eqs["c"], eqs["d"]]))
    assert set(found["groups"]["total"]) == {"12000", "800", "50", MISSING_GROUP}


def test_gate_scopes_carry_their_checks() -> None:
    config = SubsetConfig.from_data(
        {
            "subsets": [
                {
                    "name": "acme",
                    "conditions": [{"field": "vendor", "operator": "contains", "value": "Acme"}],
                    "compare_fail": ["eqs:-0.05"],
                },
                {"name": "plain", "conditions": [{"field": "topic", "operator": "eq", "value": "invoice"}]},
            ],
            "group_by": [{"field": "topic", "compare_fail": "f1:-5%"}],
        }
    )
    scopes = gate_scopes(records(), config)
    assert [s.label for s in scopes] == ["subset 'acme'", "group topic='invoice'", "group topic='receipt'"]
    assert scopes[0].sample_ids == {"a", "c"} and str(scopes[0].checks[0]) == "eqs:-0.05"
    assert scopes[2].checks[0].metric == "field_f1_partial" and scopes[2].checks[0].relative


def test_every_problem_is_reported_with_its_key_path() -> None:
    with pytest.raises(SubsetConfigError) as info:
        SubsetConfig.from_data(
            {
                "subsets": [
                    {"name": "ok", "conditions": [{"field": "a", "operator": "eq", "value": 1}]},
                    {"name": "ok", "conditions": [{"field": "a", "operator": "eq", "value": 1}]},
                    {
                        "conditions": [
                            {"field": "a", "operator": "like", "value": 1},
                            {"field": "b", "operator": "regex", "value": "("},
                            {"field": "c", "operator": "gt", "value": [1]},
                            {"field": "d", "operator": "eq"},
                        ],
                        "aggregation": "max",
                        "compare_fail": ["eqs:+1"],
                        "colour": "red",
                    },
                ],
                "group_by": [{"aggregation": "mean"}],
                "extra": 1,
            },
            "rules.yaml",
        )
    problems = "\n".join(info.value.problems)
    for expected in [
        "extra: unknown key",
        "subsets[1].name: duplicate name 'ok'",
        "subsets[2].colour: unknown key",
        "subsets[2].name: a non-empty string is required",
        "subsets[2].conditions[0].operator: 'like' is not one of eq, neq",
        "subsets[2].conditions[1].value: invalid regex '('",
        "subsets[2].conditions[2].value: gt needs a number or a string, got list",
        "subsets[2].conditions[3].value: required",
        "subsets[2].aggregation: 'max' is not one of mean, median",
        "subsets[2].compare_fail[0]: 'eqs:+1': a higher extraction_quality_score is better",
        "group_by[0].field: a field name is required",
    ]:
        assert expected in problems, expected
    assert str(info.value).startswith("rules.yaml: ")


def test_yaml_and_json_files(tmp_path: Path) -> None:
    shipped = load_subsets(ROOT / "fixtures" / "subsets.yaml")
    assert [r.name for r in shipped.rules] == ["complex-schemas", "money-in-the-text", "not-people"]
    assert shipped.rules[0].aggregation == "median" and str(shipped.rules[0].compare_fail[0]) == "eqs:-0.05"
    as_json = tmp_path / "rules.json"
    as_json.write_text(json.dumps(shipped.as_dict()), encoding="utf-8")
    assert load_subsets(as_json).as_dict() == shipped.as_dict()
    broken = tmp_path / "broken.json"
    broken.write_text('{"subsets": [\n  {"name": }\n]}', encoding="utf-8")
    with pytest.raises(SubsetConfigError, match=r"broken.json: line 2: not valid JSON"):
        load_subsets(broken)
    bad_yaml = tmp_path / "bad.yaml"
    bad_yaml.write_text("subsets:\n  - name: [unclosed\n", encoding="utf-8")
    with pytest.raises(SubsetConfigError, match=r"bad.yaml: line 3, column 1: not valid YAML: expected .,. or .\]."):
        load_subsets(bad_yaml)


def test_shipped_example_on_the_bundled_dataset() -> None:
    dataset = load_dataset()
    records = [
        SampleRecord(model="m", sample_id=s.id, score=score_sample(s.expected, s.expected, s.schema), meta=dict(s.meta))
        for s in dataset.samples
    ]
    found = subset_metrics(records, load_subsets(ROOT / "fixtures" / "subsets.yaml"), FAST)
    complex_ids = [s.id for s in dataset.samples if s.meta["complexity"]["complexity_bin"] == "complex"]
    assert found["subsets"]["complex-schemas"]["sample_ids"] == complex_ids
    assert found["subsets"]["money-in-the-text"]["sample_ids"] == ["ecommerce-001", "ecommerce-006"]
    assert found["subsets"]["not-people"]["count"] == sum(s.meta["topic"] != "people" for s in dataset.samples)
    assert sum(g["count"] for g in found["groups"]["topic"].values()) == len(dataset.samples)
