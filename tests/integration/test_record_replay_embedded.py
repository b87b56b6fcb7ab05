"""A cassette recorded from the embedded llama-server replays to the same metrics, in one process and under
``-n 2``, with no server started. Two tiny samples, a small token limit and the fast model keep it short."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pytest_extractbench.core.rundoc import iter_samples

pytestmark = [pytest.mark.llm, pytest.mark.slow, pytest.mark.usefixtures("local_extra")]

MODEL = "gemma3-270m"  # the fast model (tests/integration/conftest.py)
SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
    "required": ["name", "age"],
}
SAMPLES = [
    {"id": f"s{n}", "text": text, "schema": SCHEMA, "expected": expected}
    for n, (text, expected) in enumerate(
        [
            ("Anna Berg is 34 years old.", {"name": "Anna Berg", "age": 34}),
            ("Tom Li, aged 51, signed.", {"name": "Tom Li", "age": 51}),
        ]
    )
]
# every metric that does not depend on time: a replay answers instantly
HEADLINE = (
    "extraction_quality_score",
    "field_f1_partial",
    "field_f1_strict",
    "schema_validity_rate",
    "json_valid_rate",
    "exact_match_rate",
    "hallucination_rate",
    "type_accuracy",
    "num_samples",
)


def bench(pytester: pytest.Pytester, *args: str, out: str) -> pytest.RunResult:
    # the token limit is part of each answer's key: a replay asks with the same decoding parameters
    return pytester.runpytest(
        "-p",
        "no:randomly",
        "--extractbench",
        "--extractbench-dataset",
        "data.jsonl",
        "--model",
        MODEL,
        "--extractbench-output",
        out,
        "--extractbench-sla",
        "none",
        "--extractbench-report-only",
        "--extractbench-max-tokens",
        "48",
        *args,
    )


def scores(pytester: pytest.Pytester, out: str) -> dict[str, Any]:
    rows = list(iter_samples(pytester.path / out / "samples.jsonl"))
    return {row["sample_id"]: (row["response"]["content"], row["score"]) for row in rows}


def document(pytester: pytest.Pytester, out: str) -> dict[str, Any]:
    return json.loads((pytester.path / out / "metrics.json").read_text())


def origins(pytester: pytest.Pytester, out: str) -> set[tuple[str, str]]:
    rows = list(iter_samples(pytester.path / out / "samples.jsonl"))
    return {(row["response"]["origin"]["source"], row["response"]["origin"]["by"]) for row in rows}


def test_a_cassette_from_the_embedded_server_replays_to_identical_metrics(pytester: pytest.Pytester) -> None:
    (pytester.path / "data.jsonl").write_text("".join(json.dumps(s) + "\n" for s in SAMPLES), encoding="utf-8")
    live = bench(pytester, "--extractbench-slots", "2", "--extractbench-record", "cassette", out="live")
    assert live.ret == pytest.ExitCode.OK, live.stdout.str()
    recorded = document(pytester, "live")
    assert recorded["run"]["live"]["mode"] == "embedded"
    assert origins(pytester, "live") == {("asked", "embedded")}
    lines = (pytester.path / "cassette" / "cassette.jsonl").read_text().splitlines()
    assert len(lines) == 1 + len(SAMPLES)  # the header, then one answer a sample

    for name, extra in (("one", ()), ("two", ("-n", "2"))):
        replayed = bench(pytester, "--extractbench-replay", "cassette", *extra, out=name)
        assert replayed.ret == pytest.ExitCode.OK, replayed.stdout.str()
        found = document(pytester, name)
        assert "embedded" not in found["run"]["live"] or not found["run"]["live"]["embedded"]  # no server started
        assert origins(pytester, name) == {("replay", "embedded")}  # who gave the answer, replayed
        then, now = recorded["models"][MODEL], found["models"][MODEL]
        assert {k: now[k] for k in HEADLINE} == {k: then[k] for k in HEADLINE}
        assert scores(pytester, name) == scores(pytester, "live")  # each sample's answer and every field's score
