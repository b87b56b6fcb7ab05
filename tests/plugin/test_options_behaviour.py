"""Each option changes what a run produces: the run with it is compared with the run without it.

Offline runs score small predictions files; live runs talk to tests/faultserver.py on loopback, and the embedded
server's options to a stand-in llama-server (EXTRACTBENCH_LLAMA_SERVER) that records its command line.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import sys
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from benchrun import BenchRun
from faultserver import Fault, FaultServer

from _net import serve_in_thread
from pytest_extractbench.core.rundoc import iter_samples

COMMON = ("-W", "ignore::pytest.PytestAssertRewriteWarning", "--extractbench-sla", "none")


def write_jsonl(path: Path, rows: list) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path.name


def document(pytester: pytest.Pytester, out: str = "out") -> dict[str, Any]:
    return json.loads((pytester.path / out / "metrics.json").read_text())


def records(pytester: pytest.Pytester, out: str = "out") -> dict[str, dict[str, Any]]:
    rows = list(iter_samples(pytester.path / out / "samples.jsonl"))
    return {row["sample_id"]: row for row in rows}


def offline(run: BenchRun, samples: list, outputs: list, *args: str, out: str = "out") -> dict[str, Any]:
    """Score ``outputs`` against ``samples``; the model's metrics (the session must end with exit code 0)."""
    write_jsonl(run.path / "data.jsonl", samples)
    write_jsonl(run.path / "preds.jsonl", outputs)
    result = run(
        *COMMON, "--extractbench-dataset", "data.jsonl", "--extractbench-predictions", "preds.jsonl", *args, out=out
    )
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    return run.document(out)["models"]["predictions"]


def field(pytester: pytest.Pytester, sample_id: str, path: str, out: str = "out") -> dict[str, Any]:
    (found,) = [f for f in records(pytester, out)[sample_id]["score"]["fields"] if f["path"] == path]
    return found


# -- scoring ----------------------------------------------------------------------------------------------------

PERSON = {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"}}}


def test_null_as_value_turns_null_omissions_and_hallucinations_into_wrong_values(run: BenchRun) -> None:
    schema = {"type": "object", "properties": {"name": {"type": "string"}, "city": {"type": ["string", "null"]}}}
    samples = [
        {"id": "a", "text": "t", "schema": schema, "expected": {"name": "Ann", "city": None}},
        {"id": "b", "text": "t", "schema": schema, "expected": {"name": "Bo", "city": "Rome"}},
    ]
    outputs = [
        {"id": "a", "output": {"name": "Ann", "city": "Oslo"}},
        {"id": "b", "output": {"name": "Bo", "city": None}},
    ]
    default = offline(run, samples, outputs)
    valued = offline(run, samples, outputs, "--extractbench-null-as-value")
    # a null is an absent field by default: a's "Oslo" is spurious and b's null a miss; as a value both are wrong
    assert default["match_categories"] == {"exact": 2, "partial": 0, "incorrect": 0, "missed": 1, "spurious": 1}
    assert valued["match_categories"] == {"exact": 2, "partial": 0, "incorrect": 2, "missed": 0, "spurious": 0}


def test_lenient_types_accept_a_numeric_string_for_an_integer(run: BenchRun) -> None:
    schema = {"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": ["integer", "string"]}}}
    samples = [{"id": "a", "text": "t", "schema": schema, "expected": {"name": "Ann", "age": 41}}]
    outputs = [{"id": "a", "output": {"name": "Ann", "age": "41"}}]
    strict = offline(run, samples, outputs)
    lenient = offline(run, samples, outputs, "--extractbench-lenient-types")
    # "41" for 41 is the right value of the wrong type: type accuracy 1/2, no exact match,
    # EQS 0.15 + 0.50 + 0.20 x 1/2 + 0.15 = 0.90; accepted as lossless, everything is right
    assert (strict["type_accuracy"], strict["exact_match_rate"]) == (0.5, 0.0)
    assert strict["extraction_quality_score"] == pytest.approx(0.90)
    assert (lenient["type_accuracy"], lenient["exact_match_rate"]) == (1.0, 1.0)
    assert lenient["extraction_quality_score"] == pytest.approx(1.0)


def test_no_format_check_accepts_a_date_in_another_format(run: BenchRun, pytester: pytest.Pytester) -> None:
    schema = {"type": "object", "properties": {"when": {"type": "string", "format": "date"}}}
    samples = [
        {"id": "a", "text": "t", "schema": schema, "expected": {"when": "2024-03-03"}},
        {"id": "b", "text": "t", "schema": schema, "expected": {"when": "2024-05-01"}},
    ]
    outputs = [{"id": "a", "output": {"when": "March 3, 2024"}}, {"id": "b", "output": {"when": "2024-05-01"}}]
    write_jsonl(pytester.path / "data.jsonl", samples)
    write_jsonl(pytester.path / "preds.jsonl", outputs)
    args = ("--extractbench-dataset", "data.jsonl", "--extractbench-predictions", "preds.jsonl")
    checked = run(*COMMON, *args)
    # "March 3, 2024" is not a JSON Schema date: a's output violates the schema and its item fails
    checked.assert_outcomes(passed=1, failed=1)
    assert document(pytester)["models"]["predictions"]["schema_validity_rate"] == 0.5
    unchecked = run(*COMMON, *args, "--extractbench-no-format-check")
    unchecked.assert_outcomes(passed=2)
    assert document(pytester)["models"]["predictions"]["schema_validity_rate"] == 1.0


def test_no_anls_leaves_anls_star_unmeasured(run: BenchRun, pytester: pytest.Pytester) -> None:
    samples = [{"id": "a", "text": "t", "schema": PERSON, "expected": {"name": "Ada Lovelace", "age": 36}}]
    outputs = [{"id": "a", "output": {"name": "Ada Lovelase", "age": 36}}]
    measured = offline(run, samples, outputs)
    # one typo in 12 letters: the name's ANLS* is 11/12, the age's 1, the whole answer (11/12 + 1) / 2
    assert measured["anls_star"] == pytest.approx((11 / 12 + 1) / 2)
    assert records(pytester)["a"]["score"]["anls_star_fields"] == pytest.approx({"name": 11 / 12, "age": 1.0})
    unmeasured = offline(run, samples, outputs, "--extractbench-no-anls")
    assert unmeasured.get("anls_star") is None
    assert "anls_star_fields" not in records(pytester)["a"]["score"]
    # the field scores do not depend on it
    assert unmeasured["extraction_quality_score"] == measured["extraction_quality_score"]


def test_float_epsilon_makes_near_numbers_equal(run: BenchRun, pytester: pytest.Pytester) -> None:
    schema = {"type": "object", "properties": {"x": {"type": "number"}}}
    samples = [{"id": "a", "text": "t", "schema": schema, "expected": {"x": 100}}]
    outputs = [{"id": "a", "output": {"x": 100.5}}]
    default = offline(run, samples, outputs)
    assert field(pytester, "a", "x")["score"] == pytest.approx(0.995)
    wide = offline(run, samples, outputs, "--extractbench-float-epsilon", "1")
    # |100.5 - 100| = 0.5: above the default 1e-6 the numbers differ (score 1 - 0.5/100 = 0.995, not an exact
    # sample match); within an epsilon of 1 they are equal (score 1.0, the sample matches exactly)
    assert field(pytester, "a", "x")["score"] == 1.0
    assert (default["exact_match_rate"], wide["exact_match_rate"]) == (0.0, 1.0)


@pytest.mark.slow
def test_eqs_weights_reweigh_the_components(run: BenchRun) -> None:
    samples = [{"id": "a", "text": "t", "schema": PERSON, "expected": {"name": "Ann", "age": 41}}]
    outputs = [{"id": "a", "output": {"name": "Ann", "age": 99}}]
    default = offline(run, samples, outputs)
    equal = offline(run, samples, outputs, "--extractbench-eqs-weights", "0.25,0.25,0.25,0.25")
    # components: validity 1, F1 partial 1/2 (age is wrong), type accuracy 1, no hallucination 1
    assert default["extraction_quality_score"] == pytest.approx(0.15 + 0.50 * 0.5 + 0.20 + 0.15)  # 0.75
    assert equal["extraction_quality_score"] == pytest.approx(0.25 + 0.25 * 0.5 + 0.25 + 0.25)  # 0.875


# -- statistics -------------------------------------------------------------------------------------------------

# Twelve samples; "bad" gets the age wrong on the even ones: per-sample EQS 0.75 there (F1 partial 1/2), 1.0 on
# the odd ones, mean 0.875, against "good"'s 1.0 everywhere. The paired EQS differences are -0.25 on 6 samples and
# 0 on 6: the permutation test enumerates all 2^12 = 4096 swaps (<= 10,000 resamples); only the 2^6 patterns that
# leave the 6 differing samples unswapped are as extreme on either side, so p = 2 x 64/4096 = 0.03125. The paired
# t-test: mean -0.125, sd 0.1306, t = -0.125 / (0.1306 / sqrt 12) = -3.317, p = 0.0069 on 11 degrees of freedom.
TWELVE = [
    {"id": f"s{i:02d}", "text": f"P{i} is {20 + i}.", "schema": PERSON, "expected": {"name": f"P{i}", "age": 20 + i}}
    for i in range(12)
]
GOOD = [{"id": s["id"], "output": s["expected"]} for s in TWELVE]
BAD = [
    {"id": s["id"], "output": {**s["expected"], "age": s["expected"]["age"] + 50 * (i % 2 == 0)}}
    for i, s in enumerate(TWELVE)
]


@pytest.fixture
def two_models(pytester: pytest.Pytester) -> tuple[str, ...]:
    write_jsonl(pytester.path / "data.jsonl", TWELVE)
    write_jsonl(pytester.path / "good.jsonl", GOOD)
    write_jsonl(pytester.path / "bad.jsonl", BAD)
    return (
        "--extractbench-dataset",
        "data.jsonl",
        "--extractbench-predictions",
        "good=good.jsonl",
        "--extractbench-predictions",
        "bad=bad.jsonl",
    )


def comparison(run: BenchRun, *args: str) -> dict[str, Any]:
    result = run(*COMMON, *args)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str()
    return run.document()["comparison"]


@pytest.mark.slow
def test_alpha_decides_significance(run: BenchRun, two_models: tuple[str, ...]) -> None:
    default = comparison(run, *two_models)["statistical_significance"]["bad_vs_good"]
    strict = comparison(run, *two_models, "--extractbench-alpha", "0.01")
    strict = strict["statistical_significance"]["bad_vs_good"]
    # p = 0.03125: significant at 0.05, not at 0.01
    assert default["p_value"] == strict["p_value"] == pytest.approx(0.03125)
    assert (default["alpha"], default["significantly_different"]) == (0.05, True)
    assert (strict["alpha"], strict["significantly_different"]) == (0.01, False)


@pytest.mark.slow
def test_test_chooses_the_paired_test_behind_significance(run: BenchRun, two_models: tuple[str, ...]) -> None:
    alpha = ("--extractbench-alpha", "0.01")
    permutation = comparison(run, *two_models, *alpha)["pairwise"]["bad_vs_good"]["metrics"]
    ttest = comparison(run, *two_models, *alpha, "--extractbench-test", "ttest")
    ttest = ttest["pairwise"]["bad_vs_good"]["metrics"]
    eqs = "extraction_quality_score"
    # permutation p = 0.03125 misses alpha 0.01; the t-test's p = 0.0069 meets it
    assert (permutation[eqs]["test"], permutation[eqs]["p_value"]) == ("permutation", pytest.approx(0.03125))
    assert not permutation[eqs]["significant"]
    assert (ttest[eqs]["test"], ttest[eqs]["p_value"]) == ("ttest", pytest.approx(0.0069, abs=1e-4))
    assert ttest[eqs]["significant"]


@pytest.mark.slow
def test_resamples_below_all_swaps_make_the_permutation_test_monte_carlo(
    run: BenchRun, two_models: tuple[str, ...]
) -> None:
    default = comparison(run, *two_models)["pairwise"]["bad_vs_good"]["metrics"]["extraction_quality_score"]
    few = comparison(run, *two_models, "--extractbench-resamples", "1000")
    few = few["pairwise"]["bad_vs_good"]["metrics"]["extraction_quality_score"]
    # 4096 swap patterns: all of them within 10,000 resamples (exact p = 0.03125); 1000 random ones otherwise,
    # whose p-value 2 (hits + 1) / 1001 is a multiple of 2/1001, which 0.03125 is not
    assert default["tests"]["permutation"]["note"] == "exact (all 2^n swaps)" and default["ci"]["resamples"] == 10_000
    assert few["tests"]["permutation"]["note"] == "Monte Carlo (1000 random swaps)" and few["ci"]["resamples"] == 1000
    assert few["p_value"] * 1001 / 2 == pytest.approx(round(few["p_value"] * 1001 / 2))
    assert few["p_value"] != pytest.approx(0.03125)


@pytest.mark.slow
def test_gap_threshold_and_reference_model_decide_the_gap_rule(run: BenchRun, two_models: tuple[str, ...]) -> None:
    default = comparison(run, *two_models)["gap_rule"]
    # bad trails good (the highest EQS) by 1.0 - 0.875 = 0.125: within the default 0.15, beyond 0.10
    assert (default["reference"], default["flagged"]) == ("good", [])
    assert default["models"]["bad"]["gap"] == pytest.approx(0.125)
    narrow = comparison(run, *two_models, "--extractbench-gap-threshold", "0.1")["gap_rule"]
    assert narrow["flagged"] == ["bad"] and narrow["models"]["bad"]["needs_fine_tuning"] is True
    named = comparison(run, *two_models, "--extractbench-reference-model", "bad")["gap_rule"]
    assert (named["reference"], named["reference_from"]) == ("bad", "--extractbench-reference-model")
    assert named["models"]["good"]["band"] == "ahead of the reference" and named["flagged"] == []


# Samples with 2..13 fields, the first one wrong in each: F1 partial (k-1)/k differs from sample to sample, so
# bootstrap intervals are not stuck on a few values and move with the draws.
WIDE = {"type": "object", "properties": {f"f{k}": {"type": "string"} for k in range(13)}}
VARIED = [
    {"id": f"v{k:02d}", "text": "t", "schema": WIDE, "expected": {f"f{j}": f"value {j}" for j in range(k)}}
    for k in range(2, 14)
]
VARIED_OUT = [{"id": s["id"], "output": {**s["expected"], "f0": "zzz"}} for s in VARIED]


def eqs_interval(run: BenchRun, *args: str) -> dict[str, Any]:
    model = offline(run, VARIED, VARIED_OUT, *args)
    return model["confidence_intervals"]["extraction_quality_score"]


@pytest.mark.slow
def test_confidence_sets_the_level_of_the_intervals(run: BenchRun) -> None:
    wide = eqs_interval(run)
    narrow = eqs_interval(run, "--extractbench-confidence", "0.5")
    # the same draws (same seed): the 25th-75th percentiles lie inside the 2.5th-97.5th
    assert (wide["confidence"], narrow["confidence"]) == (0.95, 0.5)
    assert wide["low"] <= narrow["low"] < narrow["high"] <= wide["high"]
    assert narrow["high"] - narrow["low"] < wide["high"] - wide["low"]


@pytest.mark.slow
def test_stats_seed_changes_the_bootstrap_draws(run: BenchRun) -> None:
    first = eqs_interval(run, "--extractbench-stats-seed", "1")
    again = eqs_interval(run, "--extractbench-stats-seed", "1")
    other = eqs_interval(run, "--extractbench-stats-seed", "2")
    default = eqs_interval(run)
    assert first == again  # a seed reproduces its interval
    assert (first["low"], first["high"]) != (other["low"], other["high"])
    assert (first["low"], first["high"]) != (default["low"], default["high"])  # the default seed is 0
    assert first["value"] == other["value"]  # the point estimate does not depend on the draws


@pytest.mark.slow
def test_verdict_thresholds_decide_the_verdict_against_the_baseline(run: BenchRun, pytester: pytest.Pytester) -> None:
    write_jsonl(pytester.path / "data.jsonl", TWELVE)
    write_jsonl(pytester.path / "good.jsonl", GOOD)
    write_jsonl(pytester.path / "bad.jsonl", BAD)
    data = ("--extractbench-dataset", "data.jsonl")
    assert run(*COMMON, *data, "--extractbench-predictions", "good.jsonl", "--extractbench-save", "main").ret == 0
    compare = (*data, "--extractbench-predictions", "bad.jsonl", "--extractbench-compare", "main")

    def verdict(*args: str) -> str:
        assert run(*COMMON, *compare, *args, out="cmp").ret == pytest.ExitCode.OK
        found = document(pytester, "cmp")["baseline_comparison"]["models"]["predictions"]
        assert found["delta"] == pytest.approx(-0.125)
        return found["verdict"]

    # EQS 1.0 -> 0.875: a delta of -0.125 is below the default -0.02, above -0.2
    assert verdict() == "regressed"
    assert verdict("--extractbench-verdict-thresholds", "0.01,-0.2") == "neutral"


# -- data -------------------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_seed_chooses_which_samples_are_drawn(run: BenchRun, pytester: pytest.Pytester) -> None:
    def drawn(*args: str) -> list[str]:
        offline(run, TWELVE, GOOD, "--extractbench-sample", "4", *args)
        return sorted(records(pytester))

    def expected(seed: int) -> list[str]:  # the draw ranks ids by SHA-256 of the seed and the id
        ranked = sorted((s["id"] for s in TWELVE), key=lambda i: hashlib.sha256(f"{seed}\x00{i}".encode()).digest())
        return sorted(ranked[:4])

    default, one, two = drawn(), drawn("--extractbench-seed", "1"), drawn("--extractbench-seed", "2")
    assert (default, one, two) == (expected(42), expected(1), expected(2))
    assert len({tuple(default), tuple(one), tuple(two)}) == 3


@pytest.mark.slow
def test_output_is_where_the_run_is_written(pytester: pytest.Pytester) -> None:
    write_jsonl(pytester.path / "data.jsonl", TWELVE)
    write_jsonl(pytester.path / "preds.jsonl", GOOD)
    # no --extractbench-output: where the run goes by default is the point
    args = (
        "-p",
        "no:randomly",
        "--extractbench",
        *COMMON,
        "--extractbench-dataset",
        "data.jsonl",
        "--extractbench-predictions",
        "preds.jsonl",
    )
    assert pytester.runpytest(*args).ret == pytest.ExitCode.OK
    (default,) = (pytester.path / ".extractbench" / "runs").iterdir()
    assert (default / "metrics.json").is_file()
    assert pytester.runpytest(*args, "--extractbench-output", "results/nightly").ret == pytest.ExitCode.OK
    assert (pytester.path / "results" / "nightly" / "metrics.json").is_file()
    assert list((pytester.path / ".extractbench" / "runs").iterdir()) == [default]  # no second timestamped run


@pytest.mark.slow
def test_dataset_cache_holds_what_datasets_caches(
    run: BenchRun, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("datasets")
    monkeypatch.setenv("HF_DATASETS_CACHE", str(pytester.path / "hf-default"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    write_jsonl(pytester.path / "data.jsonl", TWELVE)
    write_jsonl(pytester.path / "preds.jsonl", GOOD)
    args = ("--extractbench-dataset", "hf:data.jsonl", "--extractbench-predictions", "preds.jsonl")
    # in a subprocess: the datasets library reads HF_DATASETS_CACHE once, when it is imported
    run(*COMMON, *args, subprocess=True).assert_outcomes(passed=12)
    assert any((pytester.path / "hf-default").rglob("*.arrow")) and not (pytester.path / "hf-mine").exists()
    shutil.rmtree(pytester.path / "hf-default")
    run(*COMMON, *args, "--extractbench-dataset-cache", "hf-mine", subprocess=True).assert_outcomes(passed=12)
    assert any((pytester.path / "hf-mine").rglob("*.arrow")) and not (pytester.path / "hf-default").exists()


# -- live runs --------------------------------------------------------------------------------------------------

N = 4
LIVE = [
    {
        "id": f"s{n:02d}",
        "text": f"Record s{n:02d}: P{n} is {n} years old.",
        "schema": PERSON,
        "expected": {"name": f"P{n}", "age": n},
    }
    for n in range(N)
]


def answer(body: dict[str, Any]) -> Any:
    text = " ".join(str(m.get("content")) for m in body["messages"] if m.get("role") == "user")
    n = int(re.search(r"Record s(\d\d)", text).group(1))
    return {"name": f"P{n}", "age": n}


@pytest.fixture
def server(fault_server: FaultServer, pytester: pytest.Pytester) -> FaultServer:
    fault_server.answer = answer
    write_jsonl(pytester.path / "data.jsonl", LIVE)
    return fault_server


def live(run: BenchRun, server: FaultServer, *args: str, out: str = "out") -> dict[str, Any]:
    result = run(*COMMON, "--extractbench-dataset", "data.jsonl", "--extractbench-base-url", server.url, *args, out=out)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str() + result.stderr.str()
    return run.document(out)


@pytest.mark.slow
def test_model_names_the_models_asked_and_each_gets_every_sample(run: BenchRun, pytester: pytest.Pytester) -> None:
    write_jsonl(pytester.path / "data.jsonl", LIVE)
    with FaultServer(answer=answer, models=("alpha", "beta")) as server:
        one = live(run, server, "--model", "alpha", "--extractbench-no-cache")
        assert [body["model"] for body in server.requests] == ["alpha"] * N and list(one["models"]) == ["alpha"]
        server.reset()
        two = live(run, server, "--extractbench-model", "alpha,beta", "--extractbench-no-cache")
        # one item per (model, sample): N requests per model, each naming its model
        assert sorted(body["model"] for body in server.requests) == ["alpha"] * N + ["beta"] * N
        assert sorted(two["models"]) == ["alpha", "beta"] and two["models"]["beta"]["num_samples"] == N


@pytest.mark.slow
def test_decoding_seed_is_sent_with_every_request(run: BenchRun, server: FaultServer) -> None:
    live(run, server, "--model", "test-model", "--extractbench-no-cache")
    assert {body["seed"] for body in server.requests} == {42}
    server.reset()
    found = live(run, server, "--model", "test-model", "--extractbench-no-cache", "--extractbench-decoding-seed", "7")
    assert [body["seed"] for body in server.requests] == [7] * N
    assert found["run"]["live"]["decoding"]["seed"] == 7


@pytest.mark.slow
def test_user_prompt_replaces_the_user_message(run: BenchRun, pytester: pytest.Pytester, server: FaultServer) -> None:
    (pytester.path / "user.txt").write_text("DOCUMENT<<{text}>>\nSCHEMA<<{schema}>>\n", encoding="utf-8")
    default = live(run, server, "--model", "test-model", "--extractbench-no-cache", "-k", "s01")
    assert not server.requests[0]["messages"][-1]["content"].startswith("DOCUMENT<<")
    server.reset()
    custom = live(
        run,
        server,
        "--model",
        "test-model",
        "--extractbench-no-cache",
        "-k",
        "s01",
        "--extractbench-user-prompt",
        "user.txt",
        out="custom",
    )
    (body,) = server.requests
    content = body["messages"][-1]
    assert content["role"] == "user"
    assert content["content"].startswith("DOCUMENT<<Record s01: P1 is 1 years old.>>\nSCHEMA<<{")
    assert custom["run"]["live"]["prompt_hash"] != default["run"]["live"]["prompt_hash"]


@pytest.mark.slow
def test_no_cache_neither_reads_nor_writes_the_response_cache(
    run: BenchRun, pytester: pytest.Pytester, server: FaultServer
) -> None:
    model = ("--model", "test-model")
    live(run, server, *model, "--extractbench-no-cache")
    assert len(server.requests) == N and not (pytester.path / ".extractbench" / "cache").exists()
    live(run, server, *model, "--extractbench-cache")  # the run above cached nothing: all asked, and cached now
    assert len(server.requests) == 2 * N and (pytester.path / ".extractbench" / "cache").is_dir()
    cached = live(run, server, *model, "--extractbench-cache")
    assert len(server.requests) == 2 * N and cached["run"]["live"]["cached_responses"] == N
    # the cache is there, and not read: no-cache wins over an opt-in given elsewhere (ini, config, env)
    uncached = live(run, server, *model, "--extractbench-cache", "--extractbench-no-cache")
    assert len(server.requests) == 3 * N and uncached["run"]["live"]["cached_responses"] == 0


@pytest.mark.slow
def test_concurrency_caps_the_requests_in_flight(
    run: BenchRun, pytester: pytest.Pytester, fault_server: FaultServer
) -> None:
    fault_server.answer = answer
    fault_server.default = Fault.ok(delay=1.0)
    many = [
        {
            "id": f"s{n:02d}",
            "text": f"Record s{n:02d}: P{n} is {n} years old.",
            "schema": PERSON,
            "expected": {"name": f"P{n}", "age": n},
        }
        for n in range(6)
    ]
    write_jsonl(pytester.path / "data.jsonl", many)

    def first_second(*args: str) -> int:
        fault_server.reset()
        live(run, fault_server, "--model", "test-model", "--extractbench-no-cache", *args)
        arrivals = sorted(fault_server.received_at)
        return sum(1 for t in arrivals if t - arrivals[0] < 0.9)

    # each answer takes 1 s: what arrives within the first 0.9 s is what was in flight at once
    assert first_second() == 6  # the default for a server URL is 8 at a time
    assert first_second("--extractbench-concurrency", "2") == 2
    assert document(pytester)["run"]["live"]["concurrency"] == 2


@pytest.mark.slow
def test_calibration_asks_for_logprobs_and_reports_calibration(run: BenchRun, server: FaultServer) -> None:
    plain = live(run, server, "--model", "test-model", "--extractbench-no-cache")
    assert not any("logprobs" in body for body in server.requests)
    assert "calibration" not in plain["models"]["test-model"]
    server.reset()
    calibrated = live(run, server, "--model", "test-model", "--extractbench-no-cache", "--extractbench-calibration")
    assert [body["logprobs"] for body in server.requests] == [True] * N
    # the fault server's logprobs cover both fields (name, age) of every sample
    assert calibrated["models"]["test-model"]["calibration"]["fields"] == 2 * N


# -- semantic comparison: the judge and server embeddings -------------------------------------------------------

SEMANTIC = {
    "type": "object",
    "properties": {"city": {"type": "string", "x-eval-compare": "semantic"}, "name": {"type": "string"}},
}
CITY = [
    {"id": "c", "text": "Ann lives in NYC.", "schema": SEMANTIC, "expected": {"city": "New York City", "name": "Ann"}}
]
CITY_OUT = [{"id": "c", "output": {"city": "NYC", "name": "Ann"}}]


@pytest.mark.slow
def test_judge_at_judge_url_grades_semantic_fields(
    run: BenchRun, pytester: pytest.Pytester, semantic_cache_dir: Path
) -> None:
    plain = offline(run, CITY, CITY_OUT)
    assert field(pytester, "c", "city")["score"] < 0.5  # no shared token: the composite string score is low

    def grades(body: dict[str, Any]) -> Any:  # the field rubric asks for "scores", the whole-output one for "grades"
        whole = "EXTRACTED JSON" in body["messages"][0]["content"]
        return (
            {"grades": [{"id": 1, "reasoning": "same", "score": 6}]} if whole else {"scores": [{"id": 1, "score": 7}]}
        )

    with FaultServer(answer=grades) as judge:
        judged = offline(
            run, CITY, CITY_OUT, "--extractbench-judge", "judge-model", "--extractbench-judge-url", judge.url
        )
        # one call grades the record's semantic fields as the item runs; one grades the whole output at the end
        body, whole = judge.requests
    assert body["model"] == "judge-model" and '"field": "city"' in body["messages"][-1]["content"]
    assert judged["judge_score"] == pytest.approx(6 / 7) and '"extracted":' in whole["messages"][-1]["content"]
    # grade 7 of 7 = 1.0, at or above the 0.85 threshold: a match
    assert field(pytester, "c", "city")["score"] == 1.0
    assert plain["match_categories"]["exact"] == 1 and judged["match_categories"]["exact"] == 2


class _Embeddings(BaseHTTPRequestHandler):
    """POST /v1/embeddings: every text gets the same vector (cosine 1); the requested models are recorded."""

    models: list[str] = []

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.models.append(body["model"])
        data = [{"object": "embedding", "index": i, "embedding": [1.0, 0.0]} for i in range(len(body["input"]))]
        payload = json.dumps(
            {"object": "list", "data": data, "model": body["model"], "usage": {"prompt_tokens": 0, "total_tokens": 0}}
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)


@pytest.fixture
def embeddings_server() -> Iterator[tuple[str, list[str]]]:
    handler = type("Handler", (_Embeddings,), {"models": []})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    serve_in_thread(httpd)
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", handler.models
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.mark.slow
def test_semantic_server_and_semantic_model_embed_the_texts(
    run: BenchRun, pytester: pytest.Pytester, semantic_cache_dir: Path, embeddings_server: tuple[str, list[str]]
) -> None:
    url, models = embeddings_server
    offline(run, CITY, CITY_OUT)
    assert models == [] and field(pytester, "c", "city")["score"] < 0.5
    offline(run, CITY, CITY_OUT, "--extractbench-semantic", url, "--extractbench-semantic-model", "emb-small")
    # cosine 1.0 >= 0.85: a match; the embedding model asked for is the one named, for the field's texts as the
    # item runs and for the whole output and gold at the end
    assert models == ["emb-small", "emb-small"] and field(pytester, "c", "city")["score"] == 1.0
    offline(run, CITY, CITY_OUT, "--extractbench-semantic", url)
    assert models == ["emb-small", "emb-small", "default", "default"]


# -- the embedded llama-server ----------------------------------------------------------------------------------

FAKE_LLAMA_SERVER = """#!{python}
import json, sys, threading
sys.path.insert(0, {tests!r})
from faultserver import FaultServer

args = sys.argv[1:]
value = lambda flag: args[args.index(flag) + 1]
with open({record!r}, "a") as handle:
    handle.write(json.dumps(args) + "\\n")
FaultServer(host=value("--host"), port=int(value("--port")), models=(value("--alias"),)).start()
threading.Event().wait()
"""


@pytest.fixture
def fake_llama_server(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A stand-in llama-server: records its arguments, then serves as tests/faultserver.py does."""
    from pytest_extractbench.live.backends.llama_models import MissingExtraError, resolve_model

    try:
        resolve_model("gemma3-270m")  # its GGUF header sizes the context; the stand-in never loads it
    except MissingExtraError as exc:
        pytest.skip(str(exc))
    record = pytester.path / "llama-args.jsonl"
    script = pytester.path / "fake-llama-server"
    script.write_text(
        FAKE_LLAMA_SERVER.format(python=sys.executable, tests=str(Path(__file__).parents[1]), record=str(record)),
        encoding="utf-8",
    )
    script.chmod(0o755)
    monkeypatch.setenv("EXTRACTBENCH_LLAMA_SERVER", str(script))
    write_jsonl(pytester.path / "data.jsonl", LIVE)
    return record


def embedded(run: BenchRun, record: Path, *args: str) -> tuple[dict[str, str], dict[str, Any]]:
    record.unlink(missing_ok=True)
    result = run(
        *COMMON, "--extractbench-dataset", "data.jsonl", "--model", "gemma3-270m", "--extractbench-no-cache", *args
    )
    assert result.ret == pytest.ExitCode.OK, result.stdout.str() + result.stderr.str()
    (argv,) = [json.loads(line) for line in record.read_text().splitlines()]  # one start: no restart
    flags = dict(zip(argv[:-1], argv[1:]))
    return flags, run.document()["run"]["live"]["embedded"]["gemma3-270m"]


@pytest.mark.slow
def test_slots_and_context_size_the_embedded_server(run: BenchRun, fake_llama_server: Path) -> None:
    # short prompts: 4096 tokens per slot by default; llama-server's --ctx-size is the total, slots x per slot
    flags, facts = embedded(run, fake_llama_server)
    assert (flags["--parallel"], flags["--ctx-size"]) == ("4", str(4 * 4096))
    assert (facts["slots"], facts["ctx_per_slot"]) == (4, 4096)
    flags, facts = embedded(run, fake_llama_server, "--extractbench-slots", "2")
    assert (flags["--parallel"], flags["--ctx-size"]) == ("2", str(2 * 4096))
    assert facts["slots"] == 2
    flags, facts = embedded(run, fake_llama_server, "--extractbench-slots", "2", "--extractbench-context", "6144")
    assert (flags["--parallel"], flags["--ctx-size"]) == ("2", str(2 * 6144))
    assert facts["ctx_per_slot"] == 6144 and facts["context"]["source"] == "option"
