"""Offline scoring through pytest: items, selection, failures, the SLA gate and the run directory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from benchrun import OFFLINE_ARGS, BenchRun

from pytest_extractbench.core.rundoc import iter_samples

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "age": {"type": "integer"},
        "city": {"type": ["string", "null"]},
    },
    "required": ["name"],
}
SAMPLES = [
    {
        "id": "med-1",
        "topic": "medical",
        "text": "Ann Lee, 41, lives in Oslo.",
        "schema": SCHEMA,
        "expected": {"name": "Ann Lee", "age": 41, "city": "Oslo"},
    },
    {
        "id": "med-2",
        "topic": "medical",
        "text": "Bo Chan is 7.",
        "schema": json.dumps(SCHEMA),
        "item": json.dumps({"name": "Bo Chan", "age": 7, "city": None}),
    },
    {
        "id": "shop-1",
        "topic": "ecommerce",
        "text": "Cy Dore, 30, Lyon.",
        "schema": SCHEMA,
        "expected": {"name": "Cy Dore", "age": 30, "city": "Lyon"},
    },
    {
        "id": "shop-2",
        "topic": "ecommerce",
        "text": "Di Eve, 55, Rome.",
        "schema": SCHEMA,
        "expected": {"name": "Di Eve", "age": 55, "city": "Rome"},
    },
]
PERFECT = [{"id": s["id"], "output": json.dumps(s.get("expected") or json.loads(s["item"]))} for s in SAMPLES]


def write_jsonl(path: Path, rows: list) -> Path:
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def data(pytester: pytest.Pytester) -> Path:
    return write_jsonl(pytester.path / "data.jsonl", SAMPLES)


ARGS = (
    "-W",
    "ignore::pytest.PytestAssertRewriteWarning",
    "--extractbench-dataset",
    "data.jsonl",
    "--extractbench-predictions",
    "preds.jsonl",
)


def metrics(pytester: pytest.Pytester, out: str = "out") -> dict:
    return json.loads((pytester.path / out / "metrics.json").read_text())


def test_one_item_per_sample_with_readable_ids(run: BenchRun, data: Path) -> None:
    result = run(*ARGS, "--collect-only", "-q", files={"preds.jsonl": PERFECT})
    result.stdout.fnmatch_lines(
        [
            "data.jsonl::extractbench[predictions-med-1]",
            "data.jsonl::extractbench[predictions-med-2]",
            "data.jsonl::extractbench[predictions-shop-1]",
            "data.jsonl::extractbench[predictions-shop-2]",
            "4 tests collected*",
        ]
    )


@pytest.mark.slow
def test_k_selects_on_sample_id_and_topic(run: BenchRun, pytester: pytest.Pytester, data: Path) -> None:
    by_topic = run(*ARGS, "-k", "ecommerce", "--extractbench-sla", "none", files={"preds.jsonl": PERFECT})
    by_topic.assert_outcomes(passed=2, deselected=2)
    assert metrics(pytester)["models"]["predictions"]["num_samples"] == 2
    by_id = run(*ARGS, "-k", "med-2", "--extractbench-sla", "none", files={"preds.jsonl": PERFECT})
    by_id.assert_outcomes(passed=1, deselected=3)


def test_perfect_predictions_pass_the_gate_and_write_metrics(
    run: BenchRun, pytester: pytest.Pytester, data: Path
) -> None:
    result = run(*ARGS, files={"preds.jsonl": PERFECT})
    result.assert_outcomes(passed=4)
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(
        ["*extractbench*", "model predictions: 4 samples", "*EQS*1.000*", "*SLA minimum: passed"]
    )
    model = metrics(pytester)["models"]["predictions"]
    assert model["extraction_quality_score"] == pytest.approx(1.0)
    for key in (
        "schema_validity_rate",
        "json_valid_rate",
        "field_f1_partial",
        "field_f1_strict",
        "field_f1_lenient",
        "exact_match_rate",
        "type_accuracy",
    ):
        assert model[key] == 1.0, key
    assert model["hallucination_rate"] == 0.0 and model["field_omission_rate"] == 0.0
    # med-2's city is null: 3 + 2 + 3 + 3 expected fields
    assert model["match_categories"] == {"exact": 11, "partial": 0, "incorrect": 0, "missed": 0, "spurious": 0}
    samples = list(iter_samples(pytester.path / "out" / "samples.jsonl"))
    assert [s["sample_id"] for s in samples] == ["med-1", "med-2", "shop-1", "shop-2"]
    assert samples[0]["meta"]["topic"] == "medical"


def test_unusable_outputs_fail_their_items_with_field_level_messages(
    run: BenchRun, pytester: pytest.Pytester, data: Path
) -> None:
    predictions = [
        {"id": "med-1", "output": "Sorry, I can't."},
        {"id": "med-2", "output": {"age": 7}},  # schema-invalid: name is required
        {"id": "shop-1", "output": {"name": "Cy Dore", "age": 31, "city": "Lyon, France"}},  # valid, imperfect
    ]  # shop-2 has no prediction at all
    result = run(*ARGS, "--extractbench-sla", "none", files={"preds.jsonl": predictions})
    result.assert_outcomes(passed=1, failed=3)
    result.stdout.fnmatch_lines(
        [
            "*sample 'med-1' (model 'predictions'): unusable output: unparseable JSON*",
            '*name*"Ann Lee"*-*missed*0.00*',
            "*sample 'med-2' (model 'predictions'): output violates the schema (1 error(s))*",
            '*schema: $: "name" is a required property*',
            "*sample 'shop-2' (model 'predictions'): no output (missing): no prediction for sample 'shop-2'*",
        ]
    )
    model = metrics(pytester)["models"]["predictions"]
    assert model["failed_samples"] == ["med-1", "med-2", "shop-2"]
    assert model["schema_validity_rate"] == pytest.approx(0.25)
    assert model["json_valid_rate"] == pytest.approx(0.5)


def test_per_sample_quality_bar(run: BenchRun, data: Path) -> None:
    predictions = PERFECT[:3] + [{"id": "shop-2", "output": {"name": "Di Eve", "age": 99, "city": "Paris"}}]
    result = run(
        *ARGS, "--extractbench-sample-min-eqs", "0.9", "--extractbench-sla", "none", files={"preds.jsonl": predictions}
    )
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(
        ["*shop-2*EQS 0.* is below the per-sample bar 0.900*", "*age*55*99*", '*city*"Rome"*"Paris"*incorrect*']
    )


@pytest.mark.slow
def test_sla_gate_fails_the_session_naming_each_metric(run: BenchRun, pytester: pytest.Pytester, data: Path) -> None:
    predictions = [{"id": s["id"], "output": {"name": "Someone Else", "age": 1}} for s in SAMPLES]
    result = run(*ARGS, files={"preds.jsonl": predictions})
    result.assert_outcomes(passed=4)  # every output is usable: items pass, the gate fails
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "*SLA minimum: FAILED",
            "*eqs = 0.* (needs >= 0.750): missed",
            "*field_f1_partial = 0.* (needs >= 0.700): missed",
        ]
    )
    sla = metrics(pytester)["models"]["predictions"]["sla"]
    assert sla["passed"] is False and sla["tier"] == "minimum"
    # the same run with the gate off exits 0
    assert run(*ARGS, "--extractbench-sla", "none", files={"preds.jsonl": predictions}).ret == pytest.ExitCode.OK


@pytest.mark.slow
def test_target_tier_is_stricter(run: BenchRun, data: Path) -> None:
    # F1 partial = 2*8/(8+11) = 0.842: above the minimum tier's 0.70, below excellence's 0.90
    predictions = PERFECT[:2] + [
        {"id": "shop-1", "output": {"name": "Cy Dore", "age": 30}},
        {"id": "shop-2", "output": {"name": "Di Eve"}},
    ]
    assert run(*ARGS, "--extractbench-sla", "minimum", files={"preds.jsonl": predictions}).ret == pytest.ExitCode.OK
    strict = run(*ARGS, "--extractbench-sla", "excellence", files={"preds.jsonl": predictions})
    assert strict.ret == pytest.ExitCode.TESTS_FAILED
    strict.stdout.fnmatch_lines(["*SLA excellence: FAILED*"])


@pytest.mark.slow
def test_ini_options_apply_and_the_command_line_wins(run: BenchRun, pytester: pytest.Pytester, data: Path) -> None:
    pytester.makeini("[pytest]\nextractbench_sla = excellence\nextractbench_case_sensitive = true\n")
    predictions = [
        {"id": s["id"], "output": {"name": (s.get("expected") or {"name": "Bo Chan"})["name"].upper(), "age": 1}}
        for s in SAMPLES
    ]
    result = run(*ARGS, files={"preds.jsonl": predictions})
    result.stdout.fnmatch_lines(["*SLA excellence: FAILED*"])
    assert metrics(pytester)["run"]["options"]["scoring"]["case_sensitive"] is True
    assert metrics(pytester)["models"]["predictions"]["match_categories"]["exact"] == 0
    overridden = run(*ARGS, "--extractbench-sla", "none", files={"preds.jsonl": predictions})
    assert overridden.ret == pytest.ExitCode.OK


def test_bad_inputs_are_reported_with_file_line_and_id_and_the_run_goes_on(
    run: BenchRun, pytester: pytest.Pytester
) -> None:
    bad_schema = {"type": "object", "properties": {"x": {"type": "strnig"}}}
    rows = [
        json.dumps(SAMPLES[0]),
        "{not json",
        json.dumps({"id": "no-text", "schema": SCHEMA, "expected": {}}),
        json.dumps({"id": "bad-schema", "text": "t", "schema": bad_schema, "expected": {"x": "1"}}),
        json.dumps({"id": "gold-off", "text": "t", "schema": SCHEMA, "expected": {"age": "old"}}),
        json.dumps(SAMPLES[0]),  # duplicate id
    ]
    write_jsonl(pytester.path / "data.jsonl", rows)
    predictions = [
        PERFECT[0],
        {"id": "gold-off", "output": {"name": "x"}},
        "oops",
        {"id": "ghost", "output": "{}"},
        PERFECT[0],
    ]
    result = run(*ARGS, "--extractbench-sla", "none", files={"preds.jsonl": predictions})
    result.assert_outcomes(passed=1)  # gold-off is skipped too: its gold violates its schema
    output = result.stdout.str()
    for expected in (
        "data.jsonl:line 2: not valid JSON",
        "data.jsonl:line 3, sample 'no-text', field 'text': missing 'text'",
        "data.jsonl:line 4, sample 'bad-schema', field 'schema': not a valid JSON Schema",
        "data.jsonl:line 5, sample 'gold-off', field 'expected': gold violates its own schema at $.age",
        "data.jsonl:line 6, sample 'med-1', field 'id': duplicate id (first seen at line 1)",
        "preds.jsonl:line 3: not valid JSON",
        "preds.jsonl:line 4, sample 'ghost', field 'id': unknown sample id",
        "preds.jsonl:line 5, sample 'med-1', field 'id': duplicate id (first at line 1)",
    ):
        assert expected in output, expected
    problems = metrics(pytester)["run"]["problems"]
    assert len(problems) == 10  # gold-off's gold breaks two constraints (name is required; age)
    assert {p["severity"] for p in problems if p["sample_id"] == "gold-off" and p["source"] == "data.jsonl"} == {
        "error"
    }
    dataset = metrics(pytester)["run"]["dataset"]
    assert {k: dataset[k] for k in ("name", "source", "num_samples", "num_skipped")} == {
        "name": "data.jsonl",
        "source": "data.jsonl",
        "num_samples": 1,
        "num_skipped": 6,
    }
    assert sorted(dataset["sample_hashes"]) == ["med-1"]  # only the sample that was read gets an identity


@pytest.mark.slow
def test_missing_files_are_usage_errors(pytester: pytest.Pytester, data: Path) -> None:
    result = pytester.runpytest(
        "--extractbench", "--extractbench-predictions", "nope.jsonl", "--extractbench-dataset", "data.jsonl"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*extractbench: predictions file nope.jsonl: no such file*"])


def test_named_prediction_files_make_several_models(pytester: pytest.Pytester, data: Path) -> None:
    write_jsonl(pytester.path / "a.jsonl", PERFECT)
    write_jsonl(pytester.path / "b.jsonl", [{"id": s["id"], "output": {"name": "X"}} for s in SAMPLES])
    result = pytester.runpytest(
        "--extractbench",
        "--extractbench-dataset",
        "data.jsonl",
        "--extractbench-output",
        "out",
        "--extractbench-predictions",
        "good=a.jsonl",
        "--extractbench-predictions",
        "weak=b.jsonl",
    )
    result.assert_outcomes(passed=8)
    models = metrics(pytester)["models"]
    assert list(models) == ["good", "weak"]
    assert models["good"]["extraction_quality_score"] > models["weak"]["extraction_quality_score"]
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # "weak" misses the minimum tier


@pytest.mark.slow
def test_without_the_flag_the_plugin_stays_out_of_the_way(pytester: pytest.Pytester, data: Path) -> None:
    pytester.makepyfile(test_plain="def test_ok():\n    assert True\n")
    plain = pytester.runpytest()
    plain.assert_outcomes(passed=1)
    assert " extractbench " not in plain.stdout.str()  # no summary section
    assert not (pytester.path / ".extractbench").exists()  # no run directory
    # with the flag, ordinary test files in the tree are not collected; given explicitly, they are
    write_jsonl(pytester.path / "preds.jsonl", PERFECT)
    args = ["--extractbench", "--extractbench-dataset", "data.jsonl", "--extractbench-predictions", "preds.jsonl"]
    pytester.runpytest(*args).assert_outcomes(passed=4)
    pytester.runpytest(*args, "test_plain.py").assert_outcomes(passed=5)


def strip_timing(document: dict) -> dict:
    run = dict(document["run"])
    for key in ("started_at", "finished_at", "duration_s", "workers", "options", "config"):
        run.pop(key)
    return {"run": run, "models": document["models"]}


@pytest.mark.slow
def test_xdist_gives_the_same_metrics(run: BenchRun, pytester: pytest.Pytester, data: Path) -> None:
    predictions = [
        PERFECT[0],
        {"id": "med-2", "output": '```json\n{"name": "bo chan", "age": 8}\n```'},
        {"id": "shop-1", "output": {"name": "Cy", "age": 30, "city": "Lyon", "zip": "69001"}},
    ]
    serial = run(
        *ARGS, "--extractbench-sla", "none", "-p", "no:xdist", subprocess=True, files={"preds.jsonl": predictions}
    )
    serial.assert_outcomes(passed=3, failed=1)
    expected = strip_timing(metrics(pytester))
    parallel = run(
        *ARGS,
        "--extractbench-sla",
        "none",
        "-n",
        "2",
        "--extractbench-output",
        "out2",
        subprocess=True,
        files={"preds.jsonl": predictions},
    )
    parallel.assert_outcomes(passed=3, failed=1)
    assert strip_timing(metrics(pytester, "out2")) == expected
    assert metrics(pytester, "out2")["run"]["workers"] == 2


@pytest.mark.parametrize(
    "name, content, says",
    [
        ("preds.csv", "id,output\nmed-1,{}\n", "it holds no JSON rows (2 unreadable line(s)"),
        (
            "preds.jsonl",
            "".join(json.dumps({"sample_id": p["id"], "prediction": p["output"]}) + "\n" for p in PERFECT),
            "rows need the sample id under 'id' and the model text under 'output'; its rows have the keys 'sample_id', "
            "'prediction'",
        ),
        (
            "preds.jsonl",
            "".join(json.dumps({"id": f"doc-{i}", "output": p["output"]}) + "\n" for i, p in enumerate(PERFECT)),
            "its ids look like 'doc-0', 'doc-1', 'doc-2', the dataset's like 'med-1', 'med-2', 'shop-1'",
        ),
        (
            "preds.jsonl",
            "".join(
                json.dumps(p) + "\n" for p in [PERFECT[0], {"id": "x1", "output": "{}"}, {"id": "x2", "output": "{}"}]
            ),
            "1 of its 3 ids are samples of dataset data.jsonl",
        ),  # under half of the file's ids are the dataset's
    ],
)
def test_predictions_that_cannot_be_the_dataset_s_stop_the_run_before_any_item(
    pytester: pytest.Pytester, data: Path, name: str, content: str, says: str
) -> None:
    (pytester.path / name).write_text(content, encoding="utf-8")
    result = pytester.runpytest(
        "--extractbench",
        "--extractbench-dataset",
        "data.jsonl",
        "--extractbench-predictions",
        name,
        "--extractbench-output",
        "out",
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert f"predictions file {name}: " in err and "samples of dataset data.jsonl" in err and says in err
    assert "passed" not in result.stdout.str() and "failed" not in result.stdout.str()


def test_a_file_answering_some_samples_is_fine(run: BenchRun, data: Path) -> None:
    result = run(*ARGS, "--extractbench-sla", "none", files={"preds.jsonl": PERFECT[:1]})  # the others fail as missing
    result.assert_outcomes(passed=1, failed=3)


def test_sampling_never_warns_about_rows_it_did_not_draw(run: BenchRun, pytester: pytest.Pytester, data: Path) -> None:
    stray = {"id": "not-in-the-dataset", "output": "{}"}
    result = run(
        *ARGS, "--extractbench-sample", "2", "--extractbench-sla", "none", files={"preds.jsonl": [*PERFECT, stray]}
    )
    result.assert_outcomes(passed=2)
    problems = metrics(pytester)["run"]["problems"]
    assert [p["sample_id"] for p in problems if "not in the dataset" in p["message"]] == ["not-in-the-dataset"]


@pytest.mark.slow
def test_exact_within_turns_near_numbers_into_partial_matches(
    run: BenchRun, pytester: pytest.Pytester, data: Path
) -> None:
    # age + 1: 42 for 41 scores 1 - 1/41 = 0.976 (exact under the default rule), 8 for 7 scores 0.857 (partial);
    # within 1% every age is partial. 11 gold fields (Bo Chan's null city is absent), 4 of them ages
    near = [
        {**p, "output": json.dumps({**json.loads(p["output"]), "age": json.loads(p["output"])["age"] + 1})}
        for p in PERFECT
    ]
    run(*ARGS, "--extractbench-sla", "none", files={"preds.jsonl": near})
    default = metrics(pytester)["models"]["predictions"]
    pytester.makeini("[pytest]\nextractbench_exact_within = 0.01\n")
    run(*ARGS, "--extractbench-sla", "none", files={"preds.jsonl": near})
    within = metrics(pytester)["models"]["predictions"]
    # strict F1 10/11 -> 7/11; partial (7 + 0.5 x 4) / 11
    assert default["field_f1_strict"] == pytest.approx(10 / 11)
    assert within["field_f1_strict"] == pytest.approx(7 / 11) and within["field_f1_partial"] == pytest.approx(9 / 11)
    assert "numbers exact only within 0.01 relative" in (pytester.path / "out" / "summary.md").read_text()


@pytest.mark.slow
def test_list_similarity_gives_partial_credit_to_near_list_elements(run: BenchRun, pytester: pytest.Pytester) -> None:
    # Kleister-style party lists: a comma and a suffix's spelling cost the element under plain Jaccard
    schema = {"type": "object", "properties": {"parties": {"type": "array", "items": {"type": "string"}}}}
    gold = ["Newgistics, Inc.", "Acme Holdings LLC"]
    output = ["Newgistics Inc.", "ACME HOLDINGS LLC"]
    files = {
        "data.jsonl": [{"id": "nda-1", "text": "t", "schema": schema, "expected": {"parties": gold}}],
        "preds.jsonl": [{"id": "nda-1", "output": json.dumps({"parties": output})}],
    }
    common = (
        *OFFLINE_ARGS,
        "--extractbench-report-only",
    )
    run(*common, files=files)
    plain = metrics(pytester)["models"]["predictions"]
    run(*common, "--extractbench-list-similarity", "0.9")
    similar = metrics(pytester)["models"]["predictions"]
    # plain: 1 equal of 3 distinct -> 1/3, incorrect; similar: (1 + 15/16) / 2 ("newgistics, inc." is one edit from
    # "newgistics inc."), a partial match (half credit in partial F1), never exact: strict F1 stays 0
    assert plain["field_f1_partial"] == 0.0 and plain["field_f1_strict"] == 0.0
    assert similar["field_f1_partial"] == pytest.approx(0.5) and similar["field_f1_strict"] == 0.0
    assert metrics(pytester)["run"]["options"]["scoring"]["list_similarity"] == 0.9


@pytest.mark.slow
def test_normalise_runs_named_transforms_on_every_compared_string(run: BenchRun, pytester: pytest.Pytester) -> None:
    schema = {
        "type": "object",
        "properties": {"party": {"type": "string"}, "parties": {"type": "array", "items": {"type": "string"}}},
    }
    gold = {"party": "Newgistics, Inc.", "parties": ["Acme Holdings LLC", "Bluefield Robotics Inc."]}
    output = {"party": "Newgistics Incorporated", "parties": ["Bluefield Robotics", "ACME HOLDINGS"]}
    files = {
        "data.jsonl": [{"id": "nda-1", "text": "t", "schema": schema, "expected": gold}],
        "preds.jsonl": [{"id": "nda-1", "output": json.dumps(output)}],
    }
    common = (
        *OFFLINE_ARGS,
        "--extractbench-report-only",
    )
    run(*common, files=files)
    assert metrics(pytester)["models"]["predictions"]["field_f1_strict"] == 0.0
    run(*common, "--extractbench-normalise", "no_punctuation,no_legal_suffix")
    # both fields equal once punctuation and company forms are gone, the list's order aside
    assert metrics(pytester)["models"]["predictions"]["field_f1_strict"] == 1.0
    assert metrics(pytester)["run"]["options"]["scoring"]["normalisers"] == ["no_punctuation", "no_legal_suffix"]
    bad = run(*common, "--extractbench-normalise", "no_punctuation,round_digits,nope")
    assert bad.ret == pytest.ExitCode.USAGE_ERROR
    bad.stderr.fnmatch_lines(
        ["*--extractbench-normalise: round_digits cannot run with its defaults*unknown transform 'nope'*"]
    )
