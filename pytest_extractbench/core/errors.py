"""The one error a run raises when it cannot start or go on as asked.

Its message is for the user as it is (it names the option, file or sample); the pytest adapter shows it
as a usage error, :func:`pytest_extractbench.evaluate` lets it propagate.
"""

from __future__ import annotations


class UsageProblem(Exception):
    """The run was asked for something it cannot do: a bad option, a missing file, no model."""


class ExtractBenchWarning(UserWarning):
    """A problem with the dataset or predictions that did not stop the run."""
