"""The toolcall, generate and repair tracks, repeats and calibration through pytest, offline (predictions files)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from benchrun import BenchRun

from pytest_extractbench.core.rundoc import iter_samples

ARGS = ("-W", "ignore::pytest.PytestAssertRewriteWarning", "--extractbench-predictions", "preds.jsonl")


def write_jsonl(path: Path, rows: list) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def metrics(pytester: pytest.Pytester) -> dict[str, Any]:
    return json.loads((pytester.path / "out" / "metrics.json").read_text())


def samples(pytester: pytest.Pytester) -> list[dict[str, Any]]:
    return list(iter_samples(pytester.path / "out" / "samples.jsonl"))


TOOLCALL = [
    {"id": "weather-paris", "output": [{"name": "get_weather", "arguments": {"city": "paris"}}]},
    {
        "id": "weather-fahrenheit",
        "output": '[{"name": "get_weather", "arguments": {"city": "Chicago", "unit": "celsius"}}]',
    },
    {"id": "parallel-weather", "output": [{"get_weather": {"city": "Berlin"}}, {"get_weather": {"city": "Tokyo"}}]},
    {"id": "abstain-poem", "output": "The sea is wide,\nthe sea is deep."},
    {"id": "abstain-capital", "output": [{"name": "send_email", "arguments": {"to": "x@y.z", "subject": "Rome"}}]},
]


def test_toolcall_track_items_metrics_and_records(run: BenchRun, pytester: pytest.Pytester) -> None:
    result = run(*ARGS, "--extractbench-track", "toolcall", "-k", "weather or abstain", files={"preds.jsonl": TOOLCALL})
    result.assert_outcomes(passed=3, failed=2)
    result.stdout.fnmatch_lines(
        [
            "*sample 'weather-fahrenheit' (model 'predictions', track toolcall): 0/1 gold calls matched exactly*",
            '*expected: *"get_weather": {"city": *"Chicago"*, "unit": *"fahrenheit"*',
            "*track toolcall (tool calling*bundled-toolcall: 11 samples*",
            "model predictions: 5 samples, 3 passed",
            "*abstention          2 samples, accuracy 50.0%; false abstention 0.0%",
        ]
    )
    found = metrics(pytester)
    assert found["track"] == "toolcall"
    section = found["models"]["predictions"]["toolcall"]
    # calls per sample: 1, 1, 2, 0, 1 -> 5; names right in 4 (the email call has no gold partner)
    assert section["calls"] == {"gold": 4, "predicted": 5, "scored": 5}
    assert section["name_match_rate"] == pytest.approx(4 / 5)
    assert section["arguments_exact_match_rate"] == pytest.approx(3 / 5)
    # tp: city, city+unit? no (unit wrong): weather-fahrenheit city tp, unit fp+fn; parallel 2 tp; email 2 fp
    assert section["arguments"] == {"tp": 4, "fp": 3, "fn": 1}
    assert section["accuracy"] == pytest.approx(3 / 5)
    rows = samples(pytester)
    assert [r["sample_id"] for r in rows] == [
        "abstain-capital",
        "abstain-poem",
        "parallel-weather",
        "weather-fahrenheit",
        "weather-paris",
    ]
    assert all(r["track"] == "toolcall" for r in rows)
    assert rows[0]["result"]["predicted"] == [
        {"name": "send_email", "arguments": {"to": "x@y.z", "subject": "Rome"}, "error": None}
    ]


def test_generate_track(run: BenchRun, pytester: pytest.Pytester) -> None:
    predictions = [
        {"id": "person", "output": '{"name": "Ann", "age": 31}'},
        {"id": "product-enum", "output": '{"sku": "ABC-1234", "status": "sold", "price": 3}'},
        {"id": "contact-format", "output": "Here you go: {email: 1}"},
    ]
    result = run(
        *ARGS,
        "--extractbench-track",
        "generate",
        "-k",
        "person or product or contact",
        files={"preds.jsonl": predictions},
    )
    result.assert_outcomes(passed=1, failed=2)
    result.stdout.fnmatch_lines(["*features violated: enum*", "*JSON valid          66.7%   schema compliant 33.3%"])
    section = metrics(pytester)["models"]["predictions"]["generate"]
    assert section["per_feature"]["enum"] == {"samples": 1, "compliant": 0, "compliance_rate": 0.0}
    assert section["per_feature"]["required"] == {"samples": 3, "compliant": 2, "compliance_rate": pytest.approx(2 / 3)}


def test_repair_track(run: BenchRun, pytester: pytest.Pytester) -> None:
    predictions = [
        {"id": "config-python", "output": '{"host": "db.internal", "port": 5432, "tls": true}'},
        {"id": "config-unquoted", "output": '{"host": "cache.local", "port": 6380, "tls": false}'},
    ]
    result = run(*ARGS, "--extractbench-track", "repair", "-k", "config", files={"preds.jsonl": predictions})
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*values changed: 1 field(s) differ*", "*port: expected 6379, got 6380*"])
    section = metrics(pytester)["models"]["predictions"]["repair"]
    assert section["exact_match_rate"] == 0.5 and section["json_valid_rate"] == 1.0
    assert section["by_kind"] == {
        "python_literals": {"samples": 1, "json_valid_rate": 1.0, "exact_match_rate": 1.0},
        "unquoted_keys": {"samples": 1, "json_valid_rate": 1.0, "exact_match_rate": 0.0},
    }


def test_repeats_give_consistency_on_a_track(run: BenchRun, pytester: pytest.Pytester) -> None:
    predictions = [
        {
            "id": "parallel-weather",
            "outputs": [
                [{"get_weather": {"city": "Berlin"}}, {"get_weather": {"city": "Tokyo"}}],
                [{"get_weather": {"city": "Tokyo"}}, {"get_weather": {"city": "Berlin"}}],
                [{"get_weather": {"city": "Tokyo"}}],
            ],
        }
    ]
    result = run(
        *ARGS,
        "--extractbench-track",
        "toolcall",
        "-k",
        "parallel-weather",
        "--extractbench-repeats",
        "3",
        files={"preds.jsonl": predictions},
    )
    result.assert_outcomes(passed=1)  # the first run is the one scored
    found = metrics(pytester)["models"]["predictions"]["consistency"]
    assert found["exact_match_consistency"] == pytest.approx(2 / 3)  # call order does not matter
    assert found["runs_per_sample"] == 3
    result.stdout.fnmatch_lines(["*consistency (3 runs)  exact 66.7%*"])


EXTRACTION_DATA = [
    {
        "id": "s1",
        "text": "Ann, 41",
        "schema": {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}}},
        "expected": {"name": "Ann", "age": 41},
    }
]


@pytest.mark.slow
def test_extraction_repeats_and_calibration_only_when_asked(run: BenchRun, pytester: pytest.Pytester) -> None:
    write_jsonl(pytester.path / "data.jsonl", EXTRACTION_DATA)
    tokens = [('{"name": ', 0.0), ('"Ann"', -0.1), (', "age": ', 0.0), ("42", -2.0), ("}", 0.0)]
    logprobs = {"content": [{"token": t, "logprob": lp} for t, lp in tokens]}
    predictions = [
        {
            "id": "s1",
            "outputs": ['{"name": "Ann", "age": 42}', '{"name": "Ann", "age": 41}', '{"name": "Ann", "age": 42}'],
            "logprobs": logprobs,
        }
    ]
    base = ("--extractbench-dataset", "data.jsonl", "--extractbench-sla", "none")
    run(*ARGS, "--extractbench-track", "extraction", *base, files={"preds.jsonl": predictions}).assert_outcomes(
        passed=1
    )
    plain = metrics(pytester)
    assert plain["track"] == "extraction"
    assert "consistency" not in plain["models"]["predictions"]
    calibration = plain["models"]["predictions"]["calibration"]  # logprobs are there: calibration is reported
    assert calibration["fields"] == 2 and calibration["accuracy"] == 0.5
    # name: confidence e^-0.1 ~ 0.905, right; age: e^-2 ~ 0.135, wrong -> gaps 0.095 and 0.135
    assert calibration["ece"] == pytest.approx(((1 - 0.9048) + 0.1353) / 2, abs=1e-3)
    result = run(
        *ARGS,
        "--extractbench-track",
        "extraction",
        *base,
        "--extractbench-repeats",
        "3",
        files={"preds.jsonl": predictions},
    )
    result.stdout.fnmatch_lines(["*calibration         ECE 0.115*", "*consistency (3 runs)  exact 66.7%*"])
    found = metrics(pytester)["models"]["predictions"]["consistency"]
    assert found["field_level_consistency"] == pytest.approx((1 + 2 / 3) / 2)
    assert found["value_variance"] == pytest.approx(0.4714, abs=1e-4)  # std of 42, 41, 42


def test_request_hook_fires_once_per_run(run: BenchRun, pytester: pytest.Pytester) -> None:
    pytester.makeconftest("""
        import json
        def pytest_extractbench_request_done(config, model, sample_id, response):
            with open("requests.log", "a") as f:
                f.write(json.dumps([model, sample_id, response.content]) + "\\n")
        def pytest_extractbench_sample_scored(config, record):
            with open("requests.log", "a") as f:
                f.write(json.dumps(["scored", record.sample_id, record.passed]) + "\\n")
    """)
    predictions = [{"id": "reminder", "outputs": ["a", "b"]}, {"id": "flights", "output": "c"}]
    run(
        *ARGS,
        "--extractbench-track",
        "toolcall",
        "-k",
        "reminder or flights",
        "--extractbench-repeats",
        "2",
        files={"preds.jsonl": predictions},
    )
    lines = [json.loads(line) for line in (pytester.path / "requests.log").read_text().splitlines()]
    assert lines == [
        ["predictions", "reminder", "a"],
        ["predictions", "reminder", "b"],
        ["scored", "reminder", False],
        ["predictions", "flights", "c"],
        ["scored", "flights", False],
    ]


@pytest.mark.slow
def test_track_runs_the_same_under_xdist(run: BenchRun, pytester: pytest.Pytester) -> None:
    run(*ARGS, "--extractbench-track", "toolcall", files={"preds.jsonl": TOOLCALL})
    single = metrics(pytester)["models"]
    run(*ARGS, "--extractbench-track", "toolcall", "-n", "2", files={"preds.jsonl": TOOLCALL})
    assert metrics(pytester)["models"] == single
    assert single["predictions"]["num_samples"] == 11


def test_bad_track_dataset_rows_are_reported_and_the_run_goes_on(run: BenchRun, pytester: pytest.Pytester) -> None:
    write_jsonl(
        pytester.path / "tc.jsonl",
        [
            {
                "id": "ok",
                "question": "Weather in Rome?",
                "functions": [{"name": "w", "parameters": {"type": "dict"}}],
                "expected_calls": [{"w": {}}],
            },
            {"id": "broken", "question": "?", "functions": [{"name": "w"}], "expected_calls": [{"x": {}}]},
        ],
    )
    result = run(
        *ARGS,
        "--extractbench-track",
        "toolcall",
        "--extractbench-dataset",
        "tc.jsonl",
        files={"preds.jsonl": [{"id": "ok", "output": [{"w": {}}]}]},
    )
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(
        [
            "*tc.jsonl:line 2, sample 'broken', field 'expected_calls': 'expected_calls': call 0 "
            "names 'x', which is not among the functions*"
        ]
    )


def test_unknown_track_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--extractbench", "--extractbench-track", "poetry")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*unknown track 'poetry'; choose one of extraction, toolcall, generate, repair*"])


def test_a_partial_track_run_says_what_its_metrics_cover(run: BenchRun, pytester: pytest.Pytester) -> None:
    # -k keeps 5 of the bundled 11 toolcall samples (the weather and abstain ones): a partial run
    result = run(*ARGS, "--extractbench-track", "toolcall", "-k", "weather or abstain", files={"preds.jsonl": TOOLCALL})
    cover = "the metrics cover 5 of 11 samples (a partial run"
    result.stdout.fnmatch_lines(["model predictions: 5 samples, 3 passed", f"  {cover}*"])
    assert metrics(pytester)["run"]["partial"] == {
        "scored": 5,
        "collected": 11,
        "models": {"predictions": {"scored": 5, "collected": 11}},
    }
    assert f"**Partial run**: {cover}" in (pytester.path / "out" / "summary.md").read_text()
    assert f"<th>Partial run</th><td>{cover}" in (pytester.path / "out" / "report.html").read_text()
    # every sample answered and none deselected: no partial wording anywhere
    everything = run(*ARGS, "--extractbench-track", "toolcall", files={"preds.jsonl": TOOLCALL})
    assert "the metrics cover" not in everything.stdout.str()
    assert "Partial run" not in (pytester.path / "out" / "summary.md").read_text()
