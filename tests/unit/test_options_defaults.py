"""The defaults every run records in metrics.json, written out in full: an option left unset is recorded as null
(JSON's "not set"), never as a 0 that would read as a setting."""

from __future__ import annotations

import json

from pytest_extractbench.scoring.options import ScoringOptions, StatsOptions


def test_the_default_options_are_recorded_in_full() -> None:
    assert ScoringOptions().to_dict() == {
        "case_sensitive": False,
        "normalize_whitespace": True,
        "float_epsilon": 1e-6,
        "null_equals_absent": True,
        "empty_equals_absent": True,
        "strict_types": True,
        "array_order_matters": True,
        "exact_threshold": 0.95,
        "exact_within": None,
        "partial_threshold": 0.5,
        "lenient_threshold": 0.3,
        "list_similarity": None,
        "normalisers": [],
        "composite_weights": [0.5, 0.3, 0.2],
        "validate_formats": True,
        "eqs_weights": {"validity": 0.15, "f1_partial": 0.5, "type_accuracy": 0.2, "no_hallucination": 0.15},
        "post_processors": [],
        "semantic": None,
        "semantic_model": None,
        "semantic_threshold": 0.85,
        "judge_model": None,
        "judge_url": None,
        "statistics": {
            "resamples": 10_000,
            "confidence": 0.95,
            "seed": 0,
            "alpha": 0.05,
            "test": "permutation",
            "reference_model": None,
            "gap_threshold": 0.15,
        },
    }  # anls_star is left out while on (its default): a default run records what runs recorded before it


def test_unset_backends_and_reference_are_null_in_json() -> None:
    recorded = json.loads(json.dumps(ScoringOptions(statistics=StatsOptions(seed=3)).to_dict()))
    unset = (recorded["semantic"], recorded["judge_model"], recorded["judge_url"])
    assert unset == (None, None, None)
    assert recorded["statistics"]["reference_model"] is None


def test_the_exactness_rule_in_words() -> None:
    assert ScoringOptions().exactness_rule == (
        "composite score >= 0.95 (the default rule: a near number or a value of another JSON type can be exact)"
    )
    strict = ScoringOptions(exact_within=0.01, float_epsilon=1e-6)
    assert strict.exactness_rule == (
        "numbers exact only within 0.01 relative (at least 1e-06), a value of the wrong JSON type never exact; "
        "strings: composite score >= 0.95"
    )
    lenient = ScoringOptions(exact_within=0.5, strict_types=False, exact_threshold=0.9)
    assert lenient.exactness_rule == (
        "numbers exact only within 0.5 relative (at least 1e-06), a value of the wrong JSON type never exact; "
        'lenient types: a lossless coercion such as "12" for 12 counts; strings: composite score >= 0.9'
    )


def test_replace_gives_a_changed_copy() -> None:
    base = ScoringOptions()
    changed = base.replace(case_sensitive=True, partial_threshold=0.6)
    assert changed == ScoringOptions(case_sensitive=True, partial_threshold=0.6)
    assert base == ScoringOptions()  # the original is unchanged
