"""One YAML file for a whole run, mapped onto the command-line options.

Each key path names an option (:data:`KEY_PATHS`, declared in the option table); ``options.<name>`` reaches any
other option by its own name. Keys the plugin has no use for are accepted with a note saying why
(:data:`FIXED`). Values go through the option's own converter, so a config file accepts exactly
what the command line accepts. Every problem is collected with its key path; nothing is raised
half-way, so ``extractbench validate-config`` can list them all at once.

Precedence (see :func:`.layers.resolve_layers`): command line > environment
(``EXTRACTBENCH_<NAME>``) > config file > ``[tool.pytest.ini_options]`` > defaults. Secrets are
never read from the file: ``model.api_key`` must be null (keys come from the environment).
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import json
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..core import userfiles, yamlio
from ..core.errors import ExtractbenchError
from .table import OPTIONS

# key path -> option name, from the option table (each option lists its config-file keys there)
KEY_PATHS: dict[str, str] = {key: spec.name for spec in OPTIONS for key in spec.yaml}
# How some keys read their value: inverted switches, inline prompt text (written to a file)
INVERTED = frozenset({"output.generate_report", "metrics.field_matching.normalize_whitespace"})
INLINE_PROMPTS = frozenset({"prompts.system", "prompts.user"})
SECRET_KEYS = frozenset({"model.api_key"})
SPLIT_KEY = "dataset.split"
# Config-file keys of the documented layout (docs/reference) with no option behind them: only the value that describes
# what the plugin does anyway is accepted (None: no value is, but null); any other value stops the run, saying why. A
# key that is accepted but changes nothing would let a user believe a setting took effect.
FIXED: dict[str, tuple[Any, str]] = {
    "metrics.enabled": (None, "every metric is always computed; remove the key"),
    "metrics.field_matching.string_fuzzy_threshold": (
        None,
        "partial credit follows the composite score's bins (>= 0.5 partial, >= 0.3 lenient; docs/metrics.md)",
    ),
    "metrics.aggregation.f1_type": (
        "micro",
        "the headline F1 is micro-averaged; macro and weighted F1 are reported beside it in metrics.json",
    ),
    "output.save_predictions": (True, "responses and samples are always saved in the run directory"),
    "output.save_per_sample": (True, "samples.jsonl is always written"),
    "output.report_format": (
        None,
        "metrics.json, samples.jsonl, summary.md and report.html are always written "
        "(--extractbench-no-html-report leaves out the HTML)",
    ),
    "performance.batch_size": (1, "each sample is one request; requests run concurrently (performance.concurrency)"),
    "performance.num_workers": (1, "worker processes come from pytest-xdist: run pytest -n N"),
    "performance.cache_dir": (
        None,
        "reused answers are kept in .extractbench/cache/ under the directory pytest "
        "runs from (performance.enable_caching turns the cache on)",
    ),
}
SECTIONS = ("model", "dataset", "prompts", "metrics", "output", "performance", "options")
_PROMPT_OPTIONS = ("system_prompt", "user_prompt")


@dataclass
class ConfigFile:
    """A config file read and checked: converted option values, notes and every problem."""

    path: Path
    values: dict[str, Any] = field(default_factory=dict)  # option name -> converted value
    sources: dict[str, str] = field(default_factory=dict)  # option name -> key path
    pending: dict[str, Any] = field(default_factory=dict)  # options this version does not have yet
    notes: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


class ConfigError(ExtractbenchError):
    """A config file with problems; the message lists all of them."""

    def __init__(self, config: ConfigFile) -> None:
        super().__init__(f"config file {config.path}: " + "; ".join(config.problems))
        self.config = config


def _flatten(mapping: Mapping[str, Any], prefix: str, out: dict[str, Any], problems: list[str]) -> None:
    for key, value in mapping.items():
        path = f"{prefix}.{key}" if prefix else str(key)
        leaf = path in KEY_PATHS or path in FIXED or path in SECRET_KEYS or path == SPLIT_KEY
        if isinstance(value, dict) and not leaf and path != "dataset.columns" and not path.startswith("options."):
            _flatten(value, path, out, problems)
        else:
            out[path] = value


def _as_text(value: Any, multiple: bool) -> list[str] | str:
    """A YAML value as the text(s) a command-line converter takes."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        if multiple:
            return [_as_text(v, False) for v in value]  # type: ignore[misc]  # a scalar gives one str
        return ",".join(str(_as_text(v, False)) for v in value)
    if isinstance(value, dict):
        return ",".join(f"{k}={v}" for k, v in value.items())
    return str(value)


def read_config(
    path: Path,
    options: Mapping[str, Any],
    *,
    prompt_dir: Path | None = None,
    base_dir: Path | None = None,
) -> ConfigFile:
    """Read and check ``path`` against the option table ``options`` (name -> OptionSpec)."""
    result = ConfigFile(path=path)
    try:
        # a byte-order mark is not part of the YAML; /dev/zero or a FIFO is refused before anything is read
        text = userfiles.read_text(path, yamlio.MAX_BYTES, "utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        result.problems.append(f"cannot read the file: {getattr(exc, 'strerror', None) or exc}")
        return result
    try:
        data = yamlio.safe_load(text)  # aliases, size and nesting bounded
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
        result.problems.append(f"{where}not valid YAML: {getattr(exc, 'problem', None) or exc}")
        return result
    if data is None:
        return result
    if not isinstance(data, dict):
        result.problems.append(f"the top level must be a mapping of sections ({', '.join(SECTIONS)})")
        return result
    for section, value in data.items():
        if section not in SECTIONS:
            result.problems.append(f"{section}: unknown section{_suggest(str(section), SECTIONS)}")
        elif value is not None and not isinstance(value, dict):
            result.problems.append(f"{section}: must be a mapping, got {_type_name(value)}")
    flat: dict[str, Any] = {}
    _flatten({k: v for k, v in data.items() if k in SECTIONS and isinstance(v, dict)}, "", flat, result.problems)
    base = base_dir or path.parent
    for key_path, value in flat.items():
        _apply(result, key_path, value, flat, options, prompt_dir or (base / ".extractbench" / "prompts"), base)
    return result


def _apply(
    result: ConfigFile,
    key_path: str,
    value: Any,
    flat: Mapping[str, Any],
    options: Mapping[str, Any],
    prompt_dir: Path,
    base: Path,
) -> None:
    if key_path in SECRET_KEYS:
        if value is not None:
            result.problems.append(
                f"{key_path}: secrets do not belong in a config file; leave it null and set "
                "EXTRACTBENCH_API_KEY (or OPENAI_API_KEY) in the environment"
            )
        return
    if key_path in FIXED:
        accepted, why = FIXED[key_path]
        if value is not None and not (accepted is not None and value == accepted and type(value) is type(accepted)):
            allowed = "only null" if accepted is None else f"only {json.dumps(accepted)} (or null)"
            result.problems.append(
                f"{key_path}: {json.dumps(value, default=str)} cannot be applied: {why}; {allowed} is accepted"
            )
        return
    if key_path == SPLIT_KEY:
        if value is not None and not isinstance(value, str):
            result.problems.append(f"{key_path}: must be a string, got {_type_name(value)}")
        elif value is not None and "dataset.name" not in flat:
            result.problems.append(f"{key_path}: needs dataset.name")
        return
    if key_path.startswith("options."):
        name = key_path[len("options.") :].replace("-", "_")
    elif key_path in KEY_PATHS:
        name = KEY_PATHS[key_path]
    else:
        known = [*KEY_PATHS, *FIXED, *SECRET_KEYS, SPLIT_KEY]
        result.problems.append(f"{key_path}: unknown key{_suggest(key_path, known)}")
        return
    if value is None:
        return  # null = the default ("sample_size: null")
    if name in result.sources:
        result.problems.append(f"{key_path}: sets {name!r} again (already set by {result.sources[name]})")
        return
    if key_path in INVERTED:
        if not isinstance(value, bool):
            result.problems.append(f"{key_path}: expected true or false, got {value!r}")
            return
        value = not value
    if key_path in INLINE_PROMPTS:
        if not isinstance(value, str):
            result.problems.append(f"{key_path}: expected the prompt text, got {_type_name(value)}")
            return
        value = str(_write_prompt(prompt_dir, value))
    elif name in _PROMPT_OPTIONS:
        prompt = Path(str(value)).expanduser()
        prompt = prompt if prompt.is_absolute() else base / prompt
        try:
            userfiles.read_text(prompt, userfiles.TEXT_LIMIT)
        except (OSError, UnicodeDecodeError) as exc:
            reason = getattr(exc, "strerror", None) or exc
            result.problems.append(f"{key_path}: cannot read prompt file {value}: {reason}")
            return
        value = str(prompt)
    if key_path == "dataset.name" and isinstance(value, str) and isinstance(flat.get(SPLIT_KEY), str):
        value = _with_split(value, flat[SPLIT_KEY], base)
    result.sources[name] = key_path
    spec = options.get(name)
    if spec is None:
        if key_path.startswith("options."):
            result.problems.append(f"{key_path}: unknown option{_suggest(name, list(options))}")
            result.sources.pop(name)
        else:
            result.pending[name] = value
            result.notes.append(
                f"{key_path}: --extractbench-{name.replace('_', '-')} is not available in this "
                "version; the value is recorded, not applied"
            )
        return
    if isinstance(value, dict) and name != "columns":
        result.problems.append(f"{key_path}: must be a single value, got a mapping")
        return
    if isinstance(value, (dict, list)) and spec.flag:
        result.problems.append(f"{key_path}: expected true or false, got {_type_name(value)}")
        return
    text = _as_text(value, spec.multiple)
    try:
        if spec.multiple:
            items = text if isinstance(text, list) else [text]
            result.values[name] = tuple(spec.converter(item) for item in items)
        else:
            result.values[name] = spec.converter(text)
    except (argparse.ArgumentTypeError, ValueError, TypeError) as exc:
        result.problems.append(f"{key_path}: {exc}")


def _with_split(name: str, split: str, base: Path) -> str:
    """``dataset.name`` + ``dataset.split`` as one dataset spec: ``hf:NAME:SPLIT`` (a bare Hub name gets hf:)."""
    if name.startswith("hf:"):
        return f"{name}:{split}"
    if re.fullmatch(r"[\w.-]+/[\w.-]+", name) and not (base / name).exists():
        return f"hf:{name}:{split}"
    return name  # a local file or folder: its split is its test/ folder or the whole file


def _write_prompt(directory: Path, text: str) -> Path:
    """Inline prompt text as a file named by its hash (the prompt options take files)."""
    target = directory / f"prompt-{hashlib.sha256(text.encode()).hexdigest()[:16]}.txt"
    if not target.is_file():
        directory.mkdir(parents=True, exist_ok=True)
        # xdist workers read the same config at once: write aside, then rename (atomic)
        scratch = target.with_name(f"{target.name}.{os.getpid()}.tmp")
        scratch.write_text(text, encoding="utf-8")
        os.replace(scratch, target)
    return target


def _suggest(word: str, choices: Any) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _type_name(value: Any) -> str:
    names = {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean"}
    return names.get(type(value), type(value).__name__)


# -- the effective configuration, as recorded ---------------------------------------------------

_SECRET_NAME = re.compile(r"(api[_-]?key|token|secret|password|passwd|authorization)", re.IGNORECASE)
# ... unless the name counts tokens (max_tokens, prompt_tokens, tokens_per_s): a limit, not a credential.
_TOKEN_COUNT = re.compile(r"(max|prompt|completion|total|output|input|context)_tokens$|^tokens_per", re.IGNORECASE)
_URL_CREDENTIALS = re.compile(r"(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]*://)[^/@\s]+@")
_SECRET_QUERY = re.compile(r"(?P<key>[?&][^=&#]*(?:key|token|secret|password|sig)[^=&#]*=)[^&#\s]*", re.IGNORECASE)
REDACTED = "***"


def redact(value: Any, name: str = "") -> Any:
    """``value`` with credentials removed: secret-named keys, user:password@ in URLs, key=... query parameters."""
    if name and _SECRET_NAME.search(name) and not _TOKEN_COUNT.search(name):
        return REDACTED if value not in (None, "", (), []) else value
    if isinstance(value, str):
        value = _URL_CREDENTIALS.sub(r"\g<scheme>" + REDACTED + "@", value)
        return _SECRET_QUERY.sub(lambda m: m.group("key") + REDACTED, value)
    if isinstance(value, dict):
        return {k: redact(v, str(k)) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [redact(v) for v in value]
    return value


def json_value(value: Any, to_text: Callable[[Any], str] = str) -> Any:
    """A JSON-able form of an option value (paths and parsed objects as their text)."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (list, tuple)):
        return [json_value(v, to_text) for v in value]
    if isinstance(value, dict):
        return {str(k): json_value(v, to_text) for k, v in value.items()}
    as_dict = getattr(value, "as_dict", None)
    if callable(as_dict):
        return json_value(as_dict(), to_text)
    return to_text(value)
