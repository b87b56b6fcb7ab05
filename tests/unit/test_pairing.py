"""Baselines pair only unchanged samples: the pairing of a baseline's content hashes with a run's, the threshold a
regression check needs, and a comparison that leaves edited samples out. Pure: hand-built hashes and snapshots."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_extractbench import SampleRecord, StatsOptions, score_sample
from pytest_extractbench.dataset import identity
from pytest_extractbench.dataset.samples import Sample
from pytest_extractbench.gating import baseline as baselines
from pytest_extractbench.gating.pairing import pair_samples, too_few_unchanged
from pytest_extractbench.gating.regression import compare_run, parse_compare_fail

SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}}}
FAST = StatsOptions(resamples=500)


def samples(n: int) -> list[Sample]:
    return [Sample(f"s{i}", f"P{i} is {i}.", SCHEMA, {"name": f"P{i}", "age": i}) for i in range(n)]


def hashes(found: list[Sample]) -> dict[str, str]:
    return {s.id: identity.sample_hash(s) for s in found}


def snapshots(found: list[Sample], answers: dict[str, dict]) -> baselines.Snapshots:
    records = [
        SampleRecord(model="m", sample_id=s.id, score=score_sample(answers[s.id], s.expected, s.schema)) for s in found
    ]
    return baselines.snapshot_records(records, hashes(found))


def as_baseline(snaps: baselines.Snapshots) -> baselines.Baseline:
    return baselines.Baseline(Path("0001_base.json"), "base", "2026-01-01T00:00:00+00:00", {}, snaps)


def test_counts_unchanged_changed_added_removed() -> None:
    before = samples(5)
    edited = Sample("s2", before[2].text, SCHEMA, {"name": "P2", "age": 99})
    now = [before[0], before[1], edited, before[3], Sample("s9", "P9 is 9.", SCHEMA, {"name": "P9", "age": 9})]
    pairing = pair_samples(hashes(before), hashes(now))
    assert (pairing.unchanged, pairing.changed, pairing.added, pairing.removed) == (
        ("s0", "s1", "s3"),
        ("s2",),
        ("s9",),
        ("s4",),
    )
    assert pairing.baseline_total == 5 and pairing.unchanged_fraction == pytest.approx(3 / 5)
    assert pairing.as_dict()["changed_samples"] == ["s2"]
    assert "3 unchanged, 1 changed, 1 added, 1 removed of the baseline's 5 samples" in pairing.describe()


@given(
    st.lists(st.tuples(st.integers(0, 9), st.integers(0, 2)), max_size=12),
    st.lists(st.tuples(st.integers(0, 9), st.integers(0, 2)), max_size=12),
)
def test_every_sample_lands_in_exactly_one_count(before: list, after: list) -> None:
    old, new = {f"s{i}": f"h{h}" for i, h in before}, {f"s{i}": f"h{h}" for i, h in after}
    pairing = pair_samples(old, new)
    parts = [pairing.unchanged, pairing.changed, pairing.added, pairing.removed]
    assert sorted(i for part in parts for i in part) == sorted(set(old) | set(new))
    assert all(old[i] == new[i] for i in pairing.unchanged) and all(old[i] != new[i] for i in pairing.changed)
    assert pairing.baseline_total == len(old)


@pytest.mark.parametrize(
    ("unchanged", "minimum", "refused"),
    [(2, 0.5, False), (1, 0.5, True), (1, 0.25, False), (4, 1.0, False), (3, 1.0, True)],
)
def test_a_regression_check_needs_the_threshold_of_unchanged_samples(
    unchanged: int, minimum: float, refused: bool
) -> None:
    before = samples(4)
    now = before[:unchanged] + [Sample(s.id, s.text + " edited", SCHEMA, s.expected) for s in before[unchanged:]]
    why = too_few_unchanged(pair_samples(hashes(before), hashes(now)), minimum)
    assert (why is not None) == refused
    if refused:
        assert f"only {unchanged} of the baseline's 4 samples are unchanged" in why
        assert f"{unchanged} unchanged, {4 - unchanged} changed, 0 added, 0 removed" in why


def test_a_baseline_without_hashes_is_paired_by_id_and_never_refused() -> None:
    pairing = pair_samples({"s0": None, "s1": None}, {"s1": "x", "s2": "y"}, checked=False)
    assert pairing.unchanged == ("s1",) and pairing.changed == () and not pairing.checked
    assert too_few_unchanged(pairing, 1.0) is None
    assert pairing.describe().startswith("could not be checked")


def test_a_comparison_leaves_the_edited_sample_out_and_decides_on_the_rest() -> None:
    before = samples(6)
    right = {s.id: s.expected for s in before}
    baseline = as_baseline(snapshots(before, right))
    edited = Sample("s0", before[0].text, SCHEMA, {"name": "someone else", "age": 77})
    now = [edited, *before[1:]]
    # the model still answers s0 as before: against the edited gold it scores 0, which is not a regression
    current = snapshots(now, right)
    result = compare_run(current, baseline, FAST, checks=[parse_compare_fail("eqs:-0.01")], sample_hashes=hashes(now))
    model = result.models["m"]
    assert model.changed == ["s0"] and "s0" not in model.shared and len(model.shared) == 5
    assert not result.failures and model.deltas["extraction_quality_score"].delta == 0
    assert model.as_dict()["samples"] == {"unchanged": 5, "changed": 1, "added": 0, "removed": 0, "checked": True}
    assert result.as_dict()["pairing"]["changed"] == 1
    # paired by id, the same edit reads as a regression: the pairing is what keeps it out
    by_id = compare_run(current, baseline, FAST, checks=[parse_compare_fail("eqs:-0.01")])
    assert by_id.models["m"].deltas["extraction_quality_score"].delta < 0


def test_an_old_baseline_file_loads_and_is_compared_by_id(tmp_path: Path) -> None:
    found = samples(4)
    snaps = snapshots(found, {s.id: s.expected for s in found})
    old = {
        model: {i: baselines.SampleSnapshot(s.row, s.fields) for i, s in per.items()} for model, per in snaps.items()
    }
    path = baselines.save(baselines.build("old", old, {}, {}, {}), tmp_path)
    assert "sample_hash" not in path.read_text()
    loaded = baselines.load(path)
    assert loaded.sample_hashes() is None
    result = compare_run(snaps, loaded, FAST, sample_hashes=hashes(found))
    assert result.pairing is not None and not result.pairing.checked and len(result.models["m"].shared) == 4
    # a new file keeps each sample's hash through a round trip
    again = baselines.load(baselines.save(baselines.build("new", snaps, {}, {}, {}), tmp_path))
    assert again.sample_hashes() == hashes(found)


def test_a_track_sample_hashes_every_input_it_carries() -> None:
    from types import MappingProxyType

    from pytest_extractbench.tracks.base import TrackSample

    def toolcall(question: str, tools: list[str], gold: Any, order: int = 1) -> TrackSample:
        data = {"messages": [{"role": "user", "content": question}], "functions": tools}
        if order < 0:
            data = dict(reversed(list(data.items())))
        return TrackSample("q1", MappingProxyType(data), gold)

    base = identity.sample_hash(toolcall("Weather in Paris?", ["get_weather"], [{"get_weather": {"city": "Paris"}}]))
    # key order and a read-only mapping do not matter; the question, the tools and the reference each do
    assert (
        identity.sample_hash(toolcall("Weather in Paris?", ["get_weather"], [{"get_weather": {"city": "Paris"}}], -1))
        == base
    )
    assert (
        identity.sample_hash(toolcall("Weather in Rome?", ["get_weather"], [{"get_weather": {"city": "Paris"}}]))
        != base
    )
    assert (
        identity.sample_hash(toolcall("Weather in Paris?", ["get_time"], [{"get_weather": {"city": "Paris"}}])) != base
    )
    assert (
        identity.sample_hash(toolcall("Weather in Paris?", ["get_weather"], [{"get_weather": {"city": "Rome"}}]))
        != base
    )


def test_an_extraction_sample_hashes_its_text_schema_and_gold() -> None:
    import hashlib
    import json

    sample = Sample(id="a", text="Total 9.00", schema={"type": "object"}, expected={"total": 9.0})
    content = {"text": "Total 9.00", "schema": {"type": "object"}, "expected": {"total": 9.0}}
    by_hand = hashlib.sha256(json.dumps(content, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    assert identity.sample_hash(sample) == by_hand
