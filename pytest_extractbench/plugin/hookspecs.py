"""Hooks other plugins and conftest.py files implement to extend pytest-extractbench.

See pytest's "optionally using hooks from 3rd-party plugins" for how to
implement them without a hard dependency.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from ..dataset.records import SampleRecord
    from ..dataset.responses import ModelResponse, OutputSource
    from ..run.context import RunContext


@pytest.hookspec(firstresult=True)
def pytest_extractbench_make_source(config: pytest.Config, context: RunContext) -> OutputSource | None:
    """Return the object that produces model outputs (predictions file, live server, or your own).

    ``context`` is the run's :class:`~pytest_extractbench.run.context.RunContext`: ``context.settings``,
    ``context.dataset``, ``context.models()``, ``context.run_dir``; ``context.default_source()`` is the
    built-in choice (recorded predictions, a replayed journal or the live pipeline). The source needs
    ``response(model, sample) -> ModelResponse``, ``prepare(work)`` and ``close()``.
    """


@pytest.hookspec()
def pytest_extractbench_sample_scored(config: pytest.Config, record: SampleRecord) -> None:
    """Called in the process that ran the item, right after one (model, sample) was scored.

    ``record`` is a :class:`~pytest_extractbench.dataset.records.SampleRecord` on the extraction track and a
    :class:`~pytest_extractbench.dataset.records.TrackRecord` (``track``, ``result``) on the others; both have
    ``model``, ``sample_id``, ``passed``, ``failure``, ``response`` and ``to_dict()``.
    """


@pytest.hookspec()
def pytest_extractbench_run_finished(config: pytest.Config, metrics: dict[str, Any]) -> None:
    """Called once on the controller with ``{model: metrics}`` after the run directory was written.

    On a non-extraction track each model's metrics hold ``track`` and the track's section
    (``metrics[model][metrics[model]["track"]]``). Read it, do not change it: it shares its parts with the
    run's result (the terminal summary and the Python API read that after the hook).
    """


@pytest.hookspec()
def pytest_extractbench_comparators(config: pytest.Config) -> dict[str, Any] | None:
    """Return ``{name: comparator}`` to use in ``x-eval-compare``.

    A comparator is ``fn(expected, predicted, params, options) -> score in [0, 1]``, or a dict of
    :func:`pytest_extractbench.scoring.register_comparator` arguments (``{"fn": ..., "batch": True}``).
    Called in every process (xdist workers too) when the benchmark is configured.
    """


@pytest.hookspec()
def pytest_extractbench_transforms(config: pytest.Config) -> dict[str, Any] | None:
    """Return ``{name: transform}`` to use in ``x-eval-transform``; a transform is ``fn(value, params) -> value``."""


# --- observability ---


@pytest.hookspec()
def pytest_extractbench_request_done(
    config: pytest.Config, model: str, sample_id: str, response: ModelResponse
) -> None:
    """Called in the process that runs the item, once per model response the item receives.

    Live runs: one call per request (per run with ``--extractbench-repeats``), after retries;
    ``response.error_class`` says why there is no content. Offline runs: one call per
    predictions row used. ``response.latency_s``, ``usage``, ``started_at``/``finished_at``
    (epoch seconds) and ``cached`` describe the request. The order of the three hooks for one
    item is ``request_done`` (once per run), then ``sample_scored``; ``run_finished`` comes once
    at the end on the controller. ``--extractbench-otel`` implements all three.
    """
