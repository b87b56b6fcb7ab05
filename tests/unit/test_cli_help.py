"""Every `extractbench` subcommand's --help explains every option it lists, and the subcommands that read run
directories take them the same way (positional RUN_DIR)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pytest_extractbench.cli import main

ENTRY = re.compile(r"^ {2}(\S.*?)(?: {2,}(\S.*))?$")


def help_text(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    with pytest.raises(SystemExit) as stopped:
        main([*argv, "--help"])
    assert stopped.value.code == 0
    return capsys.readouterr().out


def subcommands(capsys: pytest.CaptureFixture[str]) -> list[str]:
    """The subcommands `extractbench --help` lists, read from its output rather than from the parser."""
    text = help_text(capsys)
    block = text.split("positional arguments:", 1)[1].split("\n\n", 1)[0]
    return re.findall(r"^ {4}(\w[\w-]*)", block, re.MULTILINE)


def entries(text: str) -> dict[str, str]:
    """argparse's option and positional entries (``  --name METAVAR   help``, help possibly on the next, deeper
    line) mapped to their help text."""
    found: dict[str, str] = {}
    for section in re.split(r"\n(?=\S[^\n]*:\n)", text):
        title, _, body = section.partition("\n")
        if title not in ("options:", "positional arguments:"):
            continue
        name = None
        for line in body.splitlines():
            entry = ENTRY.match(line)
            if entry and not line.startswith("   "):
                name = entry.group(1).strip()
                found[name] = entry.group(2) or ""
            elif name is not None and line.strip():
                found[name] = (found[name] + " " + line.strip()).strip()
    return found


def run_entries(text: str) -> dict[str, str]:
    """``extractbench run --help``'s plugin options: a line per option (and its aliases), its help indented below."""
    epilog = text.split("docs/reference/options.md):", 1)[1]
    found: dict[str, str] = {}
    name = None
    for line in epilog.splitlines():
        if re.match(r"^ {2}-", line):
            name = line.strip()
            found[name] = ""
        elif name is not None and line.startswith("      "):
            found[name] = (found[name] + " " + line.strip()).strip()
    return found


def test_every_option_of_every_subcommand_has_help(capsys: pytest.CaptureFixture[str]) -> None:
    names = subcommands(capsys)
    assert {"run", "report", "compare", "view", "test-connection", "dataset-stats", "validate-config"} <= set(names)
    silent = []
    for name in names:
        text = help_text(capsys, name)
        listed = entries(text)
        assert "-h, --help" in listed, name
        if name == "run":
            plugin = run_entries(text)
            from pytest_extractbench.config.table import OPTIONS

            assert len(plugin) == len(OPTIONS) + 1  # every option of the table, and --extractbench itself
            listed.update(plugin)
        silent += [f"{name} {option}" for option, words in listed.items() if len(words.split()) < 2]
    assert not silent, f"options without a help text: {silent}"


def test_the_entry_reader_sees_an_option_without_help(capsys: pytest.CaptureFixture[str]) -> None:
    text = "usage: x\n\noptions:\n  -h, --help  show this help\n  --quiet\n  --timeout S  Seconds.\n"
    assert entries(text) == {"-h, --help": "show this help", "--quiet": "", "--timeout S": "Seconds."}


def test_the_cli_reference_shows_every_subcommand(capsys: pytest.CaptureFixture[str]) -> None:
    page = (Path(__file__).resolve().parents[2] / "docs" / "reference" / "cli.md").read_text(encoding="utf-8")
    missing = [name for name in subcommands(capsys) if f"extractbench {name} " not in page]
    assert not missing, f"docs/reference/cli.md shows no example of: {missing}"


@pytest.mark.parametrize("command", ["report", "compare", "view"])
def test_run_directories_are_positional_everywhere(capsys: pytest.CaptureFixture[str], command: str) -> None:
    text = help_text(capsys, command)
    usage = " ".join(text.split("\n\n", 1)[0].split())
    assert "RUN_DIR" in usage and "RUN_DIR" in entries(text)
