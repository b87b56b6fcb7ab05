"""The public names have their real types for a type checker although they load lazily at run time: the
docs' "Use from Python" code (docs/guides/python.md) passes ``mypy --strict`` as a user's script, and a misuse is caught."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest
from _docpages import blocks, read

import pytest_extractbench

ROOT = Path(__file__).resolve().parents[2]

pytest.importorskip("mypy", reason="mypy is in the dev extra")


def guide_blocks() -> list[str]:
    """The Python blocks of docs/guides/python.md ("Use from Python"), in order."""
    return blocks(read("guides/python.md"), "python")


def mypy(tmp_path: Path, code: str) -> subprocess.CompletedProcess[str]:
    """``mypy --strict`` on ``code`` as a user's script, against this checkout's package (its own errors are not
    the script's: imports are followed silently)."""
    script = tmp_path / "user_script.py"
    script.write_text(code, encoding="utf-8")
    env = {**os.environ, "MYPYPATH": str(ROOT)}
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--follow-imports=silent",
            "--no-error-summary",
            "--cache-dir",
            str(tmp_path / ".mypy_cache"),
            "--python-version",
            "3.10",
            str(script),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )


def test_the_type_checking_imports_are_the_lazy_exports() -> None:
    """Each public name is imported for type checkers from the module it loads from at run time."""
    tree = ast.parse((ROOT / "pytest_extractbench" / "__init__.py").read_text(encoding="utf-8"))
    guarded = next(node for node in tree.body if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING")
    typed = {
        ("pytest_extractbench." + node.module, alias.name)
        for node in guarded.body
        if isinstance(node, ast.ImportFrom) and node.module
        for alias in node.names
    }
    lazy = {(module, name) for module, names in pytest_extractbench._EXPORTS.items() for name in names}
    assert typed == lazy
    assert {name for _, name in typed} == set(pytest_extractbench.__all__)


@pytest.mark.slow
def test_the_readme_python_examples_pass_mypy_strict(tmp_path: Path) -> None:
    blocks = guide_blocks()
    assert len(blocks) >= 5
    checked = mypy(tmp_path, "\n".join(blocks) + "\nreveal_type(evaluate)\nreveal_type(demo)\n")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    notes = checked.stdout
    assert 'Revealed type is "def (dataset:' in notes and "pytest_extractbench.run.result.RunResult" in notes, notes


@pytest.mark.slow
def test_a_misused_api_is_caught(tmp_path: Path) -> None:
    """Not ``object`` (which would refuse every call) and not ``Any`` (which would accept every one)."""
    code = (
        "from pytest_extractbench import evaluate, score_sample\n"
        "evaluate('bundled', sla='gold')\n"
        "evaluate('bundled', samples=3)\n"
        "evaluate('bundled', sample=[3])\n"
        "score_sample('{}')\n"
        "evaluate('bundled').metric(3)\n"
    )
    checked = mypy(tmp_path, code)
    errors = [line for line in checked.stdout.splitlines() if ": error:" in line]
    assert [int(line.split(":")[1]) for line in errors] == [2, 3, 4, 5, 6], checked.stdout
