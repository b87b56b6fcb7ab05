"""The run document's one reader and writer: format versions (older read, newer and unknown refused by name),
compact samples.jsonl read back whole, old full-form files, and a RunResult of the same types whether
evaluate() made it or load_run() read it."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from pytest_extractbench import ModelResponse, SampleRecord, evaluate, load_run, score_sample
from pytest_extractbench.core import files, rundoc
from pytest_extractbench.core.rundir import RunDirError
from pytest_extractbench.core.rundoc import RunDocError
from pytest_extractbench.dataset.records import TrackRecord
from pytest_extractbench.gating import baseline as baselines
from pytest_extractbench.gating.regression import CheckResult
from pytest_extractbench.scoring.result import FieldCounts

ROOT = Path(__file__).resolve().parents[2]
DEMO, WEAK = ROOT / "fixtures/predictions/demo.jsonl", ROOT / "fixtures/predictions/weak.jsonl"


# -- format versions -------------------------------------------------------------------------------------------


def _metrics(tmp_path: Path, version: Any) -> Path:
    document: dict[str, Any] = {"models": {"m": {"num_samples": 0}}, "run": {}}
    if version is not ...:
        document["format_version"] = version
    (tmp_path / "metrics.json").write_text(json.dumps(document), encoding="utf-8")
    return tmp_path


def _baseline(tmp_path: Path, version: Any) -> Path:
    path = tmp_path / "0001_main.json"
    document: dict[str, Any] = {"kind": rundoc.BASELINE_KIND, "name": "main", "models": {}}
    if version is not ...:
        document["format_version"] = version
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def _cassette(tmp_path: Path, version: Any) -> Path:
    path = tmp_path / "cassette.jsonl"
    header: dict[str, Any] = {"format": rundoc.CASSETTE_FORMAT, "dataset": "d", "dataset_hash": "h", "answers": 0}
    if version is not ...:
        header["version"] = version
    path.write_text(json.dumps(header) + "\n", encoding="utf-8")
    return path


READERS = {
    rundoc.RUN: (_metrics, rundoc.read_metrics, "metrics.json"),
    rundoc.BASELINE: (_baseline, rundoc.read_baseline, "0001_main.json"),
    rundoc.CASSETTE: (_cassette, rundoc.read_cassette, "cassette.jsonl"),
}


@pytest.mark.parametrize("kind", sorted(READERS))
def test_every_version_this_release_reads_loads(tmp_path: Path, kind: str) -> None:
    write, read, _ = READERS[kind]
    assert rundoc.FORMAT_VERSION[kind] == rundoc.READS[kind][-1]  # the current one is read too
    for version in rundoc.READS[kind]:
        folder = tmp_path / f"v{version}"
        folder.mkdir()
        read(write(folder, version))


@pytest.mark.parametrize("kind", sorted(READERS))
def test_a_newer_version_is_refused_naming_file_version_and_the_versions_read(tmp_path: Path, kind: str) -> None:
    write, read, name = READERS[kind]
    newer = rundoc.FORMAT_VERSION[kind] + 1
    with pytest.raises(RunDocError) as caught:
        read(write(tmp_path, newer))
    message = str(caught.value)
    reads = ", ".join(map(str, rundoc.READS[kind]))
    assert name in message and f"format_version {newer}" in message and "newer pytest-extractbench" in message
    assert f"this release reads {kind} format {reads}" in message
    assert caught.value.version == newer
    assert isinstance(caught.value, RunDirError)  # one hierarchy: callers that catch RunDirError catch it


@pytest.mark.parametrize("kind", sorted(READERS))
@pytest.mark.parametrize("garbage", [0, -1, "2", 1.5, True, None, [1], ...], ids=repr)
def test_an_unknown_or_missing_version_is_refused(tmp_path: Path, kind: str, garbage: Any) -> None:
    write, read, name = READERS[kind]
    with pytest.raises(RunDocError, match=f"{name}.*(not supported|no format version).*this release reads {kind}"):
        read(write(tmp_path, garbage))


def test_garbage_instead_of_a_document_is_one_error_naming_the_file(tmp_path: Path) -> None:
    for text, words in [
        ("{not json", "line 1: not valid JSON"),
        ("[1, 2]", "a list, not an object"),
        ('{"format_version": 2}', "no 'models' object"),
        ('{"models": {"m": 3}, "format_version": 2}', "models.m is not an object"),
    ]:
        (tmp_path / "metrics.json").write_text(text, encoding="utf-8")
        with pytest.raises(RunDocError, match=f"metrics.json: {words}"):
            rundoc.read_metrics(tmp_path)
    (tmp_path / "samples.jsonl").write_text('{"model": "m", "sample_id": "a"}\n[1]\n', encoding="utf-8")
    with pytest.raises(RunDocError, match=r"samples.jsonl:2: not a JSON record"):
        list(rundoc.iter_samples(tmp_path / "samples.jsonl"))


def test_the_command_line_says_a_run_is_too_new_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from pytest_extractbench.cli import main

    _metrics(tmp_path, 99)
    assert main(["report", "--results-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "format_version 99" in err and "upgrade pytest-extractbench" in err


def test_a_written_run_carries_this_release_s_version(tmp_path: Path) -> None:
    rundoc.write_metrics(tmp_path, {"format_version": 1, "models": {}})
    assert json.loads((tmp_path / "metrics.json").read_text())["format_version"] == rundoc.FORMAT_VERSION[rundoc.RUN]
    assert rundoc.read_metrics(tmp_path)["track"] == "extraction"  # the guaranteed keys are filled
    guaranteed = {"dataset": {"name": None}, "options": {}, "problems": [], "started_at": None, "live": None}
    assert rundoc.read_metrics(tmp_path)["run"] == guaranteed


def test_a_foreign_run_s_problems_get_every_key_a_report_reads(tmp_path: Path) -> None:
    from pytest_extractbench.report.run_sections import problems_view

    foreign = {"message": "no schema", "source": "d.jsonl"}
    rundoc.write_metrics(
        tmp_path, {"models": {}, "run": {"problems": [foreign, "a bare string", {"severity": "error"}]}}
    )
    problems = rundoc.read_metrics(tmp_path)["run"]["problems"]
    assert [set(p) for p in problems] == [set(rundoc.PROBLEM_DEFAULTS)] * 3
    assert [(p["severity"], p["message"]) for p in problems] == [
        ("warning", "no schema"),
        ("warning", "a bare string"),
        ("error", ""),
    ]
    view = problems_view(rundoc.read_metrics(tmp_path))
    assert view is not None and view["errors"] == 1 and view["shown"][0]["severity"] == "error"
    assert {"severity": "warning", "where": "d.jsonl", "what": "", "message": "no schema"} in view["shown"]


# -- compact samples.jsonl -------------------------------------------------------------------------------------


def test_the_defaults_are_the_value_types_defaults() -> None:
    assert ModelResponse().as_dict() == rundoc.RESPONSE_DEFAULTS
    assert tuple(FieldCounts._fields) == rundoc.COUNT_KEYS and set(FieldCounts()) == {0}
    record = SampleRecord("m", "a", score_sample("{}", {}, {"type": "object"}, sample_id="a")).to_dict()
    assert {k: record[k] for k in rundoc.RECORD_DEFAULTS} == rundoc.RECORD_DEFAULTS
    track = TrackRecord("m", "a", "toolcall", {}).to_dict()
    assert {k: track[k] for k in rundoc.TRACK_RECORD_DEFAULTS} == rundoc.TRACK_RECORD_DEFAULTS


def _full_record(
    output: Any,
    response: dict[str, Any],
    passed: bool,
    failure: str | None,
    meta: dict[str, Any],
    diagnostics: dict[str, Any],
    error: str | None,
) -> dict[str, Any]:
    gold = {"name": "Ann", "age": 41, "tags": ["a", "b"], "address": {"city": "Oslo"}}
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "age": {"type": "integer"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "address": {"type": "object"},
        },
    }
    score = score_sample(output, gold, schema, sample_id="s-1")
    return SampleRecord("model", "s-1", score, meta, response, passed, failure, diagnostics, error).to_dict()


def test_a_record_in_full_form_and_compact_form_reads_the_same(tmp_path: Path) -> None:
    """An old (full-form) samples.jsonl still loads, and the compact one reads back to the same records."""
    records = [
        _full_record('{"name": "Ann", "age": 41}', ModelResponse(content="x").as_dict(), True, None, {}, {}, None),
        _full_record(
            "{oops",
            ModelResponse(
                error_class="timeout", error="slow", attempts=3, latency_s=1.5, usage={"prompt_tokens": 3}
            ).as_dict(),
            False,
            "no output",
            {"t": 1},
            {"hallucination_types": []},
            "boom",
        ),
    ]
    files.write_jsonl(tmp_path / "full.jsonl", records)  # what format 1 wrote
    rundoc.write_samples(tmp_path / "compact.jsonl", records)
    assert list(rundoc.iter_samples(tmp_path / "full.jsonl")) == records
    assert list(rundoc.iter_samples(tmp_path / "compact.jsonl")) == records
    assert (tmp_path / "compact.jsonl").stat().st_size < 0.8 * (tmp_path / "full.jsonl").stat().st_size
    first = json.loads((tmp_path / "compact.jsonl").read_text().splitlines()[0])
    assert "passed" not in first and "latency_s" not in first["response"] and "sample_id" not in first["score"]


def test_an_old_full_form_run_directory_loads(tmp_path: Path) -> None:
    """A run directory as format 1 wrote it (full records, format_version 1) reads through load_run."""
    new = evaluate("bundled", predictions=str(DEMO), output=tmp_path / "new", sla="none", rootdir=tmp_path)
    old = tmp_path / "old"
    old.mkdir()
    document = json.loads((new.run_dir / "metrics.json").read_text())
    files.write_json(old / "metrics.json", {**document, "format_version": 1})
    files.write_jsonl(old / "samples.jsonl", (r.to_dict() for r in new.records))
    assert len((old / "samples.jsonl").read_bytes()) > len((new.run_dir / "samples.jsonl").read_bytes())
    loaded = load_run(old)
    assert [r.to_dict() for r in loaded.records] == [r.to_dict() for r in load_run(new.run_dir).records]
    assert loaded.metrics == new.metrics


def test_a_track_record_round_trips(tmp_path: Path) -> None:
    full = TrackRecord(
        "m",
        "a",
        "repair",
        {"passed": False, "failure": "x"},
        {"k": 1},
        ModelResponse(content="{}").as_dict(),
        False,
        "x",
        None,
        ["line"],
    ).to_dict()
    bare = TrackRecord("m", "b", "repair", {}).to_dict()
    bare["response"] = ModelResponse().as_dict()
    for record in (full, bare):
        assert rundoc.expand(json.loads(files.jsonl_line(rundoc.compact(record)))) == record


try:
    from hypothesis import given
    from hypothesis import strategies as st
except ImportError:  # hypothesis is a dev dependency
    given = None

if given is not None:
    TEXT = st.text(max_size=8)
    SCALAR = st.none() | st.booleans() | st.integers(-3, 3) | st.floats(allow_nan=False, allow_infinity=False) | TEXT
    OUTPUTS = st.sampled_from(
        [
            None,
            "{oops",
            "[]",
            '{"name": "Ann"}',
            '{"name": "Ann", "age": "41"}',
            '{"name": "Ann", "age": 41, "tags": ["a", "b"], "address": {"city": "Oslo"}}',
            '{"name": 1, "extra": 2, "tags": "a"}',
        ]
    )
    RESPONSE = st.builds(
        ModelResponse,
        content=OUTPUTS,
        error_class=st.none() | st.sampled_from(["timeout", "missing"]),
        error=st.none() | TEXT,
        latency_s=st.none() | st.floats(0, 10),
        usage=st.dictionaries(TEXT, st.integers(0, 9)),
        finish_reason=st.none() | st.sampled_from(["stop", "length"]),
        attempts=st.integers(0, 3),
        cached=st.booleans(),
        wait_s=st.none() | st.just(0.0),
        tool_calls=st.none() | st.just([]),
        context=st.none() | st.just({"prompt_tokens": 9, "limit": None}),
        origin=st.none() | st.just({"source": "replay"}),
    )

    @given(
        RESPONSE,
        st.booleans(),
        st.none() | TEXT,
        st.dictionaries(TEXT, SCALAR, max_size=3),
        st.dictionaries(TEXT, SCALAR | st.lists(SCALAR, max_size=2), max_size=3),
        st.none() | TEXT,
    )
    def test_any_record_compact_then_read_is_the_full_record(
        response: ModelResponse, passed: bool, failure: Any, meta: dict, diagnostics: dict, error: Any
    ) -> None:
        full = _full_record(response.content, response.as_dict(), passed, failure, meta, diagnostics, error)
        line = files.jsonl_line(rundoc.compact(full))  # what write_samples writes
        assert rundoc.expand(json.loads(line)) == json.loads(files.jsonl_line(full))
        assert len(line) <= len(files.jsonl_line(full))


# -- RunResult: the same types however it was made -------------------------------------------------------------


def _types(value: Any) -> Any:
    """The shape of ``value``: its type, and its items' shapes (dict keys kept)."""
    if isinstance(value, dict):
        return {k: _types(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [_types(v) for v in value])
    if dataclasses.is_dataclass(value):
        return (type(value).__name__, _types(dataclasses.asdict(value)))
    return type(value).__name__


def test_evaluate_and_load_run_give_the_same_types_and_values(tmp_path: Path) -> None:
    evaluate(
        "bundled", predictions={"m": str(DEMO)}, output=tmp_path / "base", save="main", sla="none", rootdir=tmp_path
    )
    made = evaluate(
        "bundled",
        predictions={"m": str(WEAK)},
        output=tmp_path / "run",
        compare="main",
        compare_fail=["eqs:-0.02"],
        sla="target",
        require=["eqs>=0.99"],
        rootdir=tmp_path,
    )
    read = load_run(tmp_path / "run")
    assert made.regressions and all(type(check) is CheckResult for check in made.regressions)
    assert read.regressions == made.regressions
    assert _types(read.regressions) == _types(made.regressions)
    assert read.metrics == made.metrics and _types(read.metrics) == _types(made.metrics)
    assert read.run_level == made.run_level and _types(read.run_level) == _types(made.run_level)
    assert read.checks == made.checks and read.requirements == made.requirements and made.requirements
    assert (
        (read.gate_passed, read.sla_passed, read.requirements_passed)
        == (made.gate_passed, made.sla_passed, made.requirements_passed)
        == (False, False, False)
    )


def test_a_baseline_saved_is_read_back_by_the_one_reader(tmp_path: Path) -> None:
    evaluate(
        "bundled", predictions={"m": str(DEMO)}, output=tmp_path / "base", save="main", sla="none", rootdir=tmp_path
    )
    path = baselines.resolve("main", baselines.baseline_dir(tmp_path), base_dir=tmp_path)
    document = rundoc.read_baseline(path)
    assert document["format_version"] == rundoc.FORMAT_VERSION[rundoc.BASELINE]
    assert len(baselines.load(path).models["m"]) == len(document["models"]["m"]["samples"]) == 52
    with pytest.raises(RunDocError, match="no baseline 'nope'"):  # BaselineError, one of the reader's errors
        baselines.resolve("nope", baselines.baseline_dir(tmp_path), base_dir=tmp_path)
