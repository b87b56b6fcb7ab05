"""The warm server of mutate.py: the package imported and the tests collected once; each mutant runs in a forked
child that swaps the mutated functions' code objects and runs the covering tests' items.

Started by mutate.py as ``python tests/mutation/warmserver.py SETUP.json`` with its working directory and PYTHONPATH
at a copy of the project. SETUP.json holds ``tests`` (node ids), ``flags`` (pytest arguments) and ``targets`` (the
mutated modules' paths). The server runs ``pytest.main`` on those tests; its ``pytest_runtestloop`` never runs
them itself: it serves requests until its input closes.

A mutant is patched, not imported: the mutated module is compiled and its tree of code objects compared with the
original's. When only function bodies differ, the child assigns the mutated code to every live function whose
code is the original (functions defined at import, methods, closures made at import; closures made later come
from their patched outer function). When anything that ran at import differs (a module-level or class-level
statement, a default value, a decorator) or a changed function has no live instance to patch, the answer is
``cold``: mutate.py then runs that mutant in the fork server, which imports the package afresh from the mutated
file. The server never runs a test in its own process, so no cache or module state holds a result the original
code computed.

Protocol: one JSON request a line on stdin, one JSON answer a line on the stdout the server was started with; the server's own fd 1 and 2 and its children's go to
log files in the copy. The first answer, unasked, is ``{"ready": ..., "collected", "missing", "modules"}``.

- ``{"op": "baseline", "tests": [...]}``: one child runs the tests unmutated, every one of them; the server then
  imports the libraries the child loaded. Answers ``{"failed": [...], "durations": {nodeid: seconds}, "seconds",
  "imported", "loaded": [module names]}``.
- ``{"op": "import", "modules": [...]}``: imports those libraries (what another server's baseline loaded, when the
  baseline was split between servers). Answers ``{"imported"}``.
- ``{"op": "run", "module": path, "source": text, "tests": [...], "timeout": s}``: one child runs the tests
  with the module's functions patched to ``source``, stopping at the first failing test. Answers
  ``{"status": "killed" | "survived" | "timeout" | "cold" | "error", "killer", "seconds", "detail"}``.
"""

from __future__ import annotations

import gc
import importlib
import json
import os
import select
import signal
import sys
import time
import types
from typing import Any

import pytest

COPY = os.getcwd()
LOG = os.path.join(COPY, ".mutation-warm.log")
RUN_LOG = os.path.join(COPY, ".mutation-warm-run.log")
CO_OPTIMIZED = 0x1  # set on function and comprehension code; a class or module body lacks it
COMPREHENSIONS = frozenset({"<listcomp>", "<setcomp>", "<dictcomp>", "<genexpr>"})
OWN = ("pytest_extractbench", "conftest", "tests", "faultserver", "benchmarks", "__main__", "__mp_main__")


class Cold(Exception):
    """The mutant changes code that ran at import, or code with nothing live to patch."""


def _children(code: types.CodeType) -> list[types.CodeType]:
    return [c for c in code.co_consts if isinstance(c, types.CodeType)]


def _shallow(code: types.CodeType) -> types.CodeType:
    """The code with its nested code objects and its position table blanked: equal for two codes that differ only
    inside those, or in columns (a ``def`` statement's position spans its body's last line, which a mutant there
    lengthens; the mutants keep every line number, so lines need no comparing)."""
    consts = tuple(None if isinstance(c, types.CodeType) else c for c in code.co_consts)
    return code.replace(co_consts=consts, co_linetable=b"")


def _kind(code: types.CodeType) -> str:
    if code.co_name in COMPREHENSIONS:
        return "comprehension"
    return "function" if code.co_flags & CO_OPTIMIZED else "class"


def plan(original: types.CodeType, mutated: types.CodeType, live: dict[Any, list[Any]]) -> list[tuple[Any, Any]]:
    """The (original code, mutated code) pairs whose live functions take the mutated code; raises Cold."""
    pairs: list[tuple[types.CodeType, types.CodeType]] = []

    def walk(o: types.CodeType, m: types.CodeType, at_import: bool, patched_above: bool) -> None:
        kind = _kind(o)
        runs_at_import = at_import and kind != "function"
        differs = o != m
        has_live = kind == "function" and bool(live.get(o))
        if o.co_name != m.co_name or len(_children(o)) != len(_children(m)):
            # a mutant that drops a nested function or comprehension (`return all(...)` -> `return None`): fine in
            # a function patched whole, whose nested code is made afresh from its constants at each call
            if not (has_live and not runs_at_import and o.co_name == m.co_name):
                raise Cold(f"the code of {o.co_qualname} changed shape")
            pairs.append((o, m))
            return
        if differs and has_live:
            pairs.append((o, m))
        if _shallow(o) != _shallow(m):
            if runs_at_import:
                raise Cold(f"{o.co_qualname} runs at import")
            if not (has_live or patched_above):
                raise Cold(f"{o.co_qualname} has no live function to patch")
        for oc, mc in zip(_children(o), _children(m), strict=True):
            walk(oc, mc, runs_at_import, patched_above or (differs and has_live))

    walk(original, mutated, True, False)
    return pairs


def _reap(pid: int, patience: float) -> int | None:
    """The child's wait status once it has exited, or None after ``patience`` seconds."""
    deadline = time.monotonic() + patience
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        time.sleep(0.001)
    return None


def _from_copy(name: str, path: str | None) -> bool:
    if name.split(".")[0] in OWN:
        return True
    if not isinstance(path, str) or not os.path.isabs(path):
        return False
    return os.path.realpath(path).startswith(os.path.realpath(COPY) + os.sep)


def _import_libraries(names: list[str]) -> int:
    """Imports the libraries the tests import lazily (scipy.stats' distributions...) here once rather than in every
    child; the package and the tests stay as collection left them. Returns how many were new."""
    imported = 0
    for name in names:
        if name in sys.modules or name.split(".")[0] in OWN:
            continue
        try:
            importlib.import_module(name)
            imported += 1
        except BaseException:  # noqa: BLE001 - a module that cannot be imported alone is left to the children
            continue
    return imported


class WarmServer:
    """The pytest plugin that serves: collection done, ``pytest_runtestloop`` answers requests instead."""

    def __init__(self, setup: dict, requests: Any, answers: Any) -> None:
        self.setup = setup
        self.requests = requests
        self.answers = answers
        self.failed: list[str] = []
        self.durations: dict[str, float] = {}
        self.running: list[int] = []

    # in a child these record what its runs report
    def pytest_runtest_logreport(self, report: Any) -> None:
        self.durations[report.nodeid] = self.durations.get(report.nodeid, 0.0) + report.duration
        if report.failed and report.nodeid not in self.failed:
            self.failed.append(report.nodeid)

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session: Any) -> bool:
        items = {item.nodeid: item for item in session.items}
        targets = {os.path.join(COPY, t): t for t in self.setup["targets"]}
        originals: dict[str, types.CodeType] = {}
        for path in targets:  # read before any mutant is written over the copy
            with open(path, encoding="utf-8") as fh:
                originals[path] = compile(fh.read(), path, "exec", dont_inherit=True)
        live: dict[Any, list[Any]] = {}
        for obj in gc.get_objects():
            if isinstance(obj, types.FunctionType) and obj.__code__.co_filename in targets:
                live.setdefault(obj.__code__, []).append(obj)
        modules = [
            n for n, m in list(sys.modules.items()) if m is not None and not _from_copy(n, getattr(m, "__file__", None))
        ]
        self._answer(
            {
                "ready": True,
                "collected": len(items),
                "missing": [t for t in self.setup["tests"] if t not in items],
                "modules": modules,
            }
        )
        for line in self.requests:
            if not line.strip():
                continue
            request = json.loads(line)
            tests = [items[t] for t in request.get("tests", ()) if t in items]
            if request["op"] == "baseline":
                self._answer(self._baseline(tests))
                continue
            if request["op"] == "import":
                self._answer({"imported": _import_libraries(request["modules"])})
                continue
            path = os.path.join(COPY, request["module"])
            try:
                mutated = compile(request["source"], path, "exec", dont_inherit=True)
                pairs = plan(originals[path], mutated, live)
            except Cold as exc:
                self._answer({"status": "cold", "detail": str(exc), "seconds": 0.0, "killer": None})
                continue
            except SyntaxError as exc:
                self._answer({"status": "error", "detail": f"syntax: {exc}", "seconds": 0.0, "killer": None})
                continue
            self._answer(self._mutant(tests, pairs, live, request.get("timeout")))
        return True

    def _answer(self, payload: dict) -> None:
        self.answers.write(json.dumps(payload) + "\n")
        self.answers.flush()

    def _fork(self, body: Any, timeout: float | None) -> tuple[dict | None, int | None, bool, float]:
        """Runs ``body()`` (which returns a JSON-able dict) in a child of its own process group."""
        read_fd, write_fd = os.pipe()
        start = time.monotonic()
        pid = os.fork()
        if pid == 0:  # the child
            code = 70
            try:
                os.close(read_fd)
                os.setpgid(0, 0)
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                sys.dont_write_bytecode = True  # a mutant must never leave a .pyc behind
                os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
                out = os.open(RUN_LOG, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                os.dup2(out, 1)
                os.dup2(out, 2)
                result = body()
                with os.fdopen(write_fd, "w") as pipe:
                    json.dump(result, pipe)
                code = 0
            except BaseException as exc:  # noqa: BLE001 - the child reports, it never returns
                try:
                    os.write(2, f"warm server child: {exc!r}\n".encode())
                except OSError:
                    pass
            finally:
                os._exit(code)
        os.close(write_fd)
        try:
            os.setpgid(pid, pid)
        except OSError:
            pass
        self.running[:] = [pid]
        chunks: list[bytes] = []
        timed_out = False
        deadline = None if timeout is None else start + timeout
        while True:  # read as the child writes (a full pipe would block it), up to the deadline
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                timed_out = True
                break
            ready, _, _ = select.select([read_fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(read_fd, 65536)
            if not chunk:
                break
            chunks.append(chunk)
        os.close(read_fd)
        status = None
        if not timed_out:  # the child has written its result and is exiting
            status = _reap(pid, 10.0)
        try:
            os.killpg(pid, signal.SIGKILL)  # on a timeout the child; always what it started and left behind
        except OSError:
            pass
        if status is None:
            _, status = os.waitpid(pid, 0)
        self.running.clear()
        seconds = time.monotonic() - start
        if timed_out:
            return None, None, True, seconds
        rc = os.waitstatus_to_exitcode(status)
        payload = json.loads(b"".join(chunks)) if chunks and rc == 0 else None
        return payload, rc, False, seconds

    def _run_items(self, tests: list[Any], stop_at_first: bool) -> dict:
        for i, item in enumerate(tests):
            nextitem = tests[i + 1] if i + 1 < len(tests) else None
            item.config.hook.pytest_runtest_protocol(item=item, nextitem=nextitem)
            if stop_at_first and self.failed:
                break
        return {"failed": self.failed, "durations": self.durations}

    def _baseline(self, tests: list[Any]) -> dict:
        def body() -> dict:
            result = self._run_items(tests, False)
            loaded = [
                n
                for n, m in list(sys.modules.items())
                if m is not None and not _from_copy(n, getattr(m, "__file__", None))
            ]
            return {**result, "modules": loaded}

        payload, rc, timed_out, seconds = self._fork(body, None)
        if payload is None:
            return {"error": f"the baseline child died (exit {rc})", "seconds": seconds}
        loaded = [n for n in payload.pop("modules") if n.split(".")[0] not in OWN]
        return {**payload, "seconds": seconds, "imported": _import_libraries(loaded), "loaded": loaded}

    def _mutant(self, tests: list[Any], pairs: list[tuple[Any, Any]], live: dict, timeout: float | None) -> dict:
        def body() -> dict:
            for original, mutated in pairs:
                for function in live[original]:
                    function.__code__ = mutated
            return self._run_items(tests, True)

        payload, rc, timed_out, seconds = self._fork(body, timeout)
        if timed_out:
            return {"status": "timeout", "killer": None, "seconds": seconds, "detail": f"over {timeout:.1f}s"}
        if payload is None:
            return {"status": "error", "killer": None, "seconds": seconds, "detail": f"child exit {rc}"}
        failed = payload["failed"]
        return {
            "status": "killed" if failed else "survived",
            "killer": failed[0] if failed else None,
            "seconds": seconds,
            "detail": f"{len(pairs)} code object(s) patched",
        }

    def stop(self, *_: object) -> None:
        for pid in self.running:
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
        os._exit(143)


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as fh:
        setup = json.load(fh)
    sys.path[0] = COPY  # as `python -m pytest` run in the copy has it
    requests = os.fdopen(os.dup(0), "r")
    answers = os.fdopen(os.dup(1), "w", buffering=1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    log = os.open(LOG, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(log, 1)
    os.dup2(log, 2)
    server = WarmServer(setup, requests, answers)
    signal.signal(signal.SIGTERM, server.stop)
    args_file = os.path.join(COPY, ".mutation-warm-args")
    with open(args_file, "w", encoding="utf-8") as fh:
        fh.write("\n".join(setup["tests"]) + "\n")
    rc = pytest.main([*setup["flags"], f"@{args_file}"], plugins=[server])
    if rc not in (0, 5):
        answers.write(json.dumps({"error": f"the warm server's pytest session ended with exit {rc}"}) + "\n")


if __name__ == "__main__":
    main()
