"""What a live run is doing while no item finishes: the line a quiet run prints.

A long document on a small CPU can keep every request busy for many minutes, and pytest prints nothing until an item
ends. When nothing has finished for a while, the plugin says what is in flight: the requests waiting for admission
(the prompt budget, the concurrency) and those on the wire, the oldest one's age, and, for the llama-servers it
started, what each busy slot is doing as ``GET /slots`` reports it (the prompt tokens read so far, updated by the
server between batches; tokens reused from its prompt cache; tokens written). No pytest import.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .slots import slot_list, tokens_written

__all__ = ["InFlight", "InFlightSnapshot", "quiet_line", "read_slots", "slot_activity"]

#: One ``/slots`` query's own budget: the line must not wait on a server too busy to answer.
SLOTS_TIMEOUT_S = 2.0
#: The most of a ``/slots`` answer read (a few hundred bytes a slot; anything larger is not llama-server's).
SLOTS_MAX_BYTES = 1 << 20
#: Slots described per server; the others are counted.
MAX_SLOTS_SHOWN = 4


@dataclass(frozen=True)
class InFlightSnapshot:
    waiting: int  # admitted to the run, not yet sent (prompt budget, concurrency)
    sent: int  # on the wire, or retrying
    oldest_sent_s: float | None  # how long the oldest sent request has been out


class InFlight:
    """The requests of this process between admission and answer; read from another thread."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._waiting: set[int] = set()
        self._sent: dict[int, float] = {}

    def waiting(self, token: int) -> None:
        with self._lock:
            self._waiting.add(token)

    def sent(self, token: int) -> None:
        with self._lock:
            self._waiting.discard(token)
            self._sent[token] = self._clock()

    def done(self, token: int) -> None:
        with self._lock:
            self._waiting.discard(token)
            self._sent.pop(token, None)

    def snapshot(self) -> InFlightSnapshot:
        with self._lock:
            oldest = min(self._sent.values(), default=None)
            return InFlightSnapshot(
                len(self._waiting), len(self._sent), None if oldest is None else self._clock() - oldest
            )


def read_slots(slots_url: str, timeout_s: float = SLOTS_TIMEOUT_S) -> Any:
    """llama-server's ``GET /slots`` answer, or None when it gives none in time (a busy server, a 404, not JSON,
    too large or too deep)."""
    try:
        with urllib.request.urlopen(slots_url, timeout=timeout_s) as answer:  # noqa: S310 - our own loopback server
            body = answer.read(SLOTS_MAX_BYTES + 1)
        if len(body) > SLOTS_MAX_BYTES:
            return None
        return json.loads(body)
    except (OSError, ValueError, RecursionError):
        return None


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def slot_activity(data: Any) -> str | None:
    """One clause for a server's ``/slots`` answer, e.g. ``1 of 2 slots busy: slot 0 reading its prompt (4,097
    tokens read)``; None when the answer is not a list of slots."""
    slots = slot_list(data)
    if slots is None:
        return None
    busy = [s for s in slots if s.get("is_processing") is True]
    parts = [_one_slot(s) for s in busy[:MAX_SLOTS_SHOWN]]
    more = f"; +{len(busy) - MAX_SLOTS_SHOWN} more" if len(busy) > MAX_SLOTS_SHOWN else ""
    head = f"{len(busy)} of {len(slots)} slot{'s' if len(slots) != 1 else ''} busy"
    return head + (": " + "; ".join(parts) + more if parts else "")


def _one_slot(slot: Mapping[str, Any]) -> str:
    name = f"slot {_count(slot.get('id'))}" if _count(slot.get("id")) is not None else "a slot"
    read = _count(slot.get("n_prompt_tokens_processed"))
    cached = _count(slot.get("n_prompt_tokens_cache"))
    written = tokens_written(slot)
    if written:
        return f"{name} writing ({written:,} tokens so far)"
    if read is None:
        return f"{name} busy"
    # n_prompt_tokens counts the tokens scheduled so far, not the whole prompt: only what was read is told
    return f"{name} reading its prompt ({read:,} tokens read" + (f", {cached:,} from its cache)" if cached else ")")


def _age(seconds: float) -> str:
    if seconds < 10:  # a short heartbeat: tenths, so that 0.5 s is not "0s"
        return f"{max(0.0, seconds):.1f}s"
    whole = int(seconds)
    return f"{whole // 60}m{whole % 60:02d}s" if whole >= 60 else f"{whole}s"


def quiet_line(
    quiet_s: float,
    done: int,
    total: int,
    snapshot: InFlightSnapshot | None,
    servers: Sequence[str | None] = (),
) -> str:
    """``extractbench: no item finished for 2m00s (3/12 done); 2 requests sent (oldest 4m12s), 1 waiting;
    server 1: 1 of 1 slot busy: ...``. ``snapshot`` is None where the requests run in other processes (xdist);
    ``servers`` holds each embedded server's :func:`slot_activity` (None: it did not say)."""
    parts = [f"extractbench: no item finished for {_age(quiet_s)} ({done}/{total} done)"]
    if snapshot is not None:
        sent = f"{snapshot.sent} request{'s' if snapshot.sent != 1 else ''} sent"
        if snapshot.oldest_sent_s is not None:
            sent += f" (oldest {_age(snapshot.oldest_sent_s)})"
        parts.append(sent + (f", {snapshot.waiting} waiting" if snapshot.waiting else ""))
    for number, activity in enumerate(servers, 1):
        label = "server" if len(servers) == 1 else f"server {number}"
        parts.append(f"{label}: {activity if activity is not None else 'no /slots answer'}")
    return "; ".join(parts)
