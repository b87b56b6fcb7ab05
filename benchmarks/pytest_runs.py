"""The ``pytest --extractbench`` command the live-run benchmarks start in a scratch directory."""

from __future__ import annotations

import sys


def extractbench_command(dataset: str, output: str, *options: str) -> list[str]:
    """pytest with the plugin on ``dataset``, writing ``output``: quiet, in file order, no cache provider."""
    fixed = ["-m", "pytest", "-p", "no:randomly", "-p", "no:cacheprovider", "-q", "--extractbench"]
    return [sys.executable, *fixed, "--extractbench-dataset", dataset, "--extractbench-output", output, *options]
