"""Whole-output scores, the semantic comparator, parsing and the sample scorer at their edges. The embedding and
judge backends are recorded ones installed through the public ``use_backends`` hook (the real ones need a model
server: tests/integration covers them); every expected value is worked by hand in a comment."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from pytest_extractbench.scoring import MISSING, score_sample
from pytest_extractbench.scoring.backends import use_backends
from pytest_extractbench.scoring.comparators import COMPARATORS
from pytest_extractbench.scoring.compare import Comparison
from pytest_extractbench.scoring.options import ScoringOptions
from pytest_extractbench.scoring.parse import _TOO_DEEP, ParsedOutput, parse_output
from pytest_extractbench.scoring.result import SampleScore
from pytest_extractbench.scoring.sample import _walker, scoring_error_score
from pytest_extractbench.scoring.semantic import _check, compare_semantic
from pytest_extractbench.scoring.whole_output import (
    NOT_JSON,
    Item,
    WholeOutputCost,
    canonical_json,
    score_whole_outputs,
)


class CountingJudge:
    """Grades from a table; each call adds to the request, token and time counters as a server's answer would."""

    def __init__(self, grades: dict[Any, Any], *, fail: bool = False) -> None:
        self.grades, self.fail = grades, fail
        self.batches: list[int] = []
        self.calls, self.prompt_tokens, self.completion_tokens, self.seconds = 10, 100, 50, 5.0  # earlier use

    def _spend(self) -> None:
        self.calls += 1
        self.prompt_tokens += 7
        self.completion_tokens += 3
        self.seconds += 0.25

    def grade(self, items: Sequence[tuple[str, Any, Any]]) -> list[Any]:
        self._spend()
        return [self.grades[predicted] for _, _, predicted in items]

    def grade_outputs(self, items: Sequence[tuple[str, str]], *, batch: int = 99) -> list[Any]:
        self._spend()
        self.batches.append(batch)
        if self.fail:
            raise RuntimeError("judge down " + "!" * 400)
        return [self.grades[output] for _, output in items]


class Backends:
    def __init__(self, cosines: dict[tuple[str, str], float] | None, judge: CountingJudge | None = None) -> None:
        self.cosines, self.the_judge = cosines, judge
        self.asked: list[Any] = []

    def similarities(self, backend: str, model: str | None, pairs: Sequence[tuple[str, str]]) -> list[float]:
        self.asked.append((backend, model, list(pairs)))
        if self.cosines is None:
            raise RuntimeError("embeddings down " + "!" * 400)
        return [self.cosines[pair] for pair in pairs]

    def judge(self, model: str, base_url: str) -> CountingJudge:
        self.asked.append((model, base_url))
        assert self.the_judge is not None
        return self.the_judge

    def mask(self, text: Any) -> str:
        return " ".join(str(text).split())


@pytest.fixture
def backends() -> Iterator[list[Backends]]:
    """Install the backends a test appends (the last one appended is used)."""
    slot: list[Backends] = []

    class Current:
        def __getattr__(self, name: str) -> Any:
            return getattr(slot[-1], name)

    previous = use_backends(Current())  # type: ignore[arg-type]
    try:
        yield slot
    finally:
        use_backends(previous)


def _item(output: Any, expected: Any) -> Item:
    return Item(score_sample(output, expected), expected, output, {})


# --- whole-output scores ---


def test_canonical_json_is_one_text_per_value() -> None:
    assert canonical_json({"b": 1, "a": "é"}) == '{"a":"é","b":1}'  # sorted keys, no spaces, not escaped
    assert canonical_json(MISSING) == '"<no output>"'  # anything JSON cannot hold is written as its str()


def test_the_cost_starts_at_nothing() -> None:
    assert WholeOutputCost().as_dict() == {
        "embedded_texts": 0, "embedding_seconds": 0.0, "embedding_errors": 0, "judge_requests": 0,
        "judge_prompt_tokens": 0, "judge_completion_tokens": 0, "judge_seconds": 0.0, "judge_errors": 0,
    }  # fmt: skip


def test_similarity_and_grades_land_in_each_sample_and_the_cost_counts_this_run_only(
    backends: list[Backends],
) -> None:
    gold = {"a": "x"}
    good, other, invalid = _item('{"a": "x"}', gold), _item('{"a": "y"}', gold), _item("not json", gold)
    judge = CountingJudge({'{"a":"x"}': (7, "same"), '{"a":"y"}': (3, "close")})
    backends.append(Backends({('{"a":"x"}', '{"a":"x"}'): 0.99, ('{"a":"x"}', '{"a":"y"}'): 0.5}, judge))
    options = ScoringOptions(semantic="st", semantic_model="m", judge_model="j", judge_url="http://judge")
    cost = score_whole_outputs([good, other, invalid], options)
    assert good.score.extras == {"semantic_similarity": 0.99, "judge_score": 1.0}  # 7 / 7
    assert other.score.extras == {"semantic_similarity": 0.5, "judge_score": 3 / 7}
    assert other.diagnostics == {"judge": {"grade": 3, "reasoning": "close"}}
    # not JSON: similarity 0, the lowest grade 1 of 7, no backend asked about it
    assert invalid.score.extras == {"semantic_similarity": 0.0, "judge_score": 1 / 7}
    assert invalid.diagnostics == {"judge": {"grade": 1, "reasoning": NOT_JSON}}
    # one embedding request of two pairs (2 distinct texts: the gold is the first output), one judge request:
    # 7 + 3 tokens, 0.25 s, whatever the judge had spent before
    assert backends[0].asked[0] == ("st", "m", [('{"a":"x"}', '{"a":"x"}'), ('{"a":"x"}', '{"a":"y"}')])
    assert cost.embedded_texts == 2 and 0.0 <= cost.embedding_seconds < 60
    assert (cost.judge_requests, cost.judge_prompt_tokens, cost.judge_completion_tokens) == (1, 7, 3)
    assert cost.judge_seconds == 0.25 and (cost.embedding_errors, cost.judge_errors) == (0, 0)
    assert judge.batches == [4]  # outputs graded four to a request unless asked otherwise


def test_nothing_is_asked_of_a_judge_without_its_url_or_when_no_output_is_json(backends: list[Backends]) -> None:
    backends.append(Backends({}, CountingJudge({})))
    item = _item('{"a": 1}', {"a": 1})
    assert score_whole_outputs([item], ScoringOptions(judge_model="j")) == WholeOutputCost()
    invalid = _item("nope", {"a": 1})
    score_whole_outputs([invalid], ScoringOptions(semantic="st", judge_model="j", judge_url="u"))
    assert backends[0].asked == [] and item.score.extras == {}
    assert invalid.score.extras == {"semantic_similarity": 0.0, "judge_score": 1 / 7}


def test_a_failed_backend_marks_each_sample_and_scores_none(backends: list[Backends]) -> None:
    backends.append(Backends(None, CountingJudge({}, fail=True)))
    items = [_item('{"a": 1}', {"a": 1}), _item('{"a": 2}', {"a": 1})]
    cost = score_whole_outputs(items, ScoringOptions(semantic="st", judge_model="j", judge_url="u"))
    assert (cost.embedding_errors, cost.embedded_texts, cost.judge_errors, cost.judge_requests) == (2, 0, 2, 1)
    for item in items:
        assert item.score.extras == {}
        # each error's words clipped to 300 characters
        assert item.diagnostics == {
            "semantic_similarity_error": ("RuntimeError: embeddings down " + "!" * 400)[:300],
            "judge": {"error": ("judge down " + "!" * 400)[:300]},
        }


def test_only_a_semantic_option_asks_for_similarities(backends: list[Backends]) -> None:
    backends.append(Backends({}, CountingJudge({'{"a":1}': (5, "ok")})))
    item = _item('{"a": 1}', {"a": 1})
    score_whole_outputs([item], ScoringOptions(judge_model="j", judge_url="u"))
    assert item.score.extras == {"judge_score": 5 / 7} and backends[0].asked == [("j", "u")]


# --- the semantic comparator ---


def test_semantic_parameters_name_the_method_and_the_threshold() -> None:
    assert _check({"method": "judge", "threshold": 0.9}) == []
    assert _check({"method": "fuzzy"}) == ["'method' must be one of embedding, judge, partial, got 'fuzzy'"]
    assert _check({}) == []


def test_a_semantic_field_passes_at_its_threshold_and_keeps_its_cosine_below(backends: list[Backends]) -> None:
    backends.append(Backends({("cat", "kitten"): 0.85, ("cat", "dog"): 0.849}))
    options = ScoringOptions(semantic="st")
    items = [("cat", "kitten", {}, "a"), ("cat", "dog", {}, "b"), ("Cat ", "cat", {}, "c"), ("cat", 5, {}, "d")]
    found = compare_semantic(items, options)
    # 0.85 >= the default threshold 0.85: full credit, not equal; 0.849 is kept as the score
    assert found[0] == Comparison(1.0, False) and found[1] == Comparison(0.849, False)
    assert found[2].score == 1.0 and found[2].equal  # equal after normalisation: no backend needed
    assert found[3].equal is False and found[3].score == 0.0  # not two texts: the plain comparison
    assert backends[0].asked == [("st", None, [("cat", "kitten"), ("cat", "dog")])]


def test_a_judged_field_is_its_grade_over_seven_against_the_threshold(backends: list[Backends]) -> None:
    backends.append(Backends({}, CountingJudge({"b": 6, "c": 5, "d": ValueError("no grade")})))
    options = ScoringOptions(judge_model="j", judge_url="u")
    items = [("a", "b", {"threshold": 0.8}, "p"), ("a", "c", {"threshold": 0.8}, "q"), ("a", "d", {}, "r")]
    first, second, third = compare_semantic(items, options)
    assert first == Comparison(1.0, False)  # 6/7 = 0.857 >= 0.8
    assert second == Comparison(5 / 7, False)  # 5/7 = 0.714 < 0.8
    assert isinstance(third, ValueError)


def test_a_judge_without_its_url_fails_each_field_it_was_asked_for(backends: list[Backends]) -> None:
    backends.append(Backends({}, CountingJudge({})))
    (result,) = compare_semantic([("a", "b", {"method": "judge"}, "p")], ScoringOptions(judge_model="j"))
    assert isinstance(result, RuntimeError) and "no judge configured" in str(result)
    with pytest.raises(ValueError, match="built in"):
        COMPARATORS.add("semantic", COMPARATORS.get("semantic"), overwrite=True)
    (without_model,) = compare_semantic([("a", "b", {"method": "judge"}, "p")], ScoringOptions(judge_url="u"))
    assert isinstance(without_model, RuntimeError)


# --- parsing ---


def test_parsed_outputs_say_why_there_is_no_value() -> None:
    assert parse_output('{"a": 1}') == ParsedOutput({"a": 1}, True, None)
    assert parse_output(MISSING) == ParsedOutput(None, False, "no output")
    assert parse_output("  ") == ParsedOutput(None, False, "empty output")
    assert parse_output("{") == ParsedOutput(None, False, "unparseable JSON: Expecting property name enclosed in "
                                             "double quotes (line 1 column 2)")  # fmt: skip
    assert parse_output(b'{"a": 2}') == ParsedOutput({"a": 2}, True, None)


def test_output_past_the_depth_limit_is_refused_whether_text_or_parsed() -> None:
    assert ParsedOutput(None, False, "unparseable JSON: nested too deeply (more than 128 levels)") == _TOO_DEEP
    assert parse_output("[" * 200 + "]" * 200) == _TOO_DEEP
    assert parse_output('{"a":' * 200 + "1" + "}" * 200) == _TOO_DEEP
    deep: Any = 1
    for _ in range(200):
        deep = [deep]
    assert parse_output(deep) == _TOO_DEEP
    assert parse_output(json.dumps(deep)) == _TOO_DEEP
    # 128 brackets, none nested: within the limit
    flat = "[" + ",".join(["[]"] * 127) + "]"
    assert parse_output(flat) == ParsedOutput([[]] * 127, True, None)
    assert parse_output("[" * 3000 + "]" * 3000) == _TOO_DEEP  # past Python's own recursion limit too


def test_an_integer_python_will_not_read_is_unparseable() -> None:
    parsed = parse_output("1" * 5000)
    assert parsed.value is None and parsed.json_valid is False
    assert parsed.error is not None and parsed.error.startswith("unparseable JSON: Exceeds the limit (4300 digits)")


# --- the sample scorer ---


def test_one_walker_per_options_object() -> None:
    options = ScoringOptions()
    assert _walker(options) is _walker(options)
    other = ScoringOptions(exact_within=0.1)
    assert _walker(other) is not _walker(options)


def test_anls_star_of_output_that_is_not_json_compares_the_gold_with_nothing() -> None:
    # no output value: null against a scalar gold (0 vs null is 0; 0 vs 0 would be 1), {} against an object
    assert score_sample("not json", 0).anls_star_observed == 0.0
    assert score_sample("not json", {"a": "x"}).anls_star_observed == 0.0


def test_a_sample_that_could_not_be_scored_counts_as_invalid_with_its_gold_missed() -> None:
    score = scoring_error_score({"a": 1, "b": "x"}, "timed out", sample_id="s")
    assert isinstance(score, SampleScore) and (score.json_valid, score.schema_valid) == (False, False)
    assert score.parse_error == "scoring_error: timed out" and list(score.validation_errors) == []
    assert [(f.path, f.category) for f in score.fields] == [("a", "missed"), ("b", "missed")]
    assert score.anls_star_observed == 0.0 and score.eqs == 0.0 and score.sample_id == "s"
    assert scoring_error_score({"a": 1}, "x", options=ScoringOptions(anls_star=False)).anls_star is None


def test_a_judge_that_cannot_be_had_is_an_error_of_each_sample_and_costs_nothing(backends: list[Backends]) -> None:
    backends.append(Backends({}, None))  # asking it for its judge fails
    items = [_item('{"a": 1}', {"a": 1})]
    cost = score_whole_outputs(items, ScoringOptions(judge_model="j", judge_url="u"))
    assert (cost.judge_errors, cost.judge_requests, cost.judge_prompt_tokens) == (1, 0, 0)
    assert set(items[0].diagnostics["judge"]) == {"error"} and items[0].score.extras == {}


def test_a_semantic_score_asked_with_no_backends_installed_records_why_on_one_line() -> None:
    previous = use_backends(None)
    try:
        item = _item('{"a": "x"}', {"a": "x"})
        cost = score_whole_outputs([item], ScoringOptions(semantic="st"))
    finally:
        use_backends(previous)
    # no backends: the similarity is left out and the reason kept (217 characters, under the 300 kept)
    assert "semantic_similarity" not in item.score.extras and cost.embedding_errors == 1
    assert item.diagnostics["semantic_similarity_error"] == (
        "NoBackendsError: no judge or embeddings client is installed: call "
        "pytest_extractbench.live.scoring_backends.install() (evaluate() and the plugin do), or "
        "pytest_extractbench.scoring.backends.use_backends(your_backends)"
    )
