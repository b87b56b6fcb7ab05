r"""The samples.jsonl record: its models (``TypedDict``\ s), the defaults a compact record leaves out, and the two
forms' conversions. Pure (no I/O): :mod:`.rundoc` reads and writes the file and re-exports these names."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, TypedDict

if TYPE_CHECKING:  # the annotations are strings (Python 3.10 has no NotRequired)
    from typing_extensions import NotRequired


class ResponseDict(TypedDict):
    """A record's ``response``: ``ModelResponse.as_dict()`` (dataset/responses.py)."""

    content: Any
    error_class: str | None
    error: str | None
    latency_s: float | None
    usage: dict[str, int]
    finish_reason: str | None
    attempts: int
    cached: bool
    started_at: float | None
    finished_at: float | None
    tool_calls: list[dict[str, Any]] | None
    logprobs: list[dict[str, Any]] | None
    choices: list[dict[str, Any]] | None
    context: dict[str, int | None] | None
    timings: dict[str, float] | None
    wait_s: float | None
    first_token_s: float | None
    end_to_end_s: float | None
    attempt_log: list[dict[str, Any]] | None
    origin: NotRequired[dict[str, str]]  # live answers only


# ModelResponse's defaults (tests/unit/test_rundoc.py holds them equal); ``origin`` is absent, not None, by default.
RESPONSE_DEFAULTS: dict[str, Any] = {
    "content": None,
    "error_class": None,
    "error": None,
    "latency_s": None,
    "usage": {},
    "finish_reason": None,
    "attempts": 0,
    "cached": False,
    "started_at": None,
    "finished_at": None,
    "tool_calls": None,
    "logprobs": None,
    "choices": None,
    "context": None,
    "timings": None,
    "wait_s": None,
    "first_token_s": None,
    "end_to_end_s": None,
    "attempt_log": None,
}


COUNT_KEYS = ("exact", "partial", "partial_lenient", "incorrect", "missed", "spurious", "typed", "type_correct")


class ScoreDict(TypedDict):
    """A record's ``score``: ``SampleScore.as_dict()`` (scoring/result.py); a field entry already leaves out the
    keys at FieldResult's defaults."""

    sample_id: str  # default: the record's
    json_valid: bool
    schema_valid: bool
    parse_error: str | None
    validation_errors: list[str]
    eqs: float
    exact_match: bool
    precision: dict[str, float]
    recall: dict[str, float]
    f1: dict[str, float]
    type_accuracy: float
    hallucination_rate: float
    omission_rate: float
    counts: dict[str, int]  # COUNT_KEYS, each 0 by default
    observed: dict[str, int]
    fields: list[dict[str, Any]]
    extras: NotRequired[dict[str, float]]


SCORE_DEFAULTS: dict[str, Any] = {"parse_error": None, "validation_errors": [], "fields": []}


class SampleRecordDict(TypedDict):
    """One line of samples.jsonl for the extraction track: ``SampleRecord.to_dict()`` (dataset/records.py)."""

    model: str
    sample_id: str
    passed: bool
    failure: str | None
    scoring_error: str | None
    meta: dict[str, Any]
    response: ResponseDict
    score: ScoreDict
    diagnostics: dict[str, Any]


class TrackRecordDict(TypedDict):
    """One line of samples.jsonl for a toolcall, generate or repair run: ``TrackRecord.to_dict()``."""

    model: str
    sample_id: str
    track: str
    passed: bool
    failure: str | None
    meta: dict[str, Any]
    response: ResponseDict
    result: dict[str, Any]
    consistency: dict[str, Any] | None
    details: list[str]


Record = SampleRecordDict | TrackRecordDict

RECORD_DEFAULTS: dict[str, Any] = {
    "passed": True,
    "failure": None,
    "scoring_error": None,
    "meta": {},
    "diagnostics": {},
}
TRACK_RECORD_DEFAULTS: dict[str, Any] = {
    "passed": True,
    "failure": None,
    "meta": {},
    "result": {},
    "consistency": None,
    "details": [],
}


def _is_default(value: Any, default: Any) -> bool:
    # the type must match too: 0 == False and 1 == True, but `"attempts": false` is not the default 0
    return value is default or (type(value) is type(default) and value == default)


def _drop(data: Mapping[str, Any], defaults: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k not in defaults or not _is_default(v, defaults[k])}


def _fill(data: Any, defaults: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` with the defaults it lacks (containers copied: a reader may change its record)."""
    out = dict(data)
    for key, value in defaults.items():
        if key not in out:
            out[key] = value.copy() if type(value) in (dict, list) else value
    return out


def compact_response(response: Mapping[str, Any]) -> dict[str, Any]:
    """A record's ``response`` with every key at its default left out (a reader's ``.get`` finds the same)."""
    return _drop(response, RESPONSE_DEFAULTS)


def compact(record: Mapping[str, Any]) -> dict[str, Any]:
    """A record's samples.jsonl form: every key at its default left out (:func:`expand` restores them)."""
    track = "track" in record
    out = _drop(record, TRACK_RECORD_DEFAULTS if track else RECORD_DEFAULTS)
    response = out.get("response")
    if isinstance(response, dict):
        response = compact_response(response)
        if response:
            out["response"] = response
        else:
            del out["response"]
    score = out.get("score")
    if not track and isinstance(score, dict):
        score = _drop(score, SCORE_DEFAULTS)
        if score.get("sample_id") == record.get("sample_id"):
            del score["sample_id"]
        for key in ("counts", "observed"):
            if isinstance(score.get(key), dict):
                score[key] = {k: v for k, v in score[key].items() if not (k in COUNT_KEYS and _is_default(v, 0))}
        out["score"] = score
    return out


def expand(record: dict[str, Any]) -> Record:
    """A record in its full form, whichever form it was written in (the inverse of :func:`compact`)."""
    track = "track" in record
    out = _fill(record, TRACK_RECORD_DEFAULTS if track else RECORD_DEFAULTS)
    response = out.get("response")
    out["response"] = _fill(response if isinstance(response, dict) else {}, RESPONSE_DEFAULTS)
    score = out.get("score")
    if not track and isinstance(score, dict):
        score = _fill(score, SCORE_DEFAULTS)
        if "sample_id" not in score:
            score["sample_id"] = out.get("sample_id")
        for key in ("counts", "observed"):
            found = score.get(key)
            if isinstance(found, dict):
                score[key] = {**dict.fromkeys(COUNT_KEYS, 0), **found}
        out["score"] = score
    return out  # type: ignore[return-value]
