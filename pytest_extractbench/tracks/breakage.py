"""Deterministic JSON breakage for the repair track: valid instance in, broken text out.

Each kind is a mistake models and hand-editing really make. The result never
parses as JSON, and every kind only damages syntax, so the original value can
always be recovered exactly. The site of the damage is chosen by a
``random.Random`` seeded with ``seed`` (the sample id): same input, same output.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any, NamedTuple

from ..core.errors import ExtractbenchError

BREAKAGE_KINDS = (
    "trailing_comma",  # {"a": 1,}
    "missing_comma",  # {"a": 1 "b": 2}
    "single_quotes",  # {'a': 'x'}
    "unquoted_keys",  # {a: 1}
    "missing_closing",  # {"a": [1, 2]
    "python_literals",  # {"a": True, "b": None}
    "comment",  # {"a": 1 // why}
)


class _Token(NamedTuple):
    start: int
    end: int  # exclusive
    kind: str  # "string", "key", "literal", "punct"


def _tokens(text: str) -> list[_Token]:
    """Strings, keys, literals and punctuation of compact-ish JSON text, outside-string aware."""
    out: list[_Token] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            k = j + 1
            while k < n and text[k] == " ":
                k += 1
            out.append(_Token(i, j + 1, "key" if k < n and text[k] == ":" else "string"))
            i = j + 1
        elif c in "{}[],:":
            out.append(_Token(i, i + 1, "punct"))
            i += 1
        elif c.isspace():
            i += 1
        else:
            j = i
            while j < n and text[j] not in "{}[],: \n":
                j += 1
            out.append(_Token(i, j, "literal"))
            i = j
    return out


def _splice(text: str, start: int, end: int, new: str) -> str:
    return text[:start] + new + text[end:]


def _trailing_comma(text: str, tokens: list[_Token], rng: random.Random) -> str | None:
    # a closing bracket whose container is not empty (the previous token is not its opener)
    sites = [
        t
        for k, t in enumerate(tokens)
        if t.kind == "punct"
        and text[t.start] in "}]"
        and k > 0
        and not (tokens[k - 1].kind == "punct" and text[tokens[k - 1].start] in "{[")
    ]
    if not sites:
        return None
    site = rng.choice(sites)
    return _splice(text, site.start, site.start, ",")


def _missing_comma(text: str, tokens: list[_Token], rng: random.Random) -> str | None:
    sites = [t for t in tokens if t.kind == "punct" and text[t.start] == ","]
    if not sites:
        return None
    site = rng.choice(sites)
    return _splice(text, site.start, site.end, "")


def _single_quotes(text: str, tokens: list[_Token], rng: random.Random) -> str | None:
    strings = [t for t in tokens if t.kind in ("string", "key") and '"' not in text[t.start + 1 : t.end - 1]]
    if not strings:
        return None
    for t in reversed(strings):  # all of them, as a Python repr would
        text = _splice(text, t.start, t.end, "'" + text[t.start + 1 : t.end - 1] + "'")
    return text


def _unquoted_keys(text: str, tokens: list[_Token], rng: random.Random) -> str | None:
    keys = [t for t in tokens if t.kind == "key" and text[t.start + 1 : t.end - 1].isidentifier()]
    if not keys:
        return None
    for t in reversed(keys):
        text = _splice(text, t.start, t.end, text[t.start + 1 : t.end - 1])
    return text


def _missing_closing(text: str, tokens: list[_Token], rng: random.Random) -> str | None:
    closers = [t for t in tokens if t.kind == "punct" and text[t.start] in "}]"]
    if not closers:
        return None
    site = rng.choice(closers)
    return _splice(text, site.start, site.end, "")


_PYTHON = {"true": "True", "false": "False", "null": "None"}


def _python_literals(text: str, tokens: list[_Token], rng: random.Random) -> str | None:
    literals = [t for t in tokens if t.kind == "literal" and text[t.start : t.end] in _PYTHON]
    if not literals:
        return None
    for t in reversed(literals):
        text = _splice(text, t.start, t.end, _PYTHON[text[t.start : t.end]])
    return text


def _comment(text: str, tokens: list[_Token], rng: random.Random) -> str | None:
    sites = [t for t in tokens if t.kind == "punct" and text[t.start] in ",{["]
    if not sites:
        return None
    site = rng.choice(sites)
    return _splice(text, site.end, site.end, " // checked by hand\n")


_BREAKERS: dict[str, Callable[[str, list[_Token], random.Random], str | None]] = {
    "trailing_comma": _trailing_comma,
    "missing_comma": _missing_comma,
    "single_quotes": _single_quotes,
    "unquoted_keys": _unquoted_keys,
    "missing_closing": _missing_closing,
    "python_literals": _python_literals,
    "comment": _comment,
}


class BreakageError(ExtractbenchError, ValueError):
    """The kind is unknown, or the value has no site it applies to (e.g. no true/false/null)."""


def break_json(value: Any, kind: str, *, seed: str | int = 0) -> str:
    """``value`` serialized as JSON, then broken in the way ``kind`` names."""
    breaker = _BREAKERS.get(kind)
    if breaker is None:
        raise BreakageError(f"unknown breakage kind {kind!r}; choose one of {', '.join(BREAKAGE_KINDS)}")
    text = json.dumps(value, ensure_ascii=False)
    broken = breaker(text, _tokens(text), random.Random(f"{kind}:{seed}"))
    if broken is None:
        raise BreakageError(f"breakage {kind!r} does not apply to this value")
    return broken


def applicable_kinds(value: Any) -> list[str]:
    """The kinds :func:`break_json` can apply to ``value``."""
    text = json.dumps(value, ensure_ascii=False)
    tokens = _tokens(text)
    return [kind for kind, fn in _BREAKERS.items() if fn(text, tokens, random.Random(0)) is not None]
