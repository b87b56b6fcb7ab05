"""How mutate.py runs a mutant's tests: the copies of the project, and three runners.

- ``warm`` (default): the warm server (warmserver.py) has the package imported and the tests collected once; a
  forked child swaps in the mutated functions' code and runs the tests' items. Mutants on code that ran at import
  go to a fork server (``cold``), which imports the package afresh from the mutated file.
- ``fork``: every mutant in the fork server (forkserver.py): pytest and the libraries imported once, the package
  and the test files imported and collected again by each child.
- ``subprocess``: one ``python -m pytest`` per mutant.

Every runner judges a mutant the same way: ``killed`` when a test fails on it (or it runs past its timeout twice),
``survived`` when every test passes, ``error`` when the run could not judge it (never counted as killed).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "pytest_extractbench"
# what a copy needs for the unit tests to run as they do in the repository
COPIED = (PACKAGE, "tests", "fixtures", "benchmarks", "docs", "ci", ".ci", "conftest.py", "pyproject.toml", "README.md")
# --tb=line: a failure's report is one line (a long traceback costs more than most tests)
PYTEST_FLAGS = ["-q", "-x", "-p", "no:cacheprovider", "--no-header", "-p", "no:randomly", "--tb=line"]
WARM_FLAGS = [f for f in PYTEST_FLAGS if f != "-x"]  # the warm child stops at the first failure itself
# the hypothesis profile of every mutant run (tests/conftest.py): the ci search, derandomized (a verdict does not
# depend on the run), no example database shared between mutants, no shrinking (a failure is a kill already)
HYPOTHESIS_PROFILE = "mutation"
# the coverage run only maps lines to tests: the same derandomized search cut to the dev profile's 40 examples (at
# 500 the property tests were most of its time); the verdicts keep HYPOTHESIS_PROFILE
COVERAGE_PROFILE = "mutation-coverage"
TIMEOUT_FACTOR = 10
MIN_TIMEOUT = 3.0


@dataclass
class Verdict:
    status: str  # killed | survived | timeout | error
    seconds: float
    path: str  # warm | cold | fork | subprocess: where it was judged
    killer: str | None = None
    detail: str = ""


def _from_rc(rc: int, seconds: float, path: str) -> Verdict:
    """A pytest exit code as a verdict, for tests that pass unmutated: 1 (a test failed) kills, and so do 2, 4 and 5
    (the run stopped before its tests: the mutant breaks an import of the package, a conftest's or the collection);
    0 survives; anything else (pytest's internal error, a crashed child) judges nothing."""
    if rc == 1:
        return Verdict("killed", seconds, path, detail="a test failed")
    if rc in (2, 4, 5):
        return Verdict("killed", seconds, path, detail=f"pytest exit {rc}: the mutant stops the run before its tests")
    if rc == 0:
        return Verdict("survived", seconds, path)
    return Verdict("error", seconds, path, detail=f"pytest exit {rc}")


def make_copy(parent: Path, name: str) -> Path:
    target = parent / name
    target.mkdir()
    for item in COPIED:
        src = ROOT / item
        if src.is_dir():
            shutil.copytree(
                src, target / item, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".hypothesis", "_compiled")
            )
        elif src.exists():
            shutil.copy2(src, target / item)
    return target


def env_for(copy: Path, bytecode: bool = False, profile: str = HYPOTHESIS_PROFILE) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(copy)
    # the property tests judge mutants with the thorough search, whatever the developer's inner-loop profile
    env["EXTRACTBENCH_HYPOTHESIS_PROFILE"] = profile
    # mutants are Python code: a compiled scoring build (scoring/compiled.py) would run instead of them
    env["EXTRACTBENCH_PURE"] = "1"
    if bytecode:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
    else:
        env["PYTHONDONTWRITEBYTECODE"] = "1"  # a mutant written in the same second must not reuse a stale .pyc
    env.pop("COVERAGE_PROCESS_START", None)
    return env


def drop_bytecode(path: Path) -> None:
    """Removes the cached bytecode of one source file, so the next import compiles what is on disk."""
    for pyc in (path.parent / "__pycache__").glob(f"{path.stem}.*.pyc"):
        pyc.unlink(missing_ok=True)


def timeout_for(test_seconds: float, overhead: float, patience: float) -> float:
    """A run's deadline: TIMEOUT_FACTOR times its tests' measured time and the runner's start-up, at least
    MIN_TIMEOUT; ``patience`` stretches it for the second try of a run that timed out."""
    return patience * max(MIN_TIMEOUT, TIMEOUT_FACTOR * (test_seconds + overhead))


class _Server:
    """A server process in the copy that answers one JSON line per JSON request line."""

    log = ".mutation-server.log"

    def __init__(self, copy: Path, cmd: list[str]) -> None:
        self.copy = copy
        self.proc = subprocess.Popen(
            cmd,
            cwd=copy,
            env=env_for(copy, bytecode=True),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )

    def read(self) -> dict:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            log = self.copy / self.log
            tail = log.read_text(errors="replace")[-3000:] if log.exists() else ""
            sys.exit(f"{self.log}: the server stopped (exit {self.proc.poll()}):\n{tail}")
        answer = json.loads(line)
        if "error" in answer:
            sys.exit(answer["error"])
        return answer

    def ask(self, request: dict) -> dict:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        return self.read()

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()  # the server kills its running child's group, then exits
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, 9)

    def close(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.kill()


class SubprocessRunner:
    """One ``python -m pytest`` per mutant: slow (pytest and numpy/scipy start up every time), simple."""

    name = "subprocess"

    def __init__(self, copy: Path, modules: list[str], tests: list[str]) -> None:
        self.copy = copy
        self.overhead = 3.0

    splits_baseline = False  # nothing to warm

    def warm(self, nodeids: list[str]) -> tuple[list[str], dict[str, float], list[str]]:
        return [], {}, []

    def judge(
        self, module: str, source: str, tests: list[str], test_seconds: float, at_import: bool, patience: float = 1.0
    ) -> Verdict:
        args_file = self.copy / ".mutation-args"
        args_file.write_text("\n".join(tests) + "\n")
        cmd = [sys.executable, "-m", "pytest", *PYTEST_FLAGS, f"@{args_file}"]
        start = time.monotonic()
        proc = subprocess.Popen(
            cmd,
            cwd=self.copy,
            env=env_for(self.copy),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        try:
            rc = proc.wait(timeout=timeout_for(test_seconds, self.overhead, patience))
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)  # the run we started, and its children
            proc.wait()
            return Verdict("timeout", time.monotonic() - start, self.name)
        return _from_rc(rc, time.monotonic() - start, self.name)

    def close(self) -> None:
        pass

    kill = close


class ForkRunner:
    """A fork server (``forkserver.py``) started in the copy: pytest, numpy, scipy and the other test
    dependencies are imported once; each run is a forked child that imports the package from the copy (the
    mutant on disk) and runs ``pytest.main`` in process. The server kills a child that runs past its timeout."""

    name = "fork"

    def __init__(self, copy: Path, modules: list[str], tests: list[str], imports: list[str] | None = None) -> None:
        self.server = _Server(copy, [sys.executable, str(copy / "tests" / "mutation" / "forkserver.py")])
        self.overhead = 1.5
        if imports is not None:  # the libraries the warm server loaded: no warm-up run needed
            self.server.ask({"op": "import", "modules": imports})

    splits_baseline = False  # each fork server imports what its own warm-up run loaded

    def warm(self, nodeids: list[str]) -> tuple[list[str], dict[str, float], list[str]]:
        """Runs the tests once unmutated (the server then imports what they needed); the ones that fail."""
        answer = self.server.ask({"op": "warm", "tests": nodeids, "flags": WARM_FLAGS})
        print(
            f"  fork server warm: {len(nodeids)} tests in {answer['seconds']:.0f}s, "
            f"{answer['imported']} modules imported once",
            flush=True,
        )
        return answer["failed"], {}, []

    def judge(
        self, module: str, source: str, tests: list[str], test_seconds: float, at_import: bool, patience: float = 1.0
    ) -> Verdict:
        timeout = timeout_for(test_seconds, self.overhead, patience)
        answer = self.server.ask({"op": "run", "tests": tests, "flags": PYTEST_FLAGS, "timeout": timeout})
        if answer["status"] == "timeout":
            return Verdict("timeout", answer["seconds"], self.name, detail=f"over {timeout:.1f}s")
        return _from_rc(answer["rc"], answer["seconds"], self.name)

    def kill(self) -> None:
        self.server.kill()

    def close(self) -> None:
        self.server.close()


class WarmRunner:
    """The warm server (warmserver.py), with a fork server beside it for the mutants it cannot patch (``cold``):
    started on the first such mutant, importing the libraries the warm server has loaded."""

    name = "warm"

    def __init__(self, copy: Path, modules: list[str], tests: list[str]) -> None:
        self.copy, self.modules = copy, modules
        setup = copy / ".mutation-warm.json"
        setup.write_text(json.dumps({"tests": tests, "flags": WARM_FLAGS, "targets": modules}))
        self.server = _Server(copy, [sys.executable, str(copy / "tests" / "mutation" / "warmserver.py"), str(setup)])
        self.server.log = ".mutation-warm.log"
        hello = self.server.read()
        if hello["missing"]:
            print(f"  the warm server did not collect {len(hello['missing'])} test(s): {hello['missing'][:5]}")
        self.imports: list[str] = hello["modules"]
        self.cold: ForkRunner | None = None
        self.overhead = 0.3

    # with several jobs each server runs a share of the baseline (the copies are the same), then adopts the
    # libraries the others' shares loaded
    splits_baseline = True

    def warm(self, nodeids: list[str]) -> tuple[list[str], dict[str, float], list[str]]:
        """Every test once unmutated in a child: the ones that fail, each one's time outside coverage, and the
        libraries they loaded."""
        answer = self.server.ask({"op": "baseline", "tests": nodeids})
        print(
            f"  warm server baseline: {len(nodeids)} tests in {answer['seconds']:.0f}s; {answer['imported']} modules "
            "they imported lazily now imported once",
            flush=True,
        )
        self.imports = sorted(set(self.imports) | set(answer["loaded"]))
        return answer["failed"], answer["durations"], answer["loaded"]

    def adopt(self, modules: list[str]) -> None:
        """Imports the libraries another server's share of the baseline loaded."""
        self.server.ask({"op": "import", "modules": modules})
        self.imports = sorted(set(self.imports) | set(modules))

    def judge(
        self, module: str, source: str, tests: list[str], test_seconds: float, at_import: bool, patience: float = 1.0
    ) -> Verdict:
        detail = "ran at import (coverage)"
        if not at_import:
            timeout = timeout_for(test_seconds, self.overhead, patience)
            answer = self.server.ask(
                {"op": "run", "module": module, "source": source, "tests": tests, "timeout": timeout}
            )
            if answer["status"] != "cold":
                return Verdict(answer["status"], answer["seconds"], "warm", answer["killer"], answer["detail"])
            detail = answer["detail"]
        if self.cold is None:
            self.cold = ForkRunner(self.copy, self.modules, tests, imports=self.imports)
        verdict = self.cold.judge(module, source, tests, test_seconds, at_import, patience)
        verdict.path, verdict.detail = "cold", f"{detail}; {verdict.detail}".strip("; ")
        return verdict

    def kill(self) -> None:
        self.server.kill()
        if self.cold is not None:
            self.cold.kill()

    def close(self) -> None:
        self.server.close()
        if self.cold is not None:
            self.cold.close()


RUNNERS = {"warm": WarmRunner, "fork": ForkRunner, "subprocess": SubprocessRunner}
