"""evaluate() takes objects: a loaded Dataset, a HuggingFace Dataset or rows as the dataset; rows or
``{model: rows}`` as the predictions; typed keyword options; ``metric()`` aliases; ``resume=`` named in the
message; a progress callback; and a lambda extractor needs ``model=``."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any, get_type_hints

import pytest

from pytest_extractbench import (
    Dataset,
    EvaluateOptions,
    ExtractbenchError,
    RunResult,
    UnknownMetric,
    UsageProblem,
    evaluate,
    load_dataset,
)
from pytest_extractbench.analysis import catalog
from pytest_extractbench.analysis.resampled import resolve_metric
from pytest_extractbench.config.table import OPTIONS_BY_NAME
from pytest_extractbench.core.files import write_jsonl
from pytest_extractbench.run.context import RunEvents

SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}}}
ROWS = [
    {"id": "a", "text": "Ann Lee, 41", "schema": SCHEMA, "expected": {"name": "Ann Lee", "age": 41}},
    {"id": "b", "text": "Bo Chen, 29", "schema": SCHEMA, "expected": {"name": "Bo Chen", "age": 29}},
]
ANSWERS = [{"id": "a", "output": {"name": "Ann Lee", "age": 41}}, {"id": "b", "output": {"name": "Bo"}}]
# by hand, with the default EQS weights (validity .15, F1 partial .5, type accuracy .2, no hallucination .15):
# a is all right (1.0); b is valid, "Bo" is too far from "Bo Chen" to count and age is missed (F1 0), the one
# field it gives has the right type and nothing is invented: .15 + 0 + .2 + .15 = 0.5
HAND_EQS = {"a": 1.0, "b": 0.5}


def eqs_by_sample(result: RunResult) -> dict[str, float]:
    return {record.sample_id: record.score.eqs for record in result.records}


def run(tmp_path: Path, name: str, dataset: Any, **kwargs: Any) -> RunResult:
    kwargs.setdefault("predictions", ANSWERS)
    return evaluate(dataset, output=tmp_path / name, rootdir=tmp_path, sla="none", **kwargs)


def test_every_form_of_the_dataset_gives_the_same_scores(tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    write_jsonl(tmp_path / "d.jsonl", ROWS)
    hf_rows = [dict(row, schema=json.dumps(row["schema"]), expected=json.dumps(row["expected"])) for row in ROWS]
    forms = {
        "path": tmp_path / "d.jsonl",
        "rows": ROWS,
        "generator": (row for row in ROWS),
        "loaded": load_dataset(str(tmp_path / "d.jsonl")),
        "hf": datasets.Dataset.from_list(hf_rows),  # string columns, as a Hub dataset stores nested JSON
    }
    for name, dataset in forms.items():
        result = run(tmp_path, name, dataset)
        assert eqs_by_sample(result) == pytest.approx(HAND_EQS), name
        assert result.metric("eqs") == pytest.approx(0.75), name


def test_a_datasetdict_is_every_split_and_splits_sharing_ids_are_named(tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    hf_rows = [dict(row, schema=json.dumps(row["schema"]), expected=json.dumps(row["expected"])) for row in ROWS]
    splits = datasets.DatasetDict(
        {"train": datasets.Dataset.from_list(hf_rows[:1]), "test": datasets.Dataset.from_list(hf_rows[1:])}
    )
    splits.save_to_disk(str(tmp_path / "saved-splits"))  # and read back, as a user's load_from_disk() gives it
    for name, dataset in (("object", splits), ("saved", datasets.load_from_disk(str(tmp_path / "saved-splits")))):
        result = run(tmp_path, name, dataset)
        assert eqs_by_sample(result) == pytest.approx(HAND_EQS), name
        assert {r.sample_id: r.meta["location"] for r in result.records} == {"a": "train row 1", "b": "test row 1"}
    shared = datasets.DatasetDict({"test": splits["test"], "validation": splits["test"]})
    with pytest.raises(UsageProblem) as caught:
        run(tmp_path, "shared", shared)
    message = str(caught.value)
    assert "dataset=<datasets.DatasetDict>: splits 'test' and 'validation' share sample ids (such as 'b')" in message
    assert "pick one: dataset=ds['test']" in message and "\n" not in message
    assert not (tmp_path / "shared").exists()  # refused before anything is written


def test_the_package_s_own_loaded_dataset_is_taken_and_left_unchanged(tmp_path: Path) -> None:
    bundled = load_dataset()
    ids = [sample.id for sample in bundled.samples]
    predictions = [{"id": sample.id, "output": sample.expected} for sample in bundled.samples]
    result = run(tmp_path, "loaded", bundled, predictions=predictions, sample=5)
    assert len(result.records) == 5 and result.metric("eqs") == 1.0  # the gold itself scores 1.0
    assert [sample.id for sample in bundled.samples] == ids  # sampling worked on a copy
    by_name = run(tmp_path, "named", "bundled", predictions=predictions, sample=5)
    assert [r.sample_id for r in by_name.records] == [r.sample_id for r in result.records]


def test_bad_rows_are_problems_and_a_row_that_is_no_dict_is_refused(tmp_path: Path) -> None:
    broken = [*ROWS, {"id": "c", "text": "no schema", "expected": {"name": "x"}}]
    result = run(tmp_path, "broken", broken)
    assert sorted(eqs_by_sample(result)) == ["a", "b"]
    skipped = result.document["dataset"]["invalid_samples"]
    assert [(p["sample_id"], p["location"]) for p in skipped] == [("c", "row 3")]
    with pytest.raises(UsageProblem, match=r"dataset row 2: expected a dict .* got str"):
        run(tmp_path, "text", [ROWS[0], "not a row"])
    with pytest.raises(UsageProblem, match="dataset=3: expected a dataset name or path"):
        evaluate(3, predictions=ANSWERS, rootdir=tmp_path)  # type: ignore[arg-type]


def test_predictions_in_memory_by_model_and_mixed_with_files(tmp_path: Path) -> None:
    perfect = [{"id": row["id"], "output": row["expected"]} for row in ROWS]
    write_jsonl(tmp_path / "perfect.jsonl", perfect)
    result = run(tmp_path, "two", ROWS, predictions={"mine": ANSWERS, "gold": tmp_path / "perfect.jsonl"})
    assert result.models == ["gold", "mine"]
    assert result.metric("eqs", "mine") == pytest.approx(0.75) and result.metric("eqs", "gold") == 1.0
    duplicated = run(tmp_path, "dup", ROWS, predictions=[*ANSWERS, {"id": "b", "output": {"name": "Bo Chen"}}])
    assert eqs_by_sample(duplicated) == pytest.approx(HAND_EQS)  # the first row of an id wins, as in a file
    problems = duplicated.document["run"]["problems"]
    assert any(
        p["source"] == "<rows>" and p["location"] == "row 3" and "duplicate id" in p["message"] for p in problems
    ), problems
    saved = run(tmp_path, "saved", ROWS, save="rows")  # a baseline of in-memory answers hashes no file
    assert saved.saved_baseline is not None and saved.saved_baseline.is_file()
    with pytest.raises(UsageProblem, match="predictions=.*expected a path, rows"):
        run(tmp_path, "bad", ROWS, predictions={"mine": 3})


def test_the_typed_options_are_exactly_the_command_line_options() -> None:
    own = {"dataset", "predictions", "model", "base_url", "output", "extractor"}  # evaluate()'s parameters
    assert set(EvaluateOptions.__annotations__) == set(OPTIONS_BY_NAME) - own
    hints = get_type_hints(EvaluateOptions)
    flags = {name for name, spec in OPTIONS_BY_NAME.items() if spec.flag}
    assert {name for name, hint in hints.items() if hint is bool} == flags


def test_metric_takes_the_compare_fail_aliases_and_refuses_unknown_names(tmp_path: Path) -> None:
    entries = {name: n / 100 for n, name in enumerate(metric.name for metric in catalog.metrics())}
    entries.pop("semantic_similarity")  # not measured by this run
    result = RunResult(run_dir=tmp_path, metrics={"m": {**entries, "num_samples": 2}})
    for alias, target in catalog.aliases().items():
        assert result.metric(alias) == entries[target], alias
        if target in catalog.resampled():  # what --extractbench-compare-fail takes means the same metric
            assert resolve_metric(alias).name == target, alias
    assert result.metric("EQS") == entries["extraction_quality_score"]
    assert result.metric(" Field-F1 ") == entries["field_f1_partial"]
    assert result.metric("num_samples") == 2
    assert result.metric("semantic_similarity") is None  # a catalog metric this run did not measure
    with pytest.raises(UnknownMetric, match=r"unknown metric 'eqs_score'; known: .*\beqs\b.*num_samples") as caught:
        result.metric("eqs_score")
    assert isinstance(caught.value, KeyError) and isinstance(caught.value, ExtractbenchError)
    assert str(caught.value).startswith("unknown metric")  # not KeyError's quoted repr


def test_a_second_run_into_the_same_output_is_told_about_resume(tmp_path: Path) -> None:
    first = run(tmp_path, "out", ROWS)
    with pytest.raises(UsageProblem) as caught:
        evaluate(ROWS, predictions=ANSWERS, output="out", rootdir=tmp_path, sla="none")
    message = str(caught.value)
    assert "resume='out'" in message and "--extractbench" not in message, message
    again = evaluate(ROWS, predictions=ANSWERS, resume="out", rootdir=tmp_path, sla="none")
    assert again.run_dir == first.run_dir and eqs_by_sample(again) == eqs_by_sample(first)


def test_progress_is_called_after_each_scored_sample_and_events_still_arrive(tmp_path: Path) -> None:
    calls: list[tuple[int, int, str, str]] = []
    scored: list[str] = []

    class Events(RunEvents):
        def sample_scored(self, record: Any) -> None:
            scored.append(record.sample_id)

    result = run(
        tmp_path,
        "progress",
        ROWS,
        predictions={"x": ANSWERS, "y": ANSWERS},
        events=Events(),
        progress=lambda done, total, record: calls.append((done, total, record.model, record.sample_id)),
    )
    assert calls == [(1, 4, "x", "a"), (2, 4, "x", "b"), (3, 4, "y", "a"), (4, 4, "y", "b")]
    assert scored == [r.sample_id for r in result.records] == ["a", "b", "a", "b"]
    with pytest.raises(UsageProblem, match="progress="):
        run(tmp_path, "bad", ROWS, progress="50%")  # type: ignore[arg-type]


def test_an_extractor_without_a_name_needs_model(tmp_path: Path) -> None:
    gold = {row["id"]: row["expected"] for row in ROWS}

    def lookup(sample: Any, table: dict[str, Any]) -> Any:
        return table[sample.id]

    for nameless in (lambda sample: gold[sample.id], functools.partial(lookup, table=gold)):
        with pytest.raises(UsageProblem, match="needs model='NAME'"):
            evaluate(ROWS, extractor=nameless, rootdir=tmp_path, output=tmp_path / "never")
        assert not (tmp_path / "never").exists()  # refused before anything is written
    named = evaluate(
        ROWS,
        extractor=lambda sample: gold[sample.id],
        model="lookup",
        output=tmp_path / "lambda",
        rootdir=tmp_path,
        sla="none",
    )
    assert named.models == ["lookup"] and named.metric("eqs") == 1.0

    class Extractor:
        def __call__(self, sample: Any) -> Any:
            return gold[sample.id]

    assert run(tmp_path, "instance", ROWS, predictions=None, extractor=Extractor()).models == ["Extractor"]


def test_a_dataset_object_keeps_its_problems_in_the_run(tmp_path: Path) -> None:
    write_jsonl(tmp_path / "d.jsonl", [*ROWS, {"id": "a", "text": "again", "schema": SCHEMA, "expected": {}}])
    loaded = load_dataset(str(tmp_path / "d.jsonl"))
    assert isinstance(loaded, Dataset) and len(loaded.problems) == 1  # the duplicate id
    result = run(tmp_path, "problems", loaded)
    listed = result.document["run"]["problems"]
    assert any("duplicate id" in p["message"] for p in listed), listed
