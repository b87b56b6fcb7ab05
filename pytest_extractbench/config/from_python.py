"""Settings for a run started from Python: keyword arguments named like the options.

``sample=10`` is ``--extractbench-sample 10``; a string goes through the option's own converter (so it
is checked as on the command line), other values are taken as they are; ``predictions`` also takes
``{"model": "path.jsonl"}`` and rows in memory (``[{"id": ..., "output": ...}]`` or ``{"model": rows}``). Nothing
is read from the environment, an ini file or a config file.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from ..core.errors import UsageProblem
from ..core.textsafe import clip
from ..dataset.predictions import PredictionsSpec
from .settings import Settings, effective_config
from .table import OPTIONS_BY_NAME

SOURCE = "evaluate()"
SHOWN_LIMIT = 120


def _convert(name: str, value: Any) -> Any:
    """The option's value, converted and checked as the command line's text would be."""
    spec = OPTIONS_BY_NAME[name]
    if spec.flag:
        if not isinstance(value, bool):
            raise TypeError(f"expected True or False, got {type(value).__name__}")
        return value
    if spec.multiple:
        values = list(value) if isinstance(value, (list, tuple)) else [value]
        return tuple(_one(spec.converter, v) for v in values)
    return _one(spec.converter, value)


def _one(converter: Any, value: Any) -> Any:
    """One value as its text would be read: a number or a path is taken as the text it stands for; another
    type (a list, a dict, an object, True/False where a value is wanted) is refused."""
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise TypeError(f"expected a string or a number, got {type(value).__name__}")
    return converter(str(value))


def _predictions(value: Any) -> tuple[PredictionsSpec, ...]:
    """A path, several, ``{model: path or rows}``, or rows (dicts in the predictions-file format) in memory."""
    if isinstance(value, Mapping) and not _is_row(value):  # {"model": path or rows}
        return tuple(_one_source(source, str(model)) for model, source in value.items())
    if _is_path(value):
        return (_one_source(value, None),)
    values = list(value) if isinstance(value, Iterable) and not isinstance(value, bytes) else [value]
    if values and all(_is_row(v) for v in values):
        return (_one_source(values, None),)
    return tuple(v if isinstance(v, PredictionsSpec) else _one_source(v, None) for v in values)


def _is_path(value: Any) -> bool:
    return isinstance(value, (str, os.PathLike))


def _is_row(value: Any) -> bool:
    """A predictions row: a mapping with an ``id`` (``{model: ...}`` has none)."""
    return isinstance(value, Mapping) and "id" in value


def _one_source(source: Any, model: str | None) -> PredictionsSpec:
    if isinstance(source, str) and model is None:
        return PredictionsSpec.parse(source)
    if isinstance(source, (str, os.PathLike)):
        return PredictionsSpec(Path(source), model)
    if isinstance(source, Iterable) and not isinstance(source, (bytes, Mapping)):
        rows = tuple(source)
        if all(isinstance(row, Mapping) for row in rows):
            return PredictionsSpec(Path(f"<rows of {model}>" if model else "<rows>"), model, rows=rows)
    raise TypeError(
        f"expected a path, rows (dicts with 'id' and 'output') or {{model: path or rows}}, got {type(source).__name__}"
    )


def _shown(value: Any) -> str:
    """The value as the message quotes it: short, and never whatever an object's repr would print."""
    if isinstance(value, (str, int, float, bool, os.PathLike, list, tuple, dict)) or value is None:
        return clip(repr(value), SHOWN_LIMIT)
    return f"<{type(value).__name__}>"


def settings_from_options(rootdir: Path, **options: Any) -> Settings:
    """The run's settings: every option's default, overridden by the given keyword arguments."""
    values = {spec.name: spec.default_value() for spec in OPTIONS_BY_NAME.values()}
    sources = {name: "default" for name in values}
    for name, value in options.items():
        if value is None:
            continue
        if name not in OPTIONS_BY_NAME:
            raise UsageProblem(
                f"extractbench: unknown option {name!r}; options are the --extractbench-* names with "
                f"underscores, e.g. sla, sample, seed, base_url"
            )
        try:
            values[name] = _predictions(value) if name == "predictions" else _convert(name, value)
        except (argparse.ArgumentTypeError, ValueError, TypeError) as exc:
            raise UsageProblem(f"extractbench: {name}={_shown(value)}: {exc}") from None
        sources[name] = SOURCE
    models = values["model"]
    values["model"] = tuple(m for group in models for m in (group if isinstance(group, tuple) else (group,)))
    return Settings.from_values(values, enabled=True, rootdir=rootdir, record=effective_config(values, sources))
