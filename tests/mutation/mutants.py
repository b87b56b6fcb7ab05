"""The mutants of mutate.py: where they are (an AST walk over one module) and the mutated source.

Each mutant replaces one node's source span, parenthesized and padded with the newlines the span had, so every
other line of the module keeps its number and its code (the warm runner patches only the code objects that differ).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PRAGMA = "# pragma: no mutate"

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
AUG_OPERATORS = ("+=", "-=", "*=", "/=")
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
    listed: bool = False  # survived, and equivalents.md lists it
    spared: bool = False  # survived the fast tests and was not judged again with the slow ones
    trusted: bool = False  # listed in equivalents.md and not run (--listed trust)


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
    def _segment(self, node: ast.expr) -> str:
        """The node's source text (``ast.get_source_segment`` without splitting the whole module per mutant)."""
        first, last = node.lineno - 1, (node.end_lineno or node.lineno) - 1
        start, end = node.col_offset, node.end_col_offset or 0
        if first == last:
            return self.lines[first].encode()[start:end].decode()
        parts = [self.lines[first].encode()[start:].decode(), *self.lines[first + 1 : last]]
        return "\n".join([*parts, self.lines[last].encode()[:end].decode()])

    def _skipped(self, node: ast.AST) -> bool:
        first, last = node.lineno, getattr(node, "end_lineno", node.lineno) or node.lineno
        stmt_line = self.stmt.lineno if self.stmt is not None else first
        return any(PRAGMA in self.lines[n - 1] for n in {first, stmt_line} | ({last} if last == first else set()))

    def _add(self, node: ast.expr, replacement: ast.expr | str, operator: str) -> None:
        if self._skipped(node):
            return
        new = replacement if isinstance(replacement, str) else ast.unparse(replacement)
        old = self._segment(node) or ast.unparse(node)
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
            old = ast.unparse(node)
            self.mutants.append(
                Mutant(
                    module=self.module,
                    line=node.lineno,
                    stmt_line=node.lineno,
                    start=(node.lineno, node.col_offset),
                    end=(node.end_lineno, node.end_col_offset),
                    original=old,
                    replacement=f"{ast.unparse(node.target)} {BIN_SYMBOL[swap]}= ({ast.unparse(node.value)})",
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
    # the span's line breaks kept inside the parentheses: every later line keeps its number, so the code
    # objects of the rest of the module stay identical to the original's
    pad = "\n" * (mutant.end[0] - mutant.start[0])
    if mutant.operator.startswith(AUG_OPERATORS):  # an AugAssign mutant replaces a statement: `target op= (value)`
        replacement = mutant.replacement[:-1] + pad + ")"
    else:  # an expression: parenthesized to keep its place in its context
        replacement = f"({mutant.replacement}{pad})"
    mutated = data[:begin] + replacement.encode() + data[end:]
    return mutated.decode()
