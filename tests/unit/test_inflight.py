"""The quiet-run line's parts: the in-flight registry, llama-server's /slots read against a real loopback server
(well-formed, absent, hostile), and the line itself."""

from __future__ import annotations

import http.server
import time
from collections.abc import Iterator

import pytest

from _net import serve_in_thread
from pytest_extractbench.live.inflight import (
    MAX_SLOTS_SHOWN,
    SLOTS_MAX_BYTES,
    InFlight,
    InFlightSnapshot,
    quiet_line,
    read_slots,
    slot_activity,
)

# what llama-server (xllamacpp 2026.10) answered at GET /slots while reading a 6,012-token prompt
READING = {
    "id": 0,
    "n_ctx": 8192,
    "speculative": False,
    "is_processing": True,
    "id_task": 0,
    "n_prompt_tokens": 5496,
    "n_prompt_tokens_processed": 4097,
    "n_prompt_tokens_cache": 0,
    "next_token": [{"has_next_token": True, "has_new_line": False, "n_remain": 5, "n_decoded": 0}],
}
WRITING = {**READING, "id": 1, "next_token": [{"has_next_token": True, "n_remain": 20, "n_decoded": 37}]}
IDLE = {**READING, "id": 2, "is_processing": False}


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_registry_counts_waiting_and_sent_requests_and_the_oldest_age() -> None:
    clock = Clock()
    flight = InFlight(clock)
    assert flight.snapshot() == InFlightSnapshot(0, 0, None)
    for token in (1, 2, 3):
        flight.waiting(token)
    flight.sent(1)
    clock.now = 130.0
    flight.sent(2)
    clock.now = 190.0
    assert flight.snapshot() == InFlightSnapshot(waiting=1, sent=2, oldest_sent_s=90.0)
    flight.done(1)  # the oldest answered: the next one is the oldest
    assert flight.snapshot() == InFlightSnapshot(waiting=1, sent=1, oldest_sent_s=60.0)
    flight.done(3)  # given up while waiting
    flight.done(2)
    flight.done(2)  # twice: no error, nothing negative
    assert flight.snapshot() == InFlightSnapshot(0, 0, None)


def test_busy_slots_say_what_they_do_and_idle_ones_are_counted() -> None:
    assert slot_activity([READING, WRITING, IDLE]) == (
        "2 of 3 slots busy: slot 0 reading its prompt (4,097 tokens read); slot 1 writing (37 tokens so far)"
    )
    assert slot_activity([IDLE]) == "0 of 1 slot busy"
    cached = {**READING, "n_prompt_tokens_cache": 1500}
    assert (
        slot_activity([cached])
        == "1 of 1 slot busy: slot 0 reading its prompt (4,097 tokens read, 1,500 from its cache)"
    )


def test_many_busy_slots_are_cut_to_a_few_and_counted() -> None:
    slots = [{**READING, "id": n} for n in range(MAX_SLOTS_SHOWN + 3)]
    text = slot_activity(slots)
    assert text is not None
    assert text.startswith(f"{MAX_SLOTS_SHOWN + 3} of {MAX_SLOTS_SHOWN + 3} slots busy")
    assert text.count("reading") == MAX_SLOTS_SHOWN and text.endswith("; +3 more")


@pytest.mark.parametrize(
    "data",
    [None, {}, [], "slots", [1, 2], [[READING]], {"slots": [READING]}],
    ids=["null", "object", "empty", "string", "numbers", "nested", "wrapped"],
)
def test_an_answer_that_is_not_a_slot_list_says_nothing(data: object) -> None:
    assert slot_activity(data) is None


def test_odd_counts_are_left_out_not_printed() -> None:
    odd = {
        "id": True,
        "is_processing": True,
        "n_prompt_tokens": -5,
        "n_prompt_tokens_processed": "many",
        "n_prompt_tokens_cache": 1.5,
        "next_token": {"n_decoded": None},
    }
    assert slot_activity([odd]) == "1 of 1 slot busy: a slot busy"
    huge = {"id": 3, "is_processing": True, "n_prompt_tokens_processed": 10**12, "next_token": []}
    assert slot_activity([huge]) == "1 of 1 slot busy: slot 3 reading its prompt (1,000,000,000,000 tokens read)"


def test_the_line_names_the_quiet_time_progress_requests_and_servers() -> None:
    line = quiet_line(125, 3, 12, InFlightSnapshot(waiting=1, sent=2, oldest_sent_s=252.7), ["0 of 1 slot busy", None])
    assert line == (
        "extractbench: no item finished for 2m05s (3/12 done); 2 requests sent (oldest 4m12s), 1 waiting; "
        "server 1: 0 of 1 slot busy; server 2: no /slots answer"
    )
    # under xdist's controller: no requests of its own, one server
    assert quiet_line(59.9, 0, 4, None, ["1 of 1 slot busy"]) == (
        "extractbench: no item finished for 59s (0/4 done); server: 1 of 1 slot busy"
    )
    assert quiet_line(0.46, 0, 1, InFlightSnapshot(0, 1, 0.04)) == (
        "extractbench: no item finished for 0.5s (0/1 done); 1 request sent (oldest 0.0s)"
    )
    assert quiet_line(3600, 0, 1, InFlightSnapshot(0, 0, None)) == (
        "extractbench: no item finished for 60m00s (0/1 done); 0 requests sent"
    )


# -- GET /slots against a loopback server --------------------------------------------------------------------------

ANSWERS: dict[str, tuple[int, bytes, float]] = {
    "/ok/slots": (200, b'[{"id": 0, "is_processing": false}]', 0.0),
    "/missing/slots": (404, b'{"error": "no route"}', 0.0),
    "/text/slots": (200, b"<html>slots</html>", 0.0),
    "/binary/slots": (200, b"\xff\xfe\x00[", 0.0),
    "/huge/slots": (200, b"[" + b"0," * (SLOTS_MAX_BYTES // 2) + b"0]", 0.0),
    "/deep/slots": (200, b"[" * 200_000 + b"]" * 200_000, 0.0),
    "/slow/slots": (200, b"[]", 5.0),
}


class _Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        status, body, delay = ANSWERS.get(self.path, (404, b"", 0.0))
        time.sleep(delay)
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        try:
            self.wfile.write(body)
        except OSError:
            pass

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def slots_server() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    serve_in_thread(server)
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def test_a_well_formed_slot_list_is_read(slots_server: str) -> None:
    assert read_slots(f"{slots_server}/ok/slots") == [{"id": 0, "is_processing": False}]


@pytest.mark.parametrize("route", ["missing", "text", "binary", "huge", "deep"])
def test_a_server_that_does_not_answer_with_slots_gives_none(slots_server: str, route: str) -> None:
    assert read_slots(f"{slots_server}/{route}/slots") is None


def test_a_server_too_busy_to_answer_is_given_up_on_at_the_deadline(slots_server: str) -> None:
    started = time.monotonic()
    assert read_slots(f"{slots_server}/slow/slots", timeout_s=0.3) is None
    assert time.monotonic() - started < 4.0  # the server would have answered after 5 s


def test_nothing_listening_gives_none() -> None:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    assert read_slots(f"http://127.0.0.1:{port}/slots", timeout_s=0.5) is None
