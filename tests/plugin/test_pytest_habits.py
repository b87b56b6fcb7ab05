"""What pytest users expect of any plugin's items: markers for -m, partial runs said as such, -q/-qq, --lf/--ff/--sw."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from benchrun import BenchRun

from pytest_extractbench.core.rundoc import iter_samples
from pytest_extractbench.dataset.complexity import complexity_features

FLAT = {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}}, "required": ["name"]}


def _deep(depth: int) -> dict:
    schema: dict = {"type": "object", "properties": {"v": {"type": "string"}}}
    for _ in range(depth):
        schema = {"type": "object", "properties": {"n": schema, "k": {"type": "string"}}}
    return schema


DEEP = _deep(6)


def _value(schema: dict, leaf: str) -> dict:
    props = schema["properties"]
    return {
        key: _value(sub, leaf) if "properties" in sub else (leaf if sub["type"] == "string" else 1)
        for key, sub in props.items()
    }


SAMPLES = [
    {"id": "med-simple", "topic": "medical", "text": "Ann, 1.", "schema": FLAT, "expected": {"name": "Ann", "age": 1}},
    {"id": "med-deep", "topic": "medical", "text": "x", "schema": DEEP, "expected": _value(DEEP, "x")},
    {"id": "shop-deep", "topic": "E-commerce & Retail", "text": "x", "schema": DEEP, "expected": _value(DEEP, "x")},
    {"id": "skip-1", "topic": "skip", "text": "Bo, 2.", "schema": FLAT, "expected": {"name": "Bo", "age": 2}},
]
PERFECT = [{"id": s["id"], "output": s["expected"]} for s in SAMPLES]


def write_jsonl(path: Path, rows: list) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
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


# ------------------------------------------------------------------------------------------------ markers


def test_the_fixture_s_schemas_fall_in_two_complexity_bins() -> None:
    assert complexity_features(FLAT)["complexity_bin"] == "simple"
    assert complexity_features(DEEP)["complexity_bin"] == "complex"


@pytest.mark.slow
def test_m_selects_on_topic_and_complexity_under_strict_markers(run: BenchRun, data: Path) -> None:
    result = run(
        *ARGS,
        "--strict-markers",
        "-m",
        "medical and complex",
        "--extractbench-sla",
        "none",
        "-v",
        files={"preds.jsonl": PERFECT},
    )
    result.assert_outcomes(passed=1, deselected=3)
    result.stdout.fnmatch_lines(["*extractbench[[]predictions-med-deep[]] PASSED*"])
    # a topic is lower-cased and made an identifier; one named like pytest's own marker is prefixed, never applied
    result = run(
        *ARGS,
        "--strict-markers",
        "-m",
        "e_commerce_retail or topic_skip",
        "--extractbench-sla",
        "none",
        "-v",
        files={"preds.jsonl": PERFECT},
    )
    result.assert_outcomes(passed=2, deselected=2)
    result.stdout.fnmatch_lines(["*predictions-shop-deep*PASSED*", "*predictions-skip-1*PASSED*"])
    assert run(
        *ARGS, "--strict-markers", "-m", "simple", "--extractbench-sla", "none", files={"preds.jsonl": PERFECT}
    ).parseoutcomes() == {"passed": 2, "deselected": 2}


def test_sample_markers_are_registered_and_llm_is_not(run: BenchRun, pytester: pytest.Pytester, data: Path) -> None:
    pytester.makeconftest(
        "def pytest_collection_finish(session):\n"
        "    print('MARKERS', sorted(l.split(':')[0] for l in session.config.getini('markers')))\n"
    )
    result = run(*ARGS, "--collect-only", "-q", "-s", files={"preds.jsonl": PERFECT})
    line = next(text for text in result.stdout.lines if text.startswith("MARKERS"))
    for name in ("medical", "e_commerce_retail", "topic_skip", "simple", "complex"):
        assert f"'{name}'" in line
    assert "'llm'" not in line and "'skip'" not in line.replace("'topic_skip'", "")
    # users' projects no longer see the project's own test marker
    assert "@pytest.mark.llm" not in pytester.runpytest("--markers").stdout.str()


def test_marker_names_are_identifiers_clear_of_pytest_s() -> None:
    from pytest_extractbench.plugin.items import marker_name

    assert marker_name("Medical Records") == "medical_records"
    assert marker_name("xfail") == "topic_xfail"
    assert marker_name("not") == "topic_not"
    assert marker_name("2024 news") == "topic_2024_news"
    assert marker_name("timeout", frozenset({"timeout"})) == "topic_timeout"
    assert marker_name("Café") == "café" and marker_name("!!") == "topic_"


# ------------------------------------------------------------------------------------------- partial runs

BROKEN = [p if p["id"] != "med-deep" else {"id": "med-deep", "output": "not json"} for p in PERFECT]


def test_a_run_stopped_by_x_says_the_gate_saw_part_of_the_samples(
    run: BenchRun, pytester: pytest.Pytester, data: Path
) -> None:
    result = run(*ARGS, "-x", "--extractbench-sla", "none", files={"preds.jsonl": BROKEN})
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(
        [
            "model predictions: 2 samples",
            "*the gate saw 2 of 4 samples (a partial run*",
            "verdict: a partial run: 2 of 4 samples were scored, and the gate judged only those*",
        ]
    )
    assert "it ran to the end" not in result.stdout.str()
    assert metrics(pytester)["run"]["partial"] == {
        "scored": 2,
        "collected": 4,
        "models": {"predictions": {"scored": 2, "collected": 4}},
    }
    summary = (pytester.path / "out" / "summary.md").read_text(encoding="utf-8")
    assert "**Partial run**: for `predictions` the gate saw 2 of 4 samples" in summary


@pytest.mark.slow
@pytest.mark.parametrize("args, scored", [(("-k", "deep"), 2), (("-m", "simple"), 2), (("--maxfail", "1"), 2)])
def test_deselection_and_maxfail_are_partial_runs_too(
    run: BenchRun, pytester: pytest.Pytester, data: Path, args: tuple[str, ...], scored: int
) -> None:
    result = run(*ARGS, *args, files={"preds.jsonl": BROKEN})
    result.stdout.fnmatch_lines([f"*the gate saw {scored} of 4 samples*"])
    assert metrics(pytester)["run"]["partial"]["scored"] == scored
    assert "**Partial run**" in (pytester.path / "out" / "summary.md").read_text(encoding="utf-8")


def test_partial_counts_are_per_model(pytester: pytest.Pytester, data: Path) -> None:
    write_jsonl(pytester.path / "a.jsonl", PERFECT)
    result = pytester.runpytest(
        "--extractbench",
        "--extractbench-dataset",
        "data.jsonl",
        "--extractbench-output",
        "out",
        "--extractbench-predictions",
        "good=a.jsonl",
        "--extractbench-predictions",
        "other=a.jsonl",
        "-k",
        "good or other-med",
        "--extractbench-sla",
        "none",
    )
    result.assert_outcomes(passed=6, deselected=2)
    assert metrics(pytester)["run"]["partial"] == {
        "scored": 6,
        "collected": 8,
        "models": {"good": {"scored": 4, "collected": 4}, "other": {"scored": 2, "collected": 4}},
    }
    result.stdout.fnmatch_lines(["*other: EQS*on 2 samples", "    the gate saw 2 of 4 samples*"])
    assert result.stdout.str().count("the gate saw") == 2  # once in other's block, once in its verdict; none for good
    summary = (pytester.path / "out" / "summary.md").read_text(encoding="utf-8")
    assert "for `other` the gate saw 2 of 4" in summary and "for `good`" not in summary


def test_a_full_run_is_not_called_partial(run: BenchRun, pytester: pytest.Pytester, data: Path) -> None:
    result = run(*ARGS, files={"preds.jsonl": PERFECT})
    result.assert_outcomes(passed=4)
    assert "gate saw" not in result.stdout.str() and "partial" not in metrics(pytester)["run"]
    result.stdout.fnmatch_lines(["verdict: the benchmark worked: it ran to the end*"])


# ---------------------------------------------------------------------------------------------- -q and -qq


def _section(result: pytest.RunResult) -> list[str]:
    """The lines of the extractbench summary section, up to pytest's closing line."""
    lines = result.stdout.lines
    start = next(i for i, line in enumerate(lines) if " extractbench " in line and line.startswith("="))
    end = next(
        i
        for i in range(start + 1, len(lines))
        if lines[i].startswith("=") or lines[i].startswith("FAILED") or lines[i][:1].isdigit()
    )
    return lines[start + 1 : end]


def test_default_verbosity_prints_progress_lines(run: BenchRun, data: Path) -> None:
    result = run(*ARGS, files={"preds.jsonl": PERFECT})
    result.stdout.fnmatch_lines(
        ["extractbench 1/4 scored: predictions EQS 1.000 validity 100.0%", "extractbench 4/4 scored: *"]
    )


def test_q_prints_no_progress_lines_but_the_whole_summary(run: BenchRun, data: Path) -> None:
    result = run(*ARGS, "-q", files={"preds.jsonl": PERFECT})
    result.assert_outcomes(passed=4)
    assert " scored: " not in result.stdout.str()
    section = _section(result)
    assert section[0].startswith("dataset data.jsonl: 4 samples") and "model predictions: 4 samples" in section


def test_qq_prints_only_the_verdict(run: BenchRun, data: Path) -> None:
    result = run(*ARGS, "-qq", "-k", "not shop", files={"preds.jsonl": BROKEN})
    assert " scored: " not in result.stdout.str()
    section = _section(result)
    assert (
        section[0] == "verdict: a partial run: 3 of 4 samples were scored, and the gate judged only those "
        "(the rest of the summary without -qq)."
    )
    assert section[1].startswith("  predictions: EQS") and section[2].strip().startswith("the gate saw 3 of 4")
    assert not any(line.startswith(("dataset ", "model ", "reports: ")) for line in section)
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # quiet changes what is printed, never the outcome


# ------------------------------------------------------------------------------------ --lf, --ff and --sw
# users' projects run with the cache provider on (this project's addopts turn it off)

TWO_BROKEN = [p if p["id"] not in ("med-deep", "skip-1") else {"id": p["id"], "output": "nope"} for p in PERFECT]


def cached(run: BenchRun, predictions: list, *args: str, out: str = "out") -> pytest.RunResult:
    return run(
        *ARGS,
        "-p",
        "cacheprovider",
        "--extractbench-sla",
        "none",
        "-v",
        *args,
        out=out,
        files={"preds.jsonl": predictions},
    )


def ran(result: pytest.RunResult) -> list[str]:
    return [
        line.split("::")[1].split(" ")[0]
        for line in result.stdout.lines
        if line.startswith("data.jsonl::") and (" PASSED" in line or " FAILED" in line)
    ]


@pytest.mark.slow
def test_lf_reruns_exactly_the_failed_samples(run: BenchRun, data: Path) -> None:
    first = cached(run, TWO_BROKEN)
    first.assert_outcomes(passed=2, failed=2)
    second = cached(run, TWO_BROKEN, "--lf")
    second.assert_outcomes(failed=2, deselected=2)
    assert ran(second) == ["extractbench[predictions-med-deep]", "extractbench[predictions-skip-1]"]
    second.stdout.fnmatch_lines(["run-last-failure: rerun previous 2 failures*", "*the gate saw 2 of 4 samples*"])
    # fixed outputs: the next --lf runs those two and passes; the one after runs everything again
    cached(run, PERFECT, "--lf").assert_outcomes(passed=2, deselected=2)
    cached(run, PERFECT, "--lf").assert_outcomes(passed=4)


@pytest.mark.slow
def test_lf_under_xdist_reruns_exactly_the_failed_samples(run: BenchRun, pytester: pytest.Pytester, data: Path) -> None:
    cached(run, TWO_BROKEN, "-n", "2").assert_outcomes(passed=2, failed=2)
    second = cached(run, TWO_BROKEN, "--lf", "-n", "2")
    second.assert_outcomes(failed=2)  # the workers deselect; xdist's controller does not count those
    second.stdout.fnmatch_lines(["*the gate saw 2 of 4 samples*"])
    ids = [r["sample_id"] for r in iter_samples(pytester.path / "out" / "samples.jsonl")]
    assert sorted(ids) == ["med-deep", "skip-1"]
    assert metrics(pytester)["run"]["partial"]["models"]["predictions"] == {"scored": 2, "collected": 4}


@pytest.mark.slow
def test_ff_runs_the_failed_samples_first(run: BenchRun, data: Path) -> None:
    cached(run, TWO_BROKEN).assert_outcomes(passed=2, failed=2)
    second = cached(run, TWO_BROKEN, "--ff")
    second.assert_outcomes(passed=2, failed=2)
    assert ran(second)[:2] == ["extractbench[predictions-med-deep]", "extractbench[predictions-skip-1]"]
    assert "gate saw" not in second.stdout.str()  # every sample ran: not a partial run


@pytest.mark.slow
def test_sw_stops_at_a_failure_and_resumes_there(run: BenchRun, data: Path) -> None:
    first = cached(run, TWO_BROKEN, "--sw")
    first.assert_outcomes(passed=1, failed=1)
    assert ran(first) == ["extractbench[predictions-med-simple]", "extractbench[predictions-med-deep]"]
    # the next run starts at the sample that failed, and stops at the next failure
    second = cached(run, TWO_BROKEN, "--sw")
    assert ran(second) == ["extractbench[predictions-med-deep]"]
    fixed = [p if p["id"] != "med-deep" else PERFECT[1] for p in TWO_BROKEN]
    third = cached(run, fixed, "--sw")
    assert ran(third) == [
        "extractbench[predictions-med-deep]",
        "extractbench[predictions-shop-deep]",
        "extractbench[predictions-skip-1]",
    ]
    third.assert_outcomes(passed=2, failed=1, deselected=1)


@pytest.mark.slow
def test_sw_resumes_at_the_failed_sample_when_the_gate_fails_too(run: BenchRun, data: Path) -> None:
    def gated(*args: str) -> pytest.RunResult:
        return run(
            *ARGS,
            "-p",
            "cacheprovider",
            "-v",
            "--sw",
            "--extractbench-sla",
            "target",
            *args,
            files={"preds.jsonl": TWO_BROKEN},
        )

    first = gated()
    first.stdout.fnmatch_lines(["*SLA target: FAILED"])
    assert ran(first) == ["extractbench[predictions-med-simple]", "extractbench[predictions-med-deep]"]
    assert ran(gated()) == ["extractbench[predictions-med-deep]"]
    lf = run(*ARGS, "-p", "cacheprovider", "-v", "--lf", files={"preds.jsonl": TWO_BROKEN})
    assert ran(lf) == ["extractbench[predictions-med-deep]"]  # the failed gate is not a sample to rerun


def test_item_ids_are_the_same_from_run_to_run(run: BenchRun, data: Path) -> None:
    ids = [run(*ARGS, "--collect-only", "-q", files={"preds.jsonl": PERFECT}).stdout.lines[:4] for _ in range(2)]
    assert ids[0] == ids[1] and ids[0][0] == "data.jsonl::extractbench[predictions-med-simple]"
