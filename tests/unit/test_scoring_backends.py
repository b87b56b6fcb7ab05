"""Scoring receives similarities and grades through ``SemanticBackends``; it never builds a client itself."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from pytest_extractbench.scoring import ERROR, ScoringOptions, backends, score_sample
from pytest_extractbench.scoring.backends import NoBackendsError, current_backends, install_default, use_backends
from pytest_extractbench.scoring.whole_output import JUDGE, SIMILARITY, Item, score_whole_outputs

SCHEMA = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "x-eval-compare": "semantic"},
        "note": {"type": "string", "x-eval-compare": "semantic"},
    },
}
GOLD = {"city": "New York City", "note": "fever"}


class RecordedJudge:
    """Grades from a table, counting what it was asked like a real judge counts requests."""

    def __init__(self, grades: dict[Any, int]) -> None:
        self.grades = grades
        self.asked: list[Any] = []
        self.calls = self.prompt_tokens = self.completion_tokens = 0
        self.seconds = 0.0

    def grade(self, items: Sequence[tuple[str, Any, Any]]) -> list[Any]:
        self.calls += 1
        self.asked.extend(items)
        return [self.grades.get(predicted, ValueError(f"no grade for {predicted!r}")) for _, _, predicted in items]

    def grade_outputs(self, items: Sequence[tuple[str, str]], *, batch: int = 4) -> list[Any]:
        self.calls += 1
        self.asked.extend(items)
        return [(self.grades.get(output, 1), "recorded") for _, output in items]


class RecordedBackends:
    def __init__(self, cosines: dict[tuple[str, str], float], judge: RecordedJudge) -> None:
        self.cosines, self.the_judge, self.asked_for = cosines, judge, []

    def similarities(self, backend: str, model: str | None, pairs: Sequence[tuple[str, str]]) -> list[float]:
        self.asked_for.append((backend, model))
        if not self.cosines:
            raise RuntimeError("the embeddings server echoed key SECRET")
        return [self.cosines[pair] for pair in pairs]

    def judge(self, model: str, base_url: str) -> RecordedJudge:
        self.asked_for.append((model, base_url))
        return self.the_judge

    def mask(self, text: Any) -> str:
        return str(text).replace("SECRET", "***")


@pytest.fixture
def recorded() -> Iterator[RecordedBackends]:
    backends = RecordedBackends({("New York City", "NYC"): 0.9, ("fever", "rash"): 0.2}, RecordedJudge({"NYC": 7}))
    previous = use_backends(backends)
    yield backends
    use_backends(previous)


def test_the_semantic_comparator_scores_with_the_installed_embeddings(recorded: RecordedBackends) -> None:
    options = ScoringOptions(semantic="http://127.0.0.1:9/v1", semantic_model="m")
    score = score_sample(json.dumps({"city": "NYC", "note": "rash"}), GOLD, SCHEMA, options=options)
    got = {f.path: f for f in score.fields}
    assert got["city"].score == 1.0 and got["city"].category == "exact"  # 0.9 passes the 0.85 threshold
    assert got["note"].score == pytest.approx(0.2) and got["note"].category == "incorrect"
    assert recorded.asked_for == [("http://127.0.0.1:9/v1", "m")]  # the whole record in one request


def test_the_semantic_comparator_grades_with_the_installed_judge(recorded: RecordedBackends) -> None:
    options = ScoringOptions(judge_model="j", judge_url="http://127.0.0.1:9/v1")
    score = score_sample(json.dumps({"city": "NYC", "note": "rash"}), GOLD, SCHEMA, options=options)
    got = {f.path: f for f in score.fields}
    assert got["city"].category == "exact"  # 7 / 7
    assert got["note"].category == ERROR and "no grade for 'rash'" in got["note"].error
    assert recorded.the_judge.asked == [("city", "New York City", "NYC"), ("note", "fever", "rash")]


def test_whole_output_scores_come_from_the_backends_and_errors_are_masked_by_them(recorded: RecordedBackends) -> None:
    options = ScoringOptions(semantic="local", judge_model="j", judge_url="http://127.0.0.1:9/v1")
    score = score_sample('{"city": "NYC"}', GOLD, SCHEMA, options=options)
    recorded.cosines = {}  # the embeddings fail, quoting a secret
    item = Item(score, GOLD, '{"city": "NYC"}', {})
    cost = score_whole_outputs([item], options)
    assert cost.embedding_errors == 1 and SIMILARITY not in score.extras
    assert item.diagnostics["semantic_similarity_error"] == "RuntimeError: the embeddings server echoed key ***"
    assert score.extras[JUDGE] == pytest.approx(1 / 7) and item.diagnostics["judge"]["reasoning"] == "recorded"
    assert cost.judge_requests == 1


def test_without_backends_a_semantic_field_is_an_error_that_says_what_to_install() -> None:
    previous = use_backends(None)
    try:
        with pytest.raises(NoBackendsError, match="live.scoring_backends.install"):
            current_backends()
        options = ScoringOptions(semantic="local")
        score = score_sample(json.dumps({"city": "NYC"}), GOLD, SCHEMA, options=options)
        (city,) = [f for f in score.fields if f.path == "city"]
        assert city.category == ERROR and "scoring_backends.install()" in city.error
    finally:
        use_backends(previous)


def test_installing_returns_what_it_replaced_and_a_default_never_replaces_installed_backends() -> None:
    first, second = RecordedBackends({}, RecordedJudge({})), RecordedBackends({}, RecordedJudge({}))
    previous = use_backends(None)
    try:
        assert install_default(first) is first  # none installed: the default goes in
        assert install_default(second) is first  # some installed: they stay, and are the ones in use
        assert current_backends() is first
        assert use_backends(second) is first  # an explicit install replaces them and hands back the replaced
        assert use_backends(None) is second
    finally:
        use_backends(previous)


def test_a_fresh_import_has_no_backends_until_something_installs_them() -> None:
    # the module as a fresh process imports it (read from its file, in this process: coverage sees its first line)
    spec = importlib.util.spec_from_file_location("pytest_extractbench.scoring._fresh_backends", backends.__file__)
    assert spec is not None and spec.loader is not None
    fresh = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fresh)
    with pytest.raises(fresh.NoBackendsError, match="no judge or embeddings client is installed"):
        fresh.current_backends()


def test_the_package_s_score_sample_comes_with_the_live_clients() -> None:
    code = (
        "import sys\n"
        "from pytest_extractbench.scoring.backends import current_backends\n"
        "from pytest_extractbench import score_sample\n"
        "print(type(current_backends()).__module__, 'openai' in sys.modules)"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.split() == ["pytest_extractbench.live.scoring_backends", "False"]
