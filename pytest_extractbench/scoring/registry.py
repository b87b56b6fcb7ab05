"""Named extension points of the x-eval-* rules: comparators, transforms, aligners, post-processors.

Every registration bumps one generation counter, so rules parsed from a schema
before a name was registered are parsed again (a notebook may register a
comparator after it first scored with a schema that names it).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Generic, TypeVar

T = TypeVar("T")

_generation = 0


def generation() -> int:
    """Changes whenever any registry changes."""
    return _generation


class Registry(Generic[T]):
    """Name -> entry; built-in names cannot be replaced."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._entries: dict[str, T] = {}
        self._builtin: set[str] = set()

    def add(self, name: str, entry: T, *, overwrite: bool = False, builtin: bool = False) -> None:
        global _generation
        if not isinstance(name, str) or not name:
            raise ValueError(f"a {self.kind} name must be a non-empty string, got {name!r}")
        if name in self._builtin:
            raise ValueError(f"{self.kind} {name!r} is built in and cannot be replaced")
        if name in self._entries and not overwrite and self._entries[name] is not entry:
            raise ValueError(f"a {self.kind} named {name!r} is already registered (pass overwrite=True to replace it)")
        self._entries[name] = entry
        if builtin:
            self._builtin.add(name)
        _generation += 1

    def remove(self, name: str) -> None:
        """Forget a registered (non-built-in) name."""
        global _generation
        if name in self._builtin:
            raise ValueError(f"{self.kind} {name!r} is built in and cannot be removed")
        self._entries.pop(name, None)
        _generation += 1

    def get(self, name: str) -> T:
        try:
            return self._entries[name]
        except KeyError:
            raise KeyError(self.unknown(name)) from None

    def unknown(self, name: object) -> str:
        """The message for a name that is not registered, with a suggestion when one is close."""
        from difflib import get_close_matches

        message = f"unknown {self.kind} {name!r}"
        close = get_close_matches(str(name), list(self._entries), n=1)
        if close:
            message += f" (did you mean {close[0]!r}?)"
        return message + f"; known: {', '.join(sorted(self._entries))}"

    def __contains__(self, name: object) -> bool:
        return name in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._entries))


class Note(str):
    """A parameter problem that is only worth a warning: the rule still applies (an unknown
    parameter is ignored, as struct-extract-eval ignores it, instead of failing the field)."""


def unknown_params(params: Mapping[str, Any], known: set[str] | frozenset[str]) -> list[str]:
    """A :class:`Note` naming the parameters not in ``known`` (they are ignored), or nothing."""
    unknown = sorted(set(params) - set(known), key=str)
    if not unknown:
        return []
    expected = f"; known: {', '.join(sorted(known))}" if known else "; it takes none"
    return [Note(f"unknown parameter(s) {unknown} ignored{expected}")]


def param_problems(params: Mapping[str, Any], known: set[str], fractions: Mapping[str, float] = {}) -> list[str]:
    """Common parameter checks: numbers that must lie in [0, 1] (with their defaults), and unknown
    names (a :class:`Note`: ignored with a warning)."""
    problems: list[str] = []
    for name, default in fractions.items():
        value = params.get(name, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
            problems.append(f"'{name}' must be a number in [0, 1], got {value!r}")
    return problems + unknown_params(params, known)
