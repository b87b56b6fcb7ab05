"""The live progress line: running EQS and validity per model while items run (controller only).

Printed at every tenth of the items (and at the last), so a long run shows where it is heading
without drowning the output; records arrive on the controller with or without xdist.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..report.terminal import safe

STEPS = 10
MAX_MODELS = 4


@dataclass
class Running:
    n: int = 0
    eqs: float = 0.0
    valid: int = 0


@dataclass
class Progress:
    """Running means per model; :meth:`add` returns a line to print at each milestone, else None."""

    total: int = 0
    done: int = 0
    models: dict[str, Running] = field(default_factory=dict)
    _next: int = 0

    def add(self, record: Mapping[str, Any], total: int) -> str | None:
        score = record.get("score")
        if score is None:  # the other tracks' records have no EQS or schema validity to run
            return None
        running = self.models.setdefault(str(record.get("model", "")), Running())
        running.n += 1
        running.eqs += float(score.get("eqs", 0.0))
        running.valid += bool(score.get("schema_valid"))
        self.done += 1
        self.total = max(total, self.done)
        if self._next == 0:
            self._next = max(1, math.ceil(self.total / STEPS))
        if self.done >= self._next or self.done == self.total:
            while self._next <= self.done:
                self._next += max(1, math.ceil(self.total / STEPS))
            return self.line()
        return None

    def line(self) -> str:
        parts = [
            f"{safe(m)} EQS {r.eqs / r.n:.3f} validity {100 * r.valid / r.n:.1f}%"
            for m, r in list(self.models.items())[:MAX_MODELS]
        ]
        more = f"; +{len(self.models) - MAX_MODELS} more models" if len(self.models) > MAX_MODELS else ""
        return f"extractbench {self.done}/{self.total} scored: " + "; ".join(parts) + more
