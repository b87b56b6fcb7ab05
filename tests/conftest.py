"""Fixtures shared by the unit and integration tests: hypothesis profiles, the chart switch, the ``run`` helper of
the pytester runs, the semantic cache and the fault server."""

from __future__ import annotations

import os
import site
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import _pytest.pytester as _pytester
import llmgroup
import pytest

import pytest_extractbench.run.api  # noqa: F401  (loaded once, before any in-process run: see below)

# pytester's in-process runs forget the modules first imported inside them. For installed libraries that breaks
# later tests of the same process: numpy's C core cannot be loaded twice, and an HTTP stack imported at a run's
# first request (httpcore, h11, anyio's backend) comes back as a second copy whose exceptions the first copy's
# handlers miss (a dropped connection then read as a bad response). So installed libraries stay loaded across
# in-process runs; the package and the tests' own modules are still forgotten, as pytester intends.
_SITE_DIRS = tuple(str(Path(p)) for p in {*site.getsitepackages(), site.getusersitepackages()} if p)


def _installed(name: str) -> bool:
    where = getattr(sys.modules.get(name), "__file__", None) or ""
    return where.startswith(_SITE_DIRS) and not name.startswith("pytest_extractbench")


class _KeepInstalled(_pytester.SysModulesSnapshot):
    def __init__(self, preserve: Callable[[str], bool] | None = None) -> None:
        super().__init__(preserve=lambda name: _installed(name) or bool(preserve and preserve(name)))


_pytester.SysModulesSnapshot = _KeepInstalled  # type: ignore[misc]

if TYPE_CHECKING:
    from benchrun import BenchRun
    from faultserver import FaultServer

# Hypothesis profiles, chosen by EXTRACTBENCH_HYPOTHESIS_PROFILE; CI (env CI set) defaults to the thorough one.
# "ci" searches at least as far as any property test ever asked for; "dev" keeps the inner loop short.
# This file is loaded by the README's first command too (`pytest --extractbench` in the checkout, with only the
# `local` extra installed): hypothesis, a dev dependency, is optional here.
try:
    from hypothesis import HealthCheck, Phase, settings
except ImportError:
    pass
else:
    _PATIENT = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])
    settings.register_profile("ci", max_examples=500, **_PATIENT)
    settings.register_profile("dev", max_examples=40, **_PATIENT)
    # mutation runs (tests/mutation): the ci search, derandomized so that a verdict does not depend on the run, no
    # example database carried from one mutant to the next, no shrinking (the first failure kills the mutant)
    settings.register_profile(
        "mutation",
        settings.get_profile("ci"),
        derandomize=True,
        database=None,
        phases=[Phase.explicit, Phase.generate, Phase.target],
    )
    # the coverage run of a mutation run (which tests run which line): the dev search, derandomized, no database;
    # only the map comes from it, every verdict is the mutation profile's
    settings.register_profile("mutation-coverage", settings.get_profile("mutation"), max_examples=40)
    settings.load_profile(
        os.environ.get("EXTRACTBENCH_HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev")
    )


# Under ``-n N --dist loadgroup`` the llm tests run on one worker: the session's llama-servers
# (tests/integration/conftest.py) start once, and two model servers never compete for the same cores (llmgroup.py
# says why the xdist_group mark alone no longer does it).
def pytest_configure(config: pytest.Config) -> None:
    llmgroup.start(config)


def pytest_unconfigure(config: pytest.Config) -> None:
    llmgroup.finish(config)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    llm = [item for item in items if item.get_closest_marker("llm") is not None]
    for item in llm:
        item.add_marker(pytest.mark.xdist_group(llmgroup.GROUP))
    llmgroup.record(config, (item.nodeid for item in llm))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    return llmgroup.scheduler(config, log) if config.getvalue("dist") == "loadgroup" else None


@pytest.fixture
def emptied_cache() -> Iterator[Callable[[dict[Any, Any]], None]]:
    """``emptied_cache(cache)`` empties a module's cache dict for the test (to count its entries from none); what it
    held is put back afterwards, so the other tests find it as they left it."""
    saved: list[tuple[dict[Any, Any], dict[Any, Any]]] = []

    def empty(cache: dict[Any, Any]) -> None:
        saved.append((cache, dict(cache)))
        cache.clear()

    yield empty
    for cache, entries in reversed(saved):
        cache.clear()
        cache.update(entries)


@pytest.fixture(autouse=True)
def _charts_only_where_tested(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs draw report.html's charts only in tests marked ``charts`` (the others need no figure, only its time).
    The environment reaches in-process and subprocess pytester runs alike."""
    if request.node.get_closest_marker("charts") is None:
        monkeypatch.setenv("EXTRACTBENCH_CHARTS", "off")


@pytest.fixture(autouse=True)
def _no_job_summary(monkeypatch: pytest.MonkeyPatch) -> None:
    """A test suite run in GitHub Actions must not append every pytester run's summary.md to the real job summary;
    the tests of that append set the variable themselves."""
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)


@pytest.fixture
def run(pytester: pytest.Pytester) -> BenchRun:
    """The benchmark run helper of the plugin tests (tests/benchrun.py)."""
    from benchrun import BenchRun

    return BenchRun(pytester)


@pytest.fixture
def semantic_cache_dir(tmp_path: Path) -> Iterator[Path]:
    """A fresh persistent cache for embeddings and judge verdicts, forgotten afterwards; scoring asks the live
    judge and embeddings clients (as a run does)."""
    from pytest_extractbench.live import scoring_backends, verdict_cache

    scoring_backends.install()
    verdict_cache.set_cache_dir(tmp_path)
    verdict_cache.clear_memory()
    yield tmp_path
    verdict_cache.set_cache_dir(None)
    verdict_cache.clear_memory()


@pytest.fixture
def fault_server() -> Iterator[FaultServer]:
    """A running scriptable OpenAI-compatible server on loopback (see tests/faultserver.py).

    Script it with ``fault_server.enqueue(Fault...)``, ``.plan = callable`` or ``.default = Fault...``;
    ``.stop()`` / ``.start()`` kill and restart it on the same port.
    """
    from faultserver import FaultServer

    with FaultServer() as server:
        yield server
