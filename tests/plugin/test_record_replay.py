"""Strict record/replay: a cassette recorded from a real loopback server replays to the same metrics, with
and without xdist, never sends a request, and a sample it does not hold is that item's ``replay_miss``."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from faultserver import FaultServer

from pytest_extractbench.core.rundoc import iter_samples

SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
    "required": ["name", "age"],
}
N = 8
SECRET = "sk-cassette-secret-0123456789"
HEADLINE = (
    "extraction_quality_score",
    "field_f1_partial",
    "schema_validity_rate",
    "exact_match_rate",
    "hallucination_rate",
    "num_samples",
)


def sample(n: int, text: str | None = None) -> dict[str, Any]:
    return {
        "id": f"s{n:02d}",
        "text": text or f"Record s{n:02d}: P{n} is {n} years old.",
        "schema": SCHEMA,
        "expected": {"name": f"P{n}", "age": n},
    }


def answer(body: dict[str, Any]) -> Any:
    text = " ".join(str(m.get("content")) for m in body["messages"] if m.get("role") == "user")
    n = int(re.search(r"Record s(\d\d)", text).group(1))
    return {"name": f"P{n}"} if n == 3 else {"name": f"P{n}", "age": n}  # s03 misses a required field


def write_data(pytester: pytest.Pytester, rows: list[dict[str, Any]]) -> None:
    (pytester.path / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def bench(pytester: pytest.Pytester, *args: str, out: str) -> pytest.RunResult:
    return pytester.runpytest(
        "-p",
        "no:randomly",
        "--extractbench",
        "--extractbench-dataset",
        "data.jsonl",
        "--extractbench-output",
        out,
        "--extractbench-sla",
        "none",
        *args,
    )


def models(pytester: pytest.Pytester, out: str) -> dict[str, Any]:
    return json.loads((pytester.path / out / "metrics.json").read_text())["models"]


def records(pytester: pytest.Pytester, out: str) -> dict[str, dict[str, Any]]:
    rows = list(iter_samples(pytester.path / out / "samples.jsonl"))
    return {row["sample_id"]: row for row in rows}


@pytest.fixture
def recorded(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> FaultServer:
    """A run against a keyed loopback server, recorded to ./cassette; the server is stopped afterwards."""
    write_data(pytester, [sample(n) for n in range(N)])
    monkeypatch.setenv("EXTRACTBENCH_API_KEY", SECRET)
    with FaultServer(answer=answer, api_key=SECRET) as server:
        bench(
            pytester,
            "--extractbench-base-url",
            server.url,
            "--model",
            "test-model",
            "--extractbench-record",
            "cassette",
            out="live",
        ).assert_outcomes(passed=N - 1, failed=1)
    monkeypatch.delenv("EXTRACTBENCH_API_KEY")
    return server


@pytest.mark.slow
def test_a_cassette_is_sorted_diffable_and_keeps_no_secret(pytester: pytest.Pytester, recorded: FaultServer) -> None:
    text = (pytester.path / "cassette" / "cassette.jsonl").read_text(encoding="utf-8")
    assert SECRET not in text
    lines = [json.loads(line) for line in text.splitlines()]
    header, entries = lines[0], lines[1:]
    assert header["format"] == "extractbench-cassette" and header["answers"] == N and len(header["dataset_hash"]) == 64
    assert [e["sample_id"] for e in entries] == [f"s{n:02d}" for n in range(N)]
    assert all(
        line == json.dumps(json.loads(line), sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        for line in text.splitlines()
    )  # canonical lines: a re-recording diffs line by line
    origin = entries[0]["response"]["origin"]
    assert (origin["source"], origin["by"], origin["where"]) == ("asked", "server", recorded.url)
    # recorded again from its own replay: the same keys, sample hashes and answers, in the same order
    bench(pytester, "--extractbench-replay", "cassette", "--extractbench-record", "again", out="again")
    again = [json.loads(line) for line in (pytester.path / "again" / "cassette.jsonl").read_text().splitlines()]
    assert again[0] == header
    assert [(e["key"], e["sample_hash"], e["response"]["content"]) for e in again[1:]] == [
        (e["key"], e["sample_hash"], e["response"]["content"]) for e in entries
    ]


@pytest.mark.slow
@pytest.mark.parametrize("xdist", [(), ("-n", "2")], ids=["one-process", "xdist"])
def test_a_cassette_replays_to_the_recorded_metrics_without_a_server(
    pytester: pytest.Pytester, recorded: FaultServer, xdist: tuple[str, ...]
) -> None:
    assert not recorded.running
    result = bench(pytester, "--extractbench-replay", "cassette", *xdist, out="replayed")
    result.assert_outcomes(passed=N - 1, failed=1)
    live, replayed = models(pytester, "live")["test-model"], models(pytester, "replayed")["test-model"]
    assert {k: replayed[k] for k in HEADLINE} == {k: live[k] for k in HEADLINE}
    found = records(pytester, "replayed")
    assert {r["response"]["origin"]["source"] for r in found.values()} == {"replay"}
    assert {r["response"]["origin"]["where"] for r in found.values()} == {recorded.url}  # who gave the answer
    assert "REUSED ANSWERS: 8 of 8 answers reused (8 replayed" in result.stdout.str()
    assert len(recorded.requests) == N  # the recording's requests only


@pytest.mark.slow
def test_the_same_cassette_gives_byte_identical_metrics_with_and_without_xdist(
    pytester: pytest.Pytester, recorded: FaultServer
) -> None:
    bench(pytester, "--extractbench-replay", "cassette", out="one")
    bench(pytester, "--extractbench-replay", "cassette", "-n", "2", out="two")
    assert json.dumps(models(pytester, "one"), sort_keys=True) == json.dumps(models(pytester, "two"), sort_keys=True)


@pytest.mark.slow
def test_an_edited_sample_is_a_replay_miss_never_a_request(pytester: pytest.Pytester, recorded: FaultServer) -> None:
    write_data(pytester, [sample(n, "Record s05: P5 is now 6." if n == 5 else None) for n in range(N)])
    result = bench(pytester, "--extractbench-replay", "cassette", out="edited")
    result.assert_outcomes(passed=N - 2, failed=2)
    miss = records(pytester, "edited")["s05"]["response"]
    assert miss["error_class"] == "replay_miss" and "sample 's05' (model 'test-model')" in miss["error"]
    assert "exit code 1: 2 item(s) failed (1 replay_miss, 1 schema_failure)" in result.stdout.lines


@pytest.mark.slow
@pytest.mark.parametrize(
    "damage, message",
    [
        (lambda lines: lines[:2] + ["{not json"] + lines[3:], "line 3"),
        (lambda lines: lines[1:], "line 1: not a cassette"),
        (lambda lines: lines + [lines[1]], f"line {N + 2}: sample 's00' (model 'test-model') is recorded twice"),
        (lambda lines: lines[:1] + ['{"model": "test-model"}'], "line 2: an entry needs"),
    ],
    ids=["broken-json", "no-header", "twice", "no-key"],
)
def test_a_damaged_cassette_stops_the_run_naming_file_and_line(
    pytester: pytest.Pytester, recorded: FaultServer, damage: Any, message: str
) -> None:
    path = pytester.path / "cassette" / "cassette.jsonl"
    path.write_text("\n".join(damage(path.read_text().splitlines())) + "\n", encoding="utf-8")
    result = bench(pytester, "--extractbench-replay", "cassette", out="damaged")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert f"cassette {path}, {message}" in result.stderr.str(), result.stderr.str()
