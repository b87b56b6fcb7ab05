"""A retry's clock starts when a slot is free: after a timeout, the client of a llama-server the plugin started
waits until ``/slots`` shows a slot idle (or, on a server without ``/slots``, until the abandoned request's budget
has passed once more) before the next attempt's budget runs. A real loopback server (tests/faultserver.py) plays
llama-server's slot list; times are bounded by what it was told to do, never asserted as speeds."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest
from faultserver import Fault, FaultServer

from pytest_extractbench.dataset.responses import ModelResponse
from pytest_extractbench.live.client import ClientConfig, ExtractionClient, build_messages
from pytest_extractbench.live.journal import response_from_dict
from pytest_extractbench.live.slots import SlotWatch, idle_slots, slots_url

SCHEMA = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}
TIMEOUT_S = 2.0  # an answering attempt on a loaded CI machine must fit; the slow fault (5 s) must not
BACKOFF_S = 0.2
POLL_S = 0.1


def extract(server: FaultServer, slots: int | None) -> tuple[ModelResponse, SlotWatch | None]:
    cfg = ClientConfig(server.url, timeout_s=TIMEOUT_S, backoff_base_s=BACKOFF_S, backoff_max_s=BACKOFF_S, jitter=0.0)

    async def go() -> tuple[ModelResponse, SlotWatch | None]:
        async with ExtractionClient(cfg, slots=slots) as client:
            if client.slot_watch is not None:
                client.slot_watch.poll_s = POLL_S
            return await client.extract("test-model", build_messages("Ann", SCHEMA), SCHEMA), client.slot_watch

    return asyncio.run(go())


class BusySlot:
    """llama-server's ``/slots``: slot 0 stays busy for the first ``busy`` queries after a chat request; the
    ``idle`` others are idle throughout."""

    def __init__(self, busy: int, idle: int = 0) -> None:
        self.busy, self.idle, self.queries = busy, idle, 0
        self.lock = threading.Lock()

    def __call__(self) -> Any:
        with self.lock:
            self.queries += 1
            others = [{"id": i + 1, "is_processing": False} for i in range(self.idle)]
            return [{"id": 0, "is_processing": self.queries <= self.busy}, *others]


def test_a_retry_waits_until_the_cancelled_request_leaves_its_slot(fault_server: FaultServer) -> None:
    fault_server.slots = BusySlot(busy=4)
    fault_server.enqueue(Fault.slow(5.0))
    response, watch = extract(fault_server, slots=1)
    assert response.ok and [a["outcome"] for a in response.attempt_log] == ["timeout", "ok"]
    first, second = response.attempt_log
    # one look at the deadline (busy, but not reading a prompt: no more time), then three answers "busy" and one
    # "idle": the retry waited at least the three polls between them
    assert fault_server.counts["slots"] == 5 and watch is not None and watch.probes == 5
    assert second["slot_wait_s"] >= 3 * POLL_S and "slot_wait_s" not in first
    # the wait is before the retry's clock: in the end-to-end latency, not in the attempt's
    assert second["start_s"] >= first["latency_s"] + BACKOFF_S + second["slot_wait_s"]
    assert response.end_to_end_s == second["start_s"] + second["latency_s"]
    assert response.latency_s == second["latency_s"] < second["slot_wait_s"] + second["latency_s"]
    assert watch.in_flight == 0 and watch.abandoned == 0  # /slots said the abandoned request was gone
    assert response_from_dict(response.as_dict()).attempt_log == response.attempt_log


@pytest.mark.slow
def test_without_slots_the_abandoned_request_holds_its_slot_for_one_budget(fault_server: FaultServer) -> None:
    fault_server.enqueue(Fault.slow(5.0))  # and no /slots route: 404
    response, watch = extract(fault_server, slots=1)
    assert response.ok and [a["outcome"] for a in response.attempt_log] == ["timeout", "ok"]
    first, second = response.attempt_log
    # the abandoned request counts as running for one more budget after it was given up
    assert second["start_s"] >= first["latency_s"] + TIMEOUT_S
    assert second["slot_wait_s"] >= TIMEOUT_S - BACKOFF_S - 0.05  # the backoff ran first: only the rest is waited
    assert watch is not None and watch.probes >= 1 and fault_server.counts["slots"] == 0  # asked, got a 404


def test_a_retry_waits_for_the_request_it_replaces_even_beside_an_idle_slot(fault_server: FaultServer) -> None:
    """Beside the cancelled prompt a retry would read at half speed, in a slot without its cached part."""
    fault_server.slots = BusySlot(busy=4, idle=1)
    fault_server.enqueue(Fault.slow(5.0))
    response, watch = extract(fault_server, slots=2)
    assert response.ok and response.attempts == 2
    # one look at the deadline, then three answers "slot 0 busy" (slot 1 idle all along) and one "both idle"
    assert fault_server.counts["slots"] == 5 and watch is not None and watch.probes == 5
    assert response.attempt_log[1]["slot_wait_s"] >= 3 * POLL_S
    assert watch.abandoned == 0


def test_another_samples_request_is_not_held_by_an_abandoned_one_beside_an_idle_slot() -> None:
    async def go() -> tuple[float, float]:
        watch = SlotWatch(2, probe=None, max_wait_s=0.3, poll_s=0.05)
        watch.sent()
        watch.finished(timed_out=True)
        return await watch.wait_for_slot(), await watch.wait_for_slot(retrying=True)

    other, retry = asyncio.run(go())
    assert other == 0.0 and retry >= 0.25  # without /slots the retry waits out the abandoned request's budget


def test_a_server_the_plugin_did_not_start_is_not_watched(fault_server: FaultServer) -> None:
    fault_server.slots = BusySlot(busy=100)
    fault_server.enqueue(Fault.slow(5.0))
    response, watch = extract(fault_server, slots=None)
    assert response.ok and watch is None and fault_server.counts["slots"] == 0
    assert "slot_wait_s" not in response.attempt_log[1]


@pytest.mark.parametrize(
    ("answer", "idle"),
    [
        ([{"id": 0, "is_processing": True}, {"id": 1, "is_processing": False}], 1),
        ([{"id": 0, "state": 0}, {"id": 1, "state": 1}, {"id": 2, "state": 0}], 2),  # older llama-server
        ([{"id": 0, "is_processing": True}], 0),
        ([], None),
        ({"error": "slots endpoint disabled"}, None),
        ([{"id": 0}], None),
        ([{"state": True}], None),
    ],
)
def test_idle_slots_are_read_from_either_form_of_the_slot_list(answer: Any, idle: int | None) -> None:
    assert idle_slots(answer) == idle


def test_the_slot_list_sits_beside_the_openai_routes() -> None:
    assert slots_url("http://127.0.0.1:8080/v1") == "http://127.0.0.1:8080/slots"
    assert slots_url("http://127.0.0.1:8080/v1/") == "http://127.0.0.1:8080/slots"
    assert slots_url("http://h:1/proxy/v1") == "http://h:1/proxy/slots"


def test_the_accounting_waits_only_when_every_slot_is_taken_and_one_is_abandoned() -> None:
    async def go() -> list[float]:
        watch = SlotWatch(2, probe=None, max_wait_s=0.3, poll_s=0.05)
        waits = [await watch.wait_for_slot()]  # nothing abandoned
        watch.sent(), watch.sent()
        waits.append(await watch.wait_for_slot())  # both ours in flight: the server queues, nothing we cancelled
        watch.finished(timed_out=True)
        waits.append(await watch.wait_for_slot())  # one ours, one abandoned: full until the abandoned one expires
        assert watch.abandoned == 0 and watch.in_flight == 1
        return waits

    waits = asyncio.run(go())
    assert waits[:2] == [0.0, 0.0] and waits[2] >= 0.25


def test_only_the_servers_the_plugin_started_get_a_slot_watch(tmp_path: Any) -> None:
    from pytest_extractbench.live.endpoints import Route
    from pytest_extractbench.live.options import LiveOptions
    from pytest_extractbench.live.pipeline import LiveSource

    def source(live: LiveOptions, routes: dict[str, Route]) -> LiveSource:
        made = LiveSource(
            live, lambda: routes, run_dir=tmp_path, cache_dir=None, concurrency=4, api_key=None, templates=None
        )
        made._before_submit()
        return made

    started = {"a": Route(("http://127.0.0.1:9001/v1",), "a", slots=2), "b": Route(("http://127.0.0.1:9002/v1",), "b")}
    embedded = source(LiveOptions(slots=3), started)
    assert embedded.live.embedded
    # memory lowered a's slots to 2; b runs the 3 asked for; a URL the plugin did not start has none
    assert [
        embedded._embedded_slots(u)
        for u in ("http://127.0.0.1:9001/v1", "http://127.0.0.1:9002/v1", "http://127.0.0.1:9003/v1")
    ] == [2, 3, None]
    assert embedded._client("http://127.0.0.1:9001/v1").slot_watch.slots == 2
    given = source(LiveOptions(base_urls=("http://127.0.0.1:9001/v1",)), started)
    assert given._embedded_slots("http://127.0.0.1:9001/v1") is None
    assert given._client("http://127.0.0.1:9001/v1").slot_watch is None


class ReadingSlot:
    """llama-server's ``/slots`` while one slot reads a long prompt: busy, prompt scheduled, nothing written yet;
    ``writing`` after ``reading`` queries (a request that is generating gets no more time)."""

    def __init__(self, reading: int, writing: bool = False) -> None:
        self.reading, self.writing, self.queries = reading, writing, 0
        self.lock = threading.Lock()

    def __call__(self) -> Any:
        with self.lock:
            self.queries += 1
            written = 5 if self.writing or self.queries > self.reading else 0
            return [
                {
                    "id": 0,
                    "is_processing": True,
                    "n_prompt_tokens": 2048,
                    "n_prompt_tokens_processed": 2048 * self.queries,
                    "next_token": [{"n_decoded": written}],
                }
            ]


def test_an_attempt_is_not_given_up_while_the_server_is_still_reading_a_prompt(fault_server: FaultServer) -> None:
    """The answer takes 3 s, the timeout is 2 s: the server says at the deadline that a slot is still reading a
    prompt, so the attempt gets more time (a quarter of the timeout, at least 1 s, at a time) and is answered once."""
    fault_server.slots = ReadingSlot(reading=100)
    fault_server.enqueue(Fault.slow(3.0))
    response, watch = extract(fault_server, slots=1)
    assert response.ok and [a["outcome"] for a in response.attempt_log] == ["ok"]
    (attempt,) = response.attempt_log
    # given more than the timeout, at most six; the answer may land in the event loop's last tick of a wait
    assert TIMEOUT_S < attempt["latency_s"] < attempt["timeout_s"] + 0.5
    assert TIMEOUT_S < attempt["timeout_s"] <= 6 * TIMEOUT_S
    assert len(fault_server.requests) == 1 and watch is not None and watch.probes >= 1


def test_a_server_that_writes_rather_than_reads_gets_no_more_time(fault_server: FaultServer) -> None:
    fault_server.slots = ReadingSlot(reading=0, writing=True)
    fault_server.enqueue(Fault.slow(3.0))
    response, _ = extract(fault_server, slots=1)
    first = response.attempt_log[0]
    assert first["outcome"] == "timeout" and "timeout_s" not in first
    assert first["latency_s"] < TIMEOUT_S + 1.0


@pytest.mark.slow
def test_more_time_for_reading_stops_at_six_timeouts(fault_server: FaultServer) -> None:
    fault_server.slots = ReadingSlot(reading=10_000)
    fault_server.enqueue(Fault.slow(30.0))
    response, _ = extract(fault_server, slots=1)
    first = response.attempt_log[0]
    assert first["outcome"] == "timeout" and first["timeout_s"] == 6 * TIMEOUT_S
    assert 6 * TIMEOUT_S - 0.1 <= first["latency_s"] < 6 * TIMEOUT_S + 5.0  # the event loop may wake a hair early
    assert "within 12s" in first["error"]


class SlowSlots(ReadingSlot):
    """``/slots`` as llama-server gives it mid-batch: the answer comes only when the batch it is reading ends."""

    def __init__(self, delay_s: float) -> None:
        super().__init__(reading=100)
        self.delay_s = delay_s

    def __call__(self) -> Any:
        time.sleep(self.delay_s)
        return super().__call__()


def test_the_time_a_busy_server_takes_to_answer_slots_counts_in_the_time_given(fault_server: FaultServer) -> None:
    """Timeout 2 s, ``/slots`` answers 0.8 s after it is asked, the answer lands at 3.5 s: the more time is counted
    from the server's answer, so the attempt is answered and the time it was given covers its latency."""
    fault_server.slots = SlowSlots(delay_s=0.8)
    fault_server.enqueue(Fault.slow(3.5))
    response, _ = extract(fault_server, slots=1)
    assert [a["outcome"] for a in response.attempt_log] == ["ok"]
    (attempt,) = response.attempt_log
    assert attempt["timeout_s"] > TIMEOUT_S + 0.8 and attempt["latency_s"] <= attempt["timeout_s"]


def test_an_answer_landing_while_the_server_is_asked_is_taken(fault_server: FaultServer) -> None:
    """``/slots`` takes longer than the more time it could grant (a long batch): the answer that lands meanwhile is
    the attempt's, with the time it took recorded as the time it was given."""
    fault_server.slots = SlowSlots(delay_s=3.0)
    fault_server.enqueue(Fault.slow(2.6))
    response, _ = extract(fault_server, slots=1)
    assert [a["outcome"] for a in response.attempt_log] == ["ok"]
    (attempt,) = response.attempt_log
    assert TIMEOUT_S < attempt["latency_s"] <= attempt["timeout_s"] < TIMEOUT_S + 1.5
