"""The readers that decide what a sample's answer is: predictions files, stored records, a response's usage and
timings. Each expected value is read off the input by hand; the plugin tests cover the same readers end to end,
these pin each rule where it is made."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from pytest_extractbench.core.jsonio import JsonInputError
from pytest_extractbench.dataset.predictions import (
    FileFacts,
    PredictionsSpec,
    _json_type,
    coverage_problem,
    load_predictions,
)
from pytest_extractbench.dataset.records import SampleRecord, TrackRecord
from pytest_extractbench.dataset.responses import ModelResponse, clean_timings, clean_usage
from pytest_extractbench.dataset.samples import (
    Sample,
)
from pytest_extractbench.scoring import score_sample
from pytest_extractbench.scoring.options import ScoringOptions


def _sample(sample_id: str) -> Sample:
    return Sample(sample_id, "text", {"type": "object"}, {})


def _write(path: Path, *lines: object) -> Path:
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines), encoding="utf-8")
    return path


def _load(*rows: object, model: str | None = None, default_model: str | None = None) -> object:
    return load_predictions(
        [PredictionsSpec(Path("<rows>"), model, rows=tuple(rows))], default_model=default_model, base_dir=Path(".")
    )


# --- the predictions option value ---


def test_a_spec_without_a_name_has_no_model_and_its_rows_are_neither_shown_nor_compared(tmp_path: Path) -> None:
    plain = PredictionsSpec.parse("answers.jsonl")
    assert plain == PredictionsSpec(Path("answers.jsonl")) and plain.model is None
    assert PredictionsSpec.parse("gpt=answers.jsonl") == PredictionsSpec(Path("answers.jsonl"), "gpt")
    odd = _write(tmp_path / "a=b.jsonl", {"id": "1", "output": 1})
    assert PredictionsSpec.parse(str(odd)) == PredictionsSpec(odd)  # an existing file's "=" is part of its name
    # rows given from Python are data, not identity: two specs of one label are equal, and a repr stays short
    assert PredictionsSpec(Path("x"), rows=(1,)) == PredictionsSpec(Path("x"), rows=(2,))
    assert "rows" not in repr(PredictionsSpec(Path("x"), rows=(1,)))


# --- reading rows ---


def test_each_row_becomes_the_answer_of_its_model_and_sample() -> None:
    source = _load(
        {"id": "a", "output": '{"x": 1}'},
        {"id": 7, "output": {"x": 2}, "model": "named"},
        {"id": "b", "output": None},
        {"id": "c", "output": "t", "logprobs": [{"token": "t", "logprob": -0.5}]},
        default_model="dflt",
    )
    assert source.outputs[("dflt", "a")] == ModelResponse(content='{"x": 1}')
    assert source.outputs[("named", "7")].content == {"x": 2}  # an id is read as its text
    null = source.outputs[("dflt", "b")]
    assert (null.error_class, null.error, null.ok) == ("missing", "prediction for 'b' is null", False)
    assert source.outputs[("dflt", "c")].logprobs == [{"token": "t", "logprob": -0.5}]
    assert source.outputs[("dflt", "a")].logprobs is None
    assert source.models == ["dflt", "named"] and source.problems == []
    assert source.origin[("named", "7")] == "<rows>:row 2"


def test_a_row_model_falls_back_to_the_spec_then_the_run_model_then_predictions() -> None:
    assert list(_load({"id": "a", "output": 1}, model="spec", default_model="run").outputs) == [("spec", "a")]
    assert list(_load({"id": "a", "output": 1}, default_model="run").outputs) == [("run", "a")]
    assert list(_load({"id": "a", "output": 1}).outputs) == [("predictions", "a")]


def test_rows_that_cannot_be_read_are_warnings_naming_the_row_and_field() -> None:
    bad_json = JsonInputError("nesting too deep", path="$.output.a.b", sample_id="s9")
    source = _load(
        bad_json,
        [1, 2],
        {"output": 1},
        {"id": "", "output": 1},
        {"id": "r", "outputs": "one"},
        {"id": "e", "outputs": []},
        {"id": "m"},
        {"id": "o", "output": 1, "model": {"a": 1}},
        {"id": "ok", "output": 1},
        {"id": "ok", "output": 2},
    )
    found = [(p.location, p.sample_id, p.field, p.severity) for p in source.problems]
    assert found == [
        ("row 1", "s9", "output", "warning"),
        ("row 2", None, "id", "warning"),
        ("row 3", None, "id", "warning"),
        ("row 4", None, "id", "warning"),
        ("row 5", "r", "outputs", "warning"),
        ("row 6", "e", "outputs", "warning"),
        ("row 7", "m", "output", "warning"),
        ("row 8", "o", "model", "warning"),
        ("row 10", "ok", "id", "warning"),
    ]
    messages = [p.message for p in source.problems]
    assert messages[0] == "$.output.a.b: nesting too deep; row ignored"
    assert messages[4] == messages[5] == "'outputs' must be a non-empty list of outputs (one per run); row ignored"
    assert messages[6] == "missing 'output'; row ignored"
    assert messages[7] == "'model' must be a string, got an object; row ignored"
    assert messages[8] == "duplicate id (first at row 9); the first row is used"
    assert list(source.outputs) == [("predictions", "ok")] and source.outputs[("predictions", "ok")].content == 1
    assert all(p.source == "<rows>" for p in source.problems)


def test_a_read_error_without_a_path_names_no_field() -> None:
    (problem,) = _load(JsonInputError("not JSON")).problems
    assert (problem.field, problem.sample_id, problem.message) == (None, None, "not JSON; row ignored")


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        (True, "a boolean"),
        (False, "a boolean"),
        (3, "a number"),
        (2.5, "a number"),
        ({}, "an object"),
        ([], "an array"),
    ],
)
def test_a_value_is_named_in_json_words(value: object, kind: str) -> None:
    assert _json_type(value) == kind


def test_a_value_json_has_no_word_for_is_named_by_its_python_type() -> None:
    assert _json_type("x") == "str" and _json_type(None) == "NoneType"


def test_repeated_runs_are_kept_and_the_first_is_scored_without_an_output() -> None:
    source = _load({"id": "a", "outputs": ["r1", "r2", "r3"]}, {"id": "b", "output": "main", "outputs": ["x", "y"]})
    assert source.outputs[("predictions", "a")].content == "r1"
    assert source.outputs[("predictions", "b")].content == "main"  # an explicit output wins over the first run
    sample_a, sample_b, sample_c = _sample("a"), _sample("b"), _sample("c")
    assert [r.content for r in source.responses("predictions", sample_a, 2)] == ["r1", "r2"]
    assert [r.content for r in source.responses("predictions", sample_b, 5)] == ["x", "y"]
    (missing,) = source.responses("predictions", sample_c, 3)  # no runs: the single (here missing) answer
    assert missing.error_class == "missing"
    assert missing.error == "no prediction for sample 'c' (model 'predictions')"
    single = _load({"id": "s", "output": "only"})
    assert [r.content for r in single.responses("predictions", _sample("s"), 3)] == ["only"]


def test_unknown_ids_are_warned_about_in_file_order(tmp_path: Path) -> None:
    path = _write(tmp_path / "p:q.jsonl", {"id": "zz", "output": 1}, {"id": "a", "output": 1}, {"id": "k", "output": 1})
    source = load_predictions([PredictionsSpec(Path(path.name))], default_model="m", base_dir=tmp_path)
    source.check_ids({"k"})
    assert [(p.source, p.location, p.sample_id, p.field, p.severity) for p in source.problems] == [
        ("p:q.jsonl", "line 1", "zz", "id", "warning"),
        ("p:q.jsonl", "line 2", "a", "id", "warning"),
    ]
    assert source.problems[0].message == "unknown sample id (model 'm'): not in the dataset"


def test_a_relative_predictions_path_is_read_from_the_base_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "base").mkdir()
    (tmp_path / "elsewhere").mkdir()
    _write(tmp_path / "base" / "p.jsonl", {"id": "a", "output": 1})
    monkeypatch.chdir(tmp_path / "elsewhere")
    source = load_predictions([PredictionsSpec(Path("p.jsonl"))], default_model=None, base_dir=tmp_path / "base")
    assert list(source.outputs) == [("predictions", "a")]
    with pytest.raises(FileNotFoundError, match=r"predictions file nope\.jsonl: no such file"):
        load_predictions([PredictionsSpec(Path("nope.jsonl"))], default_model=None, base_dir=tmp_path / "base")


def test_what_a_file_held_is_counted_for_the_message_about_a_file_that_matches_nothing(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "p.jsonl",
        {"id": "a", "output": 1},
        "not json",
        {"id": "b", "k2": 1},
        {"k3": 1, "id": ""},
        {"k4": 1},
        "[1]",
    )
    source = load_predictions([PredictionsSpec(path)], default_model=None, base_dir=tmp_path)
    facts = source.files[str(path)]
    # 4 JSON objects; "not json" and the array [1] are unreadable as rows; keys of the first three objects only
    assert (facts.rows, facts.unreadable) == (4, 2)
    assert list(facts.keys) == ["id", "output", "k2", "k3"]
    assert facts.ids == {"a", "b"}  # an empty id is no id
    assert FileFacts() == FileFacts(rows=0, ids=set(), keys={}, unreadable=0)


# --- does a predictions file belong to the dataset ---


def test_a_file_is_the_dataset_s_when_at_least_half_its_ids_are_samples() -> None:
    known = {"s1", "s2", "s3"}
    assert coverage_problem("f", FileFacts(rows=2, ids={"s1", "x"}), known, "d") is None  # 1 of 2: exactly half
    assert coverage_problem("f", FileFacts(rows=1, ids={"x"}), set(), "d") is None  # a dataset without ids
    # 1 of 4 is under half (a rule "at least 1/8" or "over half" would decide otherwise)
    message = coverage_problem("f", FileFacts(rows=4, ids={"s1", "x", "y", "z"}), known, "d")
    assert message == (
        "predictions file f: 1 of its 4 ids are samples of dataset d (at least half must be, or it is not this "
        "dataset's predictions): its ids look like 'x', 'y', 'z', the dataset's like 's1', 's2', 's3'"
    )
    many = coverage_problem("f", FileFacts(rows=9, ids={"a", "b", "c", "d", "e"}), {"1", "2", "3", "4"}, "d")
    assert many is not None and many.endswith("its ids look like 'a', 'b', 'c', the dataset's like '1', '2', '3'")


def test_a_file_without_rows_or_ids_says_what_it_held() -> None:
    empty = coverage_problem("f", FileFacts(rows=0, unreadable=3), {"s1"}, "d")
    assert empty is not None and empty.endswith(
        ': it holds no JSON rows (3 unreadable line(s); JSONL rows of {"id", "output"} expected)'
    )
    keys = {f"k{i}": None for i in range(10)}
    no_ids = coverage_problem("f", FileFacts(rows=2, keys=keys), {"s1"}, "d")
    eight = ", ".join(f"'k{i}'" for i in range(8))
    assert no_ids is not None and no_ids.endswith(f"its rows have the keys {eight}")
    bare = coverage_problem("f", FileFacts(rows=2), {"s1"}, "d")
    assert bare is not None and bare.endswith("its rows have the keys none")


# --- stored records ---


def test_a_sample_record_round_trips_through_its_wire_form() -> None:
    score = score_sample('{"a": 1}', {"a": 1}, None)
    record = SampleRecord(
        "m", "s", score, meta={"topic": "t"}, response={"latency_s": 1.5}, passed=False, failure="why",
        diagnostics={"d": 1}, scoring_error="boom",
    )  # fmt: skip
    again = SampleRecord.from_dict(json.loads(json.dumps(record.to_dict())), ScoringOptions())
    assert (again.meta, again.response, again.diagnostics) == ({"topic": "t"}, {"latency_s": 1.5}, {"d": 1})
    assert (again.passed, again.failure, again.scoring_error) == (False, "why", "boom")
    bare = SampleRecord.from_dict({"model": "m", "sample_id": "s", "score": score.as_dict()}, ScoringOptions())
    assert (bare.meta, bare.response, bare.diagnostics, bare.passed) == ({}, {}, {}, True)
    nulls = {"model": "m", "sample_id": "s", "score": score.as_dict(), "meta": None, "response": None}
    assert SampleRecord.from_dict({**nulls, "diagnostics": None}, ScoringOptions()).meta == {}


def test_a_track_record_round_trips_and_adds_repeats_only_when_there_are_some() -> None:
    record = TrackRecord(
        "m", "s", "toolcall", {"ok": 1}, meta={"k": 1}, response={"r": 2}, passed=False, failure="bad call",
        consistency={"c": 1}, details=["line one", "line two"],
    )  # fmt: skip
    wire = record.to_dict()
    assert "repeats" not in wire and record.repeats is None
    again = TrackRecord.from_dict(json.loads(json.dumps(wire)))
    assert again == record
    with_repeats = TrackRecord("m", "s", "toolcall", {}, repeats={"passed": [True]})
    assert with_repeats.to_dict()["repeats"] == {"passed": [True]}
    bare = TrackRecord.from_dict({"model": "m", "sample_id": "s", "track": "t", "result": None, "details": None})
    assert (bare.result, bare.meta, bare.response, bare.details, bare.passed) == ({}, {}, {}, [], True)
    assert record.sort_key == ("m", "s")
    assert record.headline() == {"model": "m", "sample_id": "s", "passed": False}
    assert record.failure_headline() == "sample 's' (model 'm', track toolcall): bad call"
    assert record.failure_text() == "sample 's' (model 'm', track toolcall): bad call\nline one\nline two"


# --- a response's usage and server timings ---


def test_server_timings_keep_the_finite_non_negative_numbers() -> None:
    timings = {
        "prompt_ms": 0, "predicted_ms": 0.5, "prompt_n": -1, "predicted_n": True, "cache_n": math.nan, "other": 3,
    }  # fmt: skip
    assert clean_timings(timings) == {"prompt_ms": 0.0, "predicted_ms": 0.5}
    assert clean_timings({"prompt_ms": -1}) is None and clean_timings({}) is None and clean_timings([1]) is None


def test_usage_keeps_whole_non_negative_counts_of_named_tokens() -> None:
    # 0 and 0.5 are kept (0.5 as int 0); -1, booleans, strings, NaN and infinities are left out; 2.9 -> 2
    usage = {"a": 0, "b": 0.5, "c": -1, "d": True, "e": "7", "f": math.nan, "g": math.inf, "h": 2.9, 3: 4}
    assert clean_usage(usage) == {"a": 0, "b": 0, "h": 2}
    assert clean_usage(usage, keys=["h", "c", "zz"]) == {"h": 2}
    assert clean_usage(None) == {} and clean_usage([("a", 1)]) == {}


def test_a_response_is_ok_only_with_content_and_no_error() -> None:
    assert ModelResponse(content="x").ok
    assert not ModelResponse().ok  # no content, no error: nothing came back
    assert not ModelResponse(content="x", error_class="timeout").ok
    assert not ModelResponse(error_class="timeout").ok
