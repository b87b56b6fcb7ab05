"""The response journal and cache on real files, with real concurrent processes."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import pytest

from pytest_extractbench.core import rundoc
from pytest_extractbench.core.rundoc import RunDocError
from pytest_extractbench.dataset.responses import ModelResponse
from pytest_extractbench.live.journal import (
    JOURNAL_FILE,
    Journal,
    ResponseCache,
    latest_responses,
    read_journal,
    response_from_dict,
    reusable_by_key,
)
from pytest_extractbench.live.options import LiveOptions
from pytest_extractbench.scoring import MISSING


def ok(content: str = '{"a": 1}', **kw: object) -> ModelResponse:
    fields = {"latency_s": 0.5, "usage": {"prompt_tokens": 3}, "finish_reason": "stop", "attempts": 1, **kw}
    return ModelResponse(content=content, **fields)  # type: ignore[arg-type]


def _append_many(run_dir: str, worker: int, lines: int) -> None:
    journal = Journal(Path(run_dir))
    for i in range(lines):
        # ~3 KB per line: several filesystem blocks, so interleaving would show
        journal.append("m", f"w{worker}-{i}", f"k{worker}-{i}", ok(json.dumps({"pad": "x" * 3000, "i": i})))
    journal.close()


@pytest.mark.slow
def test_processes_appending_at_once_never_tear_a_line(tmp_path: Path) -> None:
    context = multiprocessing.get_context("spawn")
    procs = [context.Process(target=_append_many, args=(str(tmp_path), w, 300)) for w in range(4)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(60)
        assert proc.exitcode == 0
    raw = (tmp_path / JOURNAL_FILE).read_text().splitlines()
    assert len(raw) == 1200
    entries = [json.loads(line) for line in raw]  # every line is whole JSON
    assert sorted(e["sample_id"] for e in entries) == sorted(f"w{w}-{i}" for w in range(4) for i in range(300))
    for worker in range(4):  # each process's lines keep their order
        mine = [e["response"]["content"] for e in entries if e["sample_id"].startswith(f"w{worker}-")]
        assert [json.loads(c)["i"] for c in mine] == list(range(300))


def test_a_torn_last_line_is_skipped(tmp_path: Path) -> None:
    journal = Journal(tmp_path)
    journal.append("m", "s1", "k1", ok())
    journal.close()
    with (tmp_path / JOURNAL_FILE).open("a") as handle:
        handle.write('{"model": "m", "sample_id": "s2", "key": "k2", "resp')  # killed mid-line
    assert [e["sample_id"] for e in read_journal(tmp_path)] == ["s1"]
    assert list(latest_responses(tmp_path)) == [("m", "s1")]


# -- the journal read through the run document: versions, bad lines named by file and line ----------------


def _entry(sample_id: str, **extra: object) -> bytes:
    entry = {"model": "m", "sample_id": sample_id, "key": f"k-{sample_id}", "response": ok().as_dict(), **extra}
    return (json.dumps(entry) + "\n").encode()


def test_a_journal_written_now_carries_the_journal_format(tmp_path: Path) -> None:
    journal = Journal(tmp_path)
    journal.append("m", "s1", "k1", ok())
    journal.close()
    (line,) = (tmp_path / JOURNAL_FILE).read_text().splitlines()
    assert json.loads(line)["format_version"] == rundoc.FORMAT_VERSION[rundoc.JOURNAL]
    assert [e["format_version"] for e in read_journal(tmp_path)] == [rundoc.FORMAT_VERSION[rundoc.JOURNAL]]


def test_an_old_journal_without_versions_and_a_new_one_read_alike(tmp_path: Path) -> None:
    old, new = tmp_path / "old", tmp_path / "new"
    old.mkdir()
    (old / JOURNAL_FILE).write_bytes(_entry("s1") + _entry("s2"))  # the form written before lines had a version
    journal = Journal(new)
    for sample_id in ("s1", "s2"):
        journal.append("m", sample_id, f"k-{sample_id}", ok())
    journal.close()
    assert latest_responses(old) == latest_responses(new)
    assert reusable_by_key(old).keys() == reusable_by_key(new).keys() == {"k-s1", "k-s2"}


@pytest.mark.parametrize(
    ("bad", "words"),
    [
        (_entry("s2", format_version=7), ["format_version 7", "newer pytest-extractbench", "journal format 1"]),
        (_entry("s2", format_version="1"), ["format_version '1' is not supported", "journal format 1"]),
        (b"this is not JSON\n", ["not a journal line", "not valid JSON"]),
        (b'{"model": "m", "sample_id": "s2"} trailing\n', ["not a journal line", "not valid JSON"]),
        (
            b'{"model": "m", "sample_id": "s2", "response": "ok"}\n',
            ["string model, sample_id and key", "journal format 1"],
        ),
        (b"[1, 2]\n", ["a list, not one with"]),
        (b'{"model": "m", "sample_id": "caf\xe9", "key": "k", "response": {}}\n', ["not UTF-8", "byte 0xe9"]),
    ],
    ids=["newer-version", "version-as-text", "not-json", "trailing-garbage", "wrong-shape", "a-list", "latin-1"],
)
def test_a_bad_middle_line_is_one_error_naming_file_and_line(tmp_path: Path, bad: bytes, words: list[str]) -> None:
    (tmp_path / JOURNAL_FILE).write_bytes(_entry("s1") + bad + _entry("s3"))
    for read in (latest_responses, reusable_by_key):
        with pytest.raises(RunDocError) as caught:
            read(tmp_path)
        message = str(caught.value)
        assert message.startswith(f"{tmp_path / JOURNAL_FILE}:2: ") and "\n" not in message
        for word in words:
            assert word in message, message


def test_a_line_cut_short_anywhere_is_skipped_where_a_resume_left_it(tmp_path: Path) -> None:
    # every cut of a line (mid-string, mid-number, mid-escape, mid-character) reads as cut short, not malformed
    response = {"content": 'café "q" 😀 \x01', "latency_s": -1.5e-3, "cached": True, "error": None}
    entry = {"model": "m", "sample_id": "s2", "key": "k", "response": response}
    whole = (json.dumps(entry, ensure_ascii=False) + "\n").encode()  # raw multi-byte characters, escapes, numbers
    for cut in range(1, len(whole) - 1):
        (tmp_path / JOURNAL_FILE).write_bytes(_entry("s1") + whole[:cut] + b"\n" + _entry("s3"))
        assert [e["sample_id"] for e in read_journal(tmp_path)] == ["s1", "s3"], whole[:cut]


def test_resume_reuses_answers_and_asks_failures_again(tmp_path: Path) -> None:
    journal = Journal(tmp_path)
    journal.append("m", "s1", "k1", ModelResponse(error_class="connection", error="refused", attempts=4))
    journal.append("m", "s1", "k1", ok())  # the resumed run's answer
    journal.append("m", "s2", "k2", ok('{"cut', error_class="truncated", finish_reason="length"))
    journal.append("m", "s3", "k3", ModelResponse(error_class="server_error", error="HTTP 500"))
    journal.append("m", "s4", "k4", ok())
    journal.append("m", "s4", "k4", ModelResponse(error_class="timeout"))  # an answer is never replaced by a failure
    journal.close()
    assert set(reusable_by_key(tmp_path)) == {"k1", "k2", "k4"}
    latest = latest_responses(tmp_path)
    assert latest[("m", "s1")][1].content == '{"a": 1}'
    assert latest[("m", "s3")][1].error_class == "server_error"
    assert latest[("m", "s4")][1].error_class is None


def test_records_round_trip_and_ignore_unknown_fields() -> None:
    original = ok(cached=False, started_at=1.0, finished_at=2.0)
    data = dict(original.as_dict(), future_field="x")
    assert response_from_dict(data) == original
    assert response_from_dict({"content": None, "error_class": "missing"}).content is MISSING


def test_the_cache_keeps_answers_only(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path)
    cache.put("a" * 64, ok())
    cache.put("b" * 64, ModelResponse(error_class="timeout", error="slow"))
    cache.put("c" * 64, ok('{"cut', error_class="truncated", finish_reason="length"))
    hit = cache.get("a" * 64)
    assert hit is not None and hit.cached and hit.content == '{"a": 1}' and hit.usage == {"prompt_tokens": 3}
    assert cache.get("b" * 64) is None
    assert cache.get("c" * 64) is not None
    assert cache.get("d" * 64) is None
    assert not list(tmp_path.rglob("*.tmp"))  # written through a temp file and a rename


@pytest.mark.parametrize(
    ("options", "workers", "expected"),
    [
        (LiveOptions(), 1, 4),  # the embedded server's slots
        (LiveOptions(slots=6), 2, 3),
        (LiveOptions(base_urls=("http://a/v1", "http://b/v1")), 1, 16),  # 8 per URL
        (LiveOptions(base_urls=("http://a/v1",)), 3, 3),  # ceil(8 / 3)
        (LiveOptions(concurrency=5), 2, 3),
        (LiveOptions(concurrency=1), 4, 1),
    ],
)
def test_default_concurrency(options: LiveOptions, workers: int, expected: int) -> None:
    assert options.default_concurrency(workers) == expected


@pytest.mark.parametrize(
    ("options", "workers", "server_slots", "expected"),
    [
        (LiveOptions(), 1, 4, 4),  # the server got the slots asked for
        (LiveOptions(), 1, 2, 2),  # memory halved the slots: half the requests in flight
        (LiveOptions(), 2, 2, 1),  # ... shared by two workers: 1 each, 2 in all
        (LiveOptions(slots=6), 1, 1, 1),
        (LiveOptions(), 1, None, 4),  # a server URL: no slot count known
        (LiveOptions(concurrency=8), 1, 2, 8),  # asked for explicitly: kept
    ],
)
def test_route_concurrency_follows_the_slots_the_server_got(
    options: LiveOptions, workers: int, server_slots: int | None, expected: int
) -> None:
    from pytest_extractbench.live.endpoints import Route
    from pytest_extractbench.live.pipeline import route_concurrency

    route = Route(("http://127.0.0.1:1/v1",), "m", server_slots)
    assert route_concurrency(options.default_concurrency(workers), options, route) == expected
