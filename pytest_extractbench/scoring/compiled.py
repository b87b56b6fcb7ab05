"""The optional compiled build of the scoring core's hot modules: where it lives and whether this process uses it.

``python -m pytest_extractbench.scoring.build_compiled`` compiles :data:`MODULES` with mypyc into
:data:`DIRECTORY`; nothing else does, so a plain install stays pure Python. When that directory holds a build made
from the sources as they are now, the package puts it first on ``pytest_extractbench.scoring.__path__`` and those
modules import as extensions; the pure modules beside them stay the reference, tested to give identical results.
The pure path is taken when :data:`PURE_ENV` is set (to compare both in one session), when there is no build, and
when the build is stale: any module of ``scoring/`` (or the error classes it raises) changed since it was made, so
an edit is never shadowed by an old extension.
"""

from __future__ import annotations

import os
import sys

MODULES = ("anls", "anls_walk", "compare", "emit", "fields", "flat")
"""The modules compiled: the field walk (fields, emit), leaf comparison (compare, flat) and ANLS* (anls, anls_walk),
most of a sample's time (benchmarks/README.md, "The scoring core compiled")."""

HERE = os.path.dirname(os.path.abspath(__file__))
DIRECTORY = os.path.join(HERE, "_compiled")
MANIFEST = "build.json"
GROUP = "pytest_extractbench.scoring._native"
"""mypyc's name for the build's shared library: ``_native__mypyc`` beside the compiled modules."""
PURE_ENV = "EXTRACTBENCH_PURE"
"""Set to 1 to score with the pure-Python modules even where a compiled build exists."""

_PACKAGE = __name__.rpartition(".")[0]
# What a build depends on beyond its own modules: every module they import types from is in scoring/
_DEPENDENCIES = (os.path.join(HERE, os.pardir, "core", "errors.py"),)


def fingerprint() -> dict[str, str]:
    """The interpreter's extension suffix and a digest of every source a build is made from."""
    import hashlib
    import sysconfig

    digest = hashlib.sha256()
    names = sorted(name for name in os.listdir(HERE) if name.endswith(".py"))
    for path in [os.path.join(HERE, name) for name in names] + [os.path.normpath(p) for p in _DEPENDENCIES]:
        with open(path, "rb") as source:
            digest.update(os.path.basename(path).encode() + b"\0" + source.read() + b"\0")
    return {"suffix": str(sysconfig.get_config_var("EXT_SUFFIX")), "sources": digest.hexdigest()}


def status() -> tuple[str | None, str]:
    """``(directory to search first, why)``: the build's directory when this process should use it, else None."""
    if os.environ.get(PURE_ENV, "").strip() not in ("", "0"):
        return None, f"pure Python: {PURE_ENV} is set"
    path = os.path.join(DIRECTORY, MANIFEST)
    if not os.path.exists(path):
        return None, "pure Python: no compiled build"
    import json

    try:
        with open(path, encoding="utf-8") as file:
            recorded = json.load(file)
    except (OSError, ValueError):
        return None, f"pure Python: unreadable {path}"
    now = fingerprint()
    if recorded.get("suffix") != now["suffix"]:
        return None, f"pure Python: the build is for {recorded.get('suffix')}, this interpreter loads {now['suffix']}"
    if recorded.get("sources") != now["sources"]:
        return None, "pure Python: the compiled build is stale (scoring/ changed since it was made)"
    return DIRECTORY, f"compiled: {', '.join(MODULES)} from {DIRECTORY}"


def active() -> bool:
    """Whether this process scores with the compiled modules (they are imported as extensions)."""
    module = sys.modules.get(f"{_PACKAGE}.fields")
    return module is not None and not str(getattr(module, "__file__", "")).endswith(".py")


def _search_first() -> tuple[str | None, str]:
    """Put a current build first on the package's path, before the package imports its modules."""
    found = status()
    if found[0] is not None:
        sys.modules[_PACKAGE].__path__.insert(0, found[0])
    return found


STATUS = _search_first()
"""What this process found when the package loaded: ``(directory or None, why)``."""
