"""Hooks other plugins and conftest.py files implement to extend pytest-extractbench.

See pytest's "optionally using hooks from 3rd-party plugins" for how to
implement them without a hard dependency.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from .record import SampleRecord
    from .responses import OutputSource
    from .session import BenchSession


@pytest.hookspec(firstresult=True)
def pytest_extractbench_make_source(config: pytest.Config, bench: BenchSession) -> OutputSource | None:
    """Return the object that produces model outputs (predictions file, live server, or your own)."""


@pytest.hookspec()
def pytest_extractbench_sample_scored(config: pytest.Config, record: SampleRecord) -> None:
    """Called in the process that ran the item, right after one (model, sample) was scored."""


@pytest.hookspec()
def pytest_extractbench_run_finished(config: pytest.Config, metrics: dict[str, Any]) -> None:
    """Called once on the controller with ``{model: metrics}`` after the run directory was written."""
