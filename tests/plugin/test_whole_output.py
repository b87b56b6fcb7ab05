"""Whole-output scores through pytest: the LLM judge on a loopback judge server (tests/faultserver.py) and the
semantic similarity with the bundled MiniLM embeddings; their metrics, CIs, reasoning, cost, cache and reports."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from benchrun import OFFLINE_ARGS, BenchRun
from faultserver import FaultServer

from pytest_extractbench.core.rundoc import iter_samples
from pytest_extractbench.live import verdict_cache
from pytest_extractbench.scoring import ScoringOptions, score_sample
from pytest_extractbench.scoring.whole_output import Item, canonical_json, score_whole_outputs

SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}, "city": {"type": "string"}}}
SAMPLES = [
    {"id": "same", "text": "Ann lives in Oslo.", "schema": SCHEMA, "expected": {"name": "Ann", "city": "Oslo"}},
    {"id": "differs", "text": "Bo lives in Rome.", "schema": SCHEMA, "expected": {"name": "Bo", "city": "Rome"}},
    {"id": "garbage", "text": "Cy lives in Lima.", "schema": SCHEMA, "expected": {"name": "Cy", "city": "Lima"}},
]
OUTPUTS = {
    "same": '{"city": "Oslo", "name": "Ann"}',
    "differs": '{"name": "Bo", "city": "Paris"}',
    "garbage": "I could not find anything",
}


def grading_judge(body: dict[str, Any]) -> Any:
    """A deterministic judge: 7 when the extraction is the gold (canonical JSON compared), else 3."""
    items = [json.loads(line) for line in body["messages"][-1]["content"].splitlines()]
    return {
        "grades": [
            {
                "id": item["id"],
                "reasoning": "identical"
                if item["expected"] == item["extracted"]
                else f"the judge saw {item['extracted']}",
                "score": 7 if item["expected"] == item["extracted"] else 3,
            }
            for item in items
        ]
    }


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    verdict_cache.clear_memory()  # grades are remembered per process too, and these runs are in-process
    pytester.path.joinpath("data.jsonl").write_text("".join(json.dumps(s) + "\n" for s in SAMPLES))
    pytester.path.joinpath("preds.jsonl").write_text(
        "".join(json.dumps({"id": k, "output": v}) + "\n" for k, v in OUTPUTS.items())
    )
    return pytester


ARGS = (
    *OFFLINE_ARGS,
    "--extractbench-resamples",
    "200",
)


def scored(run: BenchRun, *args: str, out: str = "out") -> dict[str, Any]:
    """metrics.json of a run of the project's predictions."""
    run(*ARGS, *args, out=out)
    return run.document(out)


@pytest.mark.slow
def test_the_judge_grades_whole_outputs_keeps_its_reasoning_and_is_cached(
    run: BenchRun, project: pytest.Pytester, fault_server: FaultServer
) -> None:
    fault_server.answer = grading_judge
    judge = ("--extractbench-judge", "judge-7b", "--extractbench-judge-url", fault_server.url)
    document = scored(run, *judge)
    metrics = document["models"]["predictions"]
    # same: 7/7; differs: 3/7; garbage is not JSON: grade 1 without asking -> (7 + 3 + 1) / 21
    assert metrics["judge_score"] == pytest.approx(11 / 21)
    assert metrics["confidence_intervals"]["judge_score"]["n"] == 3
    # one request graded both JSON outputs (4 per request); nothing was sent about the garbage
    assert len(fault_server.requests) == 1 and fault_server.requests[0]["model"] == "judge-7b"
    sent = [json.loads(line) for line in fault_server.requests[0]["messages"][-1]["content"].splitlines()]
    assert [item["extracted"] for item in sent] == [
        canonical_json({"name": "Bo", "city": "Paris"}),
        canonical_json({"name": "Ann", "city": "Oslo"}),
    ]
    assert document["whole_output_cost"]["judge_requests"] == 1 and document["whole_output_cost"]["judge_errors"] == 0
    rows = {r["sample_id"]: r for r in iter_samples(project.path / "out" / "samples.jsonl")}
    assert rows["same"]["diagnostics"]["judge"] == {"grade": 7, "reasoning": "identical"}
    assert rows["differs"]["diagnostics"]["judge"]["reasoning"].startswith("the judge saw {")
    assert rows["garbage"]["diagnostics"]["judge"]["grade"] == 1
    summary = (project.path / "out" / "summary.md").read_text()
    assert "- **LLM judge (grade / 7)**: 0.524 [95% CI: " in summary and "(mean grade 3.67 of 7)" in summary
    assert "- **LLM judge**: 1 requests, " in summary
    html = (project.path / "out" / "report.html").read_text()
    assert "LLM judge (grade / 7)</td>" in html and 'id="whole-output-cost"' in html
    assert "judge_score" in (project.path / "out" / "metrics.csv").read_text().splitlines()[0]
    # the same outputs again: every grade comes from the cache
    again = scored(run, *judge, out="again")
    assert len(fault_server.requests) == 1 and again["models"]["predictions"]["judge_score"] == pytest.approx(11 / 21)


@pytest.mark.parametrize(
    "reply", ["no grades here", {"grades": [{"id": 1, "reasoning": "x", "score": 9}, {"id": 2, "reasoning": "y"}]}]
)
def test_a_judge_that_answers_nonsense_leaves_those_samples_ungraded_and_says_so(
    run: BenchRun, project: pytest.Pytester, fault_server: FaultServer, reply: Any
) -> None:
    fault_server.answer = lambda body: reply
    document = scored(run, "--extractbench-judge", "judge-7b", "--extractbench-judge-url", fault_server.url)
    # the two JSON outputs have no grade (counted as failures); the garbage output still has its grade 1
    assert document["whole_output_cost"]["judge_errors"] == 2
    assert document["models"]["predictions"]["judge_score"] == pytest.approx(1 / 7)
    rows = list(iter_samples(project.path / "out" / "samples.jsonl"))
    errors = [r["diagnostics"]["judge"]["error"] for r in rows if "error" in r["diagnostics"].get("judge", {})]
    assert len(errors) == 2 and all("judge" in e for e in errors)
    assert "(2 samples without a grade)" in (project.path / "out" / "summary.md").read_text()


def test_without_the_options_no_whole_output_score_appears(run: BenchRun, project: pytest.Pytester) -> None:
    document = scored(run)
    metrics = document["models"]["predictions"]
    assert "judge_score" not in metrics and "semantic_similarity" not in metrics
    assert "judge_score" not in metrics["confidence_intervals"] and "whole_output_cost" not in document
    assert "LLM judge" not in (project.path / "out" / "report.html").read_text()


@pytest.mark.slow
def test_gold_against_itself_has_similarity_one_with_the_bundled_embeddings() -> None:
    pytest.importorskip("sentence_transformers", reason="the semantic extra (a dev dependency) is missing")
    gold = {"name": "Ann", "city": "Oslo", "tags": ["a", "b"]}
    options = ScoringOptions(semantic="local")
    same = score_sample(json.dumps({"tags": ["a", "b"], "city": "Oslo", "name": "Ann"}), gold, options=options)
    other = score_sample('{"name": "Zed", "city": "Tokyo", "tags": []}', gold, options=options)
    broken = score_sample("{not json", gold, options=options)
    items = [
        Item(s, gold, out, {})
        for s, out in (
            (same, '{"tags": ["a", "b"], "city": "Oslo", "name": "Ann"}'),
            (other, '{"name": "Zed", "city": "Tokyo", "tags": []}'),
            (broken, "{not json"),
        )
    ]
    cost = score_whole_outputs(items, options)
    assert math.isclose(same.extras["semantic_similarity"], 1.0, abs_tol=1e-5)  # key order does not matter
    assert 0.0 < other.extras["semantic_similarity"] < 0.95
    assert broken.extras["semantic_similarity"] == 0.0  # not JSON: never embedded
    # the first output is the gold in canonical form: two distinct texts were embedded
    assert cost.embedded_texts == 2 and cost.embedding_errors == 0
