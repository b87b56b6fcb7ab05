"""The LLM judge and server embeddings against the embedded llama-server (gemma3-270m) on loopback.

They need the `local` extra; without it they skip, except under CI (CI=true), where it is a failure.
"""

from __future__ import annotations

import json

import pytest

from _require import import_or_skip
from pytest_extractbench import SampleRecord, ScoringOptions, model_metrics, score_sample
from pytest_extractbench.live.backends.llama_process import EmbeddedServer
from pytest_extractbench.live.judge import Judge, get_judge
from pytest_extractbench.scoring import ERROR

import_or_skip("openai", "the 'judge' extra is not installed")
pytestmark = pytest.mark.llm

SCHEMA = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "x-eval-compare": "semantic"},
        "diagnosis": {"type": "string", "x-eval-compare": "semantic"},
        "drug": {"type": "string", "x-eval-compare": "semantic"},
        "name": {"type": "string"},
    },
}
GOLD = {"city": "New York City", "diagnosis": "high blood pressure", "drug": "ibuprofen", "name": "Ann"}
OUTPUT = {"city": "NYC", "diagnosis": "hypertension", "drug": "paracetamol", "name": "Ann"}


@pytest.fixture(scope="module")
def judge_url(gemma_server: EmbeddedServer) -> str:
    return gemma_server.base_url


def test_judge_grades_every_semantic_field_of_a_record_in_one_call(judge_url, semantic_cache_dir) -> None:
    options = ScoringOptions(judge_model="gemma3-270m", judge_url=judge_url)
    judge = get_judge("gemma3-270m", judge_url)
    before = judge.calls
    score = score_sample(json.dumps(OUTPUT), GOLD, SCHEMA, options=options)
    assert judge.calls == before + 1  # three semantic fields, one request
    got = {f.path: f for f in score.fields}
    for path in ("city", "diagnosis", "drug"):
        field = got[path]
        assert field.comparator == "semantic"
        if field.category == ERROR:  # a small model may answer badly: then the field is excluded and says why
            assert field.error
            continue
        # grade / 7, or 1.0 at or above the 0.85 threshold (grades 6 and 7)
        assert field.score in {1.0} | {g / 7 for g in range(1, 6)}
    assert got["name"].category == "exact" and got["name"].comparator is None
    # verdicts are cached: the same record again asks only for what failed (nothing, normally)
    failed = any(f.category == ERROR for f in score.fields)
    again = score_sample(json.dumps(OUTPUT), GOLD, SCHEMA, options=options)
    assert judge.calls == before + 1 + failed
    if not failed:
        assert [(f.path, f.score) for f in again.fields] == [(f.path, f.score) for f in score.fields]


def test_judge_parses_and_validates_its_answers(judge_url, semantic_cache_dir) -> None:
    judge = Judge("gemma3-270m", judge_url)
    grades = judge.grade([("city", "Paris", "Paris, France"), ("drug", "aspirin", "insulin")])
    assert len(grades) == 2 and judge.calls == 1
    for grade in grades:
        assert isinstance(grade, Exception) or 1 <= grade <= 7
    assert Judge._parse('{"scores": [{"id": 1, "score": 7}, {"id": 2, "score": 9}]}', 2)[0] == (7, "")
    assert "no valid 1-7 grade for item 2" in str(
        Judge._parse('{"scores": [{"id": 1, "score": 7}, {"id": 2, "score": 9}]}', 2)[1]
    )


def test_an_unreachable_judge_makes_errors_that_are_counted_not_scored(semantic_cache_dir) -> None:
    options = ScoringOptions(judge_model="gemma3-270m", judge_url="http://127.0.0.1:9/v1")
    score = score_sample(json.dumps(OUTPUT), GOLD, SCHEMA, options=options)
    assert [f.category for f in score.fields] == [ERROR, ERROR, ERROR, "exact"]
    assert "judge request failed" in score.fields[0].error
    assert score.f1["strict"] == 1.0  # only "name" is in the metrics
    metrics = model_metrics([SampleRecord("m", "s", score)], options)
    assert metrics["comparator_errors"]["total"] == 3 and metrics["comparator_errors"]["by_comparator"] == {
        "semantic": 3
    }


def test_server_embeddings_from_llama_server(llama_servers, semantic_cache_dir) -> None:
    server = llama_servers.get("gemma3-270m", embeddings=True)
    options = ScoringOptions(semantic=server.base_url, semantic_model=server.model)
    score = score_sample(
        json.dumps({"city": "New York City", "diagnosis": "hypertension", "drug": "x"}), GOLD, SCHEMA, options=options
    )
    got = {f.path: f for f in score.fields}
    assert got["city"].category == "exact" and got["city"].equal  # equal text: no request needed
    for path in ("diagnosis", "drug"):
        assert got[path].category != ERROR, got[path].error
        assert 0.0 <= got[path].score <= 1.0


def test_gold_judged_against_itself_scores_7_on_the_default_embedded_model(llama_servers, semantic_cache_dir) -> None:
    from pytest_extractbench.dataset import load_dataset
    from pytest_extractbench.live.backends.llama_models import DEFAULT_EMBEDDED_MODEL
    from pytest_extractbench.scoring.whole_output import canonical_json

    server = llama_servers.get(DEFAULT_EMBEDDED_MODEL)  # the grade is about the model's quality
    judge = Judge(DEFAULT_EMBEDDED_MODEL, server.base_url, timeout=600)
    golds = [canonical_json(sample.expected) for sample in load_dataset().samples[:4]]
    verdicts = judge.grade_outputs([(gold, gold) for gold in golds])
    assert judge.calls == 1  # four outputs, one request
    assert [v[0] for v in verdicts] == [7, 7, 7, 7], verdicts
    assert all(isinstance(v[1], str) and v[1] for v in verdicts)  # a reasoning for each
    assert judge.prompt_tokens > 0 and judge.completion_tokens > 0
