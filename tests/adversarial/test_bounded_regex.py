"""Every regex a user supplies runs on the bounded engine of the schema patterns (jsonschema-rs: linear time).

Python's ``re`` needs exponential time for ``^(a+)+$`` against ``"aaa...a!"``: 40 characters keep it busy for
minutes. A subset condition with that pattern, over a field holding that text, must decide in well under a
second, in a library call and in a whole pytest run; a pattern the engine cannot compile is a clear problem
naming its key path.
"""

from __future__ import annotations

import json
import threading

import pytest

from pytest_extractbench import SampleRecord, StatsOptions, score_sample
from pytest_extractbench.gating.subsets import SubsetConfig, SubsetConfigError, subset_metrics

EVIL = "^(a+)+$"
HOSTILE = "a" * 5000 + "!"  # re.search(EVIL, HOSTILE) would not return in this century
SCHEMA = {"type": "object", "properties": {"code": {"type": "string"}}}
GOLD = {"evil": {"code": HOSTILE}, "plain": {"code": "aaaa"}, "other": {"code": "xyz"}}


def _records() -> list[SampleRecord]:
    return [
        SampleRecord(model="m", sample_id=i, score=score_sample(gold, gold, SCHEMA, sample_id=i))
        for i, gold in GOLD.items()
    ]


def _members(pattern: str, records: list[SampleRecord]) -> list[str]:
    config = SubsetConfig.from_data(
        {"subsets": [{"name": "r", "conditions": [{"field": "code", "operator": "regex", "value": pattern}]}]}
    )
    return subset_metrics(records, config, StatsOptions(resamples=100))["subsets"]["r"].get("sample_ids", [])


def _within(seconds: float, work) -> object:
    """``work()``'s result, failing the test when it has not returned after ``seconds`` (a spinning regex)."""
    box: dict[str, object] = {}
    thread = threading.Thread(target=lambda: box.setdefault("out", work()), daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"the regex condition was still running after {seconds} s"
    return box["out"]


def test_a_catastrophic_subset_regex_finishes_and_still_matches_correctly() -> None:
    records = _records()
    # generous bound for a loaded machine; the catastrophic case under Python's re never returns at all
    assert _within(30, lambda: _members(EVIL, records)) == ["plain"]


@pytest.mark.parametrize(
    "pattern, expected",
    [
        ("^a+$", ["plain"]),
        ("y", ["other"]),
        ("!$", ["evil"]),
        (r"^\w{3}$", ["other"]),
        ("(?i)XYZ", ["other"]),
    ],
)
def test_search_semantics_are_those_of_re_search(pattern: str, expected: list[str]) -> None:
    assert _members(pattern, _records()) == expected


@pytest.mark.parametrize("pattern", ["(", "a{2,1}", "[z-a]"])
def test_a_pattern_the_engine_cannot_compile_names_its_key_path(pattern: str) -> None:
    with pytest.raises(SubsetConfigError) as info:
        SubsetConfig.from_data(
            {"subsets": [{"name": "r", "conditions": [{"field": "code", "operator": "regex", "value": pattern}]}]},
            "rules.yaml",
        )
    assert f"subsets[0].conditions[0].value: invalid regex {pattern!r}" in str(info.value)


def test_a_catastrophic_subset_regex_in_a_pytest_run(pytester: pytest.Pytester) -> None:
    rows = [{"id": i, "text": gold["code"][:50], "schema": SCHEMA, "expected": gold} for i, gold in GOLD.items()]
    pytester.path.joinpath("data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    pytester.path.joinpath("preds.jsonl").write_text(
        "".join(json.dumps({"id": r["id"], "output": json.dumps(r["expected"])}) + "\n" for r in rows)
    )
    pytester.path.joinpath("rules.yaml").write_text(
        "subsets:\n  - name: evil\n    conditions:\n      - {field: code, operator: regex, value: '^(a+)+$'}\n"
    )
    result = _within(
        120,
        lambda: pytester.runpytest(
            "-p",
            "no:randomly",
            "--extractbench",
            "--extractbench-dataset",
            "data.jsonl",
            "--extractbench-predictions",
            "preds.jsonl",
            "--extractbench-subsets",
            "rules.yaml",
            "--extractbench-output",
            "out",
            "--extractbench-sla",
            "none",
            "--extractbench-resamples",
            "100",
        ),
    )
    assert result.ret == 0, result.stdout.str()
    document = json.loads((pytester.path / "out" / "metrics.json").read_text())
    assert document["models"]["predictions"]["subsets"]["evil"]["sample_ids"] == ["plain"]
