"""One exception hierarchy: every exception class the package defines derives from ExtractbenchError, keeps the
builtin base its callers catch, and is named once (no two classes of one name)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections import Counter

import pytest

import pytest_extractbench
from pytest_extractbench import ExtractbenchError, UsageProblem
from pytest_extractbench.core import errors
from pytest_extractbench.scoring.budget import ScoringTimeout


def _exception_classes() -> list[type[BaseException]]:
    found: dict[str, type[BaseException]] = {}
    for info in pkgutil.walk_packages(pytest_extractbench.__path__, "pytest_extractbench."):
        if info.name.endswith("__main__"):  # runs the CLI
            continue
        module = importlib.import_module(info.name)
        for _, obj in inspect.getmembers(module, inspect.isclass):
            if issubclass(obj, BaseException) and obj.__module__ == module.__name__:
                found[f"{obj.__module__}.{obj.__qualname__}"] = obj
    return list(found.values())


CLASSES = _exception_classes()


def test_the_walk_finds_the_package_s_exceptions() -> None:
    names = {cls.__name__ for cls in CLASSES}
    assert {"UsageProblem", "RunDirError", "JsonInputError", "JudgeError", "EvalSchemaWarning"} <= names
    assert len(CLASSES) >= 30


@pytest.mark.parametrize("cls", [c for c in CLASSES if issubclass(c, Exception)], ids=lambda c: c.__qualname__)
def test_every_exception_derives_from_extractbench_error(cls: type[Exception]) -> None:
    assert issubclass(cls, ExtractbenchError), f"{cls.__module__}.{cls.__qualname__}: {cls.__mro__}"


def test_only_the_scoring_deadline_stays_outside_exception() -> None:
    """ScoringTimeout is a BaseException so that no `except Exception` in a comparator swallows the deadline."""
    assert [c for c in CLASSES if not issubclass(c, Exception)] == [ScoringTimeout]
    assert "ScoringTimeout" in errors.__doc__


def test_no_two_exception_classes_share_a_name() -> None:
    twice = [name for name, n in Counter(c.__name__ for c in CLASSES).items() if n > 1]
    assert not twice


def test_every_exception_is_in_the_documented_tree() -> None:
    missing = [c.__name__ for c in CLASSES if not c.__name__.startswith("_") and c.__name__ not in errors.__doc__]
    assert not missing


@pytest.mark.parametrize(
    ("module", "name", "builtin"),
    [
        ("pytest_extractbench.core.jsonio", "JsonInputError", ValueError),
        ("pytest_extractbench.core.userfiles", "NotAFile", OSError),
        ("pytest_extractbench.live.backends.llama_models", "ModelNotFoundError", LookupError),
        ("pytest_extractbench.live.judge", "JudgeError", RuntimeError),
        ("pytest_extractbench.scoring.rules", "EvalSchemaWarning", UserWarning),
        ("pytest_extractbench.core.rundir", "RunDirError", UsageProblem),
    ],
)
def test_callers_that_catch_the_builtin_base_still_do(module: str, name: str, builtin: type[BaseException]) -> None:
    cls = getattr(importlib.import_module(module), name)
    assert issubclass(cls, builtin) and issubclass(cls, ExtractbenchError)
    with pytest.raises(builtin):
        raise cls("x") if name != "NotAFile" else cls(2, "x")
