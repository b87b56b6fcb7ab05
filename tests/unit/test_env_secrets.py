"""The environment's keys as every masker reads them (core/redact.env_secrets): read each time, from CPython's own
table of the environment rather than through os.environ.get (which raises and catches KeyError twice per missing
variable); the values are the ones os.environ.get gives, and a replaced os.environ is asked as a mapping."""

from __future__ import annotations

import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_extractbench.core import redact, textsafe
from pytest_extractbench.core.redact import SECRET_ENV_VARS

# a value the environment can hold: no NUL, no lone surrogate; None: the variable is not set
VALUES = st.one_of(
    st.none(), st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=8)
)


def _through_the_mapping() -> tuple[str, ...]:
    """The plain reading: os.environ.get for each variable, values of 4 characters or more."""
    return tuple(value for name in SECRET_ENV_VARS if len(value := os.environ.get(name) or "") >= 4)


@given(st.tuples(VALUES, VALUES, VALUES))
def test_the_keys_read_are_the_ones_os_environ_gives(values: tuple[str | None, str | None, str | None]) -> None:
    saved = {name: os.environ.get(name) for name in SECRET_ENV_VARS}
    try:
        for name, value in zip(SECRET_ENV_VARS, values):
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        # by hand: the variables set to 4 characters or more, in SECRET_ENV_VARS order
        expected = tuple(value for value in values if value is not None and len(value) >= 4)
        assert redact.env_secrets() == expected == _through_the_mapping()
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def test_a_key_set_or_removed_a_moment_ago_is_seen_by_the_next_mask(monkeypatch: pytest.MonkeyPatch) -> None:
    text = "server said: zebra-crossing-42 is not valid"
    for name in SECRET_ENV_VARS:
        monkeypatch.delenv(name, raising=False)
    assert textsafe.terminal(text) == text  # no key set: nothing here is credential-shaped
    monkeypatch.setenv("EXTRACTBENCH_JUDGE_API_KEY", "zebra-crossing-42")
    assert textsafe.terminal(text) == "server said: *** is not valid"
    monkeypatch.delenv("EXTRACTBENCH_JUDGE_API_KEY")
    assert textsafe.terminal(text) == text


def test_a_replaced_os_environ_is_asked_as_a_mapping(monkeypatch: pytest.MonkeyPatch) -> None:
    # a plain dict standing in for os.environ (as some embedding hosts do): no CPython table to read
    monkeypatch.setattr(os, "environ", {"OPENAI_API_KEY": "abcdef", "EXTRACTBENCH_API_KEY": "abc"})
    assert redact.env_secrets() == ("abcdef",)  # the 3-character key is too short to mask by
