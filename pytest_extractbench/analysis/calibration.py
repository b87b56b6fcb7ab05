"""Confidence calibration from token log-probabilities: pure functions, no pytest.

A field's confidence is the probability the model gave to the tokens of its value:
``exp(sum of the logprobs of the tokens that overlap the value's characters)`` in the
raw output (the joint probability of writing that value). Fields are grouped in
equal-width confidence bins; each bin's accuracy (share of exact fields) is compared
with its mean confidence, and the Expected Calibration Error is
``ECE = sum_b |accuracy_b - confidence_b| * n_b / N`` (Guo et al. 2017: the bin's mean
confidence, not its midpoint, which a simpler sketch would use; the midpoint is reported too).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")
_LITERALS = ("true", "false", "null")
# json's own string scanner (its C version where there is one); typeshed leaves it undeclared.
_scanstring: Callable[[str, int], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]


def token_offsets(logprobs: Any) -> tuple[str, list[tuple[int, int, float]]]:
    """The text the tokens spell and each token's ``(start, end, logprob)``.

    Accepts OpenAI's ``{"content": [{"token", "logprob", ...}]}`` or the list itself.
    """
    entries = logprobs.get("content") if isinstance(logprobs, Mapping) else logprobs
    text_parts: list[str] = []
    spans: list[tuple[int, int, float]] = []
    position = 0
    for entry in entries or ():
        token = entry.get("token", "") if isinstance(entry, Mapping) else ""
        logprob = entry.get("logprob") if isinstance(entry, Mapping) else None
        if not isinstance(token, str) or not isinstance(logprob, (int, float)):
            continue
        spans.append((position, position + len(token), float(logprob)))
        text_parts.append(token)
        position += len(token)
    return "".join(text_parts), spans


class _Scanner:
    """Finds the character span of every value in JSON text, keyed by field path (``a.b``, ``items[2].sku``)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.spans: dict[str, tuple[int, int]] = {}

    def skip(self, i: int) -> int:
        while i < len(self.text) and self.text[i] in " \t\r\n":
            i += 1
        return i

    def value(self, i: int, path: str) -> int:
        i = self.skip(i)
        c = self.text[i]
        start = i
        if c == "{":
            i = self.skip(i + 1)
            if self.text[i] == "}":
                i += 1
            else:
                while True:
                    i = self.skip(i)
                    key, i = _scanstring(self.text, i + 1)
                    i = self.skip(i)
                    assert self.text[i] == ":"
                    i = self.value(i + 1, f"{path}.{key}" if path else key)
                    i = self.skip(i)
                    if self.text[i] == ",":
                        i += 1
                        continue
                    assert self.text[i] == "}"
                    i += 1
                    break
        elif c == "[":
            i = self.skip(i + 1)
            index = 0
            if self.text[i] == "]":
                i += 1
            else:
                while True:
                    i = self.value(i, f"{path}[{index}]")
                    index += 1
                    i = self.skip(i)
                    if self.text[i] == ",":
                        i += 1
                        continue
                    assert self.text[i] == "]"
                    i += 1
                    break
        elif c == '"':
            _, i = _scanstring(self.text, i + 1)
        else:
            match = _NUMBER.match(self.text, i)
            literal = next((w for w in _LITERALS if self.text.startswith(w, i)), None)
            if match:
                i = match.end()
            elif literal:
                i += len(literal)
            else:
                raise ValueError(f"unexpected character {c!r} at {i}")
        self.spans[path or "$"] = (start, i)
        return i


def value_spans(text: str) -> dict[str, tuple[int, int]]:
    """``{field path: (start, end)}`` for the first JSON object or array in ``text``; {} when there is none."""
    starts = [p for p in (text.find("{"), text.find("[")) if p >= 0]
    if not starts:
        return {}
    scanner = _Scanner(text)
    try:
        scanner.value(min(starts), "")
    except (ValueError, IndexError, AssertionError):
        return scanner.spans
    return scanner.spans


def field_confidences(logprobs: Any, paths: Iterable[str]) -> dict[str, float]:
    """Confidence of each field path that appears in the output the logprobs spell."""
    text, tokens = token_offsets(logprobs)
    spans = value_spans(text)
    out: dict[str, float] = {}
    for path in paths:
        span = spans.get(path)
        if span is None:
            continue
        start, end = span
        total = sum(lp for s, e, lp in tokens if s < end and e > start)
        out[path] = math.exp(total)
    return out


def reliability(confidences: Sequence[float], correct: Sequence[bool], *, bins: int = 10) -> dict[str, Any]:
    """Reliability table, ECE, MCE and Brier score of (confidence, correct) pairs."""
    conf = np.asarray(confidences, dtype=float)
    hits = np.asarray(correct, dtype=float)
    if conf.shape != hits.shape:
        raise ValueError("confidences and correct must have the same length")
    n = conf.size
    edges = np.linspace(0.0, 1.0, bins + 1)
    # a confidence of exactly 1.0 belongs to the last bin
    index = np.clip(np.digitize(conf, edges[1:-1], right=False), 0, bins - 1)
    table = []
    ece = mce = 0.0
    for b in range(bins):
        members = index == b
        count = int(members.sum())
        row: dict[str, Any] = {
            "low": float(edges[b]),
            "high": float(edges[b + 1]),
            "midpoint": float((edges[b] + edges[b + 1]) / 2),
            "count": count,
        }
        if count:
            accuracy = float(hits[members].mean())
            confidence = float(conf[members].mean())
            gap = abs(accuracy - confidence)
            row.update(accuracy=accuracy, confidence=confidence, gap=gap)
            ece += gap * count / n
            mce = max(mce, gap)
        else:
            row.update(accuracy=None, confidence=None, gap=None)
        table.append(row)
    return {
        "fields": int(n),
        "ece": float(ece) if n else None,
        "mce": float(mce) if n else None,
        "brier": float(np.mean((conf - hits) ** 2)) if n else None,
        "mean_confidence": float(conf.mean()) if n else None,
        "accuracy": float(hits.mean()) if n else None,
        "bins": table,
    }
