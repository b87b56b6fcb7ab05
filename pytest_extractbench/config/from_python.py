"""Settings for a run started from Python: keyword arguments named like the options.

``sample=10`` is ``--extractbench-sample 10``; a string goes through the option's own converter (so it
is checked as on the command line), other values are taken as they are; ``predictions`` also takes
``{"model": "path.jsonl"}``. Nothing is read from the environment, an ini file or a config file.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Mapping

from ..core.errors import UsageProblem
from ..dataset.predictions import PredictionsSpec
from .settings import Settings, effective_config
from .table import OPTIONS_BY_NAME

SOURCE = "evaluate()"


def _convert(name: str, value: Any) -> Any:
    spec = OPTIONS_BY_NAME[name]
    if spec.multiple:
        values = list(value) if isinstance(value, (list, tuple)) else [value]
        return tuple(spec.converter(v) if isinstance(v, str) else v for v in values)
    if spec.flag:
        return bool(value)
    if isinstance(value, (str, int, float)) and not isinstance(value, bool) and spec.converter not in (str, Path):
        return spec.converter(str(value))
    if isinstance(value, str) and spec.converter is Path:
        return Path(value)
    return value


def _predictions(value: Any) -> tuple[PredictionsSpec, ...]:
    if isinstance(value, Mapping):  # {"model": path}
        return tuple(PredictionsSpec(Path(path), str(model)) for model, path in value.items())
    values = list(value) if isinstance(value, (list, tuple)) else [value]
    return tuple(v if isinstance(v, PredictionsSpec) else
                 PredictionsSpec.parse(str(v)) if isinstance(v, str) else PredictionsSpec(Path(v)) for v in values)


def settings_from_options(rootdir: Path, **options: Any) -> Settings:
    """The run's settings: every option's default, overridden by the given keyword arguments."""
    values = {spec.name: spec.default_value() for spec in OPTIONS_BY_NAME.values()}
    sources = {name: "default" for name in values}
    for name, value in options.items():
        if value is None:
            continue
        if name not in OPTIONS_BY_NAME:
            raise UsageProblem(f"extractbench: unknown option {name!r}; options are the --extractbench-* names with "
                               f"underscores, e.g. sla, sample, seed, base_url")
        try:
            values[name] = _predictions(value) if name == "predictions" else _convert(name, value)
        except (argparse.ArgumentTypeError, ValueError, TypeError) as exc:
            raise UsageProblem(f"extractbench: {name}={value!r}: {exc}") from None
        sources[name] = SOURCE
    models = values["model"]
    values["model"] = tuple(m for group in models for m in (group if isinstance(group, tuple) else (group,)))
    return Settings.from_values(values, enabled=True, rootdir=rootdir, record=effective_config(values, sources))
