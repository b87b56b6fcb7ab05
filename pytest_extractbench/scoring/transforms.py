"""Transforms named by ``x-eval-transform``: applied, left to right, to both values before comparison.

A transform is ``fn(value, params)`` and returns the new value. It sees scalars
only (the elements of an array of scalars one by one); nulls are passed over.
Built-ins leave values of types they do not handle unchanged, so a chain never
fails on odd output.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, NamedTuple, Sequence

from .registry import Registry, unknown_params

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


_TRUE, _FALSE = frozenset({"1", "true"}), frozenset({"0", "false"})


def _to_bool(value: Any) -> Any:
    if type(value) is bool:
        return value
    if type(value) in (int, float) and value in (0, 1):
        return value == 1
    if type(value) is str:
        token = value.strip().lower()
        if token in _TRUE or token in _FALSE:
            return token in _TRUE
    raise ValueError


def _to_int(value: Any) -> Any:
    if type(value) is str:
        return int(value.strip())  # "12.5" is not an int: it stays a string
    return int(value)


_CONVERT = {"float": float, "int": _to_int, "str": str, "bool": _to_bool}


def type_convert(value: Any, params: Mapping[str, Any]) -> Any:
    """Convert to ``{"to": "float" | "int" | "str" | "bool"}`` (struct-extract-eval's spelling).

    Python's conversions (``int(12.7)`` is 12, ``str(True)`` is "True"); "bool" accepts true/false,
    1/0 and their strings in any case. A value that does not convert stays as it is, so the
    comparator sees the difference (there, the evaluation stops with an error).
    """
    try:
        return _CONVERT[params["to"]](value)
    except (TypeError, ValueError, OverflowError):
        return value


def _no_params(params: Mapping[str, Any]) -> list[str]:
    return unknown_params(params, frozenset())


def _check_digits(params: Mapping[str, Any]) -> list[str]:
    digits = params.get("digits")
    if isinstance(digits, bool) or not isinstance(digits, int):
        return [f"needs {{'digits': <integer>}}, got {dict(params)!r}"]
    return unknown_params(params, {"digits"})


def _check_convert(params: Mapping[str, Any]) -> list[str]:
    if params.get("to") not in _CONVERT:
        return [f"needs {{'to': one of {', '.join(_CONVERT)}}}, got {dict(params)!r}"]
    return unknown_params(params, {"to"})


for _name, _fn in (("lowercase", lowercase), ("strip", strip), ("normalize_whitespace", normalize_whitespace),
                   ("sort_tokens", sort_tokens)):
    TRANSFORMS.add(_name, TransformSpec(_fn, _no_params), builtin=True)
TRANSFORMS.add("round_digits", TransformSpec(round_digits, _check_digits), builtin=True)
TRANSFORMS.add("type_convert", TransformSpec(type_convert, _check_convert), builtin=True)
