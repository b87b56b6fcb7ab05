"""Transforms named by ``x-eval-transform``: applied, left to right, to both values before comparison.

A transform is ``fn(value, params)`` and returns the new value. It sees scalars
only (the elements of an array of scalars one by one); nulls are passed over.
Built-ins leave values of types they do not handle unchanged, so a chain never
fails on odd output.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, NamedTuple, Sequence

from .registry import Registry

TransformFn = Callable[[Any, Mapping[str, Any]], Any]
ParamCheck = Callable[[Mapping[str, Any]], Sequence[str]]


class TransformSpec(NamedTuple):
    fn: TransformFn
    check_params: ParamCheck | None = None


TRANSFORMS: Registry[TransformSpec] = Registry("transform")


def register_transform(
    name: str, fn: TransformFn, *, check_params: ParamCheck | None = None, overwrite: bool = False
) -> None:
    """Make ``fn`` usable in ``"x-eval-transform": [name, ...]``."""
    TRANSFORMS.add(name, TransformSpec(fn, check_params), overwrite=overwrite)


def lowercase(value: Any, params: Mapping[str, Any]) -> Any:
    return value.lower() if type(value) is str else value


def strip(value: Any, params: Mapping[str, Any]) -> Any:
    return value.strip() if type(value) is str else value


def normalize_whitespace(value: Any, params: Mapping[str, Any]) -> Any:
    return " ".join(value.split()) if type(value) is str else value


def sort_tokens(value: Any, params: Mapping[str, Any]) -> Any:
    return " ".join(sorted(value.split())) if type(value) is str else value


def round_digits(value: Any, params: Mapping[str, Any]) -> Any:
    """Round a number to ``digits`` decimals (integers stay integers)."""
    if type(value) is float:
        return round(value, params["digits"])
    if type(value) is int:
        return round(value, params["digits"]) if params["digits"] < 0 else value
    return value


def _no_params(params: Mapping[str, Any]) -> list[str]:
    return [f"takes no parameters, got {sorted(params)}"] if params else []


def _check_digits(params: Mapping[str, Any]) -> list[str]:
    digits = params.get("digits")
    if isinstance(digits, bool) or not isinstance(digits, int) or set(params) != {"digits"}:
        return [f"needs {{'digits': <integer>}}, got {dict(params)!r}"]
    return []


for _name, _fn in (("lowercase", lowercase), ("strip", strip), ("normalize_whitespace", normalize_whitespace),
                   ("sort_tokens", sort_tokens)):
    TRANSFORMS.add(_name, TransformSpec(_fn, _no_params), builtin=True)
TRANSFORMS.add("round_digits", TransformSpec(round_digits, _check_digits), builtin=True)
