"""Comparators and transforms from the plugin hooks, registered for the run (every process)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..run.rules import configure_rules

if TYPE_CHECKING:
    import pytest

    from ..config.settings import Settings


def configure(config: pytest.Config, settings: Settings) -> None:
    """Register hook-provided rules and check the options that name them."""
    configure_rules(
        settings,
        config.hook.pytest_extractbench_comparators(config=config),
        config.hook.pytest_extractbench_transforms(config=config),
    )
