"""Dataset identity: metrics.json and cassettes carry a content hash per sample and per dataset, so what a
comparison pairs is provably the same; editing one sample's gold changes exactly that sample's hash."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_extractbench.dataset.identity import dataset_hash, dataset_hash_of, sample_hash
from pytest_extractbench.dataset.samples import Sample

FLAT = {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}}}
SAMPLES = [
    {"id": f"s{n}", "text": f"P{n}, {n}.", "schema": FLAT, "expected": {"name": f"P{n}", "age": n}} for n in range(4)
]


def run(pytester: pytest.Pytester, rows: list, out: str) -> dict:
    (pytester.path / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    preds = [{"id": r["id"], "output": r["expected"]} for r in SAMPLES]
    (pytester.path / "preds.jsonl").write_text("".join(json.dumps(p) + "\n" for p in preds), encoding="utf-8")
    pytester.runpytest(
        "-p",
        "no:randomly",
        "--extractbench",
        "--extractbench-dataset",
        "data.jsonl",
        "--extractbench-predictions",
        "preds.jsonl",
        "--extractbench-output",
        out,
        "--extractbench-sla",
        "none",
    )
    return json.loads((pytester.path / out / "metrics.json").read_text())["run"]["dataset"]


@pytest.mark.slow
def test_editing_one_gold_changes_that_sample_s_hash_and_the_dataset_s(pytester: pytest.Pytester) -> None:
    before = run(pytester, SAMPLES, "before")
    edited = [dict(r, expected={"name": "P2", "age": 99}) if r["id"] == "s2" else r for r in SAMPLES]
    after = run(pytester, edited, "after")
    changed = [i for i in before["sample_hashes"] if before["sample_hashes"][i] != after["sample_hashes"][i]]
    assert changed == ["s2"] and before["content_hash"] != after["content_hash"]
    assert sorted(before["sample_hashes"]) == ["s0", "s1", "s2", "s3"]


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=8,
)


@given(text=st.text(max_size=20), gold=st.dictionaries(st.text(max_size=4), json_values, max_size=4))
def test_a_sample_s_hash_ignores_key_order_but_not_content(text: str, gold: dict) -> None:
    one = Sample("a", text, FLAT, gold)
    reordered = Sample("a", text, dict(reversed(list(FLAT.items()))), dict(reversed(list(gold.items()))))
    assert sample_hash(one) == sample_hash(reordered)
    assert sample_hash(one) != sample_hash(Sample("a", text + "!", FLAT, gold))
    assert sample_hash(one) != sample_hash(Sample("a", text, FLAT, {**gold, "__extra__": 1}))
    # a dataset's hash does not depend on its order, only on its samples
    other = Sample("b", text, FLAT, None)
    assert dataset_hash([one, other]) == dataset_hash([other, one]) != dataset_hash([one])


@given(st.lists(st.tuples(st.text(max_size=6), st.text(max_size=8)), max_size=6, unique_by=lambda pair: pair[0]))
def test_the_dataset_hash_from_its_samples_hashes_is_the_same(rows: list) -> None:
    """A run hashes each sample once and makes the dataset's hash from those hashes: the same hash as before."""
    samples = [Sample(sample_id, text, FLAT, {"name": text}) for sample_id, text in rows]
    assert dataset_hash_of({s.id: sample_hash(s) for s in samples}) == dataset_hash(samples)
