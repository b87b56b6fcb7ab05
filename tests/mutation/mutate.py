"""A small AST mutation tester for the metric core (see README.md beside this file).

    python tests/mutation/mutate.py                      # the whole scope (SCOPE below)
    python tests/mutation/mutate.py pytest_extractbench/scoring/compare.py [more modules] [--jobs 1]

Never edits the working tree: the package, the tests and the root conftest are copied to a temp dir
per worker, each mutant is written over that copy and only the unit tests that cover the mutated line
run (PYTHONPATH and the working directory point at the copy).  The line -> tests map comes from one
coverage run over ``tests/unit`` with a per-test dynamic context (the test's node id).  By default the
tests run in a fork server (forkserver.py beside this file): pytest and the test dependencies are imported
once, and each mutant's tests run in a forked child, which imports the package from the mutated copy.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
PACKAGE = "pytest_extractbench"
# what a copy needs for the unit tests to run as they do in the repository
COPIED = (PACKAGE, "tests", "fixtures", "benchmarks", "docs", "ci", ".ci", "conftest.py", "pyproject.toml", "README.md")
# every module of the scoring core, the analysis and the gates, and the dataset readers: what no argument mutates
SCOPE = tuple(
    str(path.relative_to(ROOT))
    for package in ("scoring", "analysis", "gating")
    for path in sorted((ROOT / PACKAGE / package).glob("*.py"))
    if path.name != "__init__.py"
) + tuple(
    # the dataset readers that decide what a sample, its gold and a recorded answer are
    f"{PACKAGE}/dataset/{name}.py"
    for name in ("records", "samples", "sources", "predictions", "responses")
)
PRAGMA = "# pragma: no mutate"
TIMEOUT_FACTOR = 10
MIN_TIMEOUT = 5.0
PYTEST_FLAGS = ["-q", "-x", "-p", "no:cacheprovider", "--no-header", "-p", "no:randomly"]
# left out of the coverage run: its four writer processes stall for many minutes under coverage's tracer on a
# busy machine, and the journal (live/) is none of the mutated modules
COVERAGE_DESELECT = ("tests/unit/test_journal.py::test_processes_appending_at_once_never_tear_a_line",)

# ----------------------------------------------------------------------------------------------
# mutants

CMP_SWAPS = {
    ast.Is: (ast.IsNot,),
    ast.IsNot: (ast.Is,),
    ast.In: (ast.NotIn,),
    ast.NotIn: (ast.In,),
    ast.Lt: (ast.LtE, ast.Gt),
    ast.LtE: (ast.Lt, ast.GtE),
    ast.Gt: (ast.GtE, ast.Lt),
    ast.GtE: (ast.Gt, ast.LtE),
    ast.Eq: (ast.NotEq,),
    ast.NotEq: (ast.Eq,),
}
CMP_SYMBOL = {
    ast.Is: "is",
    ast.IsNot: "is not",
    ast.In: "in",
    ast.NotIn: "not in",
    ast.Lt: "<",
    ast.LtE: "<=",
    ast.Gt: ">",
    ast.GtE: ">=",
    ast.Eq: "==",
    ast.NotEq: "!=",
}
BIN_SWAPS = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult}
BIN_SYMBOL = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/"}
LOG_CALLS = {"debug", "info", "warning", "warn", "error", "exception", "critical", "log"}
NUMBER_TYPES = {"int", "float", "Number", "numbers.Number"}


@dataclass
class Mutant:
    module: str  # path relative to the repository root
    line: int  # the mutated node's line (what the survivor list shows)
    stmt_line: int  # the enclosing statement's first line (what coverage records)
    start: tuple[int, int]  # splice span in the source: (line, col) .. (end line, end col), 1-based lines
    end: tuple[int, int]
    original: str
    replacement: str
    operator: str
    status: str = ""
    tests: int = 0
    seconds: float = 0.0
    detail: str = ""


def _numeric_return(func: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether a function is annotated to return a number (``float``, ``int``, ``float | None``...)."""
    if func.returns is None:
        return False
    text = ast.unparse(func.returns).replace(" ", "")
    text = re.sub(r"^Optional\[(.*)\]$", r"\1", text)
    parts = [p for p in text.replace("'", "").replace('"', "").split("|") if p != "None"]
    return bool(parts) and all(p in NUMBER_TYPES for p in parts)


def _is_message_call(node: ast.Call) -> bool:
    """logging calls and warnings.warn: their arguments are messages."""
    func = node.func
    if isinstance(func, ast.Attribute):
        if (
            func.attr in LOG_CALLS
            and isinstance(func.value, ast.Name)
            and re.search(r"log", func.value.id, re.IGNORECASE)
        ):
            return True
        if func.attr == "warn" and isinstance(func.value, ast.Name) and func.value.id == "warnings":
            return True
    return False


def _bump(value: int | float) -> int | float:
    if value == 0:
        return type(value)(1)
    if value == 1:
        return type(value)(0)
    if value == 0.5:
        return 0.55
    return value + 1


class _Finder(ast.NodeVisitor):
    """Collects mutation points; never descends into docstrings, annotations, ``__all__``,
    f-strings, ``raise`` statements, logging/warning calls or ``# pragma: no mutate`` lines."""

    def __init__(self, module: str, source: str) -> None:
        self.module = module
        self.lines = source.splitlines()
        self.mutants: list[Mutant] = []
        self.stmt: ast.stmt | None = None
        self.numeric_return: list[bool] = [False]
        self.in_compare = 0  # None inside `x is None` is mutated by flipping `is`, not by replacing None

    # -- helpers
    def _skipped(self, node: ast.AST) -> bool:
        first, last = node.lineno, getattr(node, "end_lineno", node.lineno) or node.lineno
        stmt_line = self.stmt.lineno if self.stmt is not None else first
        return any(PRAGMA in self.lines[n - 1] for n in {first, stmt_line} | ({last} if last == first else set()))

    def _add(self, node: ast.expr, replacement: ast.expr | str, operator: str) -> None:
        if self._skipped(node):
            return
        new = replacement if isinstance(replacement, str) else ast.unparse(replacement)
        old = ast.get_source_segment("\n".join(self.lines), node) or ast.unparse(node)
        self.mutants.append(
            Mutant(
                module=self.module,
                line=node.lineno,
                stmt_line=self.stmt.lineno if self.stmt is not None else node.lineno,
                start=(node.lineno, node.col_offset),
                end=(node.end_lineno, node.end_col_offset),
                original=" ".join(old.split()),
                replacement=" ".join(new.split()),
                operator=operator,
            )
        )

    # -- statements
    def generic_visit(self, node: ast.AST) -> None:
        if isinstance(node, ast.stmt):
            outer, self.stmt = self.stmt, node
            super().generic_visit(node)
            self.stmt = outer
        else:
            super().generic_visit(node)

    def _body(self, body: list[ast.stmt]) -> list[ast.stmt]:
        """A body without its docstring."""
        if (
            body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            return body[1:]
        return body

    def visit_Module(self, node: ast.Module) -> None:
        for stmt in self._body(node.body):
            self.visit(stmt)

    def _visit_function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        outer, self.stmt = self.stmt, node
        for default in node.args.defaults + [d for d in node.args.kw_defaults if d is not None]:
            self.visit(default)
        for decorator in node.decorator_list:
            self.visit(decorator)
        self.stmt = outer
        self.numeric_return.append(_numeric_return(node))
        for stmt in self._body(node.body):
            self.visit(stmt)
        self.numeric_return.pop()

    visit_FunctionDef = _visit_function
    visit_AsyncFunctionDef = _visit_function

    def visit_Lambda(self, node: ast.Lambda) -> None:
        self.numeric_return.append(False)
        self.generic_visit(node)
        self.numeric_return.pop()

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for stmt in self._body(node.body):
            self.visit(stmt)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:  # the annotation is skipped
        if node.value is not None:
            outer, self.stmt = self.stmt, node
            self.visit(node.value)
            self.stmt = outer

    def visit_Assign(self, node: ast.Assign) -> None:
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
            return
        self.generic_visit(node)

    def visit_Raise(self, node: ast.Raise) -> None:  # exception messages
        return

    def visit_Assert(self, node: ast.Assert) -> None:
        outer, self.stmt = self.stmt, node
        self.visit(node.test)  # the message is skipped
        self.stmt = outer

    def visit_If(self, node: ast.If) -> None:
        # `if TYPE_CHECKING:` blocks never run
        if isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            return
        outer, self.stmt = self.stmt, node
        self._negate_test(node.test)
        self.stmt = outer
        self.generic_visit(node)

    def visit_JoinedStr(self, node: ast.JoinedStr) -> None:  # f-strings are messages
        return

    def visit_Call(self, node: ast.Call) -> None:
        if _is_message_call(node):
            return
        self.generic_visit(node)

    def visit_Return(self, node: ast.Return) -> None:
        if node.value is not None:
            outer, self.stmt = self.stmt, node
            current = ast.unparse(node.value)
            # a numeric function also gets the two values a metric is most often wrong by
            for replacement in ("None", "0", "1") if self.numeric_return[-1] else ("None",):
                if current != replacement:
                    self._add(node.value, replacement, f"return -> {replacement}")
            self.stmt = outer
        self.generic_visit(node)

    def _negate_test(self, test: ast.expr) -> None:
        if not (isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)):  # "not removed" is that mutant
            self._add(test, f"not ({ast.unparse(test)})", "condition negated")

    def visit_While(self, node: ast.While) -> None:
        outer, self.stmt = self.stmt, node
        self._negate_test(node.test)
        self.stmt = outer
        self.generic_visit(node)

    def visit_IfExp(self, node: ast.IfExp) -> None:
        self._negate_test(node.test)
        self.generic_visit(node)

    def visit_Expr(self, node: ast.Expr) -> None:
        # a call made for its effect (appending, updating, checking) removed
        outer, self.stmt = self.stmt, node
        if isinstance(node.value, ast.Call) and not _is_message_call(node.value):
            self._add(node.value, "None", "call removed")
        self.stmt = outer
        self.generic_visit(node)

    # -- expressions
    def visit_Compare(self, node: ast.Compare) -> None:
        self.in_compare += 1
        for i, op in enumerate(node.ops):
            for swap in CMP_SWAPS.get(type(op), ()):
                ops = list(node.ops)
                ops[i] = swap()
                mutated = ast.Compare(left=node.left, ops=ops, comparators=node.comparators)
                self._add(node, mutated, f"{CMP_SYMBOL[type(op)]} -> {CMP_SYMBOL[swap]}")
        self.generic_visit(node)
        self.in_compare -= 1

    def visit_BoolOp(self, node: ast.BoolOp) -> None:
        swap = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        names = ("and", "or") if isinstance(node.op, ast.And) else ("or", "and")
        self._add(node, ast.BoolOp(op=swap, values=node.values), f"{names[0]} -> {names[1]}")
        self.generic_visit(node)

    def visit_UnaryOp(self, node: ast.UnaryOp) -> None:
        if isinstance(node.op, ast.Not):
            self._add(node, f"({ast.unparse(node.operand)})", "not removed")
        self.generic_visit(node)

    @staticmethod
    def _stringy(node: ast.expr) -> bool:
        return isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Constant) and isinstance(node.value, str))

    def visit_BinOp(self, node: ast.BinOp) -> None:
        swap = BIN_SWAPS.get(type(node.op))
        if swap is not None and not (self._stringy(node.left) or self._stringy(node.right)):
            mutated = ast.BinOp(left=node.left, op=swap(), right=node.right)
            self._add(node, mutated, f"{BIN_SYMBOL[type(node.op)]} -> {BIN_SYMBOL[swap]}")
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        swap = BIN_SWAPS.get(type(node.op))
        outer, self.stmt = self.stmt, node
        if swap is not None and not self._stringy(node.value) and not self._skipped(node):
            mutated = ast.AugAssign(target=node.target, op=swap(), value=node.value)
            old = ast.unparse(node)
            self.mutants.append(
                Mutant(
                    module=self.module,
                    line=node.lineno,
                    stmt_line=node.lineno,
                    start=(node.lineno, node.col_offset),
                    end=(node.end_lineno, node.end_col_offset),
                    original=old,
                    replacement=ast.unparse(mutated),
                    operator=f"{BIN_SYMBOL[type(node.op)]}= -> {BIN_SYMBOL[swap]}=",
                )
            )
        self.visit(node.value)
        self.stmt = outer

    def visit_Constant(self, node: ast.Constant) -> None:
        value = node.value
        if isinstance(value, bool):
            self._add(node, repr(not value), f"{value!r} -> {not value!r}")
            return
        if value is None and not self.in_compare:
            self._add(node, "0", "None -> 0")
            return
        if not isinstance(value, (int, float)):
            return
        new = _bump(value)
        self._add(node, repr(new), f"{value!r} -> {new!r}")


def find_mutants(module: str) -> list[Mutant]:
    source = (ROOT / module).read_text()
    finder = _Finder(module, source)
    finder.visit(ast.parse(source))
    return finder.mutants


def apply(source: str, mutant: Mutant) -> str:
    """The module's source with the mutant's span replaced (the rest of the file untouched)."""
    lines = source.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line.encode()))
    data = source.encode()
    begin = offsets[mutant.start[0] - 1] + mutant.start[1]
    end = offsets[mutant.end[0] - 1] + mutant.end[1]
    replacement = mutant.replacement
    if not mutant.operator.endswith("="):  # AugAssign mutants replace a statement
        replacement = f"({replacement})"  # an expression: parenthesized to keep its place in its context
    mutated = data[:begin] + replacement.encode() + data[end:]
    return mutated.decode()


# ----------------------------------------------------------------------------------------------
# copies and test runs


def make_copy(parent: Path, name: str) -> Path:
    target = parent / name
    target.mkdir()
    for item in COPIED:
        src = ROOT / item
        if src.is_dir():
            shutil.copytree(src, target / item, ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".hypothesis"))
        elif src.exists():
            shutil.copy2(src, target / item)
    return target


def env_for(copy: Path, bytecode: bool = False) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(copy)
    # the property tests judge mutants with the thorough search, whatever the developer's inner-loop profile
    env.setdefault("EXTRACTBENCH_HYPOTHESIS_PROFILE", "ci")
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


class SubprocessRunner:
    """One ``python -m pytest`` per run: slow (pytest and numpy/scipy start up every time), simple."""

    name = "subprocess"

    def __init__(self, copy: Path) -> None:
        self.copy = copy

    def warm(self, nodeids: list[str]) -> list[str]:
        return []

    def run(self, nodeids: list[str], timeout: float | None) -> tuple[str, float, int]:
        """('passed' | 'failed' | 'timeout', seconds, returncode) for running these tests in the copy."""
        args_file = self.copy / ".mutation-args"
        args_file.write_text("\n".join(nodeids) + "\n")
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
            rc = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)  # the run we started, and its children
            proc.wait()
            return "timeout", time.monotonic() - start, -9
        return ("passed" if rc == 0 else "failed"), time.monotonic() - start, rc

    def close(self) -> None:
        pass

    kill = close


class ForkRunner:
    """A fork server (``forkserver.py``) started in the copy: pytest, numpy, scipy and the other test
    dependencies are imported once; each run is a forked child that imports the package from the copy (the
    mutant on disk) and runs ``pytest.main`` in process. The server kills a child that runs past its timeout."""

    name = "fork"

    def __init__(self, copy: Path) -> None:
        self.copy = copy
        self.proc = subprocess.Popen(
            [sys.executable, str(copy / "tests" / "mutation" / "forkserver.py")],
            cwd=copy,
            env=env_for(copy, bytecode=True),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )

    def _ask(self, request: dict) -> dict:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            log = self.copy / ".mutation-server.log"
            tail = log.read_text(errors="replace")[-3000:] if log.exists() else ""
            sys.exit(f"the fork server stopped (exit {self.proc.poll()}):\n{tail}")
        answer = json.loads(line)
        if "error" in answer:
            sys.exit(answer["error"])
        return answer

    def warm(self, nodeids: list[str]) -> list[str]:
        """Runs the tests once unmutated (the server then imports what they needed); the ones that fail."""
        answer = self._ask({"op": "warm", "tests": nodeids, "flags": [f for f in PYTEST_FLAGS if f != "-x"]})
        print(
            f"  fork server warm: {len(nodeids)} tests in {answer['seconds']:.0f}s, "
            f"{answer['imported']} modules imported once",
            flush=True,
        )
        return answer["failed"]

    def run(self, nodeids: list[str], timeout: float | None) -> tuple[str, float, int]:
        answer = self._ask({"op": "run", "tests": nodeids, "flags": PYTEST_FLAGS, "timeout": timeout})
        return answer["status"], answer["seconds"], answer["rc"]

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


RUNNERS = {"fork": ForkRunner, "subprocess": SubprocessRunner}


COLLECTOR = r"""
import json, sys, coverage, pytest
out, files, test_args = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3:]
cov = coverage.Coverage(data_file=out + ".coverage", include=files, branch=False)
durations = {}
failed = set()

class Contexts:
    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        cov.switch_context(item.nodeid)
        yield
        cov.switch_context("")

    def pytest_runtest_logreport(self, report):
        durations[report.nodeid] = durations.get(report.nodeid, 0.0) + report.duration
        if report.failed:
            failed.add(report.nodeid)

cov.start()
rc = pytest.main(["-q", "-p", "no:cacheprovider", "--no-header", *test_args], plugins=[Contexts()])
cov.stop()
cov.save()
data = cov.get_data()
lines = {}
for path in data.measured_files():
    by_line = data.contexts_by_lineno(path)
    lines[path] = {str(n): sorted(c for c in ctxs) for n, ctxs in by_line.items()}
json.dump({"rc": int(rc), "lines": lines, "durations": durations, "failed": sorted(failed)}, open(out, "w"))
"""


def coverage_map(copy: Path, modules: list[str], tests: list[str]) -> dict:
    out = copy / ".mutation-coverage.json"
    files = [str(copy / m) for m in modules]
    script = copy / ".mutation-collect.py"
    script.write_text(COLLECTOR)
    deselect = [f"--deselect={t}" for t in COVERAGE_DESELECT]
    cmd = [sys.executable, str(script), str(out), json.dumps(files), *deselect, *tests]
    proc = subprocess.run(cmd, cwd=copy, env=env_for(copy), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if not out.exists():
        sys.exit(f"coverage run failed:\n{proc.stdout[-3000:]}")
    data = json.loads(out.read_text())
    if data["rc"] not in (0, 1):
        sys.exit(f"the coverage run did not complete (pytest exit {data['rc']}):\n{proc.stdout[-3000:]}")
    failed = set(data["failed"])
    if failed:  # a test that fails unmutated cannot judge a mutant: it is left out of the map
        print(f"  {len(failed)} test(s) fail unmutated and are left out: {', '.join(sorted(failed))}", flush=True)
    result: dict[str, dict[int, set[str]]] = {}
    for module in modules:
        by_line = data["lines"].get(str(copy / module), {})
        result[module] = {int(n): set(c for c in ctxs if c not in failed) for n, ctxs in by_line.items()}
    return {"lines": result, "durations": data["durations"], "failed": sorted(failed)}


def _sources_key(tests: list[str]) -> str:
    """A hash of everything a coverage map depends on: the package, the tests, the coverage run's arguments."""
    digest = hashlib.sha1(json.dumps([tests, COVERAGE_DESELECT]).encode())
    for top in (PACKAGE, "tests", "conftest.py", "pyproject.toml"):
        path = ROOT / top
        files = sorted(path.rglob("*")) if path.is_dir() else [path]
        for f in files:
            skipped = {"__pycache__", ".hypothesis"} | ({"mutation"} if top == "tests" else set())  # the tool itself
            if f.is_file() and not skipped & set(f.relative_to(ROOT).parts):
                digest.update(str(f.relative_to(ROOT)).encode() + b"\0" + f.read_bytes())
    return digest.hexdigest()


def cached_coverage(path: Path, modules: list[str], tests: list[str]) -> dict | None:
    if not path.exists():
        return None
    data = json.loads(path.read_text())
    if data.get("key") != _sources_key(tests) or not set(modules) <= set(data["lines"]):
        return None
    lines = {m: {int(n): set(c) for n, c in data["lines"][m].items()} for m in modules}
    return {"lines": lines, "durations": data["durations"], "failed": data["failed"]}


def save_coverage(path: Path, key: str, cov: dict) -> None:
    lines = {m: {str(n): sorted(c) for n, c in by_line.items()} for m, by_line in cov["lines"].items()}
    payload = {"key": key, "lines": lines, "durations": cov["durations"], "failed": cov["failed"]}
    path.write_text(json.dumps(payload))


# ----------------------------------------------------------------------------------------------
# the run


@dataclass
class ModuleReport:
    module: str
    mutants: int = 0
    killed: int = 0
    survived: int = 0
    not_covered: int = 0
    seconds: float = 0.0
    survivors: list[dict] = field(default_factory=list)

    @property
    def kill_rate(self) -> float | None:
        judged = self.killed + self.survived
        return self.killed / judged if judged else None


def _at(mutant: Mutant, place: str) -> bool:
    """Whether a mutant is at ``file:line`` or ``file:line:col`` (col 1-based, as the survivor list shows)."""
    parts = place.rsplit(":", 2) if place.count(":") >= 2 else place.rsplit(":", 1)
    if not parts[0].endswith(mutant.module) and not mutant.module.endswith(parts[0]):
        return False
    if len(parts) > 1 and int(parts[1]) != mutant.line:
        return False
    return len(parts) < 3 or int(parts[2]) == mutant.start[1] + 1


def covering_tests(mutant: Mutant, lines: dict[int, set[str]]) -> list[str]:
    """The tests whose context covered the mutated line; a line run only at import (module level,
    default values) is covered by every test that runs any of the module's code."""
    contexts = lines.get(mutant.stmt_line, set()) | lines.get(mutant.line, set())
    tests = {c for c in contexts if c}
    if not tests and "" in contexts:
        tests = {c for ctxs in lines.values() for c in ctxs if c}
    return sorted(tests)


def write_survivors(out: Path, modules: list[str], tests: list[str], reports: list[ModuleReport]) -> Path:
    payload = {
        "command": "python tests/mutation/mutate.py " + " ".join(modules),
        "tests": tests,
        "source_sha1": {m: hashlib.sha1((ROOT / m).read_bytes()).hexdigest() for m in modules},
        "modules": [
            {
                "module": r.module,
                "mutants": r.mutants,
                "killed": r.killed,
                "survived": r.survived,
                "not_covered": r.not_covered,
                "kill_rate": None if r.kill_rate is None else round(r.kill_rate, 4),
                "seconds": round(r.seconds),
                "survivors": r.survivors,
            }
            for r in reports
        ],
    }
    out.write_text(json.dumps(payload, indent=2) + "\n")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "modules",
        nargs="*",
        default=list(SCOPE),
        help="module paths relative to the repository root (default: the whole scope, SCOPE in this file)",
    )
    parser.add_argument("--jobs", type=int, default=1, help="worker processes (one copy each); default 1")
    parser.add_argument("--tests", nargs="+", default=["tests/unit"], help="what the coverage run collects")
    parser.add_argument(
        "--pytest-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="extra argument for the coverage run, e.g. --pytest-arg=--deselect=NODEID (repeatable)",
    )
    parser.add_argument("--out", default=str(HERE / "survivors.json"), help="where the survivor list goes")
    parser.add_argument(
        "--coverage-cache",
        metavar="FILE",
        default="",
        help="keep the line -> tests map in FILE and reuse it while no source, test or argument has changed",
    )
    parser.add_argument(
        "--max-test-seconds",
        type=float,
        default=1.0,
        metavar="S",
        help="leave out of the mutant runs the tests that took over S seconds in the coverage run, except on "
        "lines only such tests cover (default 1; 0 runs every covering test)",
    )
    parser.add_argument("--list", action="store_true", help="list the mutants and stop")
    parser.add_argument("--limit", type=int, default=0, help="run only the first N mutants per module (smoke)")
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="FILE:LINE[:COL]",
        help="run only the mutants at this place, e.g. pytest_extractbench/analysis/stats.py:120 (repeatable)",
    )
    parser.add_argument(
        "--runner",
        choices=sorted(RUNNERS),
        default="fork",
        help="fork (default): one fork server, pytest imported once; subprocess: one python -m pytest per mutant",
    )
    args = parser.parse_args(argv)

    modules = [str(Path(m).resolve().relative_to(ROOT)) if Path(m).is_absolute() else m for m in args.modules]
    all_mutants = {m: find_mutants(m) for m in modules}
    if args.only:
        all_mutants = {
            m: [mu for mu in ms if any(_at(mu, place) for place in args.only)] for m, ms in all_mutants.items()
        }
    if args.list:
        for m, mutants in all_mutants.items():
            for mu in mutants:
                print(f"{m}:{mu.line}  {mu.operator:<18} {mu.original}  ->  {mu.replacement}")
        return 0

    runners: dict[Path, SubprocessRunner | ForkRunner] = {}

    def stop(*_: object) -> None:  # SIGTERM: stop the fork servers (and their running child), remove the copies
        for runner in runners.values():
            runner.kill()
        shutil.rmtree(workdir, ignore_errors=True)
        os._exit(143)

    signal.signal(signal.SIGTERM, stop)
    started = time.monotonic()
    workdir = Path(tempfile.mkdtemp(prefix="extractbench-mutation-"))
    try:
        copies = [make_copy(workdir, f"w{i}") for i in range(max(1, args.jobs))]
        cov = (
            cached_coverage(Path(args.coverage_cache), modules, [*args.tests, *args.pytest_arg])
            if args.coverage_cache
            else None
        )
        if cov is None:
            print(f"coverage run over {' '.join(args.tests)} (per-test contexts) ...", flush=True)
            t0 = time.monotonic()
            key = _sources_key([*args.tests, *args.pytest_arg])  # the sources as the copy has them
            cov = coverage_map(copies[0], modules, [*args.tests, *args.pytest_arg])
            print(f"  done in {time.monotonic() - t0:.0f}s", flush=True)
            if args.coverage_cache:
                save_coverage(Path(args.coverage_cache), key, cov)
        else:
            print(f"coverage map reused from {args.coverage_cache} (sources unchanged)", flush=True)
        durations: dict[str, float] = cov["durations"]
        if args.max_test_seconds > 0:
            slow = {t for t, secs in durations.items() if secs > args.max_test_seconds}
            used = {c for m in modules for ctxs in cov["lines"][m].values() for c in ctxs if c}
            print(
                f"  {len(slow & used)} of the {len(used)} covering tests took over {args.max_test_seconds:g}s under "
                "coverage and run only for lines no faster test covers (--max-test-seconds)",
                flush=True,
            )
            for m in modules:
                cov["lines"][m] = {n: (ctxs - slow) or ctxs for n, ctxs in cov["lines"][m].items()}
        runners.update({copy: RUNNERS[args.runner](copy) for copy in copies})
        needed = {m: {c for ctxs in cov["lines"][m].values() for c in ctxs if c} for m in modules if all_mutants[m]}
        wanted = sorted(set().union(set(), *needed.values()), key=lambda t: (t.split("::")[0], durations.get(t, 0.0)))
        unfit: set[str] = set()
        for runner in runners.values():  # every covering test once, unmutated: it must pass in this runner too
            unfit |= set(runner.warm(wanted))
        if unfit:  # as in the coverage run: a test that fails unmutated cannot judge a mutant
            print(
                f"  {len(unfit)} test(s) fail unmutated in the {args.runner} runner and are left out: "
                f"{', '.join(sorted(unfit))}",
                flush=True,
            )
            for m in modules:
                cov["lines"][m] = {n: ctxs - unfit for n, ctxs in cov["lines"][m].items()}

        reports = []
        for module in modules:
            report = ModuleReport(module)
            m_start = time.monotonic()
            lines = cov["lines"][module]
            mutants = all_mutants[module][: args.limit or None]
            report.mutants = len(mutants)
            original = (ROOT / module).read_text()
            # the start-up cost of a pytest run in a copy: measured once, on the module's fastest test
            all_tests = sorted({c for ctxs in lines.values() for c in ctxs if c}, key=lambda t: durations.get(t, 0.0))
            overhead = 2.0
            if all_tests and mutants:
                status, secs, rc = runners[copies[0]].run(all_tests[:1], None)
                if status != "passed":
                    sys.exit(f"{module}: {all_tests[0]} fails unmutated in the {args.runner} runner (exit {rc})")
                overhead = max(0.2, secs - durations.get(all_tests[0], 0.0))
            print(
                f"{module}: {len(mutants)} mutants, {len(all_tests)} covering tests, pytest startup ~{overhead:.1f}s",
                flush=True,
            )

            free = list(copies)

            def one(mutant: Mutant) -> Mutant:
                # fastest first: with -x a killed mutant stops at its first failing test
                tests = sorted(covering_tests(mutant, lines), key=lambda t: durations.get(t, 0.0))
                mutant.tests = len(tests)
                if not tests:
                    mutant.status = "not covered"
                    return mutant
                copy = free.pop()
                try:
                    target = copy / module
                    target.write_text(apply(original, mutant))
                    drop_bytecode(target)
                    try:
                        compile(target.read_text(), str(target), "exec")
                    except SyntaxError as exc:  # a tool bug, not a kill
                        mutant.status, mutant.detail = "error", f"syntax: {exc}"
                        return mutant
                    normal = overhead + sum(durations.get(t, 0.0) for t in tests)
                    status, secs, rc = runners[copy].run(tests, max(MIN_TIMEOUT, TIMEOUT_FACTOR * normal))
                    mutant.seconds = round(secs, 2)
                    mutant.status = {"passed": "survived", "failed": "killed", "timeout": "killed"}[status]
                    mutant.detail = status if status == "timeout" else f"pytest exit {rc}"
                    return mutant
                finally:
                    (copy / module).write_text(original)
                    drop_bytecode(copy / module)
                    free.append(copy)

            with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
                for i, mutant in enumerate(pool.map(one, mutants), 1):
                    mark = {"killed": ".", "survived": "S", "not covered": "-", "error": "E"}[mutant.status]
                    print(mark, end="\n" if i % 60 == 0 else "", flush=True)
                    if mutant.status == "killed":
                        report.killed += 1
                    elif mutant.status == "survived":
                        report.survived += 1
                    elif mutant.status == "not covered":
                        report.not_covered += 1
                    if mutant.status in ("survived", "not covered"):
                        report.survivors.append(
                            {
                                "where": f"{module}:{mutant.line}:{mutant.start[1] + 1}",
                                "line": original.splitlines()[mutant.line - 1].strip(),
                                "status": mutant.status,
                                "operator": mutant.operator,
                                "original": mutant.original,
                                "mutant": mutant.replacement,
                                "tests": mutant.tests,
                            }
                        )
                    elif mutant.status == "error":
                        print(f"\n  tool error at {module}:{mutant.line}: {mutant.detail}", flush=True)
                    if i % 10 == 0:  # a run stopped half-way keeps what it has judged
                        report.seconds = time.monotonic() - m_start
                        write_survivors(Path(args.out), modules, args.tests, [*reports, report])
            print(flush=True)
            report.seconds = time.monotonic() - m_start
            reports.append(report)
            write_survivors(
                Path(args.out), modules, args.tests, reports
            )  # after each module: a partial run keeps its figures
    finally:
        for runner in runners.values():
            runner.close()
        shutil.rmtree(workdir, ignore_errors=True)

    total = time.monotonic() - started
    header = (
        f"{'module':<44} {'mutants':>7} {'killed':>6} {'survived':>8} {'not covered':>11} {'kill rate':>9} "
        f"{'seconds':>7}"
    )
    print("\n" + header + "\n" + "-" * len(header))
    for r in reports:
        rate = f"{100 * r.kill_rate:.1f}%" if r.kill_rate is not None else "n/a"
        print(
            f"{r.module:<44} {r.mutants:>7} {r.killed:>6} {r.survived:>8} {r.not_covered:>11} {rate:>9} "
            f"{r.seconds:>7.0f}"
        )
    print(f"total run time (coverage run included): {total:.0f}s with --jobs {args.jobs}, {args.runner} runner")

    out = write_survivors(Path(args.out), modules, args.tests, reports)
    print(f"survivors written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
