"""Code written against the flat layout keeps importing: old module names give the moved modules."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

from pytest_extractbench.core.aliases import MOVED, PACKAGE


@pytest.mark.parametrize("old", sorted(MOVED))
def test_an_old_module_name_is_the_moved_module(old: str) -> None:
    moved = importlib.import_module(f"{PACKAGE}.{MOVED[old]}")
    assert importlib.import_module(f"{PACKAGE}.{old}") is moved
    assert moved.__spec__.name == f"{PACKAGE}.{MOVED[old]}"  # the alias does not rename the module


@pytest.mark.slow
def test_the_readme_s_old_imports_work_in_a_fresh_interpreter() -> None:
    code = ("from pytest_extractbench.consistency import consistency\n"
            "from pytest_extractbench.calibration import field_confidences, reliability\n"
            "from pytest_extractbench.metrics import metrics_by_model\n"
            "import pytest_extractbench.analysis.consistency as new\n"
            "assert consistency is new.consistency\n"
            "print('ok')\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "ok"


def test_a_name_that_never_existed_still_fails() -> None:
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(f"{PACKAGE}.no_such_module")
