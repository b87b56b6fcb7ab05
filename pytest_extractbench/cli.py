"""The ``extractbench`` command (also ``python -m pytest_extractbench``).

Each subcommand is a ``(name, help, add_arguments, run)`` entry in
:data:`COMMANDS`; ``run`` returns the process exit code.
"""

from __future__ import annotations

import argparse
import sys
from typing import Callable, NamedTuple, Sequence


class Command(NamedTuple):
    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


def _add_run_arguments(parser: argparse.ArgumentParser) -> None:
    parser.set_defaults(passthrough=True)  # every other argument goes to pytest unchanged


def _run(args: argparse.Namespace) -> int:
    import pytest

    return int(pytest.main(["--extractbench", *args.extra]))


COMMANDS: list[Command] = [
    Command("run", "Run the benchmark (pytest --extractbench with the same options).", _add_run_arguments, _run),
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="extractbench", description="Benchmark LLM structured-data extraction.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for command in COMMANDS:
        sub = commands.add_parser(command.name, help=command.help, description=command.help)
        command.add_arguments(sub)
        sub.set_defaults(handler=command.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``extractbench`` console script."""
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra and not getattr(args, "passthrough", False):
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    args.extra = extra
    return args.handler(args)


if __name__ == "__main__":
    sys.exit(main())
