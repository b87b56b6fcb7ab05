"""What a large run no longer holds until its end, and that each reader still gets what it got: a served prediction
read again from its row, JUnit property pairs shared between items, complexity features made once per map."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_extractbench.analysis.distributions import complexity_correlation_section
from pytest_extractbench.dataset.predictions import SERVED, PredictionsSpec, load_predictions
from pytest_extractbench.dataset.records import SampleRecord
from pytest_extractbench.dataset.responses import ModelResponse
from pytest_extractbench.dataset.samples import Sample
from pytest_extractbench.plugin.pytest_html import junit_properties
from pytest_extractbench.scoring import score_sample
from pytest_extractbench.scoring.options import ScoringOptions


def _sample(sample_id: str) -> Sample:
    return Sample(sample_id, "text", {"type": "object"}, {})


def _file(path: Path, *rows: object) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


# --- predictions: served once, then read again from their row ---


def test_a_served_prediction_is_let_go_and_read_again_equal_from_its_line(tmp_path: Path) -> None:
    path = _file(tmp_path / "p.jsonl", {"id": "a", "output": '{"x": 1}'}, {"id": "b", "output": {"y": [2]}})
    source = load_predictions([PredictionsSpec(path)], default_model="m", base_dir=tmp_path)
    first = source.response("m", _sample("b"))
    assert first == ModelResponse(content={"y": [2]})
    assert source.outputs[("m", "b")] is SERVED and source.models == ["m"]  # the key stays, the output goes
    again = source.response("m", _sample("b"))  # an item run again (pytest-rerunfailures, say)
    assert again == first and again is not first
    assert source.response("m", _sample("a")).content == '{"x": 1}'  # line 1 of the file
    assert source.response("m", _sample("a")).content == '{"x": 1}'  # and again, from line 1


def test_rows_given_from_python_are_read_again_from_the_rows() -> None:
    rows = ({"id": "a", "output": 1, "logprobs": [{"token": "1", "logprob": -0.1}]},)
    source = load_predictions([PredictionsSpec(Path("<rows>"), "m", rows=rows)], default_model=None, base_dir=Path("."))
    first = source.response("m", _sample("a"))
    assert source.outputs[("m", "a")] is SERVED  # let go as a file's output is: row 1 of the rows gives it again
    again = source.response("m", _sample("a"))
    assert again == first == ModelResponse(content=1, logprobs=rows[0]["logprobs"]) and again is not first


def test_a_line_edited_after_it_was_served_gives_a_missing_output_that_says_so(tmp_path: Path) -> None:
    path = _file(tmp_path / "p.jsonl", {"id": "a", "output": 1})
    source = load_predictions([PredictionsSpec(path)], default_model="m", base_dir=tmp_path)
    assert source.response("m", _sample("a")).content == 1
    _file(path, {"id": "z", "output": 1})  # line 1 is another sample's now
    again = source.response("m", _sample("a"))
    assert again.error_class == "missing" and "changed since it was read" in (again.error or "")
    path.unlink()  # gone altogether: the same
    assert source.response("m", _sample("a")).error_class == "missing"


def test_outputs_of_a_file_given_for_two_models_and_of_repeated_runs_stay_held(tmp_path: Path) -> None:
    path = _file(tmp_path / "p.jsonl", {"id": "a", "output": 1}, {"id": "r", "outputs": [5, 6]})
    specs = [PredictionsSpec(path, "m1"), PredictionsSpec(path, "m2")]
    source = load_predictions(specs, default_model=None, base_dir=tmp_path)
    held = source.outputs[("m1", "a")]
    assert source.response("m1", _sample("a")) is held and source.outputs[("m1", "a")] is held
    single = load_predictions([PredictionsSpec(path)], default_model="m", base_dir=tmp_path)
    repeated = single.outputs[("m", "r")]  # also the first of its runs: the repeats hold it anyway
    assert single.response("m", _sample("r")) is repeated and single.outputs[("m", "r")] is repeated


def test_a_prediction_that_is_not_there_is_missing_each_time(tmp_path: Path) -> None:
    source = load_predictions([PredictionsSpec(_file(tmp_path / "p.jsonl"))], default_model="m", base_dir=tmp_path)
    for _ in range(2):
        assert source.response("m", _sample("q")).error_class == "missing"


# --- JUnit properties: equal pairs kept once ---


def _properties(eqs: float, f1: float, valid: bool = True, model: str = "m") -> list[tuple[str, object]]:
    return junit_properties({"model": model, "score": {"eqs": eqs, "schema_valid": valid, "f1": {"partial": f1}}})


def test_equal_property_pairs_are_one_object_and_the_values_are_unchanged() -> None:
    one, two = _properties(0.123456, 0.5), _properties(0.12345, 0.5)
    # round(0.123456, 4) = 0.1235 and round(0.12345, 4) = 0.1235 (0.12345 is stored just above the half)
    assert (
        one
        == two
        == [
            ("extractbench_model", "m"),
            ("extractbench_eqs", 0.1235),
            ("extractbench_validity", "valid"),
            ("extractbench_f1_partial", 0.5),
        ]
    )
    assert all(a is b for a, b in zip(one, two))
    assert _properties(0.1, 0.2, valid=False)[2] == ("extractbench_validity", "invalid")


def test_a_pair_is_shared_only_with_one_written_the_same() -> None:
    zero, negative = _properties(0.0, 1.0), _properties(-0.0, 1.0)
    assert str(negative[1][1]) == "-0.0" and str(zero[1][1]) == "0.0"  # the JUnit XML writes str(value)
    integer = junit_properties({"model": "m", "score": {"eqs": 1, "schema_valid": True, "f1": {"partial": 1}}})
    assert type(integer[1][1]) is int and type(_properties(1.0, 1.0)[1][1]) is float
    nan = _properties(math.nan, 0.0)[1][1]
    assert isinstance(nan, float) and math.isnan(nan)


def test_a_record_without_a_score_has_only_its_model() -> None:
    assert junit_properties({"model": "m\x1b", "result": {}}) == [("extractbench_model", "m\\x1b")]


# --- complexity correlation: one features map per complexity map ---

SCHEMA = {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}}
OUTPUTS = st.fixed_dictionaries({}, optional={"a": st.sampled_from(["x", "y"]), "b": st.integers(0, 3)})


@given(
    rows=st.lists(
        st.tuples(OUTPUTS, st.integers(0, 2), st.one_of(st.none(), st.floats(0.1, 5.0))), min_size=0, max_size=30
    )
)
def test_records_sharing_complexity_maps_correlate_as_records_with_copies(rows: list) -> None:
    maps = [{"total_fields": n, "has_arrays": n > 0, "complexity_bin": "simple"} for n in (2, 5, 9)]

    def made(shared: bool) -> list[SampleRecord]:
        return [
            SampleRecord(
                model="m",
                sample_id=f"s{i}",
                score=score_sample(json.dumps(output), {"a": "x", "b": 1}, SCHEMA, sample_id=f"s{i}"),
                meta={"complexity": maps[which] if shared else dict(maps[which])},
                response={} if latency is None else {"latency_s": latency},
            )
            for i, (output, which, latency) in enumerate(rows)
        ]

    options = ScoringOptions()
    shared = complexity_correlation_section(made(True), options)
    assert json.dumps(shared, sort_keys=True) == json.dumps(
        complexity_correlation_section(made(False), options), sort_keys=True
    )


def test_a_record_without_complexity_adds_no_feature() -> None:
    score = score_sample('{"a": "x"}', {"a": "x"}, SCHEMA, sample_id="s")
    records = [SampleRecord("m", f"s{i}", score, meta={} if i else {"complexity": None}) for i in range(3)]
    assert complexity_correlation_section(records, ScoringOptions()) == {"complexity_correlation": {}}


@pytest.mark.parametrize("latencies", [(0.5, 1.5, 2.5), (1.0, 1.0, 1.0)])
def test_shared_maps_give_the_hand_computed_correlation(latencies: tuple[float, float, float]) -> None:
    shared = {"total_fields": 1}
    score = score_sample('{"a": "x"}', {"a": "x"}, SCHEMA, sample_id="s")
    bigger = {"total_fields": 3}
    records = [
        SampleRecord("m", "s0", score, meta={"complexity": shared}, response={"latency_s": latencies[0]}),
        SampleRecord("m", "s1", score, meta={"complexity": shared}, response={"latency_s": latencies[1]}),
        SampleRecord("m", "s2", score, meta={"complexity": bigger}, response={"latency_s": latencies[2]}),
    ]
    out = complexity_correlation_section(records, ScoringOptions())["complexity_correlation"]
    assert out["f1_vs_total_fields"]["note"] == "constant input"  # the same output thrice: one F1
    latency = out["latency_vs_total_fields"]
    if latencies[0] == latencies[2]:
        assert latency["note"] == "constant input"
    else:
        # x = (1, 1, 3), y = (0.5, 1.5, 2.5): means 5/3 and 1.5; deviations (-2/3, -2/3, 4/3) and (-1, 0, 1);
        # sum of products 2/3 + 0 + 4/3 = 2; sum of squares 4/9 + 4/9 + 16/9 = 8/3 and 2; r = 2 / sqrt(16/3)
        assert latency["r"] == pytest.approx(2 / math.sqrt(16 / 3)) and latency["n"] == 3


# --- the bootstrap's matrix: its columns are not kept twice ---


def test_a_matrix_takes_its_columns_and_they_come_back_equal_when_asked_again() -> None:
    from pytest_extractbench.analysis.resampled import Columns

    scores = [score_sample(json.dumps(out), {"a": "x", "b": 1}, SCHEMA) for out in ({"a": "x", "b": 1}, {"a": "y"})]
    columns = Columns(scores)
    before = columns.column("eqs").copy()
    matrix = columns.matrix(["eqs", "one"])
    assert matrix.shape == (2, 2) and matrix[:, 1].tolist() == [1.0, 1.0]
    assert "eqs" not in columns._built and "one" not in columns._built  # moved into the matrix, not kept beside it
    assert columns.column("eqs").tolist() == before.tolist() == matrix[:, 0].tolist()
    assert before[0] == scores[0].eqs and before[1] == scores[1].eqs


# --- held field scores: 0.0 and 1.0 as flags ---


def test_field_scores_of_zero_and_one_are_flags_and_every_score_reads_back_as_it_was() -> None:
    from pytest_extractbench.run.compact import SharedValues
    from pytest_extractbench.scoring.result import FieldResult

    score = score_sample('{"a": "x"}', {"a": "x"}, SCHEMA, sample_id="s")
    scores = (1.0, 0.0, -0.0, 0.5, 1, math.nan)  # the last four kept as values: -0.0 and 1 are written apart
    score.fields = tuple(FieldResult(f"k{i}", "exact", s, None, None) for i, s in enumerate(scores))
    held = SharedValues().compact(SampleRecord("m", "s", score)).score
    packed, values, _, _ = held._held()
    assert packed is not None
    # no expected, predicted or similarity: the values are the four scores that are not 0.0 or 1.0, in order
    assert len(values) == 4 and repr(values[:3]) == "(-0.0, 0.5, 1)"
    assert repr([f.score for f in held.fields]) == "[1.0, 0.0, -0.0, 0.5, 1, nan]"
    assert [type(f.score) for f in held.fields] == [float, float, float, float, int, float]


# --- metrics.json's document: what is plain already is shared, not copied ---

LEAVES = st.one_of(
    st.none(), st.booleans(), st.integers(-3, 3), st.floats(allow_nan=True), st.text(max_size=3), st.just(-0.0)
)
TREES = st.recursive(
    LEAVES,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.tuples(inner, inner),
        st.dictionaries(st.one_of(st.text(max_size=3), st.integers(0, 3)), inner, max_size=4),
    ),
    max_leaves=20,
)


@given(tree=TREES)
def test_plain_sharing_reads_as_plain_does(tree: object) -> None:
    from pytest_extractbench.core.files import plain, plain_sharing

    assert repr(plain_sharing(tree)) == repr(plain(tree))  # repr tells -0.0, 1 and True apart, and key order


def test_plain_sharing_copies_only_what_changes() -> None:
    import numpy as np

    from pytest_extractbench.core.files import plain_sharing

    leaf, other = {"sample_id": "s1", "reason": "bad"}, {"n": np.int64(3)}
    rows = [leaf, {"sample_id": "s2", "reason": None}]
    document = {"models": {"m": {"invalid_samples": rows, "x": math.nan, "t": (1, 2), 5: "k"}}, "o": other}
    out = plain_sharing(document)
    assert out == {"models": {"m": {"invalid_samples": rows, "x": None, "t": [1, 2], "5": "k"}}, "o": {"n": 3}}
    assert out["models"]["m"]["invalid_samples"] is rows and out["models"]["m"]["invalid_samples"][0] is leaf
    assert out is not document and out["models"]["m"] is not document["models"]["m"]  # a NaN, a tuple, a key: copied
    assert type(out["o"]["n"]) is int and out["o"] is not other


# --- the dataset's ids: checked against the predictions, then let go ---


def test_the_ids_checked_against_the_predictions_are_let_go_and_an_unknown_id_is_still_named(tmp_path: Path) -> None:
    from pytest_extractbench.config.from_python import settings_from_options
    from pytest_extractbench.run.context import RunContext

    rows = [{"id": f"s{i}", "text": "t", "schema": {"type": "object"}, "expected": {}} for i in range(3)]
    dataset = _file(tmp_path / "data.jsonl", *rows)
    predictions = _file(tmp_path / "preds.jsonl", {"id": "s0", "output": "{}"}, {"id": "ghost", "output": "{}"})
    settings = settings_from_options(tmp_path, dataset=str(dataset), predictions=str(predictions))
    context = RunContext(settings, base_dir=tmp_path, writes=False)
    try:
        assert context.predictions is not None
        assert context.population_ids == set()  # 3 ids held while the predictions were checked, none after
        assert context.population == 3
        assert [(p.sample_id, p.message) for p in context.predictions.problems] == [
            ("ghost", "unknown sample id (model 'predictions'): not in the dataset")
        ]
    finally:
        context.close()
