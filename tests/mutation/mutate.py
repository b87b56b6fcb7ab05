"""A small AST mutation tester for the metric core (see README.md beside this file).

    python tests/mutation/mutate.py pytest_extractbench/scoring/compare.py [more modules] [--jobs 1]

Never edits the working tree: the package, the tests and the root conftest are copied to a temp dir
per worker, each mutant is written over that copy and only the unit tests that cover the mutated line
run (PYTHONPATH and the working directory point at the copy).  The line -> tests map comes from one
coverage run over ``tests/unit`` with a per-test dynamic context (the test's node id).
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
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
PACKAGE = "pytest_extractbench"
# what a copy needs for the unit tests to run as they do in the repository
COPIED = (PACKAGE, "tests", "fixtures", "benchmarks", "docs", "ci", ".ci", "conftest.py", "pyproject.toml", "README.md")
PRAGMA = "# pragma: no mutate"
TIMEOUT_FACTOR = 10
MIN_TIMEOUT = 5.0
PYTEST_FLAGS = ["-q", "-x", "-p", "no:cacheprovider", "--no-header", "-p", "no:randomly"]

# ----------------------------------------------------------------------------------------------
# mutants

CMP_SWAPS = {
    ast.Lt: (ast.LtE, ast.Gt),
    ast.LtE: (ast.Lt, ast.GtE),
    ast.Gt: (ast.GtE, ast.Lt),
    ast.GtE: (ast.Gt, ast.LtE),
    ast.Eq: (ast.NotEq,),
    ast.NotEq: (ast.Eq,),
}
CMP_SYMBOL = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}
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
        if func.attr in LOG_CALLS and isinstance(func.value, ast.Name) and re.search(
            r"log", func.value.id, re.IGNORECASE
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
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            if isinstance(body[0].value.value, str):
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
        self.generic_visit(node)

    def visit_JoinedStr(self, node: ast.JoinedStr) -> None:  # f-strings are messages
        return

    def visit_Call(self, node: ast.Call) -> None:
        if _is_message_call(node):
            return
        self.generic_visit(node)

    def visit_Return(self, node: ast.Return) -> None:
        if self.numeric_return[-1] and node.value is not None:
            outer, self.stmt = self.stmt, node
            current = ast.unparse(node.value)
            for replacement in ("None", "0", "1"):
                if current != replacement:
                    self._add(node.value, replacement, f"return -> {replacement}")
            self.stmt = outer
        self.generic_visit(node)

    # -- expressions
    def visit_Compare(self, node: ast.Compare) -> None:
        for i, op in enumerate(node.ops):
            for swap in CMP_SWAPS.get(type(op), ()):
                ops = list(node.ops)
                ops[i] = swap()
                mutated = ast.Compare(left=node.left, ops=ops, comparators=node.comparators)
                self._add(node, mutated, f"{CMP_SYMBOL[type(op)]} -> {CMP_SYMBOL[swap]}")
        self.generic_visit(node)

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
        if isinstance(value, bool) or not isinstance(value, (int, float)):
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


def env_for(copy: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(copy)
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # a mutant written in the same second must not reuse a stale .pyc
    env.pop("COVERAGE_PROCESS_START", None)
    return env


def run_tests(copy: Path, nodeids: list[str], timeout: float | None) -> tuple[str, float, int]:
    """('passed' | 'failed' | 'timeout', seconds, returncode) for running these tests in the copy."""
    args_file = copy / ".mutation-args"
    args_file.write_text("\n".join(nodeids) + "\n")
    cmd = [sys.executable, "-m", "pytest", *PYTEST_FLAGS, f"@{args_file}"]
    start = time.monotonic()
    proc = subprocess.Popen(
        cmd, cwd=copy, env=env_for(copy), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    try:
        rc = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)  # the run we started, and its children
        proc.wait()
        return "timeout", time.monotonic() - start, -9
    return ("passed" if rc == 0 else "failed"), time.monotonic() - start, rc


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
    cmd = [sys.executable, str(script), str(out), json.dumps(files), *tests]
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
    parser.add_argument("modules", nargs="+", help="module paths relative to the repository root")
    parser.add_argument("--jobs", type=int, default=1, help="worker processes (one copy each); default 1")
    parser.add_argument("--tests", nargs="+", default=["tests/unit"], help="what the coverage run collects")
    parser.add_argument(
        "--pytest-arg", action="append", default=[], metavar="ARG",
        help="extra argument for the coverage run, e.g. --pytest-arg=--deselect=NODEID (repeatable)",
    )
    parser.add_argument("--out", default=str(HERE / "survivors.json"), help="where the survivor list goes")
    parser.add_argument("--list", action="store_true", help="list the mutants and stop")
    parser.add_argument("--limit", type=int, default=0, help="run only the first N mutants per module (smoke)")
    args = parser.parse_args(argv)

    modules = [str(Path(m).resolve().relative_to(ROOT)) if Path(m).is_absolute() else m for m in args.modules]
    all_mutants = {m: find_mutants(m) for m in modules}
    if args.list:
        for m, mutants in all_mutants.items():
            for mu in mutants:
                print(f"{m}:{mu.line}  {mu.operator:<18} {mu.original}  ->  {mu.replacement}")
        return 0

    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so the temp copies are removed
    started = time.monotonic()
    workdir = Path(tempfile.mkdtemp(prefix="extractbench-mutation-"))
    try:
        copies = [make_copy(workdir, f"w{i}") for i in range(max(1, args.jobs))]
        print(f"coverage run over {' '.join(args.tests)} (per-test contexts) ...", flush=True)
        t0 = time.monotonic()
        cov = coverage_map(copies[0], modules, [*args.tests, *args.pytest_arg])
        print(f"  done in {time.monotonic() - t0:.0f}s", flush=True)
        durations: dict[str, float] = cov["durations"]

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
            if all_tests:
                status, secs, rc = run_tests(copies[0], all_tests[:1], None)
                overhead = max(1.0, secs - durations.get(all_tests[0], 0.0))
            print(f"{module}: {len(mutants)} mutants, {len(all_tests)} covering tests, "
                  f"pytest startup ~{overhead:.1f}s", flush=True)

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
                    try:
                        compile(target.read_text(), str(target), "exec")
                    except SyntaxError as exc:  # a tool bug, not a kill
                        mutant.status, mutant.detail = "error", f"syntax: {exc}"
                        return mutant
                    normal = overhead + sum(durations.get(t, 0.0) for t in tests)
                    status, secs, rc = run_tests(copy, tests, max(MIN_TIMEOUT, TIMEOUT_FACTOR * normal))
                    mutant.seconds = round(secs, 2)
                    mutant.status = {"passed": "survived", "failed": "killed", "timeout": "killed"}[status]
                    mutant.detail = status if status == "timeout" else f"pytest exit {rc}"
                    return mutant
                finally:
                    (copy / module).write_text(original)
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
            write_survivors(Path(args.out), modules, args.tests, reports)  # after each module: a partial run keeps its figures
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    total = time.monotonic() - started
    header = f"{'module':<44} {'mutants':>7} {'killed':>6} {'survived':>8} {'not covered':>11} {'kill rate':>9} {'seconds':>7}"
    print("\n" + header + "\n" + "-" * len(header))
    for r in reports:
        rate = f"{100 * r.kill_rate:.1f}%" if r.kill_rate is not None else "n/a"
        print(f"{r.module:<44} {r.mutants:>7} {r.killed:>6} {r.survived:>8} {r.not_covered:>11} {rate:>9} {r.seconds:>7.0f}")
    print(f"total run time (coverage run included): {total:.0f}s with --jobs {args.jobs}")

    out = write_survivors(Path(args.out), modules, args.tests, reports)
    print(f"survivors written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
