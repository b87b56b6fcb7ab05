"""The embedded llama-server's slots as this plugin sees them, so that an attempt's clock starts when one is free.

A request the client gave up on (a timeout) keeps its llama-server slot busy until the server notices the closed
connection, which it does only between batches: minutes, in the middle of a long prompt on a small CPU. Meanwhile a
retry, or another sample's request, would wait in the server's queue with its own timeout running. So the client
counts the requests it has in flight and those it abandoned; when together they fill every slot the plugin started,
the next attempt waits (up to one attempt's budget) until llama-server's ``GET /slots`` shows a slot idle, or, on a
server that does not answer ``/slots``, until the abandoned request's own budget has passed once more. A retry waits
for the server to let go of the request it replaces even while other slots are idle. The wait is
recorded (``slot_wait_s`` in the attempt's log) and counts in the sample's end-to-end latency, not in the attempt's.
No pytest import.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import Any
from urllib.parse import urlsplit, urlunsplit

__all__ = ["SlotWatch", "idle_slots", "reading_prompt", "slot_list", "slots_url"]

#: How often a waiting attempt asks the server again.
POLL_S = 0.5
#: One ``/slots`` query's own budget: a server too busy to answer it counts as having no idle slot.
PROBE_TIMEOUT_S = 5.0

Probe = Callable[[float], Awaitable[Any]]  # the server's ``/slots`` answer within that many seconds; None when none


def slots_url(base_url: str) -> str:
    """llama-server's ``/slots`` beside the OpenAI routes: ``http://h:p/v1`` -> ``http://h:p/slots``."""
    parts = urlsplit(base_url)
    path = parts.path.rstrip("/")
    if path.endswith("/v1"):
        path = path[: -len("/v1")]
    return urlunsplit((parts.scheme, parts.netloc, f"{path}/slots", "", ""))


def slot_list(data: Any) -> list[dict[str, Any]] | None:
    """A ``/slots`` answer as llama-server gives it, a non-empty list of slot objects; None for anything else."""
    if not isinstance(data, list) or not data or not all(isinstance(s, dict) for s in data):
        return None
    return data


def idle_slots(data: Any) -> int | None:
    """Idle slots in a ``/slots`` answer (a list of slots with ``is_processing``, or ``state`` 0 when idle in older
    versions); None when it is not such a list."""
    slots = slot_list(data)
    if slots is None:
        return None
    idle = 0
    for slot in slots:
        if isinstance(slot.get("is_processing"), bool):
            idle += not slot["is_processing"]
        elif isinstance(slot.get("state"), int) and not isinstance(slot.get("state"), bool):
            idle += slot["state"] == 0
        else:
            return None
    return idle


def tokens_written(slot: Mapping[str, Any]) -> int | None:
    """The tokens a slot has written for its request (``next_token``'s ``n_decoded``); None when it does not say."""
    token = slot.get("next_token")
    token = token[0] if isinstance(token, list) and token else token
    written = token.get("n_decoded") if isinstance(token, Mapping) else None
    return written if isinstance(written, int) and not isinstance(written, bool) and written >= 0 else None


def reading_prompt(data: Any) -> bool:
    """A ``/slots`` answer shows a slot reading a prompt: busy, its prompt scheduled, no token written yet."""
    return any(
        slot.get("is_processing") is True and isinstance(slot.get("n_prompt_tokens"), int) and tokens_written(slot) == 0
        for slot in slot_list(data) or ()
    )


def http_probe(url: str, http_client: Any, headers: dict[str, str] | None = None) -> Probe:
    """Ask ``url`` (``slots_url``) for the slot list; None when it does not say (404, not JSON, no answer)."""

    async def probe(wait_s: float) -> Any:
        try:
            answer = await http_client.get(url, headers=headers or {}, timeout=wait_s)
            return answer.json() if answer.status_code == 200 else None
        except Exception:  # noqa: BLE001 - a probe that fails says nothing; the accounting decides
            return None

    return probe


class SlotWatch:
    """The plugin's own requests on one server with ``slots`` slots: those in flight and those abandoned after a
    timeout. `wait_for_slot` returns at once while they leave a slot free."""

    def __init__(self, slots: int, probe: Probe | None, max_wait_s: float, poll_s: float = POLL_S) -> None:
        if slots < 1:
            raise ValueError(f"slots must be >= 1, got {slots}")
        self.slots = slots
        self.probe = probe
        self.max_wait_s = max_wait_s
        self.poll_s = poll_s
        self.in_flight = 0
        self._abandoned: list[float] = []  # when each was given up (monotonic); cleared as the server frees them
        self.probes = 0  # /slots queries made (reported, and read by tests)

    @property
    def abandoned(self) -> int:
        """Abandoned requests the server may still be running: those it was not seen to release, and, without
        a ``/slots`` answer, those given up less than ``max_wait_s`` ago."""
        now = time.monotonic()
        self._abandoned = [t for t in self._abandoned if now - t < self.max_wait_s]
        return len(self._abandoned)

    def sent(self) -> None:
        self.in_flight += 1

    def finished(self, timed_out: bool) -> None:
        """An attempt ended; a timed-out one leaves the server busy with it for a while."""
        self.in_flight = max(0, self.in_flight - 1)
        if timed_out:
            self._abandoned.append(time.monotonic())

    async def reading(self, wait_s: float) -> bool:
        """The server says, within ``wait_s``, that a slot is still reading a prompt (it is working, not hung); False
        when it does not say. llama-server answers ``/slots`` only between batches, so a long wait is a busy
        server's due, not a sign that it hangs."""
        if self.probe is None:
            return False
        self.probes += 1
        return reading_prompt(await self.probe(wait_s))

    def _full(self, retrying: bool) -> bool:
        return self.abandoned > 0 and (retrying or self.in_flight + self.abandoned >= self.slots)

    async def wait_for_slot(self, retrying: bool = False) -> float:
        """Seconds waited until the server can run one more request of ours (0.0 when it could at once), at most
        ``max_wait_s``: the attempt's clock starts after this. A retry (``retrying``) waits until the server has let
        go of the requests given up on even while other slots are idle: beside them it would read its prompt at
        half speed on a CPU, in a slot without the cached part of that prompt."""
        if not self._full(retrying):
            return 0.0
        start = time.monotonic()
        while time.monotonic() - start < self.max_wait_s:
            if self.probe is not None:
                self.probes += 1
                idle = idle_slots(await self.probe(PROBE_TIMEOUT_S))
                if idle is not None:
                    busy = self.slots - min(idle, self.slots)
                    # the busy slots beyond ours in flight are the abandoned ones still running
                    still = max(0, busy - self.in_flight)
                    del self._abandoned[: max(0, len(self._abandoned) - still)]
                    if idle > 0 and not retrying:
                        break
            if not self._full(retrying):
                break
            await asyncio.sleep(self.poll_s)
        return time.monotonic() - start
