"""The generated references and the command's help: every option documented where users look, none drifting."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from pytest_extractbench.analysis import catalog, track_metrics
from pytest_extractbench.cli import COMMANDS, build_parser
from pytest_extractbench.config import reference
from pytest_extractbench.config.table import OPTIONS

REFERENCE = Path(__file__).resolve().parents[2] / "docs" / "reference"


@pytest.mark.parametrize("page", sorted(reference.PAGES))
def test_the_committed_reference_is_what_the_table_and_catalog_write(page: str) -> None:
    committed = (REFERENCE / page).read_text(encoding="utf-8")
    assert committed == reference.PAGES[page](), (
        f"docs/reference/{page} is stale: run `python -m pytest_extractbench.config.reference docs/reference`"
    )


def _table_rows(text: str) -> list[list[str]]:
    rows = [line for line in text.splitlines() if line.startswith("| ") and not line.startswith("|---")]
    return [[cell.strip() for cell in row.strip("|").split(" | ")] for row in rows[1:]]


def test_every_option_has_one_row_with_its_four_spellings_and_help() -> None:
    rows = _table_rows(reference.options_markdown())
    assert len(rows) == len(OPTIONS)
    for spec, row in zip(OPTIONS, rows):
        flag, ini, env, yaml, _default, help_text = row
        assert flag.startswith(f"`{spec.option}")
        assert ini == f"`{spec.ini}`"
        assert env.startswith(f"`{spec.env}`")
        assert f"`options.{spec.name}`" in yaml
        assert help_text.strip(), spec.name


def test_a_pipe_in_a_help_text_cannot_break_the_table() -> None:
    assert reference._cell("a | b\nc") == "a \\| b c"


def test_every_metric_has_one_row_with_its_direction() -> None:
    rows = _table_rows(reference.metrics_markdown().split("\n## ")[0])
    metrics = catalog.metrics()
    assert [row[0] for row in rows] == [f"`{m.name}`" for m in metrics]
    for metric, row in zip(metrics, rows):
        assert row[2] == ("higher" if metric.higher_is_better else "lower")
        if metric.sla:
            assert row[5].startswith("gate: ")


def test_every_track_figure_a_baseline_reads_has_a_row() -> None:
    section = reference.metrics_markdown().split("\n## ")[1]
    rows = _table_rows(section)
    expected = [
        [track, f"`{m.name}`", m.label] for track, metrics in track_metrics.TRACK_METRICS.items() for m in metrics
    ]
    assert [row[:3] for row in rows] == expected
    assert {row[0] for row in rows} == {"toolcall", "generate", "repair"}


def test_the_write_command_writes_both_pages(tmp_path: Path) -> None:
    written = reference.write(tmp_path / "ref")
    assert sorted(p.name for p in written) == sorted(reference.PAGES)
    for path in written:
        assert path.read_text(encoding="utf-8") == reference.PAGES[path.name]()


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    raise AssertionError("no subcommands")


@pytest.mark.parametrize("name", [command.name for command in COMMANDS])
def test_every_option_of_every_subcommand_has_help(name: str) -> None:
    sub = _subparsers(build_parser())[name]
    for action in sub._actions:
        if isinstance(action, argparse._HelpAction):
            continue
        assert action.help and action.help is not argparse.SUPPRESS and action.help.strip(), (
            f"extractbench {name}: {action.option_strings or action.dest} has no help text"
        )


def test_run_help_shows_each_plugin_option_with_its_help_text() -> None:
    sub = _subparsers(build_parser())["run"]
    text = " ".join(sub.format_help().split())
    for spec in OPTIONS:
        assert spec.option in text
        assert " ".join(spec.help.split()) in text, spec.name
