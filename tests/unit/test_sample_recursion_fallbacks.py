"""What scoring gives when the output is too deep for Python's stack, reached by lowering the recursion limit
around one call instead of building an output thousands of levels deep: the field walk falls back to the gold
alone and marks the output invalid; ANLS* falls back to 0 with no per-key scores."""

from __future__ import annotations

from typing import Any

from _recursion import frames_to_spare

from pytest_extractbench.scoring import score_sample
from pytest_extractbench.scoring.result import EXACT, MISSED

GOLD = {"b": 1}


def _deep(levels: int) -> Any:
    value: Any = "y"
    for _ in range(levels):
        value = {"a": value}
    return value


# the predicted key "extra" holds 100 levels: listing its spurious leaf takes about one frame a level (about 110
# in all), walking the gold alone about 10; 60 frames to spare lets the second through and stops the first
PREDICTED = {"b": 1, "extra": _deep(100)}
SPARE_FRAMES = 60


def test_an_output_too_deep_to_walk_scores_as_invalid_with_the_gold_missed() -> None:
    with frames_to_spare(SPARE_FRAMES):
        score = score_sample(PREDICTED, GOLD)
    assert score.json_valid is False and score.schema_valid is False
    assert score.parse_error == "output is nested too deeply to compare"
    assert list(score.validation_errors) == ["$: output is nested too deeply to compare"]
    assert [(f.path, f.category) for f in score.fields] == [("b", MISSED)]
    # the invalid output's ANLS* is measured against nothing: an empty object for an object gold, so b scores 0
    assert score.anls_star_observed == 0.0


def test_the_same_output_with_room_on_the_stack_is_valid_and_compared() -> None:
    score = score_sample(PREDICTED, GOLD)
    assert score.json_valid is True and score.parse_error is None
    assert list(score.validation_errors) == []
    assert ("b", EXACT) in [(f.path, f.category) for f in score.fields]


def test_anls_star_too_deep_to_measure_is_zero_with_no_key_scores() -> None:
    score = score_sample(PREDICTED, GOLD)  # the field walk with the whole stack: the output is valid
    with frames_to_spare(SPARE_FRAMES):  # ANLS* is measured at its first read, here
        assert score.anls_star_observed == 0.0
        assert score.anls_star_fields == {}


def test_anls_star_with_room_on_the_stack() -> None:
    score = score_sample(PREDICTED, GOLD)
    # b matches (1 of length 1), the invented key scores 0 over its one leaf: (1 + 0) / (1 + 1)
    assert score.anls_star_observed == 0.5
    assert score.anls_star_fields == {"b": 1.0, "extra": 0.0}
