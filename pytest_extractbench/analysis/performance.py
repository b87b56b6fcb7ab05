"""Performance metrics of one model: latency, throughput, tokens, cost and reliability.

Pure functions over sample records; each record's ``response`` dict is
:meth:`.responses.ModelResponse.as_dict`. Definitions where a choice had to be made:

* A record is a *request* when the run asked a server for it (``attempts > 0``, ``cached``, or a
  latency was recorded); offline predictions are not requests, so their request-level values are
  ``null`` with a ``note`` (the SLA gate then reports p95 latency and success rate as not measured).
* *Success* means the request produced content (``error_class`` is null); parse and schema failures
  are successes whose content is unusable, so ``success = valid + parse failures + schema failures``
  and ``requests = success + sum(error classes)``.
* Latency is over successful, non-cached requests; cached responses took no server time, so they
  are left out of latency and throughput too (their outcomes still count for reliability, and
  their usage for token statistics and cost: they describe the model, not this run's bill).
* Throughput divides by the time the non-cached requests were in flight: the union of their
  ``[started_at, finished_at]`` intervals, which is the wall span ``max(finished_at) - min(started_at)``
  of a run without idle gaps, and leaves out the hours between a killed run and its resume
  (resumed responses keep their original timestamps). Every throughput figure counts successful
  requests over that one interval, so ``samples_per_min == 60 * requests_per_s`` always; a failed
  request adds time but nothing done. With no successful request the figures are null, "not measured".
* Every attempt counts. A sample's *end-to-end* latency runs from its first attempt's start to its final
  answer (timed-out and failed attempts and the backoff between them included); ``latency_ms`` is the
  answering attempt's alone, ``attempt_latency_ms`` every attempt's whatever its outcome. The SLA gate and
  ``latency_p*_ms`` read the end-to-end figure; a response recorded without one (an older journal, a
  predictions file) counts its ``latency_s``. Reliability counts attempt-level timeouts and errors
  (``attempt_timeouts``, ``attempt_errors``) even when a later attempt succeeded.
* Percentiles use numpy's linear interpolation; ``std`` is the population standard deviation.
* ``reliability_score`` gives a first-attempt success full credit and a success after
  retries half credit, so it stays in [0, 1].
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from ..dataset.records import HeldOutput
from ..dataset.responses import ERROR_CLASSES
from .distributions import correlation

NOT_MEASURED = "not measured: no request was sent to a server (offline predictions carry no timings)"
ALL_CACHED = "not measured: every response came from the cache"
NO_SUCCESS = "not measured: no request succeeded"
# top-level keys of a model's metrics (the SLA gate and the model comparison read them)
LATENCY_P95 = "latency_p95_ms"
SUCCESS_RATE = "success_rate"
COST = "estimated_cost_usd"
# latency vs. these per-sample quantities (Spearman: monotone, robust to latency outliers)
CORRELATES = ("input_chars", "prompt_tokens", "schema_fields", "schema_depth", "output_tokens", "output_chars")


@dataclass(frozen=True)
class Prices:
    """USD per 1,000 tokens (``--extractbench-price-input`` / ``--extractbench-price-output``)."""

    input_per_1k: float | None = None
    output_per_1k: float | None = None

    @property
    def given(self) -> bool:
        return self.input_per_1k is not None or self.output_per_1k is not None

    def to_dict(self) -> dict[str, float | None]:
        return {"price_input_per_1k": self.input_per_1k, "price_output_per_1k": self.output_per_1k}


# -- per-record facts ------------------------------------------------------------------------


def _number(value: Any) -> float | None:
    """A finite int/float (never a bool), else None."""
    if type(value) not in (int, float) or not math.isfinite(value):
        return None
    return float(value)


def is_request(response: Mapping[str, Any]) -> bool:
    """True when the run asked a server for this response (live, cached or replayed)."""
    return bool(response.get("attempts") or response.get("cached")) or _number(response.get("latency_s")) is not None


def is_success(response: Mapping[str, Any]) -> bool:
    """The request produced content (possibly unparseable or schema-invalid)."""
    return response.get("error_class") is None and response.get("content") is not None


def outcome(record: Any) -> str:
    """Exactly one of ``valid``, ``parse_failure``, ``schema_failure``, ``scoring_error`` or an error class."""
    response = record.response
    if not is_success(response):
        return str(response.get("error_class") or "missing")
    if getattr(record, "scoring_error", None):
        return "scoring_error"
    if not record.score.json_valid:
        return "parse_failure"
    if not record.score.schema_valid:
        return "schema_failure"
    return "valid"


def output_chars(content: Any) -> float | None:
    """The output's length in characters (a parsed JSON value's as JSON text), None when there is none."""
    if content is None:
        return None
    if type(content) is HeldOutput:
        return content.chars
    return float(len(content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)))


class Facts(NamedTuple):
    """What the metrics need from one record, read once (10,000 records: dict lookups dominate)."""

    request: bool
    cached: bool
    success: bool
    outcome: str
    attempts: float
    truncated: bool
    latency_s: float | None
    started_at: float | None
    finished_at: float | None
    prompt_tokens: float | None
    completion_tokens: float | None
    total_tokens: float | None
    timings: Mapping[str, float]  # the server's own (llama-server); empty when it sends none
    wait_s: float | None
    first_token_s: float | None  # streamed answers only
    end_to_end_s: float | None  # first attempt's start to the final answer; latency_s when not recorded
    attempt_outcomes: tuple[str, ...]  # "ok" or an error class per attempt; () when not recorded
    attempt_latencies: tuple[float, ...]
    fields: int  # fields the output holds (extracted fields)
    record: Any

    def correlates(self) -> dict[str, float | None]:
        """The per-sample quantities that latency is correlated with (:data:`CORRELATES`)."""
        meta = self.record.meta
        complexity = meta.get("complexity") or {}
        return {
            "input_chars": _number(meta.get("text_chars")),
            "prompt_tokens": self.prompt_tokens,
            "schema_fields": _number(complexity.get("total_fields")),
            "schema_depth": _number(complexity.get("max_nesting_depth")),
            "output_tokens": self.completion_tokens,
            "output_chars": output_chars(self.record.response.get("content")),
        }


def facts(record: Any) -> Facts:
    """Read one record's response and score."""
    response = record.response
    usage = response.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    prompt, completion = _number(usage.get("prompt_tokens")), _number(usage.get("completion_tokens"))
    total = _number(usage.get("total_tokens"))
    log = attempt_log(response)
    if total is None and prompt is not None and completion is not None:  # some servers omit the total
        total = prompt + completion
    return Facts(
        request=is_request(response),
        cached=bool(response.get("cached")),
        success=is_success(response),
        outcome=outcome(record),
        attempts=_number(response.get("attempts")) or 0.0,
        truncated=response.get("error_class") == "truncated" or response.get("finish_reason") == "length",
        latency_s=_number(response.get("latency_s")),
        started_at=_number(response.get("started_at")),
        finished_at=_number(response.get("finished_at")),
        prompt_tokens=prompt,
        completion_tokens=completion,
        total_tokens=total,
        timings=response.get("timings") if isinstance(response.get("timings"), Mapping) else {},
        wait_s=_number(response.get("wait_s")),
        first_token_s=_number(response.get("first_token_s")),
        end_to_end_s=_end_to_end(response),
        attempt_outcomes=tuple(str(e["outcome"]) for e in log),
        attempt_latencies=tuple(float(e["latency_s"]) for e in log if _number(e.get("latency_s")) is not None)
        or _one_attempt(response),
        fields=record.score.observed.predicted,
        record=record,
    )


def _end_to_end(response: Mapping[str, Any]) -> float | None:
    value = _number(response.get("end_to_end_s"))
    return _number(response.get("latency_s")) if value is None else value


def _one_attempt(response: Mapping[str, Any]) -> tuple[float, ...]:
    """A response recorded without its attempts that had just one: that attempt's latency, when it answered."""
    latency = _number(response.get("latency_s"))
    return (latency,) if latency is not None and _number(response.get("attempts")) == 1 else ()


def attempt_log(response: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The recorded attempts (each with an ``outcome``), or none."""
    log = response.get("attempt_log")
    if not isinstance(log, list):
        return []
    return [e for e in log if isinstance(e, Mapping) and isinstance(e.get("outcome"), str)]


# -- statistics ------------------------------------------------------------------------------


def latency_stats(latencies_s: Sequence[float]) -> dict[str, Any]:
    """Mean, percentiles, extremes and spread in milliseconds; every value null when there is none."""
    keys = ("mean", "p50", "p95", "p99", "min", "max", "std")
    if not len(latencies_s):
        return {"count": 0, **dict.fromkeys(keys)}
    ms = np.asarray(latencies_s, dtype=float) * 1000.0
    p50, p95, p99 = np.percentile(ms, [50, 95, 99])
    values = (ms.mean(), p50, p95, p99, ms.min(), ms.max(), ms.std())
    return {"count": int(ms.size), **{k: float(v) for k, v in zip(keys, values)}}


def spearman(x: Sequence[float], y: Sequence[float]) -> dict[str, Any]:
    """``{"rho", "p_value", "n"}``: Spearman's rank correlation (latency is skewed: ranks, not values)."""
    from scipy.stats import spearmanr  # scipy.stats takes a second to import: only when a run correlates

    return correlation(x, y, spearmanr, "rho")


def token_stats(values: Sequence[float]) -> dict[str, Any]:
    """Count, mean, median, p95 and sum of one token kind."""
    if not len(values):
        return {"count": 0, "mean": None, "median": None, "p95": None, "sum": 0}
    array = np.asarray(values, dtype=float)
    return {
        "count": int(array.size),
        "mean": float(array.mean()),
        "median": float(np.median(array)),
        "p95": float(np.percentile(array, 95)),
        "sum": int(array.sum()),
    }


def _rate(count: float, total: int) -> float | None:
    return count / total if total else None


# -- sections --------------------------------------------------------------------------------


def reliability(records: Sequence[Any]) -> dict[str, Any]:
    """Over the requests: success, parse/schema failure, timeout, retry and truncation rates."""
    return _reliability([facts(r) for r in records])


def _reliability(rows: Sequence[Facts]) -> dict[str, Any]:
    requests = [f for f in rows if f.request]
    outcomes = {name: 0 for name in ("valid", "parse_failure", "schema_failure", *ERROR_CLASSES, "scoring_error")}
    for f in requests:
        outcomes[f.outcome] = outcomes.get(f.outcome, 0) + 1  # get: an error class a newer client added
    total = len(requests)
    errors = {
        k: v for k, v in outcomes.items() if k not in ("valid", "parse_failure", "schema_failure", "scoring_error")
    }
    successful = total - sum(errors.values())
    retried = [f for f in requests if f.attempts > 1]
    retried_successes = sum(1 for f in retried if f.success)
    out: dict[str, Any] = {
        "measured": bool(total),
        "total_requests": total,
        "successful_requests": successful,
        "success_rate": _rate(successful, total),
        "parse_failure_rate": _rate(outcomes["parse_failure"], total),
        "schema_failure_rate": _rate(outcomes["schema_failure"], total),
        "timeout_rate": _rate(outcomes["timeout"], total),
        "context_exceeded_rate": _rate(outcomes["context_exceeded"], total),
        "retry_rate": _rate(len(retried), total),
        "truncation_rate": _rate(sum(f.truncated for f in requests), total),
        "retried_successes": retried_successes,
        **_attempt_counts(requests),
        "reliability_score": _rate(successful - 0.5 * retried_successes, total),
        "error_counts": errors,
        "outcome_counts": outcomes,
    }
    if not total:
        out["note"] = NOT_MEASURED
    return out


def _attempt_counts(requests: Sequence[Facts]) -> dict[str, Any]:
    """Every attempt's outcome, counted even when a later attempt of the same sample succeeded. Requests recorded
    without an attempt log (older journals, cached answers) add only what they say for certain: their attempts,
    and the final attempt's outcome when there was one."""
    counts: dict[str, int] = {}
    attempts = 0
    for f in requests:
        final = (f.outcome if f.outcome in ERROR_CLASSES else "ok",) if f.attempts == 1 else ()
        outcomes = f.attempt_outcomes or final
        attempts += len(outcomes)
        for name in outcomes:
            if name not in ("ok", "truncated"):  # a truncated answer is an answer: the sample's outcome counts it
                counts[name] = counts.get(name, 0) + 1
    timeouts = counts.get("timeout", 0)
    return {
        "attempts_counted": attempts,
        "attempt_timeouts": timeouts,
        "attempt_errors": sum(counts.values()) - timeouts,
        "attempt_error_counts": dict(sorted(counts.items())),
        "attempt_timeout_rate": _rate(timeouts, attempts),
    }


def performance_metrics(records: Sequence[Any], prices: Prices | None = None) -> dict[str, Any]:
    """The ``performance`` object of one model's metrics."""
    rows = [facts(r) for r in records]
    requests = [f for f in rows if f.request]
    live = [f for f in requests if not f.cached]
    timed = [f for f in live if f.success and f.latency_s is not None]
    note = None
    if not timed:
        note = NOT_MEASURED if not requests else ALL_CACHED if not live else "no successful timed request"

    latency = latency_stats([f.latency_s for f in timed if f.latency_s is not None])
    end_to_end = latency_stats([f.end_to_end_s for f in timed if f.end_to_end_s is not None])
    out: dict[str, Any] = {
        "measured": bool(timed),
        "note": note,
        "requests": {
            "samples": len(rows),
            "requests": len(requests),
            "cached": len(requests) - len(live),
            "timed": len(timed),
        },
        "latency_ms": latency,
        "end_to_end_ms": end_to_end,
        "attempt_latency_ms": latency_stats([s for f in live for s in f.attempt_latencies]),
        "sla_compliance": {
            "p95_under_2s": None if end_to_end["p95"] is None else end_to_end["p95"] < 2000,
            "p99_under_5s": None if end_to_end["p99"] is None else end_to_end["p99"] < 5000,
        },
        "latency_breakdown": latency_breakdown(timed),
        "latency_correlation": _correlations(timed),
        "throughput": _throughput(live),
        "tokens": _tokens(rows),
        "reliability": _reliability(rows),
        "retried_samples": [
            {
                "sample_id": getattr(f.record, "sample_id", None),
                "attempts": int(f.attempts),
                "outcomes": list(f.attempt_outcomes),
            }
            for f in requests
            if f.attempts > 1
        ],
    }
    out["cost"] = cost(out["tokens"], prices or Prices(), len(rows))
    return out


def latency_breakdown(timed: Sequence[Facts]) -> dict[str, Any]:
    """Where each successful request's time went, in milliseconds (mean, percentiles):

    - ``client_wait_ms``: waiting for a free request slot in this client (the concurrency cap), before sending;
    - ``server_prompt_ms`` / ``server_generation_ms``: the server's own prompt processing (its time to first
      token) and token generation, when it reports them (llama-server's ``timings``; vLLM does not);
    - ``network_and_queue_ms``: the rest of the request's latency, the network and the server's own queue;
    - ``time_to_first_token_ms`` / ``after_first_token_ms``: for streamed answers (``--extractbench-stream``), the
      time from sending to the first content, and from there to the end (generation as the client sees it).

    A request counts in each component it has a figure for; ``server_timed`` says how many had server timings,
    ``streamed`` how many were streamed."""
    streamed = [
        (f.latency_s, f.first_token_s) for f in timed if f.latency_s is not None and f.first_token_s is not None
    ]
    server = [
        (f.latency_s, f.timings["prompt_ms"], f.timings["predicted_ms"])
        for f in timed
        if f.latency_s is not None and "prompt_ms" in f.timings and "predicted_ms" in f.timings
    ]
    return {
        "server_timed": len(server),
        "client_wait_ms": latency_stats([f.wait_s for f in timed if f.wait_s is not None]),
        "server_prompt_ms": latency_stats([prompt / 1000.0 for _, prompt, _ in server]),
        "server_generation_ms": latency_stats([predicted / 1000.0 for _, _, predicted in server]),
        # clipped at 0: the server's clock and ours differ by a little
        "network_and_queue_ms": latency_stats(
            [max(0.0, latency - (prompt + predicted) / 1000.0) for latency, prompt, predicted in server]
        ),
        "streamed": len(streamed),
        "time_to_first_token_ms": latency_stats([first for _, first in streamed]),
        "after_first_token_ms": latency_stats([max(0.0, latency - first) for latency, first in streamed]),
    }


def _correlations(timed: Sequence[Facts]) -> dict[str, Any]:
    rows = [(f.correlates(), f.latency_s) for f in timed if f.latency_s is not None]
    out = {}
    for name in CORRELATES:
        pairs = [(value, latency) for values, latency in rows if (value := values[name]) is not None]
        out[name] = spearman([p[0] for p in pairs], [p[1] for p in pairs])
    return out


def busy_time(intervals: Sequence[tuple[float, float]]) -> float:
    """Length of the union of ``(start, end)`` intervals: wall time with at least one request in flight."""
    total, current_start = 0.0, 0.0  # current_start is read only once current_end is set
    current_end: float | None = None
    for start, end in sorted(intervals):
        if current_end is None or start > current_end:
            if current_end is not None:
                total += current_end - current_start
            current_start, current_end = start, end
        else:
            current_end = max(current_end, end)
    if current_end is not None:
        total += current_end - current_start
    return total


def _throughput(live: Sequence[Facts]) -> dict[str, Any]:
    intervals = [
        (f.started_at, f.finished_at)
        for f in live
        if f.started_at is not None and f.finished_at is not None and f.finished_at >= f.started_at
    ]
    empty = {
        "wall_time_s": None,
        "busy_time_s": None,
        "requests_per_s": None,
        "samples_per_min": None,
        "tokens_per_s": None,
        "fields_per_s": None,
    }
    if not intervals:
        return {**empty, "note": "no request timestamps"}
    span = max(end for _, end in intervals) - min(start for start, _ in intervals)
    busy = busy_time(intervals)
    successes = [f for f in live if f.success]
    if not successes:
        return {**empty, "wall_time_s": span, "busy_time_s": busy, "note": NO_SUCCESS}
    if busy <= 0:
        return {**empty, "wall_time_s": span, "busy_time_s": busy, "note": "zero wall time"}
    # one numerator (successful requests) and one interval for every figure: they cannot disagree
    per_s = len(successes) / busy
    tokens_done = math.fsum((f.prompt_tokens or 0.0) + (f.completion_tokens or 0.0) for f in successes)
    return {
        "wall_time_s": span,
        "busy_time_s": busy,
        "requests_per_s": per_s,
        "samples_per_min": 60.0 * per_s,
        "tokens_per_s": tokens_done / busy,
        "fields_per_s": sum(f.fields for f in successes) / busy,
    }


def _tokens(rows: Sequence[Facts]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kind in ("prompt", "completion", "total"):
        values = [v for v in (getattr(f, f"{kind}_tokens") for f in rows) if v is not None]
        out[kind] = token_stats(values)
    with_output = [(f, f.completion_tokens) for f in rows if f.completion_tokens is not None]
    output_tokens = math.fsum(tokens for _, tokens in with_output)
    fields = sum(f.fields for f, _ in with_output)
    out["responses_with_usage"] = out["total"]["count"]
    out["extracted_fields"] = fields
    out["token_efficiency"] = fields / output_tokens if output_tokens else None
    return out


def estimate_cost(input_tokens: float, output_tokens: float, prices: Prices) -> float:
    """Prices per 1,000 tokens: ``input * price_in / 1000 + output * price_out / 1000`` (a missing price counts
    as 0)."""
    return input_tokens * (prices.input_per_1k or 0.0) / 1000 + output_tokens * (prices.output_per_1k or 0.0) / 1000


def cost(token_section: Mapping[str, Any], prices: Prices, num_samples: int) -> dict[str, Any]:
    """The cost estimate from the token sums, or why there is none."""
    out: dict[str, Any] = {"available": False, **prices.to_dict()}
    if not prices.given:
        return {**out, "reason": "no prices given (--extractbench-price-input/--extractbench-price-output)"}
    prompt, completion = token_section["prompt"], token_section["completion"]
    if not prompt["count"] and not completion["count"]:
        return {**out, "reason": "no token usage recorded"}
    total = estimate_cost(prompt["sum"], completion["sum"], prices)
    priced = max(prompt["count"], completion["count"])
    return {
        **out,
        "available": True,
        "input_cost_usd": estimate_cost(prompt["sum"], 0, prices),
        "output_cost_usd": estimate_cost(0, completion["sum"], prices),
        COST: total,
        "cost_per_sample_usd": total / priced,
        "responses_priced": priced,
        "samples": num_samples,
    }


def headline(performance: Mapping[str, Any]) -> dict[str, Any]:
    """The top-level keys that the SLA gate and the model comparison read."""
    return {
        LATENCY_P95: performance["end_to_end_ms"]["p95"],
        SUCCESS_RATE: performance["reliability"]["success_rate"],
        COST: performance["cost"].get(COST),
    }


def performance_section(records: Sequence[Any], options: Any = None) -> dict[str, Any]:
    """A :data:`.metrics.SECTIONS` entry: the performance object without prices, and its headline keys."""
    performance = performance_metrics(records)
    return {"performance": performance, **headline(performance)}


def apply_prices(metrics: dict[str, Any], prices: Prices) -> None:
    """Add the cost estimate to a model's metrics once the run's prices are known (the session does)."""
    performance = metrics.get("performance")
    if performance is None or not prices.given:
        return
    performance["cost"] = cost(performance["tokens"], prices, performance["requests"]["samples"])
    metrics[COST] = performance["cost"].get(COST)
