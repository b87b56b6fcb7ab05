"""Each option's value from its sources: command line > environment > config file > ini > default.

Plain inputs only (the command line's parsed values by option name, an ini getter, the directories),
so the pytest adapter and any other front end resolve options the same way.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.errors import UsageProblem
from ..core.redact import redact_url
from .file import ConfigError, read_config
from .settings import Settings, effective_config
from .table import OPTIONS, OPTIONS_BY_NAME, OptionSpec


@dataclass(frozen=True)
class OptionSources:
    """Where option values come from besides the environment."""

    cli: Mapping[str, Any]  # option name -> the parsed command-line value, or None
    getini: Callable[[str], Any]  # ini key -> raw value ("" when unset)
    invocation_dir: Path  # relative paths on the command line and in the environment
    rootpath: Path  # relative paths in the ini file; .extractbench/ lives here


def settings_from_sources(sources: OptionSources, *, enabled: bool) -> Settings:
    """Resolve every option once and build the run's settings, recording where each value came from."""
    values, origins, from_file = resolve_layers(sources)
    return Settings.from_values(
        values, enabled=enabled, rootdir=sources.rootpath, record=effective_config(values, origins, from_file)
    )


def _ini_value(getini: Callable[[str], Any], spec: OptionSpec) -> Any:
    raw = getini(spec.ini)
    if raw in ("", None):
        return None
    try:
        if spec.multiple:
            return tuple(spec.converter(part) for part in str(raw).split())
        return spec.converter(str(raw).strip())
    except argparse.ArgumentTypeError as exc:
        raise UsageProblem(f"ini option {spec.ini} = {_shown(spec, str(raw))!r}: {exc}") from None


_CONFIG = "config"


def _env_value(spec: OptionSpec) -> Any:
    """``EXTRACTBENCH_<NAME>`` (or an alias such as ``OPENAI_BASE_URL``) converted like the option."""
    return _env_source(spec)[0]


def _env_source(spec: OptionSpec) -> tuple[Any, str]:
    """The value from the first set variable of ``EXTRACTBENCH_<NAME>`` and the option's aliases, and its name
    (repeatable options: whitespace-separated)."""
    for name in (spec.env, *spec.env_aliases):
        raw = os.environ.get(name)
        if raw is None or raw.strip() == "":
            continue
        try:
            if spec.multiple:
                return tuple(spec.converter(part) for part in raw.split()), name
            return spec.converter(raw.strip()), name
        except argparse.ArgumentTypeError as exc:
            raise UsageProblem(f"environment variable {name}={_shown(spec, raw)!r}: {exc}") from None
    return None, spec.env


def _shown(spec: OptionSpec, raw: str) -> str:
    """A rejected value as an error message may quote it: URLs without their credentials."""
    if spec.name == "base_url":
        return " ".join(redact_url(part) for part in raw.split())
    return raw


def _config_file(sources: OptionSources) -> Any:
    """The --extractbench-config file, read and checked (None when there is none)."""
    spec = OPTIONS_BY_NAME[_CONFIG]
    path, base = sources.cli.get(spec.name), sources.invocation_dir
    if path is None:
        path = _env_value(spec)
    if path is None:
        path, base = _ini_value(sources.getini, spec), sources.rootpath
    if path is None:
        return None
    path = path if path.is_absolute() else base / path
    found = read_config(
        path,
        OPTIONS_BY_NAME,
        base_dir=sources.invocation_dir,
        prompt_dir=sources.rootpath / ".extractbench" / "prompts",
    )
    if not found.ok:
        raise UsageProblem(f"extractbench: {ConfigError(found)}")
    return found


def resolve_layers(given: OptionSources) -> tuple[dict[str, Any], dict[str, str], Any]:
    """Every option's value and where it came from: command line > environment > config file > ini > default."""
    from_file = _config_file(given)
    values: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for spec in OPTIONS:
        value, source = given.cli.get(spec.name), "command line"
        if value is not None and spec.multiple:
            value = tuple(value)
        if value is None:
            value, variable = _env_source(spec)
            source = f"environment {variable}"
        if value is None and from_file is not None and spec.name in from_file.values:
            value, source = from_file.values[spec.name], f"config file {from_file.sources[spec.name]}"
        if value is None:
            value, source = _ini_value(given.getini, spec), "ini"
        values[spec.name] = spec.default_value() if value is None else value
        sources[spec.name] = "default" if value is None else source
    # --model a,b --model c -> ("a", "b", "c")
    values["model"] = tuple(
        name for group in values["model"] for name in (group if isinstance(group, tuple) else (group,))
    )
    return values, sources, from_file
