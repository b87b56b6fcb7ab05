"""The readers that decide what a sample's answer is: predictions files, stored records, a response's usage and
timings. Each expected value is read off the input by hand; the plugin tests cover the same readers end to end,
these pin each rule where it is made."""

from __future__ import annotations

import http.server
import json
import math
from pathlib import Path

import pytest

from _net import serve_in_thread
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
from pytest_extractbench.dataset.samples import DatasetProblem, Sample, parse_rows, row_error, sample_from_row
from pytest_extractbench.dataset.sources import (
    DataOptions,
    DatasetSourceError,
    _hub_offline,
    _spec_pick,
    _split_spec,
    benchson_row,
    check_hub_reachable,
    hub_endpoint,
    iter_hf_rows,
    load_dataset,
    load_source,
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


# --- dataset sources ---


def test_the_dataset_options_default_to_every_sample_and_no_cache() -> None:
    # sample None is "every sample" (0 would be none of them); no cache folder unless one is named
    options = DataOptions()
    assert (options.sample, options.cache_dir, options.documents_cache) == (None, None, None)
    assert options.as_dict() == {
        "columns": {}, "sample": None, "seed": 42, "invalid_samples": "warn", "cache_dir": None, "input": "text",
    }  # fmt: skip


def test_without_a_spec_the_bundled_dataset_is_read() -> None:
    bundled = load_source()
    assert bundled.name == "bundled" and bundled.samples and bundled.samples[0].id == load_dataset().samples[0].id


def test_a_relative_dataset_path_without_a_base_is_read_from_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    row = {"id": "a", "text": "t", "schema": {"type": "object"}, "expected": {}}
    _write(tmp_path / "d.jsonl", row)
    monkeypatch.chdir(tmp_path)
    assert [s.id for s in load_source("d.jsonl").samples] == ["a"]
    assert [s.id for s in load_dataset("d.jsonl").samples] == ["a"]
    # an absolute path ignores the base folder
    assert [s.id for s in load_source(str(tmp_path / "d.jsonl"), base_dir=Path("/nonexistent")).samples] == ["a"]


def test_a_benchson_instance_without_a_schema_anywhere_is_missing_its_schema(tmp_path: Path) -> None:
    (tmp_path / "bench" / "test").mkdir(parents=True)
    (tmp_path / "bench" / "test" / "one.json").write_text(json.dumps({"data": "doc", "ground_truth": {}}))
    dataset = load_source(str(tmp_path / "bench"))
    assert [(p.field, p.message) for p in dataset.problems] == [("schema", "missing 'schema'")]


def test_a_benchson_shared_schema_must_be_finite_json(tmp_path: Path) -> None:
    (tmp_path / "bench" / "test").mkdir(parents=True)
    (tmp_path / "bench" / "schema.json").write_text('{"type": "object", "maximum": NaN}')
    (tmp_path / "bench" / "test" / "one.json").write_text(json.dumps({"data": "doc", "ground_truth": {}}))
    with pytest.raises(DatasetSourceError, match=r"schema\.json: line 1: "):
        load_source(str(tmp_path / "bench"))


def test_a_benchson_instance_of_another_shape_passes_through_to_the_row_checks() -> None:
    assert benchson_row({"id": "x", "text": "t"}, "stem", None) == {"id": "x", "text": "t"}
    assert benchson_row([1], "stem", None) == [1]
    assert benchson_row({"data": "doc"}, "stem", {"type": "object"}) == {
        "id": "stem", "text": "doc", "schema": {"type": "object"},
    }  # fmt: skip


@pytest.mark.parametrize(
    ("rest", "expected"),
    [
        ("owner/name:test", ("owner/name", "test")),
        ("c:train", ("c:train", None)),  # one letter before the colon is a drive, not a name
        ("C:\\data\\x.jsonl", ("C:\\data\\x.jsonl", None)),
        ("data/x.jsonl", ("data/x.jsonl", None)),
        ("ab:", ("ab:", None)),
    ],
)
def test_a_split_is_named_after_the_last_colon(rest: str, expected: tuple[str, str | None]) -> None:
    assert _split_spec(rest) == expected


def test_how_a_command_line_names_one_split() -> None:
    assert _spec_pick("hf:owner/name:train", "train") == "--extractbench-dataset hf:owner/name:SPLIT"
    assert _spec_pick("data/x.jsonl", None) == "--extractbench-dataset hf:data/x.jsonl:SPLIT"
    # a split the spec does not end with is not cut off it
    assert _spec_pick("hf:data/x.jsonl", "train") == "--extractbench-dataset hf:data/x.jsonl:SPLIT"


def test_rows_of_several_splits_are_named_by_split_and_given_ids() -> None:
    datasets = pytest.importorskip("datasets")
    one = datasets.Dataset.from_list([{"text": "a"}, {"text": "b"}])
    assert list(iter_hf_rows(one)) == [("row 1", {"text": "a"}), ("row 2", {"text": "b"})]
    assert list(iter_hf_rows(datasets.DatasetDict({"train": one}))) == [
        ("row 1", {"text": "a"}), ("row 2", {"text": "b"}),
    ]  # fmt: skip
    both = datasets.DatasetDict({"train": one, "test": datasets.Dataset.from_list([{"text": "c", "id": "k"}])})
    assert list(iter_hf_rows(both)) == [
        ("train row 1", {"text": "a", "id": "train-1"}),
        ("train row 2", {"text": "b", "id": "train-2"}),
        ("test row 1", {"text": "c", "id": "k"}),
    ]


def test_a_local_file_through_datasets_uses_the_cache_folder_asked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("datasets")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # never the network
    monkeypatch.chdir(tmp_path)
    _write(tmp_path / "d.jsonl", {"id": "a", "text": "t", "schema": {"type": "object"}, "expected": {}})
    cache = tmp_path / "cache"
    dataset = load_source("hf:d.jsonl", base_dir=tmp_path, cache_dir=cache)
    assert [s.id for s in dataset.samples] == ["a"]
    assert cache.is_dir() and any(cache.iterdir())  # datasets wrote its cache there
    assert not (tmp_path / "None").exists()


# --- rows -> samples ---


def test_a_problem_knows_its_line_number_only_when_its_location_ends_in_one() -> None:
    assert DatasetProblem("f", "line 12", "m").lineno == 12
    assert DatasetProblem("f", "test/a.json", "m").lineno == 0


def test_a_row_that_cannot_be_read_names_its_top_level_field() -> None:
    deep = row_error("f", "line 3", JsonInputError("nested too deeply", path="$.expected[2].x", sample_id="s"))
    assert (deep.location, deep.message, deep.sample_id, deep.field) == (
        "line 3", "$.expected[2].x: nested too deeply", "s", "expected",
    )  # fmt: skip
    bare = row_error("f", "line 1", JsonInputError("bad bytes"))
    assert (bare.message, bare.field) == ("bad bytes", None)
    assert row_error("f", "line 1", JsonInputError("odd", path="$.")).field is None  # an empty name is no field
    assert row_error("f", "line 1", JsonInputError("bad", column=4)).message == "bad (column 4)"
    decode = row_error("f", "line 2", json.JSONDecodeError("Expecting value", "{x", 1))
    assert (decode.message, decode.field) == ("not valid JSON: Expecting value (column 2)", None)
    other = row_error("f", "line 2", ValueError("z" * 500))
    assert other.message == "z" * 299 + "…"  # clipped to 300 characters, the last one the ellipsis


def test_samples_of_one_schema_share_one_checked_schema() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer", "maximum": 2**70}}}
    rows = [
        ("line 1", {"id": "a", "text": "t", "schema": json.dumps({"type": "object"}), "expected": {}}),
        ("line 2", {"id": "b", "text": "t", "schema": json.dumps({"type": "object"}), "expected": {}}),
        ("line 3", {"id": "c", "text": "t", "schema": {"type": "array"}, "expected": []}),
        ("line 4", {"id": "d", "text": "t", "schema": {"type": "array"}, "expected": []}),
        # an integer orjson cannot write: the schema is checked alone, not shared
        ("line 5", {"id": "e", "text": "t", "schema": schema, "expected": {"n": 1}}),
    ]
    a, b, c, d, e = parse_rows("d", "f", rows).samples
    assert a.schema is b.schema and c.schema is d.schema and a.schema == {"type": "object"}
    assert e.schema == schema


def test_a_row_is_checked_without_a_schema_cache_and_names_three_schema_errors() -> None:
    schema = {"type": 5, "minimum": "x", "maxLength": -1, "required": 3, "properties": 4}
    ok, _ = sample_from_row(
        {"id": "a", "text": "t", "schema": {"type": "object"}, "expected": {}}, source="f", location="line 1", index=1
    )
    assert ok is not None and ok.id == "a"
    bad, (problem,) = sample_from_row(
        {"id": "a", "text": "t", "schema": schema, "expected": {}}, source="f", location="line 1", index=1
    )
    assert bad is None and problem.message.startswith("not a valid JSON Schema: ")
    assert problem.message.count("; ") == 2  # the first three of its five errors


def test_a_gold_too_deep_or_not_finite_is_a_problem_of_its_field() -> None:
    deep: object = 1
    for _ in range(200):
        deep = [deep]
    base = {"id": "a", "text": "t", "schema": {}}
    for gold, words in ((deep, "nested too deeply (more than 128 levels)"), ({"x": math.nan}, "not finite")):
        sample, (problem,) = sample_from_row({**base, "expected": gold}, source="f", location="line 1", index=1)
        assert sample is None and problem.field == "expected" and words in problem.message


def test_what_an_extractor_sees_names_the_topic_or_none() -> None:
    assert Sample("a", "t", {}, {}, meta={"topic": "tax"}).view().topic == "tax"
    assert Sample("a", "t", {}, {}, meta={"topic": None}).view().topic == ""
    assert Sample("a", "t", {}, {}).view().topic == ""


def test_a_split_after_a_local_file_name_is_that_file_s_split(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("datasets")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    row = {"text": "t", "schema": {"type": "object"}, "expected": {}}
    _write(tmp_path / "d.jsonl", {**row, "id": "from-d"})
    _write(tmp_path / "d.jsonl:other", {**row, "id": "from-other"})  # a file whose own name has the colon
    assert [s.id for s in load_source("hf:d.jsonl:train", base_dir=tmp_path).samples] == ["from-d"]
    # a file with no such split: datasets names only "train" for a single data file
    with pytest.raises(DatasetSourceError, match="could not load"):
        load_source("hf:d.jsonl:test", base_dir=tmp_path)


def test_documents_of_a_local_datasets_folder_are_read_from_that_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("datasets")
    from pdfs import make_pdf

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    folder = tmp_path / "ds"
    folder.mkdir()
    (folder / "doc.pdf").write_bytes(make_pdf(["Invoice 42"]))
    _write(folder / "data.jsonl", {"id": "a", "document": "doc.pdf", "schema": {"type": "object"}, "expected": {}})
    cache = tmp_path / "cache"
    dataset = load_source("hf:ds", base_dir=tmp_path, cache_dir=cache)
    assert dataset.problems == [] and "Invoice 42" in dataset.samples[0].text
    assert cache.is_dir() and any(cache.iterdir())


# --- the HuggingFace Hub's reachability (the loading itself runs in a fresh interpreter: test_loaders.py) ---


@pytest.mark.parametrize(
    ("values", "offline"),
    [
        ({"HF_HUB_OFFLINE": " Yes "}, True),
        ({"HF_DATASETS_OFFLINE": "on"}, True),
        ({"HF_HUB_OFFLINE": "1"}, True),
        ({"HF_HUB_OFFLINE": "TRUE"}, True),
        ({"HF_HUB_OFFLINE": "0", "HF_DATASETS_OFFLINE": "no"}, False),
        ({}, False),
    ],
)
def test_offline_mode_is_either_variable_set_to_a_yes(
    values: dict[str, str], offline: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE"):
        monkeypatch.delenv(name, raising=False)
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    assert _hub_offline() is offline


def test_the_hub_endpoint_is_the_environment_s_without_a_trailing_slash(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HF_ENDPOINT", raising=False)
    assert hub_endpoint() == "https://huggingface.co"
    monkeypatch.setenv("HF_ENDPOINT", "http://mirror.local/hf//")
    assert hub_endpoint() == "http://mirror.local/hf"


class _Answers404(http.server.BaseHTTPRequestHandler):
    asked: list[str] = []

    def do_HEAD(self) -> None:  # noqa: N802 - the http.server name
        _Answers404.asked.append(self.path)
        self.send_response(404)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        """Quiet."""


def test_a_hub_that_answers_is_reachable_and_one_that_refuses_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Answers404)
    serve_in_thread(server)
    try:
        monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{server.server_port}/")
        assert check_hub_reachable("hf:x/y") is None  # an HTTP error is an answer
        assert _Answers404.asked == ["/api/datasets?limit=1"]
    finally:
        server.shutdown()
        server.server_close()
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{server.server_port}")  # nothing listens there now
    with pytest.raises(DatasetSourceError, match=r"dataset 'hf:x/y': the HuggingFace Hub \(http://127\.0\.0\.1:"):
        check_hub_reachable("hf:x/y")
