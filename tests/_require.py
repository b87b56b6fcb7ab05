"""Requirements that skip a test on a developer's machine but fail it under CI (the environment variable CI set).

The project's CI (`.ci/run`, which sets CI=true) installs the dev and local extras and has the shared data next to
the clone; a test that skipped there for want of them would pass the build without having run.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType
from typing import NoReturn

import pytest


def under_ci() -> bool:
    return bool(os.environ.get("CI"))


def _missing(why: str) -> NoReturn:
    if under_ci():
        pytest.fail(f"{why} (CI is set: a missing requirement fails instead of skipping)", pytrace=False)
    pytest.skip(why, allow_module_level=True)


def require_or_skip(condition: bool, why: str) -> None:
    """Go on when ``condition`` holds; else skip, or fail under CI."""
    if not condition:
        _missing(why)


def import_or_skip(module: str, why: str | None = None) -> ModuleType:
    """``pytest.importorskip`` that fails under CI instead of skipping (usable at module level too)."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        _missing(f"{why or f'{module} is not installed'}: {exc}")
