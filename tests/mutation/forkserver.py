"""The fork server of mutate.py: pytest and the test dependencies imported once, one forked child per run.

Started by mutate.py as ``python tests/mutation/forkserver.py`` with its working directory and PYTHONPATH at a
copy of the project. It never imports the package under test itself: each run forks a child that imports the
package (and so reads whatever mutant mutate.py has just written over the copy) and runs ``pytest.main`` in
process. The server only pays for the third-party imports (pytest and its plugins, numpy, scipy, jsonschema,
hypothesis...) once, at warm-up.

Protocol: one JSON request a line on stdin, one JSON answer a line on the stdout the server was started with
(its own fd 1 and 2, and every child's, go to a log file in the copy).

- ``{"op": "warm", "tests": [...], "flags": [...]}``: runs the tests once unmutated in a child (no ``-x``), then
  imports in the server every module that child had loaded and that does not come from the copy (the package,
  the tests and their helpers are left to the children). Answers ``{"rc", "failed", "seconds", "imported"}``.
- ``{"op": "import", "modules": [...]}``: imports those modules in the server (a warm-up without a test run, when
  another server knows what the tests load). Answers ``{"imported"}``.
- ``{"op": "run", "tests": [...], "flags": [...], "timeout": seconds | null}``: one child runs the tests.
  Answers ``{"status": "passed" | "failed" | "timeout", "rc", "seconds"}``; on timeout the child's process
  group is killed.
"""

from __future__ import annotations

import importlib
import json
import os
import select
import signal
import sys
import time

COPY = os.getcwd()
LOG = os.path.join(COPY, ".mutation-server.log")
RUN_LOG = os.path.join(COPY, ".mutation-run.log")
# names the server must never import: they live in the copy and a child has to import them fresh
OWN = ("pytest_extractbench", "conftest", "tests", "faultserver", "benchmarks", "__main__", "__mp_main__")


def _from_copy(name: str, path: str | None) -> bool:
    if name.split(".")[0] in OWN:
        return True
    if not isinstance(path, str) or not os.path.isabs(path):  # some extension modules put a name there
        return False
    return os.path.realpath(path).startswith(os.path.realpath(COPY) + os.sep)


class _Failures:
    """A pytest plugin of the warm-up run: the node ids whose setup, call or teardown failed."""

    def __init__(self) -> None:
        self.failed: set[str] = set()

    def pytest_runtest_logreport(self, report) -> None:  # noqa: ANN001
        if report.failed:
            self.failed.add(report.nodeid)


def _child(tests: list[str], flags: list[str], report_fd: int | None, write_bytecode: bool) -> None:
    """Runs in the forked child; never returns."""
    rc = 70
    try:
        os.setpgid(0, 0)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)  # stdin is the server's request pipe
        out = os.open(RUN_LOG, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)  # the last run's output
        os.dup2(out, 1)
        os.dup2(out, 2)
        sys.dont_write_bytecode = not write_bytecode
        if not write_bytecode:  # a mutant must never leave a .pyc behind, nor its subprocesses
            os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
        import pytest

        plugins = []
        failures = _Failures()
        if report_fd is not None:
            plugins.append(failures)
        rc = int(pytest.main([*flags, *tests], plugins=plugins))
        if report_fd is not None:
            modules = [
                name
                for name, mod in list(sys.modules.items())
                if mod is not None and not _from_copy(name, getattr(mod, "__file__", None))
            ]
            with os.fdopen(report_fd, "w") as out:
                json.dump({"rc": rc, "failed": sorted(failures.failed), "modules": modules}, out)
    except BaseException as exc:  # noqa: BLE001 - anything the child raises is a failed run
        try:
            print(f"fork server child: {exc!r}", file=sys.stderr)
        except Exception:  # noqa: BLE001
            pass
        rc = rc or 70
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except Exception:  # noqa: BLE001
            pass
        os._exit(rc if 0 <= rc < 256 else 70)


def _wait(pid: int, timeout: float | None) -> tuple[int | None, bool]:
    """(exit code, timed out): waits for the child, killing its process group after ``timeout`` seconds."""
    deadline = None if timeout is None else time.monotonic() + timeout
    pidfd = None
    if hasattr(os, "pidfd_open"):
        try:
            pidfd = os.pidfd_open(pid)
        except OSError:
            pidfd = None
    try:
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                return os.waitstatus_to_exitcode(status), False
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                try:
                    os.killpg(pid, signal.SIGKILL)  # the child and what it started in its group
                except ProcessLookupError:
                    pass
                os.waitpid(pid, 0)
                return None, True
            if pidfd is not None:
                select.select([pidfd], [], [], left)
            else:
                time.sleep(0.005 if left is None else min(0.005, left))
    finally:
        if pidfd is not None:
            os.close(pidfd)


def _fork(tests: list[str], flags: list[str], report: bool, write_bytecode: bool, timeout: float | None) -> dict:
    read_fd = write_fd = None
    if report:
        read_fd, write_fd = os.pipe()
    start = time.monotonic()
    pid = os.fork()
    if pid == 0:
        if read_fd is not None:
            os.close(read_fd)
        _child(tests, flags, write_fd, write_bytecode)
    try:
        os.setpgid(pid, pid)
    except OSError:  # the child already did it, or has exited
        pass
    RUNNING[:] = [pid]
    payload = None
    if read_fd is not None:
        os.close(write_fd)
        chunks = []
        with os.fdopen(read_fd, "rb") as pipe:  # read to EOF first: a full pipe would block the child
            for chunk in iter(lambda: pipe.read(65536), b""):
                chunks.append(chunk)
        payload = json.loads(b"".join(chunks) or b"null")
    rc, timed_out = _wait(pid, timeout)
    RUNNING.clear()
    seconds = time.monotonic() - start
    if timed_out:
        return {"status": "timeout", "rc": -9, "seconds": seconds, "payload": payload}
    return {"status": "passed" if rc == 0 else "failed", "rc": rc, "seconds": seconds, "payload": payload}


def _import(names: list[str]) -> int:
    """Imports these modules in the server (those of the copy excepted); how many were new."""
    imported = 0
    for name in names:
        if name in sys.modules or name.split(".")[0] in OWN:
            continue
        try:
            importlib.import_module(name)
            imported += 1
        except BaseException:  # noqa: BLE001 - a module that cannot be imported alone is left to the children
            continue
    leaked = sorted(
        n
        for n, m in sys.modules.items()
        if n not in BEFORE
        and n not in ("__main__", "__mp_main__")
        and m is not None
        and _from_copy(n, getattr(m, "__file__", None))
    )
    if leaked:
        raise SystemExit(f"fork server: importing the libraries imported modules of the copy: {', '.join(leaked[:10])}")
    return imported


def _warm(request: dict) -> dict:
    start = time.monotonic()
    result = _fork(request["tests"], request["flags"], report=True, write_bytecode=True, timeout=None)
    payload = result["payload"] or {"rc": result["rc"], "failed": [], "modules": []}
    imported = _import(payload["modules"])
    return {"rc": payload["rc"], "failed": payload["failed"], "seconds": time.monotonic() - start, "imported": imported}


RUNNING: list[int] = []  # the child running now, if any


def _stop(*_: object) -> None:
    """SIGTERM: the running child's process group goes too."""
    for pid in RUNNING:
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
    os._exit(143)


BEFORE = frozenset(sys.modules)  # the server's own start-up (this script is __main__)


def main() -> None:
    sys.path[0] = COPY  # as `python -m pytest` run in the copy has it
    answers = os.fdopen(os.dup(1), "w", buffering=1)
    log = os.open(LOG, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(log, 1)
    os.dup2(log, 2)
    signal.signal(signal.SIGTERM, _stop)
    for line in sys.stdin:
        if not line.strip():
            continue
        request = json.loads(line)
        try:
            if request["op"] == "warm":
                answer = _warm(request)
            elif request["op"] == "import":
                answer = {"imported": _import(request["modules"])}
            elif request["op"] == "run":
                result = _fork(
                    request["tests"],
                    request["flags"],
                    report=False,
                    write_bytecode=False,
                    timeout=request.get("timeout"),
                )
                result.pop("payload", None)
                answer = result
            else:
                answer = {"error": f"unknown op {request['op']!r}"}
        except SystemExit as exc:
            answer = {"error": str(exc)}
        answers.write(json.dumps(answer) + "\n")


if __name__ == "__main__":
    main()
