"""Fixtures shared by the unit and integration tests: hypothesis profiles, the chart switch, the ``run`` helper of
the pytester runs, the semantic cache and the fault server."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Iterator

import pytest
from hypothesis import HealthCheck, settings

# pytester's in-process runs forget the modules first imported inside them, and numpy's C core cannot be
# loaded twice in one process: loading the run machinery here keeps every in-process benchmark run working.
import pytest_extractbench.run.api  # noqa: E402,F401

if TYPE_CHECKING:
    from faultserver import FaultServer

# Hypothesis profiles, chosen by EXTRACTBENCH_HYPOTHESIS_PROFILE; CI (env CI set) defaults to the thorough one.
# "ci" searches at least as far as any property test ever asked for; "dev" keeps the inner loop short.
_PATIENT = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci", max_examples=500, **_PATIENT)
settings.register_profile("dev", max_examples=40, **_PATIENT)
settings.load_profile(os.environ.get("EXTRACTBENCH_HYPOTHESIS_PROFILE") or ("ci" if os.environ.get("CI") else "dev"))


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Under ``-n N --dist loadgroup`` the llm tests run on one worker: the session's llama-servers
    (tests/integration/conftest.py) start once, and two model servers never compete for the same cores."""
    for item in items:
        if item.get_closest_marker("llm") is not None:
            item.add_marker(pytest.mark.xdist_group("llama-server"))


@pytest.fixture(autouse=True)
def _charts_only_where_tested(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Drawing report.html's charts is most of a small run's cost; runs draw them only in tests marked ``charts``.
    The environment reaches in-process and subprocess pytester runs alike."""
    if request.node.get_closest_marker("charts") is None:
        monkeypatch.setenv("EXTRACTBENCH_CHARTS", "off")


class BenchRun:
    """``pytest --extractbench ...`` inside a pytester directory, and the run directory's files afterwards.

    ``run(*args)`` runs in-process (fast: the imports are paid once); ``subprocess=True`` where process isolation
    is the point (a crash, signals, xdist workers, a fresh import state). ``out`` names the run directory
    (``--extractbench-output``, emptied first unless ``fresh=False``); ``out=None`` leaves the option out.
    """

    BASE = ("-p", "no:randomly", "--extractbench")

    def __init__(self, pytester: pytest.Pytester) -> None:
        self.pytester = pytester
        self.path = pytester.path

    def __call__(self, *args: str, out: str | None = "out", subprocess: bool = False,
                 fresh: bool = True) -> pytest.RunResult:  # fmt: skip
        argv = [*self.BASE, *args]
        if out is not None:
            if fresh:
                shutil.rmtree(self.path / out, ignore_errors=True)  # a run needs a new or empty directory
            argv += ["--extractbench-output", out]
        return self.pytester.runpytest_subprocess(*argv) if subprocess else self.pytester.runpytest(*argv)

    def write_jsonl(self, name: str, rows: Iterable[Any]) -> str:
        (self.path / name).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        return name

    def document(self, out: str = "out") -> dict[str, Any]:
        return json.loads((self.path / out / "metrics.json").read_text(encoding="utf-8"))

    def records(self, out: str = "out") -> dict[str, dict[str, Any]]:
        lines = (self.path / out / "samples.jsonl").read_text(encoding="utf-8").splitlines()
        return {row["sample_id"]: row for row in map(json.loads, lines)}


@pytest.fixture
def run(pytester: pytest.Pytester) -> BenchRun:
    """The benchmark run helper of the plugin tests (see :class:`BenchRun`)."""
    return BenchRun(pytester)


@pytest.fixture
def semantic_cache_dir(tmp_path: Path) -> Iterator[Path]:
    """A fresh persistent cache for embeddings and judge verdicts, forgotten afterwards."""
    from pytest_extractbench.scoring import semantic_cache

    semantic_cache.set_cache_dir(tmp_path)
    semantic_cache.clear_memory()
    yield tmp_path
    semantic_cache.set_cache_dir(None)
    semantic_cache.clear_memory()


@pytest.fixture
def fault_server() -> Iterator["FaultServer"]:
    """A running scriptable OpenAI-compatible server on loopback (see tests/faultserver.py).

    Script it with ``fault_server.enqueue(Fault...)``, ``.plan = callable`` or ``.default = Fault...``;
    ``.stop()`` / ``.start()`` kill and restart it on the same port.
    """
    from faultserver import FaultServer

    with FaultServer() as server:
        yield server
