"""Buckets against the baseline through pytest, on real files: every bucket occupied by a sample chosen to land
there, in metrics.json, the terminal, summary.md and the JUnit XML; the delta option moves a dropped sample."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
    "required": ["name"],
}


def sample(n: int, age: int | None = None) -> dict:
    return {
        "id": f"s{n}",
        "text": f"P{n} is {n}.",
        "schema": SCHEMA,
        "expected": {"name": f"P{n}", "age": n if age is None else age},
    }


def right(n: int) -> dict:
    return {"id": f"s{n}", "output": {"name": f"P{n}", "age": n}}


def broken(n: int) -> dict:
    return {"id": f"s{n}", "output": "not json"}


BEFORE_DATA = [sample(n) for n in range(10)]
BEFORE_ANSWERS = [broken(n) if n in (4, 5) else right(n) for n in range(10)]
# s0 breaks (pass -> fail), s1's age goes wrong (EQS drop, still passing), s2's gold is edited (changed),
# s3 leaves the dataset (removed), s4 is fixed, s5 still fails, s10 is new; s6..s9 stay as they were
AFTER_DATA = [sample(2, age=99) if n == 2 else sample(n) for n in range(11) if n != 3]
AFTER_ANSWERS = [broken(0), {"id": "s1", "output": {"name": "P1", "age": 7}}] + [
    broken(n) if n == 5 else right(n) for n in (2, 4, 5, 6, 7, 8, 9, 10)
]


def write(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def bench(pytester: pytest.Pytester, data: list[dict], answers: list[dict], *args: str, out: str) -> pytest.RunResult:
    write(pytester.path / "data.jsonl", data)
    write(pytester.path / "preds.jsonl", answers)
    return pytester.runpytest(
        "-p",
        "no:randomly",
        "--extractbench",
        "--extractbench-dataset",
        "data.jsonl",
        "--extractbench-predictions",
        "preds.jsonl",
        "--extractbench-output",
        out,
        "--extractbench-sla",
        "none",
        "--extractbench-resamples",
        "200",
        *args,
    )


@pytest.fixture
def saved(pytester: pytest.Pytester) -> None:
    bench(pytester, BEFORE_DATA, BEFORE_ANSWERS, "--extractbench-save", "main", out="before")


def test_every_bucket_is_filled_by_the_sample_chosen_for_it(pytester: pytest.Pytester, saved: None) -> None:
    result = bench(
        pytester, AFTER_DATA, AFTER_ANSWERS, "--extractbench-compare", "main", "--junitxml", "junit.xml", out="after"
    )
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # s0 and s5 fail as items; no gate is asked for
    result.stdout.fnmatch_lines(
        [
            "  model predictions: verdict * on 8 shared samples",
            "    samples (regressed: pass -> fail or EQS drop > 0.05): 2 regressed, 1 fixed, 1 still failing, "
            "4 unchanged, 1 new, 1 removed, 1 changed",
            "    worst: s0 1.000 -> 0.000, pass -> fail (age: exact -> missed, name: exact -> missed); "
            "s1 1.000 -> 0.* (age: exact -> incorrect)",
        ]
    )
    found = json.loads((pytester.path / "after" / "metrics.json").read_text())
    buckets = found["baseline_comparison"]["models"]["predictions"]["buckets"]
    assert buckets["samples"] == {
        "regressed": ["s0", "s1"],
        "fixed": ["s4"],
        "still_failing": ["s5"],
        "new": ["s10"],
        "removed": ["s3"],
        "changed": ["s2"],
    }
    assert [r["sample_id"] for r in buckets["regressions"]] == ["s0", "s1"]
    assert buckets["regressions"][1]["field_flips"] == [["age", "exact", "incorrect"]]
    assert buckets["field_flips"] == {"missed -> exact": 2, "exact -> missed": 2, "exact -> incorrect": 1}
    assert buckets["fields"]["age"] == {"worse": 2, "better": 1}

    summary = (pytester.path / "after" / "summary.md").read_text()
    assert (
        "samples: 2 regressed, 1 fixed, 1 still failing, 4 unchanged, 1 new, 1 removed, 1 changed" in summary
    )  # in the headline beside the verdict
    assert "| s1 | 1.000 | 0." in summary and "age: exact -> incorrect" in summary

    suite = ET.parse(pytester.path / "junit.xml").getroot().find("testsuite")
    assert [p.get("value") for p in suite.iter("property") if p.get("name") == "extractbench_buckets"] == [
        "predictions: 2 regressed, 1 fixed, 1 still failing, 4 unchanged, 1 new, 1 removed, 1 changed"
    ]
    cases = {c.get("name"): {p.get("name"): p.get("value") for p in c.iter("property")} for c in suite.iter("testcase")}
    bucket_of = {
        name.split("-", 1)[1].rstrip("]"): props.get("extractbench_bucket")
        for name, props in cases.items()
        if name.startswith("extractbench[")
    }
    assert bucket_of == {
        "s0": "regressed",
        "s1": "regressed",
        "s2": "changed",
        "s4": "fixed",
        "s5": "still_failing",
        "s6": "unchanged",
        "s7": "unchanged",
        "s8": "unchanged",
        "s9": "unchanged",
        "s10": "new",
    }
    assert cases["extractbench[predictions-s1]"]["extractbench_field_flips"] == "age: exact -> incorrect"


@pytest.mark.slow
def test_the_delta_decides_whether_a_drop_is_a_regression(pytester: pytest.Pytester, saved: None) -> None:
    result = bench(
        pytester,
        AFTER_DATA,
        AFTER_ANSWERS,
        "--extractbench-compare",
        "main",
        "--extractbench-sample-regression-delta",
        "0.9",
        "-n",
        "2",
        "--junitxml",
        "x.xml",
        out="lenient",
    )
    result.stdout.fnmatch_lines(
        [
            "    samples (regressed: pass -> fail or EQS drop > 0.9): 1 regressed, 1 fixed, "
            "1 still failing, 5 unchanged, 1 new, 1 removed, 1 changed"
        ]
    )
    found = json.loads((pytester.path / "lenient" / "metrics.json").read_text())
    buckets = found["baseline_comparison"]["models"]["predictions"]["buckets"]
    assert buckets["samples"]["regressed"] == ["s0"] and buckets["eqs_delta"] == 0.9
    # under xdist the workers' reports carry no bucket: the controller adds it before the JUnit XML is written
    cases = {
        c.get("name"): {p.get("name"): p.get("value") for p in c.iter("property")}
        for c in ET.parse(pytester.path / "x.xml").getroot().iter("testcase")
    }
    assert cases["extractbench[predictions-s0]"]["extractbench_bucket"] == "regressed"
    assert cases["extractbench[predictions-s1]"]["extractbench_bucket"] == "unchanged"
