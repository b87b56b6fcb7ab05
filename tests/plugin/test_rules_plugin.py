"""Schema-driven rules and diagnostics through pytest: hook comparators, config problems, xdist parity."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from benchrun import OFFLINE_ARGS, BenchRun

from pytest_extractbench.core.rundoc import iter_samples

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "x-eval-compare": "exact", "x-eval-transform": ["strip", "lowercase"]},
        "born": {"type": "string", "x-eval-compare": "year"},
        "ref": {"type": "string", "x-eval-skip": True},
        "city": {"type": "string"},
        "items": {
            "type": "array",
            "x-eval-align": {"match_by": "key_field", "key": "sku"},
            "items": {"type": "object", "properties": {"sku": {"type": "string"}, "qty": {"type": "integer"}}},
        },
    },
    "required": ["name"],
}
SAMPLES = [
    {
        "id": f"s{i}",
        "text": f"Ann Lee{i} was born 1980-0{i + 1}-02 in Oslo. Order A-{i}: 2 pcs; B-{i}: 1 pc.",
        "schema": SCHEMA,
        "expected": {
            "name": f"Ann Lee{i}",
            "born": f"1980-0{i + 1}-02",
            "ref": f"R{i}",
            "items": [{"sku": f"A-{i}", "qty": 2}, {"sku": f"B-{i}", "qty": 1}],
        },
    }
    for i in range(4)
]
OUTPUTS = [
    {
        "id": f"s{i}",
        "output": {
            "name": f"  ANN LEE{i} ",
            "born": "1980",
            "ref": "other",
            "city": "Oslo",
            "items": [{"sku": f"B-{i}", "qty": 1}, {"sku": f"A-{i}", "qty": 2}],
        },
    }
    for i in range(4)
]
CONFTEST = """
def pytest_extractbench_comparators(config):
    def year(expected, predicted, params, options):
        return 1.0 if str(expected)[:4] == str(predicted)[:4] else 0.0
    return {"year": year}
"""


def write(pytester: pytest.Pytester, samples: list, outputs: list) -> None:
    (pytester.path / "data.jsonl").write_text("".join(json.dumps(s) + "\n" for s in samples))
    (pytester.path / "preds.jsonl").write_text("".join(json.dumps(o) + "\n" for o in outputs))


ARGS = OFFLINE_ARGS


def isolated(run: BenchRun, *args: str, out: str = "out") -> pytest.RunResult:
    """A run in its own process: comparators a conftest registers stay registered in the process that ran it,
    and these tests check which rules a run knows."""
    return run(*ARGS, *args, out=out, subprocess=True)


def models(pytester: pytest.Pytester, out: str = "out") -> dict:
    return json.loads((pytester.path / out / "metrics.json").read_text())["models"]


@pytest.mark.slow
def test_rules_hook_comparators_and_diagnostics_agree_with_and_without_xdist(
    run: BenchRun, pytester: pytest.Pytester
) -> None:
    pytester.makeconftest(CONFTEST)
    write(pytester, SAMPLES, OUTPUTS)
    isolated(run, "-p", "no:xdist").assert_outcomes(passed=4)
    serial = models(pytester)["predictions"]
    # name (transforms), born (hook comparator "year") and the 4 item fields (key_field undoes the swap) are
    # exact; ref is skipped; city is a hallucination whose value is in the text: misplaced (type 3)
    assert serial["match_categories"] == {"exact": 24, "partial": 0, "incorrect": 0, "missed": 0, "spurious": 4}
    assert serial["hallucination_analysis"]["by_type"]["type_3_misplaced"] == 4
    assert "ref" not in serial["field_metrics_by_name"]
    assert serial["field_metrics_by_name"]["items[].qty"]["f1_strict"] == 1.0
    samples = list(iter_samples(pytester.path / "out" / "samples.jsonl"))
    assert samples[0]["diagnostics"]["hallucination_types"] == [3]
    assert {f["comparator"] for f in samples[0]["score"]["fields"] if f["path"] == "born"} == {"year"}
    isolated(run, "-n", "2", out="out2").assert_outcomes(passed=4)
    assert models(pytester, "out2")["predictions"] == serial


@pytest.mark.slow
def test_x_eval_config_errors_are_sample_problems_and_the_run_goes_on(run: BenchRun, pytester: pytest.Pytester) -> None:
    broken = json.loads(json.dumps(SCHEMA))
    broken["properties"]["items"]["items"]["properties"]["qty"]["x-eval-compare"] = "nmeric"
    samples = [dict(SAMPLES[0], schema=broken), SAMPLES[1]]
    write(pytester, samples, OUTPUTS[:2])
    result = isolated(run, "-p", "no:xdist")  # the "year" comparator is unknown too: no conftest here
    result.assert_outcomes(passed=2)
    out = result.stdout.str()
    assert (
        "data.jsonl:line 1, sample 's0', field '$.properties.items.items.properties.qty.x-eval-compare': "
        "x-eval configuration: unknown comparator 'nmeric' (did you mean 'numeric'?)"
    ) in out
    assert (
        "data.jsonl:line 2, sample 's1', field '$.properties.born.x-eval-compare': x-eval configuration: "
        "unknown comparator 'year'" in out
    )
    problems = json.loads((pytester.path / "out" / "metrics.json").read_text())["run"]["problems"]
    assert sorted((p["sample_id"], p["field"]) for p in problems) == [
        ("s0", "$.properties.born.x-eval-compare"),
        ("s0", "$.properties.items.items.properties.qty.x-eval-compare"),
        ("s1", "$.properties.born.x-eval-compare"),
    ]
    # scored with the defaults of the broken keys: "1980" vs "1980-01-02" is a partial string match
    assert models(pytester)["predictions"]["field_metrics_by_name"]["born"]["f1_strict"] == 0.0


@pytest.mark.slow
def test_a_struct_extract_eval_schema_runs_with_warnings_for_what_it_ignores(
    run: BenchRun, pytester: pytest.Pytester
) -> None:
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "x-eval-compare": "exact", "x-eval-note": "reviewed"},
            "tags": {
                "type": "array",
                "x-eval-align": {"ordered": False, "match_by": "hungarian"},
                "items": {"type": "string", "x-eval-compare": "exact", "x-eval-transform": ["lowercase"]},
            },
        },
    }
    write(
        pytester,
        [{"id": "s0", "text": "Ann: x, y", "schema": schema, "expected": {"name": "Ann", "tags": ["x", "y"]}}],
        [{"id": "s0", "output": {"name": "Ann", "tags": ["Y", "X", "z"]}}],
    )
    result = isolated(run, "-p", "no:xdist")
    result.assert_outcomes(passed=1)
    assert (
        "data.jsonl:line 1, sample 's0', field '$.properties.name.x-eval-note': x-eval configuration: "
        "unknown key ignored"
    ) in result.stdout.str()
    # the rules apply: x and y pair up whatever their order and case (tags[0], tags[1]); z is spurious
    assert models(pytester)["predictions"]["match_categories"] == {
        "exact": 3,
        "partial": 0,
        "incorrect": 0,
        "missed": 0,
        "spurious": 1,
    }


@pytest.mark.slow
def test_post_processors_by_name_and_unknown_names(run: BenchRun, pytester: pytest.Pytester) -> None:
    pytester.makeconftest(CONFTEST)
    # a null gold must be allowed by the schema, or the sample is invalid and skipped
    nullable = {**SCHEMA, "properties": {**SCHEMA["properties"], "city": {"type": ["string", "null"]}}}
    samples = [dict(SAMPLES[0], schema=nullable, expected={**SAMPLES[0]["expected"], "city": None})]
    write(pytester, samples, OUTPUTS[:1])
    isolated(run, "-p", "no:xdist").assert_outcomes(passed=1)
    assert models(pytester)["predictions"]["match_categories"]["spurious"] == 1
    result = isolated(run, "-p", "no:xdist", "--extractbench-post-process", "nulls_as_values", out="o2")
    result.assert_outcomes(passed=1)
    valued = models(pytester, "o2")["predictions"]["match_categories"]
    assert valued["spurious"] == 0 and valued["incorrect"] == 1  # gold null vs "Oslo": a wrong value
    bad = isolated(run, "--extractbench-post-process", "nulls_as_vals", out="o3")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    bad.stderr.fnmatch_lines(["*unknown post-processor 'nulls_as_vals' (did you mean 'nulls_as_values'?)*"])


@pytest.mark.slow
def test_judge_needs_a_server(run: BenchRun, pytester: pytest.Pytester, tmp_path: Path) -> None:
    write(pytester, SAMPLES[:1], OUTPUTS[:1])
    result = isolated(run, "--extractbench-judge", "some-model")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--extractbench-judge needs the judge's server: --extractbench-judge-url URL*"])
