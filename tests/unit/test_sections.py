"""The typed sections of metrics.json (core/sections.py): the filler gives a hand-made or older document every key a
section's type requires, drops a section that is not an object, and changes nothing in a document this package
made, so the reports can read the sections by key."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from pytest_extractbench import SampleRecord, ScoringOptions, model_metrics, score_sample
from pytest_extractbench.analysis.calibration import reliability
from pytest_extractbench.analysis.consistency import aggregate_consistency, consistency
from pytest_extractbench.analysis.repeats import repeats_section, sample_repeats
from pytest_extractbench.core import modelsections, rundoc
from pytest_extractbench.report import exports
from pytest_extractbench.report import run_sections as views
from pytest_extractbench.scoring.whole_output import WholeOutputCost

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "expected"


def _document(**parts: Any) -> dict[str, Any]:
    return {"format_version": 2, "track": "extraction", "run": {}, "models": {}, **parts}


def test_documents_this_package_made_are_unchanged() -> None:
    found = sorted(GOLDEN.glob("*/metrics.json"))
    assert len(found) >= 7
    for path in found:
        document = json.loads(path.read_text(encoding="utf-8"))
        assert rundoc.complete(copy.deepcopy(document)) == document, path.parent.name


def test_sections_the_producers_write_are_unchanged() -> None:
    """Sections no golden run has (calibration, consistency, repeats, the whole-output cost, a saved baseline),
    made by the functions that write them: the filler adds no key to any of them."""
    calibration = reliability([0.95, 0.9, 0.2, 0.55, 0.99], [True, True, False, True, False])
    calibration["samples"] = 3
    agreement = aggregate_consistency(
        [consistency([{"a": 1, "b": "x"}, {"a": 1, "b": "y"}]), consistency([{"a": 2}] * 3)]
    )
    per_sample = {
        "s1": sample_repeats([True, False, True], [{"a": "exact"}, {"a": "missed"}, {"a": "exact"}]),
        "s2": sample_repeats([True, True, True], [{"a": "exact"}] * 3),
        "s3": sample_repeats([False, False, True], [None, {"a": "incorrect"}, {"a": "exact"}]),
    }
    repeated = repeats_section(per_sample, resamples=200)
    model = {"calibration": calibration, "consistency": agreement, **repeated}
    document = _document(
        models={"m": model},
        whole_output_cost=WholeOutputCost(embedded_texts=4, judge_requests=2).as_dict(),
        baseline_saved={"name": "main", "path": "/tmp/b.json"},
    )
    plain = json.loads(json.dumps(document))
    done = rundoc.complete(copy.deepcopy(plain))
    assert {k: done["models"]["m"][k] for k in plain["models"]["m"]} == plain["models"]["m"]
    assert {k: done[k] for k in ("whole_output_cost", "baseline_saved")} == {
        k: plain[k] for k in ("whole_output_cost", "baseline_saved")
    }


def test_an_extraction_model_as_the_package_makes_it_gains_nothing() -> None:
    """Every section an extraction model's type requires is one model_metrics writes (the SLA: the finish)."""
    gold = {"a": "x", "b": "y"}
    schema = {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}}
    outputs = ['{"a": "x", "b": "y"}', '{"a": "N/A", "c": 1}', "not json", '{"a": "x"}']
    records = [
        SampleRecord(model="m", sample_id=f"s{i}", meta={}, score=score_sample(out, gold, schema, sample_id=f"s{i}"))
        for i, out in enumerate(outputs)
    ]
    model = json.loads(
        json.dumps({**model_metrics(records, ScoringOptions()), "sla": {"tier": "none", "passed": True, "checks": []}})
    )
    assert modelsections.fill_model(copy.deepcopy(model), "extraction") == model


def test_a_section_missing_keys_gets_them_and_a_malformed_one_is_dropped() -> None:
    document = _document(
        baseline_comparison={"models": {"m": {"metrics": {"extraction_quality_score": {"delta": -0.1}}, "buckets": 3}}},
        comparison=["not", "an", "object"],
        whole_output_cost={"judge_requests": 2},
        models={"m": {"repeats": {"samples": 2}, "calibration": "x", "subsets": {"a": {"count": 0}, "b": 7}}},
    )
    before = copy.deepcopy(document)
    done = rundoc.complete(document)
    assert document == before  # the caller's document is not changed
    assert "comparison" not in done
    found = done["baseline_comparison"]
    assert found["baseline"] == {"name": "-", "created_at": None} and found["checks"] == [] and found["pairing"] is None
    entry = found["models"]["m"]
    assert "buckets" not in entry and entry["verdict"] == "-" and entry["per_field_deltas"] == {}
    delta = entry["metrics"]["extraction_quality_score"]
    assert delta["delta"] == -0.1 and delta["ci"] == {"low": None, "high": None, "confidence": 0.95}
    assert done["whole_output_cost"]["judge_requests"] == 2 and done["whole_output_cost"]["judge_seconds"] == 0.0
    model = modelsections.model_sections(done["models"]["m"])
    assert "calibration" not in model
    assert model["subsets"] == {"a": {"count": 0, "aggregation": "mean"}}
    assert model["repeats"]["flaky_fields"] == [] and model["repeats"]["pass_counts"] == {}


def test_a_partial_run_s_counts_are_each_there() -> None:
    done = rundoc.complete(_document(run={"partial": {"models": {"m": {"scored": 3}, "n": None}, "scored": 3}}))
    assert done["run"]["partial"] == {"scored": 3, "collected": 0, "models": {"m": {"scored": 3, "collected": 0}}}
    assert "partial" not in rundoc.complete(_document(run={"partial": "all"}))["run"]


_json = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.floats(allow_nan=False, width=32) | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=12,
)


def _shaped(keys: list[str]) -> st.SearchStrategy[Any]:
    """An object with some of ``keys`` holding anything, or anything at all."""
    return st.fixed_dictionaries({}, optional={key: _json for key in keys}) | _json


@given(
    baseline=_shaped(["baseline", "test", "notes", "pairing", "checks", "passed", "models"]),
    entry=_shaped(["metrics", "per_field_deltas", "buckets", "verdict", "baseline_model", "checks"]),
    comparison=_shaped(["pairwise", "win_rate_matrix", "eqs_ranking", "models"]),
    model=_shaped(["calibration", "consistency", "repeats", "subsets", "groups", "confidence_intervals"]),
)
def test_the_report_sections_render_whatever_a_document_holds(
    baseline: Any, entry: Any, comparison: Any, model: Any
) -> None:
    """A foreign or damaged document: once completed, every section view and its Markdown renders without an error."""
    if isinstance(baseline, dict) and isinstance(baseline.get("models"), dict):
        baseline["models"]["m"] = entry
    document = rundoc.complete(_document(baseline_comparison=baseline, comparison=comparison, models={"m": model}))
    views.baseline_md(views.baseline_view(document))
    views.baseline_headline_md(views.baseline_view(document))
    views.pairwise_md(views.pairwise_view(document))
    metrics = document["models"]["m"]
    views.groups_md(views.groups_view(metrics))
    views.calibration_md(views.calibration_view(metrics))
    views.consistency_md(views.consistency_view(metrics))
    views.repeats_md(views.repeats_view(metrics))
    exports.whole_output_cost_md(document)
