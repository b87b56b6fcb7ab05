"""Hostile extractors: a Python callable that hangs, exits, raises what is not an Exception, returns what
is not JSON, changes what it is given or goes looking for the gold. Whatever it does, the run ends, every
sample asked is accounted for in samples.jsonl and metrics.json, and the failure is named in one line.

Most runs go through ``evaluate()`` (the same pipeline as pytest, in-process); the cases about what the
terminal shows and about a process that must still exit go through pytest in a subprocess.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import gc
import json
import pickle
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from _checks import assert_accounted, assert_clean_terminal
from _require import import_or_skip
from pytest_extractbench import ModelResponse, SampleView, evaluate
from pytest_extractbench.core.rundoc import iter_samples
from pytest_extractbench.dataset.samples import Sample
from pytest_extractbench.live import extractor as extractor_module
from pytest_extractbench.live.extractor import MAX_ANSWER_CHARS, to_response

SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
    "required": ["name"],
}
IDS = ["s0", "s1", "s2", "s3"]
HOSTILE = "s2"  # the sample each hostile extractor misbehaves on


def write_dataset(root: Path) -> Path:
    path = root / "data.jsonl"
    rows = [
        {
            "id": sid,
            "text": f"Person {i} is {20 + i}.",
            "schema": SCHEMA,
            "expected": {"name": f"Person {i}", "age": 20 + i},
        }
        for i, sid in enumerate(IDS)
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def answer(sample: Any) -> dict[str, Any]:
    """The right answer, read from the text (as a pipeline would), never from the gold."""
    words = sample.text.rstrip(".").split()
    return {"name": f"{words[0]} {words[1]}", "age": int(words[-1])}


def run(tmp_path: Path, extractor: Callable[..., Any], **options: Any) -> tuple[Any, Path]:
    out = tmp_path / "out"
    values = {"sla": "none", "no_cache": True, "no_html_report": True, "timeout": 2}
    values.update(options)
    result = evaluate(str(write_dataset(tmp_path)), extractor=extractor, output=out, rootdir=tmp_path, **values)
    return result, out


def outcomes(result: Any) -> dict[str, tuple[str | None, str | None]]:
    return {r.sample_id: (r.response.get("error_class"), r.response.get("error")) for r in result.records}


def assert_only_hostile_failed(result: Any, out: Path, error_class: str) -> str:
    """Every sample accounted for; the hostile one is `error_class`, the others answered right. Returns its error."""
    assert_accounted(out, len(IDS))
    found = outcomes(result)
    assert sorted(found) == IDS
    assert found[HOSTILE][0] == error_class, found[HOSTILE]
    assert all(found[sid] == (None, None) for sid in IDS if sid != HOSTILE), found
    assert [r.sample_id for r in result.records if not r.passed] == [HOSTILE]
    error = found[HOSTILE][1]
    assert error and "\n" not in error and len(error) <= 2000
    return error


# -- deadlines ----------------------------------------------------------------------------------------


def test_a_sync_extractor_that_never_returns_is_a_timeout(tmp_path: Path) -> None:
    def hangs(sample):
        if sample.id == HOSTILE:
            time.sleep(3600)
        return answer(sample)

    result, out = run(tmp_path, hangs, timeout=1)
    assert "did not answer within 1s" in assert_only_hostile_failed(result, out, "timeout")


def test_a_hung_sync_call_does_not_take_a_concurrency_slot_from_the_rest(tmp_path: Path) -> None:
    # one call at a time: with a shared pool of one thread, the hung call would starve every later sample
    def first_hangs(sample):
        if sample.id == HOSTILE:
            time.sleep(3600)
        return answer(sample)

    result, out = run(tmp_path, first_hangs, timeout=1, concurrency=1)
    assert_only_hostile_failed(result, out, "timeout")


async def waits_for_ever(sample):
    if sample.id == HOSTILE:
        await asyncio.Event().wait()
    return answer(sample)


async def ignores_its_cancellation(sample):
    while sample.id == HOSTILE:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            pass  # hostile: refuses to stop, so it is left behind rather than waited for
    return answer(sample)


@pytest.mark.parametrize("extractor", [waits_for_ever, ignores_its_cancellation], ids=lambda f: f.__name__)
def test_an_async_extractor_that_never_returns_is_a_timeout(tmp_path: Path, extractor: Callable[..., Any]) -> None:
    result, out = run(tmp_path, extractor, timeout=1)
    assert_only_hostile_failed(result, out, "timeout")


@pytest.mark.slow
def test_an_async_extractor_that_blocks_the_loop_times_out_every_waiting_call(tmp_path: Path) -> None:
    async def blocks(sample):
        if sample.id == HOSTILE:
            time.sleep(3600)  # no await: the loop it runs on stops
        return answer(sample)

    # one call at a time, in sample order: s0 and s1 are answered before s2 blocks the loop
    result, out = run(tmp_path, blocks, timeout=1, concurrency=1)
    assert_accounted(out, len(IDS))
    found = outcomes(result)
    assert found["s0"] == found["s1"] == (None, None)
    for sid in ("s2", "s3"):
        assert found[sid][0] == "timeout"
        assert "blocked the event loop" in found[sid][1] and "must await" in found[sid][1]


def test_a_slow_extractor_within_the_deadline_is_answered(tmp_path: Path) -> None:
    def slow(sample):
        time.sleep(0.3)
        return answer(sample)

    result, out = run(tmp_path, slow, timeout=20)
    assert_accounted(out, len(IDS))
    assert all(value == (None, None) for value in outcomes(result).values())
    assert json.loads((out / "metrics.json").read_text())["run"]["live"]["timeout_s"] == 20


def test_an_extractor_gets_a_server_request_s_deadline_by_default(tmp_path: Path) -> None:
    # not the embedded CPU model's longer one: an extractor answers instead of a server
    _, out = (
        evaluate(
            str(write_dataset(tmp_path)),
            extractor=answer,
            output=tmp_path / "out",
            rootdir=tmp_path,
            sla="none",
            no_html_report=True,
        ),
        tmp_path / "out",
    )
    live = json.loads((out / "metrics.json").read_text())["run"]["live"]
    assert live["timeout_s"] == 120 and live["concurrency"] == 8
    assert_accounted(out, len(IDS))


def test_the_extractor_s_own_error_is_kept_in_one_line(tmp_path: Path) -> None:
    def reports(sample):
        if sample.id == HOSTILE:
            return ModelResponse(error_class="server_error", error="upstream said:\n" + "no\r\n" * 2000)
        return answer(sample)

    result, out = run(tmp_path, reports)
    error = assert_only_hostile_failed(result, out, "server_error")
    assert error.startswith("upstream said: no no")


# -- what it raises -----------------------------------------------------------------------------------


class Hostile(BaseException):
    """A BaseException subclass that is no Exception: `except Exception` does not see it."""


def raising(exc: BaseException, *, is_async: bool) -> Callable[..., Any]:
    if is_async:

        async def extractor(sample):
            if sample.id == HOSTILE:
                raise exc
            return answer(sample)
    else:

        def extractor(sample):
            if sample.id == HOSTILE:
                raise exc
            return answer(sample)

    return extractor


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize(
    ("exc", "named"),
    [
        (SystemExit(3), "SystemExit: 3"),
        (GeneratorExit(), "GeneratorExit"),
        (Hostile("line one\nline two\n" + "x" * 5000), "Hostile: line one line two"),
        (asyncio.CancelledError("from the extractor itself"), "CancelledError"),
        (ValueError(), "ValueError"),
    ],
    ids=["SystemExit", "GeneratorExit", "BaseException-subclass", "CancelledError", "no-message"],
)
def test_whatever_the_extractor_raises_is_its_samples_extractor_error(
    tmp_path: Path, exc: BaseException, named: str, is_async: bool
) -> None:
    result, out = run(tmp_path, raising(exc, is_async=is_async))
    error = assert_only_hostile_failed(result, out, "extractor_error")
    assert error.startswith(f"the extractor raised {named}")


def test_a_cancelled_error_the_extractor_raises_is_its_outcome_where_tasks_cannot_tell(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Python 3.10's tasks have no ``cancelling()``: a CancelledError from the callable is still its outcome there
    (asking such a task crashed the run with an AttributeError)."""

    class Python310Task:
        pass

    async def cancelled() -> None:
        raise asyncio.CancelledError("from the extractor itself")

    monkeypatch.setattr(extractor_module.asyncio, "current_task", lambda loop=None: Python310Task())
    status, exc = asyncio.run(extractor_module._guarded(cancelled))
    assert (status, type(exc), str(exc)) == ("raised", asyncio.CancelledError, "from the extractor itself")


@pytest.mark.parametrize("is_async", [False, True], ids=["sync", "async"])
def test_keyboard_interrupt_from_the_extractor_stops_the_evaluation(tmp_path: Path, is_async: bool) -> None:
    with pytest.raises(KeyboardInterrupt):
        run(tmp_path, raising(KeyboardInterrupt(), is_async=is_async))


# -- what it returns ----------------------------------------------------------------------------------


class Opaque:
    def __repr__(self) -> str:
        return "\x1b[31mOPAQUE\x1b[0m"


def _deep(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth):
        value = {"a": value}
    return value


def _cycle() -> dict[str, Any]:
    value: dict[str, Any] = {"name": "x"}
    value["self"] = value
    return value


@pytest.mark.parametrize(
    ("returned", "named"),
    [
        (None, "returned NoneType"),
        (42, "returned int"),
        ({"name", "age"}, "returned set"),
        (b'{"name": "x"}', "returned bytes"),
        ({"name": {"a", "b"}}, "not JSON"),
        ({"name": Opaque()}, "not JSON"),
        (_deep(5000), "nested"),
        (_cycle(), "nested"),
        ("x" * (MAX_ANSWER_CHARS + 1), "at most"),
        ({"name": "x" * (MAX_ANSWER_CHARS + 1)}, "at most"),
        (ModelResponse(content='{"name": "x"}', error_class="made_up"), "unknown error_class"),
        (ModelResponse(content=[1, 2]), "expected str (JSON) or dict"),
    ],
    ids=[
        "None",
        "int",
        "set",
        "bytes",
        "dict-with-set",
        "dict-with-object",
        "deep",
        "cycle",
        "huge-text",
        "huge-dict",
        "bad-error-class",
        "response-with-list",
    ],
)
def test_an_answer_that_is_not_json_is_an_extractor_error_naming_why(tmp_path: Path, returned: Any, named: str) -> None:
    def extractor(sample):
        return returned if sample.id == HOSTILE else answer(sample)

    result, out = run(tmp_path, extractor)
    error = assert_only_hostile_failed(result, out, "extractor_error")
    assert named in error
    assert_clean_terminal(error)
    # the journal holds one readable line per sample, the refused answer included
    journal = [json.loads(line) for line in (out / "responses.jsonl").read_text(encoding="utf-8").splitlines()]
    assert sorted(row["sample_id"] for row in journal) == IDS


JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20) | st.binary(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.text(max_size=5), inner, max_size=4)
        | st.sets(st.integers(), max_size=3)
        | st.tuples(inner, inner)
    ),
    max_leaves=20,
)


@given(value=JSONISH | st.dictionaries(st.text(max_size=5), JSONISH, max_size=4))
def test_any_returned_value_becomes_an_answer_that_can_be_recorded_or_an_extractor_error(value: Any) -> None:
    response = to_response(value)
    assert response.error_class in (None, "extractor_error")
    if response.error_class is None:
        assert isinstance(response.content, (str, dict))
        json.dumps(response.as_dict(), ensure_ascii=False)  # the journal line can be written without default=str
    else:
        assert response.error and "\n" not in response.error


# -- what it is given ---------------------------------------------------------------------------------


def test_the_extractor_is_given_a_view_without_the_gold(tmp_path: Path) -> None:
    seen: list[tuple[str, bool, list[str]]] = []

    def nosy(sample):
        seen.append((type(sample).__name__, hasattr(sample, "expected"), [f.name for f in dataclasses.fields(sample)]))
        return sample.expected  # what a cheating pipeline tries: it raises

    result, out = run(tmp_path, nosy)
    assert_accounted(out, len(IDS))
    assert seen and all(entry == ("SampleView", False, ["id", "text", "schema", "meta"]) for entry in seen)
    for error_class, error in outcomes(result).values():
        assert error_class == "extractor_error" and "AttributeError" in error and "expected" in error


def _reachable(root: Any, limit: int = 10_000) -> list[Any]:
    """Every object reachable from `root` through references (bounded), as the gc sees them."""
    seen: dict[int, Any] = {}
    todo = [root]
    while todo and len(seen) < limit:
        obj = todo.pop()
        if id(obj) in seen:
            continue
        seen[id(obj)] = obj
        todo.extend(gc.get_referents(obj))
    return list(seen.values())


def test_the_gold_cannot_be_reached_from_the_view() -> None:
    gold = {"name": "Person 1", "age": 21}
    sample = Sample("s1", "Person 1 is 21.", copy.deepcopy(SCHEMA), gold, {"topic": "people"})
    view = sample.view()
    assert not hasattr(view, "expected") and not hasattr(view, "__dict__")
    with pytest.raises(TypeError):
        vars(view)
    assert "expected" not in {f.name for f in dataclasses.fields(view)}
    assert "expected" not in dir(view)
    with pytest.raises(dataclasses.FrozenInstanceError):
        view.text = "changed"  # type: ignore[misc]
    # no reference leads back to the sample or its gold: not through attributes, not through the gc
    reachable = _reachable(view)
    assert not any(obj is sample or obj is gold for obj in reachable)
    # a pickled view carries what a model would see and nothing else
    restored = pickle.loads(pickle.dumps(view))
    assert restored == view and not any(obj is gold for obj in _reachable(restored))
    assert b"Person 1" in pickle.dumps(view) and b"age" in pickle.dumps(view)  # the schema's own words
    assert b"21," not in pickle.dumps(view) and b'"age": 21' not in pickle.dumps(view)


def test_an_extractor_that_changes_what_it_is_given_changes_nothing_for_the_run(tmp_path: Path) -> None:
    # every sample shares one schema object: an extractor that empties it would change how later samples are
    # validated, and one that edits meta would change the breakdowns
    def vandal(sample):
        result = answer(sample)
        sample.schema["properties"].clear()
        sample.schema["required"] = ["nothing"]
        sample.schema["additionalProperties"] = False
        sample.meta.clear()
        return result

    result, out = run(tmp_path, vandal, concurrency=1)
    assert_accounted(out, len(IDS))
    assert all(r.score.schema_valid and r.passed for r in result.records)
    assert all(r.meta.get("source") for r in result.records)


def test_a_view_holds_copies_of_schema_and_meta() -> None:
    sample = Sample("s1", "t", copy.deepcopy(SCHEMA), {"name": "x"}, {"topic": "people"})
    view = sample.view()
    view.schema["properties"]["name"]["type"] = "integer"
    view.meta["topic"] = "changed"
    assert sample.schema == SCHEMA and sample.meta == {"topic": "people"} and sample.topic == "people"
    assert isinstance(view, SampleView) and view.topic == "changed"


# -- through pytest: the terminal and the process's end ------------------------------------------------


EXTRACTOR = """
import re, time

def _answer(sample):
    name, age = re.match(r"(Person \\d+) is (\\d+)", sample.text).groups()
    return {"name": name, "age": int(age)}

def exits(sample):
    if sample.id == "s2":
        raise SystemExit("bye from the extractor")
    return _answer(sample)

def hangs(sample):
    if sample.id == "s2":
        time.sleep(3600)
    return _answer(sample)

def hangs_and_exits(sample):
    if sample.id == "s1":
        raise SystemExit(5)
    return hangs(sample)
"""


def pytest_run(pytester: pytest.Pytester, spec: str, *args: str) -> pytest.RunResult:
    write_dataset(pytester.path)
    (pytester.path / "hostile_extractors.py").write_text(EXTRACTOR, encoding="utf-8")
    return pytester.runpytest_subprocess(
        "-p",
        "no:randomly",
        "--extractbench",
        "--extractbench-dataset",
        "data.jsonl",
        "--extractbench-sla",
        "none",
        "--extractbench-output",
        "out",
        "--extractbench-no-cache",
        "--extractbench-no-html-report",
        "--extractbench-extractor",
        f"hostile_extractors:{spec}",
        *args,
        timeout=240,
    )


@pytest.mark.slow
def test_system_exit_in_an_extractor_is_one_line_not_a_traceback(pytester: pytest.Pytester) -> None:
    result = pytest_run(pytester, "exits")
    result.assert_outcomes(passed=3, failed=1)
    text = result.stdout.str() + result.stderr.str()
    assert "Traceback" not in text and "INTERNALERROR" not in text
    assert "the extractor raised SystemExit: bye from the extractor" in text
    assert_accounted(pytester.path / "out", len(IDS))


@pytest.mark.slow
def test_a_hung_extractor_thread_does_not_keep_the_session_from_ending(pytester: pytest.Pytester) -> None:
    # the subprocess must exit on its own: a pool's worker thread would be joined at exit, for an hour
    result = pytest_run(pytester, "hangs", "--extractbench-timeout", "1")
    result.assert_outcomes(passed=3, failed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    records = {r["sample_id"]: r for r in iter_samples(pytester.path / "out" / "samples.jsonl")}
    assert records[HOSTILE]["response"]["error_class"] == "timeout"
    assert_accounted(pytester.path / "out", len(IDS))


# -- callables that are not quite what they say -------------------------------------------------------


def test_a_plain_function_handing_back_a_coroutine_is_awaited_within_the_deadline(tmp_path: Path) -> None:
    async def real(sample):
        if sample.id == HOSTILE:
            await asyncio.Event().wait()
        return answer(sample)

    def plain(sample):  # inspect sees a plain function that hands back a coroutine
        return real(sample)

    result, out = run(tmp_path, plain, timeout=1)
    assert_only_hostile_failed(result, out, "timeout")


def test_an_async_extractor_with_the_wrong_signature_is_an_extractor_error(tmp_path: Path) -> None:
    async def two_arguments(sample, extra):
        return answer(sample)

    result, out = run(tmp_path, two_arguments)
    assert_accounted(out, len(IDS))
    assert all(
        error_class == "extractor_error" and "TypeError" in error for error_class, error in outcomes(result).values()
    )


@pytest.mark.slow
def test_under_xdist_a_hung_and_an_exiting_extractor_still_end_the_session(pytester: pytest.Pytester) -> None:
    import_or_skip("xdist", "pytest-xdist (the dev extra) is not installed")
    result = pytest_run(pytester, "hangs_and_exits", "--extractbench-timeout", "1", "-n", "2")
    result.assert_outcomes(passed=2, failed=2)
    records = {r["sample_id"]: r["response"] for r in iter_samples(pytester.path / "out" / "samples.jsonl")}
    assert records["s1"]["error_class"] == "extractor_error" and "SystemExit: 5" in records["s1"]["error"]
    assert records["s2"]["error_class"] == "timeout"
    assert_accounted(pytester.path / "out", len(IDS))
