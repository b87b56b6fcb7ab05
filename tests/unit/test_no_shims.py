"""No compatibility shims, and nothing process-wide changed: importing the package or running the plugin leaves
the user's interpreter as it was (import machinery, the GC's frozen generation, the environment)."""

from __future__ import annotations

import ast
import functools
import gc
import os
import subprocess
import sys
from pathlib import Path

import pytest
from benchrun import BenchRun

PACKAGE = Path(__file__).resolve().parents[2] / "pytest_extractbench"
# The package namespace resolves its public names on first use (cheap `import pytest_extractbench`): not a shim.
LAZY_NAMESPACE = PACKAGE / "__init__.py"


@functools.cache  # parsed once for the tests that read it (~1.5 s a parse of the package)
def _trees() -> list[tuple[Path, ast.Module]]:
    return [(path, ast.parse(path.read_text(encoding="utf-8"))) for path in sorted(PACKAGE.rglob("*.py"))]


def test_no_module_re_exports_by_star_or_module_getattr() -> None:
    found = []
    for path, tree in _trees():
        for node in tree.body:
            if isinstance(node, ast.ImportFrom) and any(alias.name == "*" for alias in node.names):
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: from {node.module} import *")
            if isinstance(node, ast.FunctionDef) and node.name == "__getattr__" and path != LAZY_NAMESPACE:
                found.append(f"{path.relative_to(PACKAGE)}:{node.lineno}: module-level __getattr__")
    assert not found, "\n".join(found)


def test_nothing_in_the_package_changes_the_import_machinery() -> None:
    found = [
        f"{path.relative_to(PACKAGE)}: {name}"
        for path, tree in _trees()
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "sys"
        for name in [f"sys.{node.attr}"]
        if node.attr in ("meta_path", "path_hooks")
    ]
    assert not found, "\n".join(found)


@pytest.mark.slow
def test_importing_the_package_leaves_the_interpreter_as_it_was_and_old_names_are_gone() -> None:
    code = (
        "import gc, sys\n"
        "before = (list(sys.meta_path), list(sys.path_hooks), gc.get_freeze_count(), gc.get_threshold())\n"
        "import pytest_extractbench, pytest_extractbench.plugin, pytest_extractbench.scoring\n"
        "from pytest_extractbench import score_sample, evaluate\n"
        "assert (list(sys.meta_path), list(sys.path_hooks), gc.get_freeze_count(), gc.get_threshold()) == before\n"
        "try:\n"
        "    import pytest_extractbench.metrics\n"
        "except ModuleNotFoundError:\n"
        "    print('gone')\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == "gone"


def test_a_run_gives_back_the_gc_and_the_environment(run: BenchRun) -> None:
    schema = {"type": "object", "properties": {"name": {"type": "string"}}}
    samples = [{"id": f"s{i}", "text": f"P{i}", "schema": schema, "expected": {"name": f"P{i}"}} for i in range(3)]
    before = (gc.isenabled(), gc.get_freeze_count(), gc.get_threshold(), list(sys.meta_path))
    environ = dict(os.environ)
    result = run(
        "--extractbench-dataset",
        "data.jsonl",
        "--extractbench-predictions",
        "preds.jsonl",
        "--extractbench-sla",
        "none",
        files={"data.jsonl": samples, "preds.jsonl": [{"id": s["id"], "output": s["expected"]} for s in samples]},
    )
    result.assert_outcomes(passed=3)
    assert (gc.isenabled(), gc.get_freeze_count(), gc.get_threshold(), list(sys.meta_path)) == before
    changed = {name for name in {*environ, *os.environ} if environ.get(name) != os.environ.get(name)}
    assert changed <= {"PYTEST_CURRENT_TEST"}  # pytest's own: the inner session clears the outer test's


def test_a_run_leaves_objects_frozen_by_the_user_frozen(run: BenchRun) -> None:
    """gc.unfreeze() thaws everything: a run that found the permanent generation in use never touches it."""
    schema = {"type": "object", "properties": {"name": {"type": "string"}}}
    samples = [{"id": "s0", "text": "P0", "schema": schema, "expected": {"name": "P0"}}]
    if gc.get_freeze_count():
        pytest.skip("this process already holds frozen objects")
    marker = [object()]  # a container the GC tracks: out of gc.get_objects() while it is frozen
    gc.freeze()
    try:
        assert not any(obj is marker for obj in gc.get_objects())
        frozen = gc.get_freeze_count()
        result = run(
            "--extractbench-dataset",
            "data.jsonl",
            "--extractbench-predictions",
            "preds.jsonl",
            "--extractbench-sla",
            "none",
            files={"data.jsonl": samples, "preds.jsonl": [{"id": "s0", "output": {"name": "P0"}}]},
        )
        result.assert_outcomes(passed=1)
        assert 0 < gc.get_freeze_count() <= frozen  # frozen objects that died left; none was added
        assert not any(obj is marker for obj in gc.get_objects())  # still frozen: the run never thawed it
    finally:
        gc.unfreeze()
