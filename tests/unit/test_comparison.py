"""Several models in one run: ranking, significance, best-by-metric, Pareto frontiers, win rates, gap rule."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from pytest_extractbench import SampleRecord, ScoringOptions, StatsOptions, metrics_by_model, score_sample
from pytest_extractbench.analysis.comparison import comparison_section, pareto
from pytest_extractbench.analysis.metrics import run_level_metrics
from pytest_extractbench.dataset import load_dataset

ROOT = Path(__file__).resolve().parents[2]
OPTIONS = ScoringOptions(statistics=StatsOptions(resamples=2000))


def outputs(name: str) -> dict:
    rows = map(json.loads, (ROOT / "fixtures" / "predictions" / name).read_text(encoding="utf-8").splitlines())
    return {row["id"]: row["output"] for row in rows}


def records(model: str, predictions: dict, latency: float | None = None) -> list[SampleRecord]:
    return [
        SampleRecord(
            model=model,
            sample_id=s.id,
            score=score_sample(predictions.get(s.id), s.expected, s.schema, sample_id=s.id),
            response={"latency_s": latency},
        )
        for s in load_dataset().samples
    ]


@pytest.fixture(scope="module")
def run() -> tuple[dict, list[SampleRecord]]:
    gold = {s.id: s.expected for s in load_dataset().samples}
    found = records("good", outputs("demo.jsonl")) + records("weak", outputs("weak.jsonl")) + records("oracle", gold)
    return metrics_by_model(found, OPTIONS), found


def test_one_model_has_no_comparison(run) -> None:
    by_model, found = run
    only = [r for r in found if r.model == "good"]
    assert comparison_section({"good": by_model["good"]}, only, OPTIONS) == {}


def test_ranking_deltas_and_significance(run) -> None:
    by_model, found = run
    comparison = run_level_metrics(by_model, found, OPTIONS)["comparison"]
    assert [e["model"] for e in comparison["eqs_ranking"]] == ["oracle", "good", "weak"]
    assert comparison["eqs_ranking"][0]["extraction_quality_score"] == 1.0
    assert (
        comparison["eqs_ranking"][1]["ci_low"]
        == by_model["good"]["confidence_intervals"]["extraction_quality_score"]["low"]
    )
    # pairs in model-name order, a - b
    assert comparison["eqs_delta"]["good_vs_weak"] == pytest.approx(
        by_model["good"]["extraction_quality_score"] - by_model["weak"]["extraction_quality_score"]
    )
    assert comparison["eqs_delta"]["oracle_vs_weak"] > 0 > comparison["eqs_delta"]["good_vs_oracle"]
    significance = comparison["statistical_significance"]["good_vs_weak"]
    assert significance["significantly_different"] is True and significance["p_value"] < 0.05
    assert significance["effect_size_interpretation"] == significance["effect_size"]["interpretation"]
    pair = comparison["pairwise"]["good_vs_weak"]
    assert pair["n_shared"] == 52 and set(pair["metrics"]) >= {"field_f1_partial", "hallucination_rate"}


def test_win_rates_count_samples_where_one_model_scores_higher(run) -> None:
    by_model, found = run
    comparison = run_level_metrics(by_model, found, OPTIONS)["comparison"]
    eqs = {m: {r.sample_id: r.score.eqs for r in found if r.model == m} for m in by_model}
    ids = sorted(eqs["good"])
    good_wins = np.mean([eqs["good"][i] > eqs["weak"][i] for i in ids])
    weak_wins = np.mean([eqs["weak"][i] > eqs["good"][i] for i in ids])
    matrix = comparison["win_rate_matrix"]
    assert matrix["good"]["weak"] == pytest.approx(good_wins) and matrix["weak"]["good"] == pytest.approx(weak_wins)
    assert matrix["good"]["weak"] + matrix["weak"]["good"] < 1  # ties count for neither
    assert matrix["oracle"]["good"] > 0 and matrix["good"]["oracle"] == 0


def test_best_by_metric_and_offline_pareto(run) -> None:
    by_model, found = run
    comparison = run_level_metrics(by_model, found, OPTIONS)["comparison"]
    best = comparison["best_by_metric"]
    assert best["highest_eqs"] == best["highest_f1_partial"] == best["lowest_hallucination"] == "oracle"
    assert best["fastest_p95"] is None and best["best_cost_performance"] is None
    frontier = comparison["pareto_frontier"]["accuracy_vs_latency"]
    assert frontier["available"] is False and "offline predictions carry no timings" in frontier["reason"]
    assert "needs token usage and prices" in comparison["pareto_frontier"]["accuracy_vs_cost"]["reason"]


def test_pareto_frontiers_from_per_sample_latency_and_model_cost() -> None:
    gold = {s.id: s.expected for s in load_dataset().samples}
    found = (
        records("big", gold, latency=2.0)
        + records("small", outputs("demo.jsonl"), latency=0.5)
        + records("slow-weak", outputs("weak.jsonl"), latency=3.0)
    )
    by_model = metrics_by_model(found, OPTIONS)
    by_model["big"]["estimated_cost_usd"] = 10.0
    by_model["small"]["estimated_cost_usd"] = 1.0
    by_model["slow-weak"]["estimated_cost_usd"] = 0.5
    comparison = run_level_metrics(by_model, found, OPTIONS)["comparison"]
    latency = comparison["pareto_frontier"]["accuracy_vs_latency"]
    # slow-weak is slower and worse than small: dominated
    assert latency["frontier"] == ["small", "big"]
    assert latency["points"]["small"]["latency_p95_ms"] == pytest.approx(500.0)
    cost = comparison["pareto_frontier"]["accuracy_vs_cost"]
    assert cost["frontier"] == ["slow-weak", "small", "big"]  # cheapest is on the frontier too
    best = comparison["best_by_metric"]
    assert best["fastest_p95"] == "small"
    assert best["best_cost_performance"] == "slow-weak"  # most EQS per dollar


def test_pareto_ties_and_dominance() -> None:
    by_model = {m: {"extraction_quality_score": e} for m, e in {"a": 0.9, "b": 0.9, "c": 0.8, "d": 0.95}.items()}
    frontier = pareto(["d", "a", "b", "c"], by_model, {"a": 100.0, "b": 100.0, "c": 50.0, "d": 300.0}, "latency_p95_ms")
    assert frontier["frontier"] == ["c", "a", "b", "d"]
    frontier = pareto(["d", "a", "b", "c"], by_model, {"a": 100.0, "b": 90.0, "c": 150.0, "d": 300.0}, "latency_p95_ms")
    assert frontier["frontier"] == ["b", "d"]


def test_gap_rule_reference_and_threshold(run) -> None:
    by_model, found = run
    gap = run_level_metrics(by_model, found, OPTIONS)["comparison"]["gap_rule"]
    assert gap["reference"] == "oracle" and gap["reference_from"] == "highest EQS"
    # the oracle answers the gold (EQS 1.0); weak trails it by 0.14, inside the default threshold of 0.15,
    # good by 0.03, under the 0.05 of a minimal difference
    weak_gap = 1.0 - by_model["weak"]["extraction_quality_score"]
    assert 0.05 < weak_gap < 0.15
    assert gap["threshold"] == 0.15
    assert gap["models"]["weak"]["gap"] == pytest.approx(weak_gap)
    assert gap["flagged"] == []
    assert gap["models"]["weak"]["band"] == "moderate difference: fine-tuning optional"
    assert gap["models"]["weak"]["needs_fine_tuning"] is False
    assert gap["models"]["good"]["band"] == "minimal practical difference"

    named = ScoringOptions(statistics=StatsOptions(resamples=500, reference_model="good", gap_threshold=0.05))
    gap = run_level_metrics(by_model, found, named)["comparison"]["gap_rule"]
    assert gap["reference"] == "good" and gap["reference_from"] == "--extractbench-reference-model"
    assert gap["flagged"] == ["weak"] and gap["models"]["weak"]["needs_fine_tuning"] is True
    assert gap["models"]["oracle"]["band"] == "ahead of the reference"

    missing = ScoringOptions(statistics=StatsOptions(resamples=500, reference_model="nope"))
    gap = run_level_metrics(by_model, found, missing)["comparison"]["gap_rule"]
    assert "not among this run's models" in gap["error"]


def test_gap_rule_flags_a_model_beyond_the_default_threshold(run) -> None:
    by_model, found = run
    # a model whose answers are not JSON: EQS 0, a gap of 1.0 to the oracle, far beyond the default 0.15
    silent = records("silent", {s.id: "I cannot help with that." for s in load_dataset().samples})
    everyone = found + silent
    metrics = metrics_by_model(everyone, ScoringOptions(statistics=StatsOptions(resamples=200)))
    assert metrics["silent"]["extraction_quality_score"] == 0.0
    gap = run_level_metrics(metrics, everyone, ScoringOptions(statistics=StatsOptions(resamples=200)))
    gap = gap["comparison"]["gap_rule"]
    assert gap["reference"] == "oracle" and gap["threshold"] == 0.15
    assert gap["flagged"] == ["silent"]
    assert gap["models"]["silent"]["gap"] == pytest.approx(1.0)
    assert gap["models"]["silent"]["needs_fine_tuning"] is True
    assert gap["models"]["silent"]["band"] == "significant difference: fine-tuning recommended"
    assert gap["models"]["weak"]["needs_fine_tuning"] is False


def test_comparison_is_deterministic_and_independent_of_other_models(run) -> None:
    by_model, found = run
    first = run_level_metrics(by_model, found, OPTIONS)["comparison"]["pairwise"]["good_vs_weak"]
    two = [r for r in found if r.model != "oracle"]
    again = run_level_metrics({m: by_model[m] for m in ("good", "weak")}, two, OPTIONS)["comparison"]
    assert again["pairwise"]["good_vs_weak"] == first


def test_a_model_name_with_a_lone_surrogate_is_compared_like_any_other() -> None:
    # model names are untrusted text: "\ud800" cannot be encoded as strict UTF-8, yet the pair gets its stream
    found = records("good\ud800", outputs("demo.jsonl")) + records("weak", outputs("weak.jsonl"))
    by_model = metrics_by_model(found, OPTIONS)
    section = comparison_section(by_model, found, OPTIONS)["comparison"]
    again = comparison_section(by_model, found, OPTIONS)["comparison"]
    assert set(section["models"]) == {"good\ud800", "weak"}
    assert section["eqs_delta"]
    assert section == again  # the pair's seed is derived, not random
