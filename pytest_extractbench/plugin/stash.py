"""Where the pytest config keeps the run's session: a key the entry point can read without importing the run."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from .session import BenchSession  # noqa: F401 - named in the StashKey below
    from .signals import TerminateAsInterrupt  # noqa: F401 - named in the StashKey below

BENCH_KEY = pytest.StashKey["BenchSession"]()
TERMINATE_KEY = pytest.StashKey["TerminateAsInterrupt"]()  # the SIGTERM handler, restored at unconfigure
