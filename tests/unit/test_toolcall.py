"""Tool-call scoring (BFCL's rules): hand-computed cases, invariants, and the real BFCL files."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from _require import require_or_skip
from pytest_extractbench.dataset.responses import ModelResponse
from pytest_extractbench.tracks.toolcall import (
    ToolCallTrack,
    acceptable,
    aggregate_calls,
    argument_counts,
    match_calls,
    parse_calls,
    safe_name,
    score_calls,
    to_json_schema,
    value_matches,
)

BFCL = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "bfcl_tool_calls"
if not BFCL.is_dir():
    BFCL = Path("/work/shared/data/bfcl_tool_calls")

WEATHER = {"get_weather": {"city": ["Paris", "Paris, France"], "unit": ["celsius", ""]}}
MAIL = {"send_email": {"to": ["bob@example.com"], "subject": ["Lunch"]}}


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments, "error": None}


# -- values --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("predicted", "gold", "ok"),
    [
        ("paris", "Paris", True),  # case
        ("New-York", "new york", True),  # BFCL drops spaces and - _ . , / * ^
        ("Pariss", "Paris", False),
        (10, 10.0, True),  # an int where a float is expected
        (10.5, 10, False),  # a fraction where an int is expected
        (10.0, 10, True),
        (True, 1, False),  # booleans are not numbers
        ("10", 10, False),  # a string is not a number
        ([3, 5], [3, 5], True),
        ([5, 3], [3, 5], False),  # lists keep their order
        ({"a": 1}, {"a": [1], "b": [""]}, True),  # nested BFCL gold: b optional
        ({"a": 1, "c": 2}, {"a": [1]}, False),  # unexpected nested key
        (None, None, True),
    ],
)
def test_value_matches_follows_bfcl(predicted: Any, gold: Any, ok: bool) -> None:
    assert value_matches(predicted, gold) is ok


def test_empty_string_only_means_optional() -> None:
    assert acceptable("celsius", ["celsius", ""])
    assert not acceptable("", ["celsius", ""])
    assert not acceptable("kelvin", ["celsius", ""])


# -- arguments -----------------------------------------------------------------------------------


def test_argument_counts_by_hand() -> None:
    gold = {"city": ["Paris"], "unit": ["celsius", ""], "days": [3]}
    # city right (tp), unit omitted (optional: nothing), days wrong (fp + fn), extra key (fp)
    assert argument_counts(gold, {"city": "paris", "days": 4, "lang": "fr"}) == {"tp": 1, "fp": 2, "fn": 1}
    # nothing predicted: the two required arguments are missed
    assert argument_counts(gold, None) == {"tp": 0, "fp": 0, "fn": 2}
    assert argument_counts(gold, {"city": "Paris", "unit": "celsius", "days": 3}) == {"tp": 3, "fp": 0, "fn": 0}


# -- calls ---------------------------------------------------------------------------------------


def test_parallel_calls_match_in_any_order() -> None:
    gold = [{"get_weather": {"city": ["Tokyo"]}}, {"get_weather": {"city": ["Berlin"]}}]
    predicted = [call("get_weather", city="Berlin"), call("get_weather", city="Tokyo")]
    assert sorted(match_calls(gold, predicted)) == [(0, 1), (1, 0)]
    result = score_calls(gold, predicted)
    assert result["correct"] and result["arguments_exact"] == 2 and result["arguments"] == {"tp": 2, "fp": 0, "fn": 0}


def test_score_calls_by_hand() -> None:
    # gold: weather(Paris) and email(bob, Lunch); predicted: email right, weather for London, one extra call
    gold = [WEATHER, MAIL]
    predicted = [
        call("send_email", to="bob@example.com", subject="Lunch"),
        call("get_weather", city="London"),
        call("get_time", zone="UTC"),
    ]
    result = score_calls(gold, predicted)
    assert result["calls"] == 3  # max(2 gold, 3 predicted)
    assert result["name_matches"] == 2
    assert result["arguments_exact"] == 1
    # email: tp 2; weather: city wrong -> fp 1 fn 1; extra call: its argument is a fp
    assert result["arguments"] == {"tp": 2, "fp": 2, "fn": 1}
    assert not result["correct"]
    metrics = aggregate_calls([result])
    assert metrics["name_match_rate"] == pytest.approx(2 / 3)
    assert metrics["arguments_exact_match_rate"] == pytest.approx(1 / 3)
    assert metrics["arguments_precision"] == pytest.approx(2 / 4)
    assert metrics["arguments_recall"] == pytest.approx(2 / 3)
    assert metrics["arguments_f1"] == pytest.approx(2 * 0.5 * (2 / 3) / (0.5 + 2 / 3))


def test_wrong_name_costs_all_arguments() -> None:
    result = score_calls([MAIL], [call("send_mail", to="bob@example.com", subject="Lunch")])
    assert result["name_matches"] == 0
    assert result["arguments"] == {"tp": 0, "fp": 2, "fn": 2}


def test_abstention() -> None:
    right = score_calls([], [])
    wrong = score_calls([], [call("get_weather", city="Rome")])
    lazy = score_calls([WEATHER], [])
    broken = score_calls([WEATHER], [], format_error="not JSON")
    assert right["correct"] and not wrong["correct"] and not lazy["correct"] and not broken["correct"]
    metrics = aggregate_calls([right, wrong, lazy, broken])
    assert metrics["abstention"] == {"samples": 2, "accuracy": 0.5, "false_abstention_rate": 0.5}
    assert metrics["output_valid_rate"] == 0.75
    assert metrics["accuracy"] == 0.25


def test_valid_call_rate_checks_names_and_parameter_schemas() -> None:
    schemas = {
        "get_weather": to_json_schema(
            {"type": "dict", "properties": {"city": {"type": "string"}}, "required": ["city"]}
        )
    }
    predicted = [
        call("get_weather", city="Rome"),  # valid
        call("get_weather", city=3),  # wrong type
        call("get_weather"),  # required city missing
        call("launch_rocket"),  # unknown function
        {"name": "get_weather", "arguments": None, "error": "arguments are not valid JSON"},
    ]
    result = score_calls([], predicted, schemas)
    assert result["valid_calls"] == 1
    assert aggregate_calls([result])["valid_call_rate"] == pytest.approx(1 / 5)
    assert len(result["call_errors"]) == 4


def test_to_json_schema_translates_bfcl_dialect() -> None:
    bfcl = {
        "type": "dict",
        "properties": {
            "x": {"type": "float"},
            "p": {"type": "tuple", "items": {"type": "integer"}},
            "a": {"type": "any"},
        },
    }
    assert to_json_schema(bfcl) == {
        "type": "object",
        "properties": {"x": {"type": "number"}, "p": {"type": "array", "items": {"type": "integer"}}, "a": {}},
    }


# -- reading outputs -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "content",
    [
        [{"name": "math_area", "arguments": {"base": 2}}],
        [{"type": "function", "function": {"name": "math_area", "arguments": '{"base": 2}'}}],
        '[{"math.area": {"base": 2}}]',
        '```json\n{"tool_calls": [{"name": "math_area", "arguments": {"base": 2}}]}\n```',
        {"name": "math.area", "parameters": {"base": 2}},
    ],
)
def test_parse_calls_accepts_the_common_shapes(content: Any) -> None:
    calls, error = parse_calls(content, {"math_area": "math.area"})
    assert error is None
    assert calls == [{"name": "math.area", "arguments": {"base": 2}, "error": None}]


def test_prose_is_no_call_and_broken_json_is_an_error() -> None:
    assert parse_calls("It is sunny.", {}) == ([], None)
    calls, error = parse_calls('[{"name": "f", ', {})
    assert calls == [] and error is not None and "not valid JSON" in error


def test_live_tool_calls_take_precedence_over_content() -> None:
    track = ToolCallTrack()
    sample = track.load().samples[0]
    response = ModelResponse(content="")
    response.tool_calls = [
        {
            "id": "1",
            "type": "function",  # type: ignore[attr-defined]
            "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
        }
    ]
    prediction = track.read_response(sample, response)
    assert prediction == {
        "calls": [{"name": "get_weather", "arguments": {"city": "Paris"}, "error": None}],
        "format_error": None,
    }
    assert track.score(sample, prediction)["passed"]


def test_request_uses_the_tools_api_with_safe_names() -> None:
    track = ToolCallTrack()
    sample = next(s for s in track.load().samples if s.id == "triangle-area")
    messages, fields = track.build_request(sample)
    assert messages == [{"role": "user", "content": "Find the area of a triangle with a base of 10 and a height of 5."}]
    tool = fields["tools"][0]
    assert tool["type"] == "function" and tool["function"]["name"] == "math_triangle_area" == safe_name(
        "math.triangle_area"
    )
    assert tool["function"]["parameters"]["type"] == "object"


# -- invariants ----------------------------------------------------------------------------------

names = st.sampled_from(["f", "g", "h"])
values = st.one_of(st.integers(-5, 5), st.sampled_from(["a", "b", "Paris"]), st.booleans())
gold_calls = st.lists(
    st.builds(
        lambda n, args: {n: {k: [v] for k, v in args.items()}},
        names,
        st.dictionaries(st.sampled_from(["x", "y", "z"]), values, max_size=3),
    ),
    max_size=4,
)
predicted_calls = st.lists(
    st.builds(
        lambda n, args: {"name": n, "arguments": args, "error": None},
        names,
        st.dictionaries(st.sampled_from(["x", "y", "z", "w"]), values, max_size=3),
    ),
    max_size=4,
)


@given(gold_calls, predicted_calls, st.randoms())
def test_order_of_predicted_calls_does_not_matter(gold: list, predicted: list, rnd: random.Random) -> None:
    shuffled = list(predicted)
    rnd.shuffle(shuffled)
    a, b = score_calls(gold, predicted), score_calls(gold, shuffled)
    for key in ("name_matches", "arguments_exact", "correct", "calls"):
        assert a[key] == b[key]
    # the assignment maximizes the summed pair score, so ties may pick different pairs with equal totals
    assert a["arguments"]["tp"] == b["arguments"]["tp"]


@given(gold_calls, predicted_calls)
def test_rates_stay_in_range_and_gold_scores_perfectly(gold: list, predicted: list) -> None:
    metrics = aggregate_calls([score_calls(gold, predicted)])
    for key in (
        "accuracy",
        "name_match_rate",
        "arguments_exact_match_rate",
        "arguments_precision",
        "arguments_recall",
        "arguments_f1",
    ):
        assert metrics[key] is None or 0.0 <= metrics[key] <= 1.0
    perfect = [call(next(iter(g)), **{k: v[0] for k, v in next(iter(g.values())).items()}) for g in gold]
    result = score_calls(gold, perfect)
    assert result["correct"] and result["arguments"]["fp"] == 0 and result["arguments"]["fn"] == 0


# -- the real BFCL data (from ../shared/data, never copied into the project) ---------------------


def concrete(value: Any) -> Any:
    """A gold value with BFCL's nested acceptable lists replaced by their first choice."""
    if isinstance(value, dict):
        return {
            k: first_acceptable(v) if isinstance(v, list) else concrete(v)
            for k, v in value.items()
            if not isinstance(v, list) or any(x != "" for x in v)
        }
    if isinstance(value, list):
        return [concrete(v) for v in value]
    return value


def first_acceptable(options: list) -> Any:
    return concrete(next(o for o in options if o != ""))


def gold_as_prediction(gold: list) -> list:
    return [
        {name: {k: first_acceptable(v) for k, v in params.items() if any(x != "" for x in v)}}
        for entry in gold
        for name, params in entry.items()
    ]


@pytest.mark.slow
@pytest.mark.parametrize(
    "name",
    [
        "simple_python",
        "multiple",
        "parallel",
        "parallel_multiple",
        "live_simple",
        "live_parallel_multiple",
        "irrelevance",
        "simple_java",
    ],
)
def test_bfcl_files_load_and_their_gold_scores_perfectly(name: str) -> None:
    require_or_skip(BFCL.is_dir(), f"BFCL data not available ({BFCL})")
    track = ToolCallTrack()
    dataset = track.load(str(BFCL / f"bfcl_v4_{name}.jsonl"))
    assert not [p for p in dataset.problems if p.severity == "error"]
    rows = sum(1 for _ in (BFCL / f"bfcl_v4_{name}.jsonl").open())
    assert len(dataset.samples) == rows
    results = []
    for sample in dataset.samples:
        content = json.dumps(gold_as_prediction(sample.expected))
        prediction = track.read_response(sample, ModelResponse(content=content if sample.expected else "No call."))
        results.append(track.score(sample, prediction))
    metrics = aggregate_calls(results)
    assert metrics["accuracy"] == 1.0, [r["failure"] for r in results if not r["passed"]][:3]
    assert metrics["arguments_f1"] == 1.0


def test_bfcl_format_with_upstream_keys_and_a_bad_row(tmp_path: Path) -> None:
    rows = [
        {
            "id": "simple_0",
            "question": [[{"role": "user", "content": "Area of base 10 height 5?"}]],
            "function": [{"name": "area", "parameters": {"type": "dict", "properties": {"b": {"type": "integer"}}}}],
            "ground_truth": [{"area": {"b": [10]}}],
        },
        {"id": "bad", "question": "x", "functions": [{"name": "f"}], "expected_calls": [{"g": {}}]},
    ]
    path = tmp_path / "bfcl.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    dataset = ToolCallTrack().load(str(path))
    assert [s.id for s in dataset.samples] == ["simple_0"]
    (problem,) = dataset.problems
    assert problem.sample_id == "bad" and problem.field == "expected_calls" and problem.location == "line 2"
    assert "'g'" in problem.message
