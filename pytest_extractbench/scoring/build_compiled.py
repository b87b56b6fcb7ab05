"""Build, check or remove the optional compiled scoring core (scoring/compiled.py says how it is used).

    python -m pytest_extractbench.scoring.build_compiled [--jobs 2] [--opt-level 3]
    python -m pytest_extractbench.scoring.build_compiled --status
    python -m pytest_extractbench.scoring.build_compiled --clean

Needs mypy (its mypyc compiler; the ``dev`` extra pins it), setuptools, a C compiler and the Python headers; a plain
install needs none of them. mypy type-checks the compiled modules and what they import from ``scoring/`` and
``core/``; the rest of the package and the large third-party stubs (numpy, scipy, jsonschema) are not followed, as
the compiled modules take nothing from them but untyped values.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time

from . import compiled

_CONFIG = """\
[mypy]
python_version = {version}
ignore_missing_imports = True
cache_dir = {cache}

[mypy-pytest_extractbench.*]
follow_imports = skip

[mypy-pytest_extractbench.scoring.*,pytest_extractbench.core.*]
follow_imports = normal

[mypy-numpy.*,scipy.*,jsonschema.*,jsonschema_rs.*,referencing.*]
follow_imports = skip
follow_imports_for_stubs = True
"""


def build(*, jobs: int = 2, opt_level: str = "3", verbose: bool = False) -> dict[str, float]:
    """Compile :data:`compiled.MODULES` into :data:`compiled.DIRECTORY`; returns the seconds and bytes it took."""
    from mypyc.build import mypycify
    from setuptools import Distribution  # type: ignore[import-untyped]  # no stubs in the dev extra: Any here

    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="extractbench-mypyc-") as scratch:
        config = os.path.join(scratch, "mypy.ini")
        with open(config, "w", encoding="utf-8") as file:
            file.write(_CONFIG.format(version=f"{sys.version_info[0]}.{sys.version_info[1]}", cache=scratch))
        sources = [os.path.join(compiled.HERE, f"{name}.py") for name in compiled.MODULES]
        fingerprint = compiled.fingerprint()  # of the sources as they were compiled
        extensions = mypycify(
            [*sources, "--config-file", config],
            group_name=compiled.GROUP,
            target_dir=os.path.join(scratch, "c"),
            opt_level=opt_level,
            verbose=verbose,
        )
        generated = time.perf_counter()
        distribution = Distribution({"name": "pytest-extractbench-compiled", "ext_modules": extensions})
        command = distribution.get_command_obj("build_ext")
        command.build_lib = os.path.join(scratch, "lib")
        command.build_temp = os.path.join(scratch, "temp")
        command.parallel = jobs
        distribution.run_command("build_ext")
        built = os.path.join(scratch, "lib", *compiled.GROUP.split(".")[:-1])
        staging = os.path.join(scratch, "out")
        os.mkdir(staging)
        size = 0
        for name in sorted(os.listdir(built)):
            shutil.copy2(os.path.join(built, name), staging)
            size += os.path.getsize(os.path.join(staging, name))
        with open(os.path.join(staging, compiled.MANIFEST), "w", encoding="utf-8") as file:
            import json

            json.dump({**fingerprint, "modules": list(compiled.MODULES)}, file, indent=1)
        clean()
        shutil.copytree(staging, compiled.DIRECTORY)
    done = time.perf_counter()
    return {"generate_s": generated - started, "compile_s": done - generated, "bytes": float(size)}


def clean() -> bool:
    """Remove the compiled build; whether there was one."""
    if not os.path.isdir(compiled.DIRECTORY):
        return False
    shutil.rmtree(compiled.DIRECTORY)
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=2, help="C compiler processes (default 2)")
    parser.add_argument("--opt-level", default="3", choices=("0", "1", "2", "3"), help="the C compiler's -O level")
    parser.add_argument("--verbose", action="store_true")
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--status", action="store_true", help="say whether a new process would use a current build")
    action.add_argument("--clean", action="store_true", help="remove the compiled build")
    args = parser.parse_args(argv)
    if args.status:
        print(compiled.status()[1])
        return 0
    if args.clean:
        print("removed" if clean() else "no compiled build to remove")
        return 0
    figures = build(jobs=args.jobs, opt_level=args.opt_level, verbose=args.verbose)
    print(
        f"compiled {', '.join(compiled.MODULES)} in {figures['generate_s']:.0f} s (mypyc) + "
        f"{figures['compile_s']:.0f} s (C compiler): {figures['bytes'] / 1e6:.1f} MB in {compiled.DIRECTORY}"
    )
    print(compiled.status()[1])
    return 0


if __name__ == "__main__":
    sys.exit(main())
