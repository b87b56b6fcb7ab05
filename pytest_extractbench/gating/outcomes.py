"""The four ways a threshold of the gate can end, and why a metric has no value to check.

A threshold (an SLA tier's, a ``--extractbench-require``, a regression check) is

- **held**: the run measured the metric and it meets the threshold;
- **missed**: the run measured it and it does not;
- **not applicable**: this kind of run does not measure it by design (latency in an offline run, the judge's
  grade when no judge was asked for, time to first token when answers were not streamed);
- **could not be measured**: a component that should have measured it failed or was absent (the judge or the
  embeddings server answered nothing usable, no request succeeded, a streamed answer never sent a first token).

A broken judge must not turn into a green gate, so "could not be measured" fails the gate unless the run asks
for a warning instead (``--extractbench-unmeasured warn``). Pure functions over a model's metrics dict.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..analysis import catalog
from ..analysis.performance import ALL_CACHED, NOT_MEASURED

HELD, MISSED, NOT_APPLICABLE, UNMEASURED = "held", "missed", "not applicable", "could not be measured"
OUTCOMES = (HELD, MISSED, NOT_APPLICABLE, UNMEASURED)

# the component behind each metric that only some runs measure, and the option that asks for it
_COMPONENTS = {
    "judge_score": ("the LLM judge", "--extractbench-judge"),
    "semantic_similarity": ("the embeddings backend", "--extractbench-semantic"),
}
_FIRST_TOKEN = "time_to_first_token_p95_ms"
_REPEATED = ("pass_at_k", "pass_hat_k")  # need each sample run several times


@dataclass(frozen=True)
class Absence:
    """Why a metric has no value this run can be judged on: NOT_APPLICABLE or UNMEASURED, with the reason."""

    outcome: str
    reason: str


@dataclass(frozen=True)
class Measuring:
    """What the run set out to measure, and how the components that measure whole outputs fared per model."""

    # metric names of the components the run asked for (judge, embeddings); None: unknown, taken as asked
    asked: frozenset[str] | None = None
    streamed: bool = False  # answers were streamed, so time to first token is measured
    # metric -> (samples the component failed on, samples it was asked about, its first error)
    failures: Mapping[str, tuple[int, int, str]] | None = None


def absence(metric: str, metrics: Mapping[str, Any], value: float | None, measuring: Measuring) -> Absence | None:
    """Why ``metric`` of one model cannot decide a threshold, or None when ``value`` can."""
    if metric in _COMPONENTS:
        component, option = _COMPONENTS[metric]
        if measuring.asked is not None and metric not in measuring.asked:
            return Absence(NOT_APPLICABLE, f"the run did not ask for {component} ({option})")
        failed, asked, first = (measuring.failures or {}).get(metric) or (0, 0, "")
        if failed:
            # a mean over the samples it did score would rest on the ones that happened to work
            return Absence(UNMEASURED, f"{component} failed on {failed} of {asked} sample(s): {first}")
        if value is None:
            return Absence(UNMEASURED, f"{component} scored no sample")
        return None
    if value is not None:
        return None
    if metric in _REPEATED:
        # asked for but not measured: a gate on flakiness must not pass because nothing was repeated
        return Absence(UNMEASURED, "no sample was run more than once (live runs with --extractbench-repeats N, N >= 2)")
    entry = catalog.get(metric)
    if entry is not None and entry.performance:
        note = (metrics.get("performance") or {}).get("note")
        if note == NOT_MEASURED:
            return Absence(NOT_APPLICABLE, "no request was sent to a server (offline predictions carry no timings)")
        if note == ALL_CACHED:
            return Absence(NOT_APPLICABLE, "every response came from the cache (no request was timed)")
        if note:
            return Absence(UNMEASURED, "no request succeeded with a timing")
        if metric == _FIRST_TOKEN and not measuring.streamed:
            return Absence(NOT_APPLICABLE, "answers were not streamed (--extractbench-stream)")
        if metric == _FIRST_TOKEN:
            return Absence(
                UNMEASURED, "no streamed answer sent a first token (the server answered whole, or sent no content)"
            )
        return Absence(UNMEASURED, "the server sent no timing for it")
    return Absence(UNMEASURED, "the run produced no value for it")


def decide(
    value: float | None, threshold: float, direction: str, why: Absence | None, policy: str = "fail"
) -> tuple[str, bool | None, str]:
    """(outcome, passed, reason) of one threshold: ``passed`` is False when it fails the gate, None when it
    neither holds nor fails (not applicable, or could not be measured under the ``warn`` policy)."""
    if why is not None:
        failing = why.outcome == UNMEASURED and policy == "fail"
        return why.outcome, (False if failing else None), why.reason
    assert value is not None
    held = value >= threshold if direction == "min" else value <= threshold
    return (HELD if held else MISSED), bool(held), ""


def outcome_of(passed: bool | None, value: float | None) -> str:
    """The outcome of a check recorded before outcomes were (a metrics.json of an older version)."""
    if passed is None:
        return NOT_APPLICABLE if value is None else HELD
    return HELD if passed else MISSED
