"""The public surface: a sorted, complete ``__all__``, no pytest import, data shipped in the wheel."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import pytest_extractbench
import pytest_extractbench.scoring

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("module", [pytest_extractbench, pytest_extractbench.scoring])
def test_all_is_sorted_and_exported(module) -> None:
    assert module.__all__ == sorted(module.__all__)
    for name in module.__all__:
        assert hasattr(module, name), name


@pytest.mark.slow
def test_scoring_core_never_imports_pytest() -> None:
    code = (
        "import sys, pytest_extractbench, pytest_extractbench.scoring, pytest_extractbench.analysis.metrics, "
        "pytest_extractbench.gating.sla, pytest_extractbench.dataset.samples, pytest_extractbench.analysis.stats, "
        "pytest_extractbench.analysis.resampled, pytest_extractbench.analysis.comparison, "
        "pytest_extractbench.gating.regression, "
        "pytest_extractbench.gating.baseline, pytest_extractbench.gating.subsets; "
        "assert 'pytest' not in sys.modules and '_pytest' not in sys.modules, sorted(sys.modules)"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_the_scoring_core_loads_no_network_client_and_no_scipy() -> None:
    """Scoring is pure: the judge and embeddings clients live in the live layer and numpy/scipy load with the
    first Hungarian assignment. A fresh interpreter proves it (this process has imported everything)."""
    code = (
        "import sys, pytest_extractbench.scoring\n"
        "print(','.join(m for m in ('openai', 'httpx', 'scipy', 'numpy', 'sentence_transformers', 'sqlite3', "
        "'pytest_extractbench.live') if m in sys.modules))"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == ""


def test_a_hungarian_assignment_still_loads_scipy_when_it_needs_it() -> None:
    code = (
        "import sys\n"
        "from pytest_extractbench.scoring import AlignContext, align_hungarian, DEFAULT_OPTIONS\n"
        "pairs = align_hungarian([{'a': 1}, {'a': 2}], [{'a': 2}, {'a': 3}], None, DEFAULT_OPTIONS,\n"
        "                        AlignContext(similarity=lambda g, p: float(g == p)))\n"
        "print(pairs, 'scipy' in sys.modules)"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert run.stdout.strip() == "[(0, 1), (1, 0)] True"  # identical {"a": 2} first, the rest by assignment


@pytest.mark.slow
def test_the_wheel_ships_the_bundled_dataset(tmp_path: Path) -> None:
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(tmp_path),
            str(ROOT),
        ],
        check=True,
    )
    (wheel,) = tmp_path.glob("pytest_extractbench-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "pytest_extractbench/data/extraction.jsonl" in names
    assert "pytest_extractbench/py.typed" in names


@pytest.mark.slow
def test_the_readme_s_first_command_needs_no_dev_dependency_to_load_the_tests_conftest() -> None:
    # `pytest --extractbench` in the checkout with only the local extra loads tests/conftest.py (testpaths): it
    # must not need hypothesis, a dev dependency
    root = Path(__file__).resolve().parents[2]
    code = (
        "import runpy, sys; sys.modules['hypothesis'] = None; sys.path.insert(0, 'tests'); "
        "runpy.run_path('tests/conftest.py'); print('loaded')"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "loaded", done.stderr[-2000:]
