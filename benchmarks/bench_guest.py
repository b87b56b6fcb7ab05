"""What the plugin costs a plain `pytest` run in a project that merely has it installed.

A throwaway project with one trivial test is run with `pytest -q -p no:randomly` as users run it (the
plugin loaded through its entry point, `--extractbench` not given) and with `-p no:extractbench`; the
difference is the plugin's cost. Also counts the modules `import pytest_extractbench.plugin` loads
after pytest, and whether any heavy library is among them. Prints a table; medians of N runs.

    python benchmarks/bench_guest.py [--runs 7]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HEAVY = ("numpy", "scipy", "openai", "datasets", "pyarrow", "pandas", "matplotlib", "jinja2", "yaml")
PROBE = f"""
import sys, time
import pytest
before = set(sys.modules)
start = time.perf_counter()
import pytest_extractbench.plugin
elapsed = time.perf_counter() - start
loaded = set(sys.modules) - before
print(len(loaded), round(elapsed * 1000, 1), ",".join(m for m in {HEAVY!r} if m in sys.modules) or "-")
"""


def wall(args: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "pytest", *args], cwd=cwd, check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=7)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp)
        (project / "test_one.py").write_text("def test_one():\n    assert 1 + 1 == 2\n")
        base = ["-q", "-p", "no:randomly", "-p", "no:cacheprovider"]
        wall(base, project)  # warm the file cache and bytecode once
        with_plugin = [wall(base, project) for _ in range(runs)]
        without = [wall([*base, "-p", "no:extractbench"], project) for _ in range(runs)]
    probe = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True).stdout.split()
    rows = [
        ("plain pytest, plugin installed", f"{statistics.median(with_plugin) * 1000:.0f} ms"),
        ("plain pytest, -p no:extractbench", f"{statistics.median(without) * 1000:.0f} ms"),
        ("plugin's cost per run", f"{(statistics.median(with_plugin) - statistics.median(without)) * 1000:.0f} ms"),
        ("modules loaded by the entry point", probe[0]),
        ("entry point import time", f"{probe[1]} ms"),
        ("heavy libraries loaded", probe[2]),
    ]
    width = max(len(name) for name, _ in rows)
    print(f"{'measure':<{width}}  value   (median of {runs} runs)")
    for name, value in rows:
        print(f"{name:<{width}}  {value}")


if __name__ == "__main__":
    main()
