"""One run from Python: evaluate() and load_run() give what pytest --extractbench gives, the docs'
"Use from Python" code (docs/guides/python.md) runs as written, and a plugin's source hook receives the run context."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from _docpages import blocks, read

from pytest_extractbench import ModelResponse, RunResult, UsageProblem, evaluate, load_run
from pytest_extractbench.core.rundoc import iter_samples

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "fixtures" / "predictions" / "demo.jsonl"
WEAK = ROOT / "fixtures" / "predictions" / "weak.jsonl"
HEADLINE = (
    "extraction_quality_score",
    "schema_validity_rate",
    "field_f1_partial",
    "field_f1_strict",
    "hallucination_rate",
    "type_accuracy",
    "exact_match_rate",
)


def guide_blocks() -> list[str]:
    """The Python blocks of docs/guides/python.md ("Use from Python"), in order."""
    return blocks(read("guides/python.md"), "python")


def pytest_run(pytester: pytest.Pytester, *args: str) -> dict:
    result = pytester.runpytest("-p", "no:randomly", "--extractbench", "--extractbench-output", "out", *args)
    assert result.ret in (0, 1), result.stderr.str()
    return json.loads((pytester.path / "out" / "metrics.json").read_text())


@pytest.mark.slow
def test_the_readme_code_runs_and_says_what_pytest_says(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    shutil.copytree(ROOT / "fixtures", pytester.path / "fixtures")
    monkeypatch.chdir(pytester.path)
    namespace: dict = {}
    blocks = guide_blocks()
    assert len(blocks) >= 4
    for block in blocks:
        exec(compile(block, "docs/guides/python.md", "exec"), namespace)  # noqa: S102 - our own docs
    demo, regex_run, loaded = namespace["demo"], namespace["result"], namespace["run"]
    # the pytest run of the same inputs is the oracle
    expected = pytest_run(pytester, "--extractbench-predictions", "fixtures/predictions/demo.jsonl")["models"]
    for name in HEADLINE:
        assert demo.metric(name) == pytest.approx(expected["predictions"][name])
        assert loaded.metric(name) == pytest.approx(expected["predictions"][name])
    # what the page's comments claim
    assert round(demo.metric("extraction_quality_score"), 3) == 0.974 and demo.gate_passed
    assert regex_run.models == ["regex_extractor"] and 0.1 < regex_run.metric("extraction_quality_score") < 0.3
    assert loaded.checks["predictions"][0].describe() == "eqs = 0.974 (needs >= 0.750): held"
    assert (pytester.path / "runs" / "regex" / "responses.jsonl").is_file()
    # the DataFrames: one row per sample, one per field, counted from samples.jsonl as the oracle
    records = list(iter_samples(pytester.path / "runs" / "demo" / "samples.jsonl"))
    samples, fields = namespace["samples"], namespace["fields"]
    assert len(samples) == len(records) == 52 and set(samples.columns) >= {"model", "sample_id", "eqs", "passed"}
    assert dict(zip(samples.sample_id, samples.eqs)) == {r["sample_id"]: r["score"]["eqs"] for r in records}
    assert len(fields) == sum(len(r["score"]["fields"]) for r in records)
    missed = sum(f["category"] == "missed" for r in records for f in r["score"]["fields"])
    assert int((fields.category == "missed").sum()) == missed


@pytest.mark.slow
def test_evaluate_matches_pytest_sample_by_sample(pytester: pytest.Pytester, tmp_path: Path) -> None:
    document = pytest_run(
        pytester,
        "--extractbench-predictions",
        f"demo={DEMO}",
        "--extractbench-predictions",
        f"weak={WEAK}",
        "--extractbench-sla",
        "target",
    )
    result = evaluate(predictions={"demo": DEMO, "weak": WEAK}, sla="target", output=tmp_path / "run", rootdir=tmp_path)
    assert result.models == ["demo", "weak"]
    for model in ("demo", "weak"):
        for name in HEADLINE:
            assert result.metric(name, model) == pytest.approx(document["models"][model][name])
        assert result.metrics[model]["sla"]["passed"] == document["models"][model]["sla"]["passed"]
    by_pytest = list(iter_samples(pytester.path / "out" / "samples.jsonl"))
    by_python = list(iter_samples(tmp_path / "run" / "samples.jsonl"))
    assert [(r["model"], r["sample_id"], r["score"]["eqs"], r["passed"]) for r in by_pytest] == [
        (r["model"], r["sample_id"], r["score"]["eqs"], r["passed"]) for r in by_python
    ]
    assert result.gate_passed == (
        document["models"]["demo"]["sla"]["passed"] and document["models"]["weak"]["sla"]["passed"]
    )


@pytest.mark.slow
def test_load_run_reads_back_a_pytest_run(pytester: pytest.Pytester) -> None:
    document = pytest_run(pytester, "--extractbench-predictions", f"weak={WEAK}")
    loaded = load_run(pytester.path / "out")
    assert isinstance(loaded, RunResult) and loaded.track == "extraction"
    assert loaded.metrics == document["models"]
    assert len(loaded.records) == document["run"]["num_records"] == 52
    assert not loaded.gate_passed  # the weak outputs miss the minimum tier
    assert [c.metric for c in loaded.checks["weak"] if c.passed is False]
    assert {p.name for p in loaded.report_files} >= {"summary.md", "metrics.csv"}


@pytest.mark.slow
def test_every_sample_is_accounted_for_when_the_extractor_fails(tmp_path: Path) -> None:
    from pytest_extractbench import load_dataset

    gold = {s.id: s.expected for s in load_dataset("bundled").samples}  # an oracle: the extractor never sees the gold

    def flaky(sample):
        if sample.id.endswith(("1", "3")):
            raise ValueError(f"no text for {sample.id}")
        if sample.id.endswith("5"):
            return ModelResponse(content=json.dumps(gold[sample.id]), latency_s=0.5)
        return json.dumps(gold[sample.id])

    result = evaluate(extractor=flaky, output=tmp_path / "run", rootdir=tmp_path, sla="none", sample=20, seed=7)
    failing = sorted(r.sample_id for r in result.records if not r.passed)
    assert failing == sorted(r.sample_id for r in result.records if r.sample_id.endswith(("1", "3")))
    assert len(result.records) == result.metric("num_samples") == 20
    outcomes = result.metric("performance")["reliability"]["outcome_counts"]
    assert outcomes["extractor_error"] == len(failing)
    assert result.metric("schema_validity_rate") == pytest.approx((20 - len(failing)) / 20)


def test_bad_options_raise_usage_problems_naming_them(tmp_path: Path) -> None:
    with pytest.raises(UsageProblem, match="unknown option 'samples'"):
        evaluate(predictions=DEMO, samples=3, rootdir=tmp_path)
    with pytest.raises(UsageProblem, match="sample='many'"):
        evaluate(predictions=DEMO, sample="many", rootdir=tmp_path)
    with pytest.raises(UsageProblem, match="no such file"):
        evaluate(predictions=tmp_path / "missing.jsonl", rootdir=tmp_path)
    with pytest.raises(UsageProblem, match="a run directory"):
        load_run(tmp_path)


def test_a_plugin_source_receives_the_run_context(pytester: pytest.Pytester) -> None:
    pytester.makeconftest("""
        import json
        from pytest_extractbench import ModelResponse

        SEEN = {}

        class GoldSource:
            def __init__(self, context):
                self.models = context.models()
                self.ids = [s.id for s in context.dataset.samples]
            def prepare(self, work):
                pass
            def response(self, model, sample):
                return ModelResponse(content=json.dumps(sample.expected))
            def close(self):
                pass

        def pytest_extractbench_make_source(config, context):
            if context.settings.sla != "none":
                return None  # the built-in choice
            source = GoldSource(context)
            (context.run_dir.parent / "seen.json").write_text(json.dumps([source.models, len(source.ids)]))
            return source
    """)
    document = pytest_run(pytester, "--model", "oracle", "--extractbench-sla", "none", "--extractbench-sample", "5")
    assert json.loads((pytester.path / "seen.json").read_text()) == [["oracle"], 5]
    assert document["models"]["oracle"]["extraction_quality_score"] == 1.0


@pytest.mark.slow
def test_load_run_rebuilds_records_with_the_run_s_own_scoring_options(tmp_path: Path) -> None:
    result = evaluate(
        predictions=WEAK, output=tmp_path / "run", rootdir=tmp_path, sla="none", eqs_weights="0.4,0.3,0.2,0.1"
    )
    loaded = load_run(tmp_path / "run")
    assert [r.score.eqs for r in loaded.records] == pytest.approx([r.score.eqs for r in result.records])
    default = evaluate(predictions=WEAK, output=tmp_path / "default", rootdir=tmp_path, sla="none")
    assert [r.score.eqs for r in loaded.records] != pytest.approx([r.score.eqs for r in default.records])


@pytest.mark.slow
def test_to_pandas_rows_and_levels(tmp_path: Path) -> None:
    from pytest_extractbench.core.files import write_jsonl

    dataset, predictions = tmp_path / "d.jsonl", tmp_path / "p.jsonl"
    write_jsonl(
        dataset,
        [
            {"id": "a", "text": "t", "schema": {"type": "object"}, "expected": {"x": 1, "y": "k"}},
            {"id": "b", "text": "t", "schema": {"type": "object"}, "expected": {"x": 2}},
        ],
    )
    write_jsonl(predictions, [{"id": "a", "output": {"x": 1}}, {"id": "b", "output": {"x": 2}}])
    result = evaluate(str(dataset), predictions=str(predictions), output=tmp_path / "run", rootdir=tmp_path, sla="none")
    frame = result.to_pandas()
    assert list(frame.sample_id) == ["a", "b"] and list(frame.model) == ["predictions"] * 2
    assert list(frame.fields_expected) == [2, 1]
    fields = result.to_pandas(level="field")
    # a: x exact, y missed; b: x exact
    assert sorted(zip(fields.sample_id, fields.path, fields.category)) == [
        ("a", "x", "exact"),
        ("a", "y", "missed"),
        ("b", "x", "exact"),
    ]
    assert fields.loc[fields.path == "y", "expected"].tolist() == ["k"]
    with pytest.raises(ValueError, match="level must be 'sample' or 'field'"):
        result.to_pandas(level="cell")


def test_to_pandas_names_the_install_command_without_pandas(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas now raises ImportError
    with pytest.raises(ImportError, match="pip install pandas"):
        RunResult(run_dir=tmp_path).to_pandas()


def test_evaluate_stops_a_regression_check_against_a_baseline_of_other_samples(tmp_path: Path) -> None:
    schema = {"type": "object", "properties": {"name": {"type": "string"}}}
    rows = [{"id": f"s{n}", "text": f"P{n}", "schema": schema, "expected": {"name": f"P{n}"}} for n in range(4)]

    def write(name: str, lines: list[dict]) -> Path:
        (tmp_path / name).write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
        return tmp_path / name

    preds = write("p.jsonl", [{"id": r["id"], "output": r["expected"]} for r in rows])
    evaluate(
        write("d.jsonl", rows), predictions=preds, output=tmp_path / "o1", save="main", sla="none", rootdir=tmp_path
    )
    write("d.jsonl", [r if r["id"] == "s0" else dict(r, text=r["text"] + " edited") for r in rows])
    with pytest.raises(UsageProblem, match=r"only 1 of the baseline's 4 samples are unchanged .*3 changed"):
        evaluate(
            tmp_path / "d.jsonl",
            predictions=preds,
            output=tmp_path / "o2",
            compare="main",
            compare_fail=["eqs:-0.02"],
            sla="none",
            rootdir=tmp_path,
        )
    assert not (tmp_path / "o2" / "metrics.json").exists()
