"""The depth and non-finite checks every dataset row and output pays agree with a walk that records every path."""

from __future__ import annotations

import math
import re
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from pytest_extractbench.core import jsonio

VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=3) | st.floats(allow_nan=True, allow_infinity=True),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=2), inner, max_size=3),
    max_leaves=25,
)


def deep_by_walk(value: Any, max_depth: int) -> str | None:
    """The first container (in the checks' order) below ``max_depth`` levels, found by walking every path."""
    if type(value) not in (dict, list):
        return None
    stack = [(value, ())]
    while stack:
        node, path = stack.pop()
        if len(path) >= max_depth:
            return jsonio.format_path(path[:8]) + ("…" if len(path) > 8 else "")
        items = node.items() if type(node) is dict else enumerate(node)
        stack.extend((child, (*path, key)) for key, child in items if type(child) in (dict, list))
    return None


@given(VALUES, st.integers(min_value=1, max_value=6))
def test_too_deep_names_the_same_place_as_a_walk_over_every_path(value: Any, max_depth: int) -> None:
    assert jsonio.too_deep(value, max_depth) == deep_by_walk(value, max_depth)


@given(VALUES)
def test_find_nonfinite_names_the_first_nan_or_infinity(value: Any) -> None:
    first = next(
        (
            jsonio.format_path(path)
            for node, path in jsonio._walk(value)
            if type(node) is float and not math.isfinite(node)
        ),
        None,
    )
    assert jsonio.find_nonfinite(value) == first


def test_the_limit_is_exact() -> None:
    nested: Any = 1
    for _ in range(5):
        nested = [nested]
    assert jsonio.too_deep(nested, 5) is None
    assert jsonio.too_deep([nested], 5) == "$[0][0][0][0][0]"


LONG_INT = re.compile(rb"\d{19}")


@given(
    st.binary(max_size=60)
    | st.lists(st.sampled_from([b"1234567890", b"123456789", b"9", b" ", b"x", b"\xd9\xa1", b"-"]), max_size=60).map(
        b"".join
    )
)
def test_long_integer_check_on_bytes_agrees_with_the_regex(text: bytes) -> None:
    """Which parser reads a line (orjson, or the standard one for 19 digits in a row) is decided as the regex did."""
    assert jsonio.has_long_int(text) == (LONG_INT.search(text) is not None)
    assert jsonio.has_long_int(bytearray(text)) == (LONG_INT.search(text) is not None)


def test_a_long_integer_in_a_bytes_line_keeps_every_digit() -> None:
    big = 2**70 + 1
    assert jsonio.loads(b'{"n": %d}' % big) == {"n": big}
    assert jsonio.loads(f'{{"n": {big}}}') == {"n": big}
    assert jsonio.loads(b'{"n": 1234567890123456789}') == {"n": 1234567890123456789}
