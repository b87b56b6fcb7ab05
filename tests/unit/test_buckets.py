"""Per-sample buckets against a baseline, on hand-built baseline/run pairs whose bucket counts and field flips are
known: regressed (pass -> fail, or an EQS drop past the delta), fixed, still failing, unchanged, new, removed, and
changed (content edited since the baseline: never compared)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_extractbench.gating.baseline import SampleSnapshot
from pytest_extractbench.gating.buckets import (
    BUCKETS,
    FieldFlip,
    bucket_samples,
    field_flips,
    sample_bucket,
)


def snap(eqs: float, passed: bool, **fields: str) -> SampleSnapshot:
    """A scored sample: its EQS, whether its item passed, and each field's category."""
    return SampleSnapshot(
        {"eqs": eqs, "schema_valid": float(passed)},
        tuple((path.replace("__", "."), category, 1.0) for path, category in fields.items()),
        passed=passed,
    )


BASELINE = {
    "lost": snap(1.0, True, name="exact", age="exact"),  # pass -> fail
    "dropped": snap(0.9, True, name="exact", age="exact"),  # EQS -0.30, still passing
    "wobble": snap(0.9, True, name="exact", age="partial"),  # EQS -0.04: within the delta
    "gained": snap(0.8, True, name="partial", age="exact"),  # EQS +0.2: unchanged bucket, one better flip
    "fixed": snap(0.0, False, name="missed", age="missed"),
    "broken": snap(0.0, False, name="missed", age="missed"),
    "edited": snap(1.0, True, name="exact", age="exact"),
    "gone": snap(1.0, True, name="exact"),
}
CURRENT = {
    "lost": snap(0.2, False, name="exact", age="missed"),
    "dropped": snap(0.6, True, name="exact", age="incorrect", extra="spurious"),
    "wobble": snap(0.86, True, name="exact", age="partial"),
    "gained": snap(1.0, True, name="exact", age="exact"),
    "fixed": snap(1.0, True, name="exact", age="exact"),
    "broken": snap(0.0, False, name="missed", age="missed"),
    "edited": snap(0.0, False, name="missed", age="missed"),
    "added": snap(1.0, True, name="exact"),
}


def test_known_pairs_land_in_their_buckets() -> None:
    buckets = bucket_samples(CURRENT, BASELINE, changed={"edited"}, delta=0.05)
    assert buckets.counts() == {
        "regressed": 2,
        "fixed": 1,
        "still_failing": 1,
        "unchanged": 2,
        "new": 1,
        "removed": 1,
        "changed": 1,
    }
    assert buckets.ids("regressed") == ["dropped", "lost"] and buckets.ids("unchanged") == ["gained", "wobble"]
    # worst first: pass -> fail before a drop of a passing sample
    assert [s.sample_id for s in buckets.worst()] == ["lost", "dropped"]
    assert buckets.samples["edited"].flips == ()  # a changed sample is not compared field by field
    assert buckets.describe() == "2 regressed, 1 fixed, 1 still failing, 2 unchanged, 1 new, 1 removed, 1 changed"


def test_field_flips_are_counted_per_transition_and_per_field() -> None:
    buckets = bucket_samples(CURRENT, BASELINE, changed={"edited"})
    assert buckets.samples["lost"].flips == (FieldFlip("age", "exact", "missed"),)
    assert [str(f) for f in buckets.samples["dropped"].flips] == ["age: exact -> incorrect", "extra: - -> spurious"]
    assert buckets.flip_counts() == {
        "missed -> exact": 2,
        "exact -> incorrect": 1,
        "exact -> missed": 1,
        "- -> spurious": 1,
        "partial -> exact": 1,
    }
    fields = buckets.field_counts()
    assert fields["age"] == {"worse": 2, "better": 1} and fields["name"] == {"worse": 0, "better": 2}
    assert list(fields)[0] == "age"  # the most worsened field first
    described = buckets.samples["lost"].describe()
    assert described == "lost 1.000 -> 0.200, pass -> fail (age: exact -> missed)"


@pytest.mark.parametrize(("delta", "regressed"), [(0.01, 3), (0.05, 2), (0.3, 1), (0.5, 1)])
def test_the_delta_decides_when_a_passing_sample_s_drop_is_a_regression(delta: float, regressed: int) -> None:
    # drops: dropped 0.30, wobble 0.04; lost regresses whatever the delta (pass -> fail)
    assert bucket_samples(CURRENT, BASELINE, changed={"edited"}, delta=delta).counts()["regressed"] == regressed


def test_a_baseline_saved_before_pass_fail_was_kept_reads_it_from_schema_validity() -> None:
    old = SampleSnapshot({"eqs": 1.0, "schema_valid": 1.0}, (("name", "exact", 1.0),))
    assert sample_bucket("s", snap(0.0, False, name="missed"), old).bucket == "regressed"
    invalid = SampleSnapshot({"eqs": 0.0, "schema_valid": 0.0}, (("name", "missed", 0.0),))
    assert sample_bucket("s", snap(1.0, True, name="exact"), invalid).bucket == "fixed"


def test_buckets_serialise_every_count_ids_and_regressions() -> None:
    found = bucket_samples(CURRENT, BASELINE, changed={"edited"}).as_dict()
    assert set(found["counts"]) == set(BUCKETS) and found["eqs_delta"] == 0.05
    assert found["samples"]["changed"] == ["edited"] and "unchanged" not in found["samples"]
    assert [r["sample_id"] for r in found["regressions"]] == ["lost", "dropped"]
    assert found["regressions"][1]["field_flips"] == [["age", "exact", "incorrect"], ["extra", "-", "spurious"]]
    assert found["regressions"][1]["eqs_delta"] == pytest.approx(-0.3)


categories = st.sampled_from(["exact", "partial", "incorrect", "missed", "spurious"])
sample = st.builds(
    lambda eqs, ok, f: SampleSnapshot(
        {"eqs": eqs, "schema_valid": float(ok)}, tuple((p, c, 1.0) for p, c in f.items()), passed=ok
    ),
    st.floats(0, 1),
    st.booleans(),
    st.dictionaries(st.sampled_from("abcd"), categories, max_size=4),
)


@given(
    st.dictionaries(st.sampled_from("stuvwxyz"), sample, max_size=8),
    st.dictionaries(st.sampled_from("stuvwxyz"), sample, max_size=8),
    st.sets(st.sampled_from("stuvwxyz")),
    st.floats(0, 1),
)
def test_every_sample_is_in_exactly_one_bucket(current: dict, baseline: dict, changed: set, delta: float) -> None:
    buckets = bucket_samples(current, baseline, changed=changed, delta=delta)
    counts = buckets.counts()
    assert sum(counts.values()) == len(set(current) | set(baseline))
    assert counts["new"] == len(set(current) - set(baseline))
    assert counts["removed"] == len(set(baseline) - set(current))
    assert counts["changed"] == len(set(current) & set(baseline) & changed)
    for s in buckets.samples.values():
        if s.bucket == "fixed":
            assert not s.baseline_passed and s.current_passed
        if s.bucket in ("unchanged", "still_failing"):
            assert s.baseline_passed == s.current_passed
    # a run against itself: nothing regressed, nothing fixed, no flip
    same = bucket_samples(current, current, delta=delta)
    assert same.counts()["regressed"] == same.counts()["fixed"] == 0 and same.flip_counts() == {}


def test_flips_of_identical_fields_are_empty() -> None:
    one = snap(1.0, True, name="exact", age="partial")
    assert field_flips(one, one) == ()
