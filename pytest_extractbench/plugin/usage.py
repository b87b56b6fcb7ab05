"""A run's usage problems as pytest's usage errors: one conversion for every hook and item."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from ..core import textsafe
from ..core.errors import UsageProblem


@contextmanager
def safe_usage_errors() -> Iterator[None]:
    """pytest prints a UsageError as it is; ours quote file names, ids and config values: make them safe."""
    try:
        yield
    except (pytest.UsageError, UsageProblem) as exc:
        raise pytest.UsageError(textsafe.text_lines(str(exc))) from None
