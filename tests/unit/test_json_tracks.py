"""Create-by-schema and repair tracks, and the deterministic JSON breakage behind repair."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_extractbench.tracks import BREAKAGE_KINDS, BreakageError, applicable_kinds, break_json
from pytest_extractbench.tracks.generate import GenerateTrack, schema_features, violated_features
from pytest_extractbench.tracks.repair import RepairTrack

# -- breakage ------------------------------------------------------------------------------------

VALUE = {"name": "Ada", "tags": ["x", "y"], "ok": True, "n": None, "inner": {"k": 1.5}}


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("single_quotes", "{'name': 'Ada', 'tags': ['x', 'y'], 'ok': true, 'n': null, 'inner': {'k': 1.5}}"),
        ("unquoted_keys", '{name: "Ada", tags: ["x", "y"], ok: true, n: null, inner: {k: 1.5}}'),
        ("python_literals", '{"name": "Ada", "tags": ["x", "y"], "ok": True, "n": None, "inner": {"k": 1.5}}'),
    ],
)
def test_whole_document_breakages(kind: str, expected: str) -> None:
    assert break_json(VALUE, kind, seed="s") == expected


@pytest.mark.parametrize("kind", ["trailing_comma", "missing_comma", "missing_closing", "comment"])
def test_site_breakages_change_one_place_deterministically(kind: str) -> None:
    text = json.dumps(VALUE)
    broken = break_json(VALUE, kind, seed="sample-1")
    assert broken == break_json(VALUE, kind, seed="sample-1")
    assert abs(len(broken) - len(text)) in (1, len(" // checked by hand\n"))
    with pytest.raises(json.JSONDecodeError):
        json.loads(broken)


def test_breakage_that_does_not_apply_or_is_unknown() -> None:
    assert "python_literals" not in applicable_kinds({"a": 1})
    with pytest.raises(BreakageError, match="does not apply"):
        break_json({"a": 1}, "python_literals")
    with pytest.raises(BreakageError, match="unknown breakage kind"):
        break_json({"a": 1}, "gremlins")


json_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(10**6), 10**6), st.text(max_size=8)),
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=12,
)


@given(st.dictionaries(st.text(max_size=6), json_values, min_size=1, max_size=5), st.integers(0, 10**6))
def test_every_applicable_breakage_really_breaks(value: dict, seed: int) -> None:
    kinds = applicable_kinds(value)
    assert "trailing_comma" in kinds and "missing_closing" in kinds  # a non-empty object always has both
    for kind in kinds:
        with pytest.raises(json.JSONDecodeError):
            json.loads(break_json(value, kind, seed=seed))


# -- create by schema ----------------------------------------------------------------------------

SCHEMA = {
    "type": "object",
    "properties": {
        "status": {"type": "string", "enum": ["a", "b"]},
        "email": {"type": "string", "format": "email"},
        "owner": {
            "type": "object",
            "properties": {"zip": {"type": "string", "pattern": "^[0-9]{5}$"}},
            "required": ["zip"],
        },
        "items": {"type": "array", "items": {"type": "integer", "minimum": 0}, "maxItems": 2},
    },
    "required": ["status", "email"],
    "additionalProperties": False,
}


def test_schema_features() -> None:
    assert schema_features(SCHEMA) == [
        "types",
        "required",
        "enum",
        "format",
        "pattern",
        "numeric_bounds",
        "array",
        "array_bounds",
        "nested_object",
        "closed_object",
    ]
    assert schema_features({"type": "object", "properties": {"a": {"type": "string"}}}) == ["types"]


def test_violations_are_attributed_to_features() -> None:
    instance = {"status": "c", "email": "nope", "owner": {"zip": "12"}, "items": [1, -1, 3], "extra": 1}
    hit, messages = violated_features(instance, SCHEMA)
    assert hit == [
        "array",
        "array_bounds",
        "closed_object",
        "enum",
        "format",
        "nested_object",
        "numeric_bounds",
        "pattern",
    ]
    assert len(messages) == 6
    hit, _ = violated_features({"status": "a"}, SCHEMA)
    assert hit == ["required"]


def test_generate_scores_and_aggregates_by_hand() -> None:
    track = GenerateTrack()
    sample = track.parse_row({"schema": SCHEMA}, "s1", lambda *a: None)
    assert sample is not None
    good = track.score(sample, '```json\n{"status": "a", "email": "a@b.co", "owner": {"zip": "12345"}}\n```')
    bad_enum = track.score(sample, {"status": "z", "email": "a@b.co"})
    not_json = track.score(sample, "Sure! Here it is: {status: a}")
    assert good["passed"] and not bad_enum["passed"] and not not_json["passed"]
    assert bad_enum["features"]["enum"] is False and bad_enum["features"]["format"] is True
    assert not any(not_json["features"].values())
    section = track.aggregate([good, bad_enum, not_json])
    assert section["json_valid_rate"] == pytest.approx(2 / 3)
    assert section["schema_compliance_rate"] == pytest.approx(1 / 3)
    assert section["per_feature"]["enum"] == {"samples": 3, "compliant": 1, "compliance_rate": pytest.approx(1 / 3)}
    assert section["per_feature"]["format"] == {"samples": 3, "compliant": 2, "compliance_rate": pytest.approx(2 / 3)}


def test_bundled_generate_schemas_cover_the_features() -> None:
    dataset = GenerateTrack().load()
    assert len(dataset.samples) == 10 and not dataset.problems
    covered = {f for s in dataset.samples for f in s.meta["features"]}
    assert {"enum", "format", "pattern", "nested_object", "array", "required", "composition", "ref"} <= covered


# -- repair --------------------------------------------------------------------------------------


def test_repair_track_scores_agreement_with_the_original() -> None:
    track = RepairTrack()
    dataset = track.load()
    assert len(dataset.samples) == 12 and not dataset.problems
    assert {s.meta["kind"] for s in dataset.samples} == set(BREAKAGE_KINDS)
    sample = next(s for s in dataset.samples if s.id == "config-python")
    assert sample.data["broken"] == '{"host": "db.internal", "port": 5432, "tls": True}'
    fixed = track.score(sample, '{"host": "db.internal", "port": 5432, "tls": true}')
    changed = track.score(sample, '{"host": "db.internal", "port": 5433, "tls": true}')
    still = track.score(sample, sample.data["broken"])
    assert fixed["passed"] and fixed["exact_match"] and fixed["field_f1_partial"] == 1.0
    assert not changed["passed"] and changed["schema_valid"] and changed["failure"].startswith("values changed")
    assert not still["json_valid"] and "still not JSON" in still["failure"]
    section = track.aggregate([fixed, changed, still])
    assert section["json_valid_rate"] == pytest.approx(2 / 3)
    assert section["exact_match_rate"] == pytest.approx(1 / 3)
    assert section["by_kind"]["python_literals"]["samples"] == 3
    # 3 fields in each sample; 3 + 2 come back unchanged, none from the output that is still broken
    assert section["field_agreement_rate"] == pytest.approx(5 / 9)


def test_repair_rows_with_problems_name_the_field(tmp_path: Any) -> None:
    path = tmp_path / "r.jsonl"
    rows = [
        {"id": "a", "schema": {"type": "object"}, "original": {"x": 1}, "kind": "python_literals"},
        {"id": "b", "schema": {"type": "object"}, "kind": "trailing_comma"},
        {"id": "c", "schema": {"type": "object"}, "original": {"x": 1}, "broken": "{x: 1}"},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows))
    dataset = RepairTrack().load(str(path))
    assert [s.id for s in dataset.samples] == ["c"]
    found = [(p.sample_id, p.field, p.location) for p in dataset.problems]
    assert found == [("a", "kind", "line 1"), ("b", "original", "line 2")]


@pytest.mark.slow
def test_tracks_consistency_and_calibration_never_import_pytest() -> None:
    import subprocess
    import sys

    code = (
        "import sys, pytest_extractbench.tracks, pytest_extractbench.tracks.toolcall, "
        "pytest_extractbench.analysis.consistency, "
        "pytest_extractbench.analysis.calibration, pytest_extractbench.analysis.sample_extras; "
        "assert 'pytest' not in sys.modules and '_pytest' not in sys.modules, sorted(sys.modules)"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
