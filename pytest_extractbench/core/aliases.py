"""Old import paths keep working: ``pytest_extractbench.metrics`` is ``pytest_extractbench.analysis.metrics``.

The modules moved into layered subpackages; code written against the flat layout (``from
pytest_extractbench.consistency import consistency``) gets the same module object under its old name.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
from typing import Any

PACKAGE = "pytest_extractbench"
MOVED = {
    "jsonio": "core.jsonio", "yamlio": "core.yamlio", "redact": "core.redact", "textsafe": "core.textsafe",
    "rundir": "core.rundir", "report.files": "core.files",
    "loaders": "dataset.sources", "complexity": "dataset.complexity", "datastats": "dataset.statistics",
    "predictions": "dataset.predictions", "responses": "dataset.responses", "record": "dataset.records",
    "client": "live.client", "budget": "live.max_tokens", "connection": "live.connection",
    "endpoints": "live.endpoints", "pipeline": "live.pipeline", "journal": "live.journal", "context": "live.context",
    "server": "live.backends.llama_server", "llama_launcher": "live.backends.llama_launcher",
    "metrics": "analysis.metrics", "breakdowns": "analysis.breakdowns", "calibration": "analysis.calibration",
    "consistency": "analysis.consistency", "comparison": "analysis.comparison", "diagnostics": "analysis.diagnostics",
    "distributions": "analysis.distributions", "performance": "analysis.performance",
    "resampled": "analysis.resampled", "stats": "analysis.stats", "sample_extras": "analysis.sample_extras",
    "gates": "gating.sla", "baseline": "gating.baseline", "regression": "gating.regression",
    "verdict": "gating.verdict", "subsets": "gating.subsets",
    "settings": "config.settings", "config_file": "config.file",
    "hookspecs": "plugin.hookspecs", "collect": "plugin.items", "session": "plugin.session",
    "xdist_schedule": "plugin.xdist_schedule", "otel": "plugin.otel",
}


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, target: str) -> None:
        self.target = target
        self._spec: Any = None

    def create_module(self, spec: Any) -> Any:
        module = importlib.import_module(self.target)
        self._spec = module.__spec__
        return module

    def exec_module(self, module: Any) -> None:
        """The target module ran at its own import; importlib set the alias's spec on it: put its own back."""
        module.__spec__ = self._spec


class AliasFinder(importlib.abc.MetaPathFinder):
    """Finds ``pytest_extractbench.<old name>`` and hands out the moved module."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        old = fullname.removeprefix(PACKAGE + ".")
        new = MOVED.get(old) if fullname.startswith(PACKAGE + ".") else None
        if new is None:
            return None
        return importlib.util.spec_from_loader(fullname, _AliasLoader(f"{PACKAGE}.{new}"))


def install() -> None:
    if not any(isinstance(finder, AliasFinder) for finder in sys.meta_path):
        sys.meta_path.append(AliasFinder())
