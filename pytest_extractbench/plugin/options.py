"""The options on pytest's command line and in its ini file; resolved through :mod:`pytest_extractbench.config`.

Registering them reads only the option table, so the entry point stays cheap for test runs without --extractbench.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from ..config.table import OPTIONS

if TYPE_CHECKING:
    from ..config.settings import Settings


def add_options(parser: pytest.Parser) -> None:
    """Register every option and its ini mirror."""
    # Help texts start with a capital letter and end with a period (pytest-xdist's rule).
    group = parser.getgroup("extractbench", "LLM structured-extraction benchmark")
    group.addoption(
        "--extractbench",
        action="store_true",
        dest="extractbench",
        default=False,
        help="Run the extraction benchmark: one test item per (model, sample).",
    )
    for spec in OPTIONS:
        names = (spec.option, *spec.aliases)
        # argparse %-formats help texts: a literal % (as in "-2%") must be doubled or --help crashes
        text = spec.help.replace("%", "%%")
        if spec.flag:
            group.addoption(*names, action="store_true", dest=spec.dest, default=None, help=text)
        else:
            group.addoption(
                *names,
                action="append" if spec.multiple else "store",
                dest=spec.dest,
                default=None,
                type=spec.converter,
                metavar=spec.metavar,
                help=text,
            )
        parser.addini(spec.ini, spec.help, default="")


def home_dir(config: pytest.Config) -> Path:
    """Where ``.extractbench/`` (runs, baselines, cache) lives: the project root when an ini file
    (pytest.ini, pyproject.toml, tox.ini, setup.cfg) fixes it and pytest runs inside that project, else the
    directory pytest runs from. pytest looks for its rootdir and ini file from the command line's path-like
    arguments, option values included, so ``--extractbench-subsets /other/project/subsets.yaml`` would move
    the baselines into another project (and ``--extractbench-predictions /elsewhere/preds.jsonl`` to ``/``)."""
    here = config.invocation_params.dir
    if config.inipath is not None and here.is_relative_to(config.rootpath):
        return config.rootpath
    return here


def settings_from_config(config: pytest.Config) -> Settings:
    """Resolve the pytest config (command line, environment, config file, ini) once."""
    from ..config.layers import OptionSources, settings_from_sources  # the settings need the scoring layers

    sources = OptionSources(
        cli={spec.name: config.getoption(spec.dest) for spec in OPTIONS},
        getini=config.getini,
        invocation_dir=config.invocation_params.dir,
        rootpath=home_dir(config),
    )
    return settings_from_sources(sources, enabled=bool(config.getoption("extractbench")))
