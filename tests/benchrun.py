"""The ``run`` fixture's helper (tests/conftest.py): one benchmark run inside a pytester directory."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable, Mapping
from typing import Any

import pytest

from pytest_extractbench.core.rundoc import iter_samples

# the usual offline run of a plugin test: its data.jsonl and preds.jsonl, no SLA tier
OFFLINE_ARGS = (
    "--extractbench-dataset",
    "data.jsonl",
    "--extractbench-predictions",
    "preds.jsonl",
    "--extractbench-sla",
    "none",
)


class BenchRun:
    """``pytest --extractbench ...`` inside a pytester directory, and the run directory's files afterwards.

    ``run(*args)`` runs in-process (fast: the imports are paid once); ``subprocess=True`` where process isolation
    is the point (a crash, signals, xdist workers, a fresh import state). ``out`` names the run directory
    (``--extractbench-output``, emptied first unless ``fresh=False``); ``out=None`` leaves the option out.
    ``files`` maps JSONL file names to their rows, written before the run.
    """

    BASE = ("-p", "no:randomly", "--extractbench")

    def __init__(self, pytester: pytest.Pytester) -> None:
        self.pytester = pytester
        self.path = pytester.path

    def __call__(
        self,
        *args: str,
        out: str | None = "out",
        subprocess: bool = False,
        fresh: bool = True,
        files: Mapping[str, Iterable[Any]] | None = None,
    ) -> pytest.RunResult:
        for name, rows in (files or {}).items():
            self.write_jsonl(name, rows)
        argv = [*self.BASE]
        if out is not None:
            if fresh:
                shutil.rmtree(self.path / out, ignore_errors=True)  # a run needs a new or empty directory
            argv += ["--extractbench-output", out]
        argv += args  # last: an option given here wins over the ones above
        return self.pytester.runpytest_subprocess(*argv) if subprocess else self.pytester.runpytest(*argv)

    def write_jsonl(self, name: str, rows: Iterable[Any]) -> str:
        """One JSON row a line; a string row is written as it is (a torn or invalid line on purpose)."""
        lines = (row if isinstance(row, str) else json.dumps(row) for row in rows)
        (self.path / name).write_text("".join(line + "\n" for line in lines), encoding="utf-8")
        return name

    def document(self, out: str = "out") -> dict[str, Any]:
        return json.loads((self.path / out / "metrics.json").read_text(encoding="utf-8"))

    def records(self, out: str = "out") -> dict[str, dict[str, Any]]:
        return {row["sample_id"]: row for row in iter_samples(self.path / out / "samples.jsonl")}
