"""Transforms named by ``x-eval-transform``: applied, left to right, to both values before comparison.

A transform is ``fn(value, params)`` and returns the new value. It sees scalars
only (the elements of an array of scalars one by one); nulls are passed over.
Built-ins leave values of types they do not handle unchanged, so a chain never
fails on odd output.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any, NamedTuple

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


_CONVERT: dict[str, Callable[[Any], Any]] = {"float": float, "int": _to_int, "str": str, "bool": _to_bool}


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


# -- normalisers for real documents: names, parties, dates, amounts --------------------------------------------

# Python's \W is Unicode-aware; "_" is a word character to it, but punctuation in a document.
_PUNCTUATION = re.compile(r"[^\w\s]|_")
# Company-form words as written after a name ("Newgistics, Inc.", "ACME SDN BHD"), compared without dots.
LEGAL_SUFFIXES = frozenset(
    {
        "inc",
        "incorporated",
        "corp",
        "corporation",
        "co",
        "company",
        "ltd",
        "limited",
        "llc",
        "llp",
        "lp",
        "plc",
        "gmbh",
        "ag",
        "sa",
        "sas",
        "sarl",
        "bv",
        "nv",
        "srl",
        "spa",
        "pty",
        "pte",
        "sdn",
        "bhd",
        "kk",
        "oy",
        "ab",
        "as",
    }
)


def no_punctuation(value: Any, params: Mapping[str, Any]) -> Any:
    """Punctuation (any Unicode punctuation or symbol) removed and whitespace collapsed: "Newgistics, Inc." ->
    "Newgistics Inc"."""
    return " ".join(_PUNCTUATION.sub(" ", value).split()) if type(value) is str else value


def no_legal_suffix(value: Any, params: Mapping[str, Any]) -> Any:
    """Trailing company-form words removed ("Newgistics, Inc." and "Newgistics Incorporated" -> "Newgistics"),
    case and dots ignored in the match; a name that is nothing but such words stays as it is."""
    if type(value) is not str:
        return value
    words = value.replace(",", " ").split()
    end = len(words)
    while end > 1 and words[end - 1].replace(".", "").casefold() in LEGAL_SUFFIXES:
        end -= 1
    return " ".join(words[:end]) if end < len(words) else value


_DATE_ORDERS = {"dmy": ("%d", "%m", "%Y"), "mdy": ("%m", "%d", "%Y"), "ymd": ("%Y", "%m", "%d")}
_DATE_SEPARATORS = re.compile(r"[./\-\s]+")
_MONTH_NAME_FORMATS = ("%d %B %Y", "%d %b %Y", "%B %d %Y", "%b %d %Y", "%Y %B %d", "%Y %b %d")


def iso_date(value: Any, params: Mapping[str, Any]) -> Any:
    """A date written as 25/12/2018, 25.12.18, 2018-12-25, "25 December 2018" or "Dec 25, 2018" -> "2018-12-25".

    ``order`` (``dmy``, the default, ``mdy`` or ``ymd``) reads all-number dates; a two-digit year is 20YY
    below 70 and 19YY from 70 (Python's rule). A value that reads as no date stays as it is.
    """
    if type(value) is not str:
        return value
    text = _DATE_SEPARATORS.sub(" ", value.replace(",", " ")).strip()
    if not text or len(text) > 40:
        return value
    first, second, third = _DATE_ORDERS[params.get("order", "dmy")]
    # the order asked for, its two-digit-year form, and ISO's year-first order whatever the order
    numeric = [f"{first} {second} {third}", f"{first} {second} {third}".replace("%Y", "%y"), "%Y %m %d"]
    for pattern in (*numeric, *_MONTH_NAME_FORMATS):
        try:
            return datetime.strptime(text, pattern).date().isoformat()
        except ValueError:
            continue
    return value


_GROUPED = re.compile(r"^(\d+|\d{1,3}(,\d{3})+)$")
_AMOUNT = re.compile(r"^[^\d\-+.,]*?([-+]?)\s*([\d.,' ]*\d)\s*[^\d]*$")


def amount(value: Any, params: Mapping[str, Any]) -> Any:
    """A money amount as a number: currency signs and codes, spaces and thousands separators dropped
    ("RM 9.00" -> 9.0, "$1,234.50" -> 1234.5, "1.234,50 EUR" with ``{"decimal": ","}`` -> 1234.5).

    ``decimal`` is the decimal mark (``"."`` by default). Numbers pass through; a value that is not one
    amount stays as it is.
    """
    if type(value) is not str or len(value) > 64:
        return value
    match = _AMOUNT.match(value.strip())
    if match is None:
        return value
    sign, digits = match.groups()
    decimal = params.get("decimal", ".")
    thousands = "," if decimal == "." else "."
    whole = digits.split(decimal)[0] if digits.count(decimal) <= 1 else ""
    if not _GROUPED.match(whole.replace(thousands, ",").replace("'", ",").replace(" ", ",")):
        return value  # "25, 2018" (a date) or "1,2345" is no amount: groups after the first are three digits
    digits = digits.replace(" ", "").replace("'", "").replace(thousands, "")
    if decimal != ".":
        digits = digits.replace(decimal, ".")
    try:
        number = float(sign + digits)
    except ValueError:
        return value
    return number if math.isfinite(number) else value


def _check_date(params: Mapping[str, Any]) -> list[str]:
    if params.get("order", "dmy") not in _DATE_ORDERS:
        return [f"'order' must be one of {', '.join(_DATE_ORDERS)}, got {params['order']!r}"]
    return unknown_params(params, {"order"})


def _check_amount(params: Mapping[str, Any]) -> list[str]:
    if params.get("decimal", ".") not in (".", ","):
        return [f"'decimal' must be '.' or ',', got {params['decimal']!r}"]
    return unknown_params(params, {"decimal"})


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


for _name, _fn in (
    ("lowercase", lowercase),
    ("strip", strip),
    ("normalize_whitespace", normalize_whitespace),
    ("sort_tokens", sort_tokens),
    ("no_punctuation", no_punctuation),
    ("no_legal_suffix", no_legal_suffix),
):
    TRANSFORMS.add(_name, TransformSpec(_fn, _no_params), builtin=True)
TRANSFORMS.add("round_digits", TransformSpec(round_digits, _check_digits), builtin=True)
TRANSFORMS.add("type_convert", TransformSpec(type_convert, _check_convert), builtin=True)
TRANSFORMS.add("iso_date", TransformSpec(iso_date, _check_date), builtin=True)
TRANSFORMS.add("amount", TransformSpec(amount, _check_amount), builtin=True)


def check_normalisers(names: Sequence[str]) -> list[str]:
    """Why some of ``names`` cannot normalise every string (unknown, or needing parameters)."""
    problems = []
    for name in names:
        if name not in TRANSFORMS:
            problems.append(TRANSFORMS.unknown(name))
            continue
        check = TRANSFORMS.get(name).check_params
        missing = check({}) if check else []
        if missing:
            problems.append(f"{name} cannot run with its defaults: {'; '.join(missing)}")
    return problems
