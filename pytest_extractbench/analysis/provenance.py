"""Where a run's answers came from: counts by source, and the sentence every output opens with.

A verdict on reused answers is a verdict on the run that asked them, so a run that reused any answer
(from the cross-run cache, the resumed journal or a replay) says how many, when and from which server,
before anything else.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["SOURCES", "answer_counts", "reuse_sentence"]

SOURCES = ("asked", "cache", "journal", "replay")
_REUSE_TEXT = {"cache": "from the cache", "journal": "from the resumed run's journal", "replay": "replayed"}


def answer_counts(responses: Iterable[Mapping[str, Any]]) -> tuple[dict[str, int], list[dict[str, Any]]]:
    """(answers by source, plus "total"; the reused answers grouped by source and server, with the
    first and last date they were received). Responses without an origin are not counted."""
    counts = dict.fromkeys(SOURCES, 0)
    groups: dict[tuple[str, str], dict[str, Any]] = {}
    for response in responses:
        origin = response.get("origin")
        if not isinstance(origin, Mapping) or origin.get("source") not in counts:
            continue
        source = str(origin["source"])
        counts[source] += 1
        if source == "asked":
            continue
        where = str(origin.get("where") or "an unknown source")
        group = groups.setdefault(
            (source, where), {"source": source, "where": where, "count": 0, "first_at": None, "last_at": None}
        )
        group["count"] += 1
        at = origin.get("at")
        if isinstance(at, str):
            group["first_at"] = min(filter(None, (group["first_at"], at)))
            group["last_at"] = max(filter(None, (group["last_at"], at)))
    counts["total"] = sum(counts[s] for s in SOURCES)
    reused = sorted(groups.values(), key=lambda g: (SOURCES.index(g["source"]), -g["count"], g["where"]))
    return counts, reused


def reuse_sentence(live: Mapping[str, Any] | None) -> str | None:
    """ "41 of 52 answers reused from the cache, recorded 2026-05-01 from http://...; 11 asked", or None
    when every answer was asked in this run. Plain text: each renderer escapes it."""
    if not live or not isinstance(live.get("answers"), Mapping):
        return None
    answers, reused = live["answers"], live.get("reused") or []
    total = answers.get("total") or 0
    if not reused or not total:
        return None
    parts = []
    for group in reused:
        first, last = (str(group.get(k) or "")[:10] for k in ("first_at", "last_at"))
        dated = f"recorded {first}" + (f" to {last}" if last and last != first else "") if first else "undated"
        parts.append(
            f"{group['count']} {_REUSE_TEXT.get(group['source'], group['source'])}, {dated}, from {group['where']}"
        )
    reused_total = total - (answers.get("asked") or 0)
    return (
        f"{reused_total} of {total} answers reused ({'; '.join(parts)}); {answers.get('asked') or 0} asked in this run"
    )
