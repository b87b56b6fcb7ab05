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


# --- datasets and configuration (issue 4) ---


def _add_dataset_stats_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("spec", metavar="SPEC", help="Dataset: bundled, a .jsonl/.json/.parquet file, a Benchson "
                        "folder or hf:NAME[:split].")
    parser.add_argument("--columns", default="", metavar="OURS=THEIRS[,...]", help="Column mapping.")
    parser.add_argument("--sample", type=int, default=None, metavar="N", help="Statistics of N sampled samples.")
    parser.add_argument("--seed", type=int, default=42, metavar="S", help="Sampling seed.")
    parser.add_argument("--json", action="store_true", help="Print the statistics as JSON.")


def _dataset_stats(args: argparse.Namespace) -> int:
    import json

    from .dataset import subsample
    from .datastats import dataset_statistics, statistics_lines
    from .loaders import DatasetSourceError, load_source, parse_columns

    try:
        dataset = load_source(args.spec, columns=dict(parse_columns(args.columns)))
    except (argparse.ArgumentTypeError, DatasetSourceError, OSError) as exc:
        print(f"extractbench dataset-stats: {exc}", file=sys.stderr)
        return 2
    samples = subsample(dataset.samples, args.sample, args.seed)
    stats = dataset_statistics(samples)
    invalid = [p for p in dataset.problems if p.severity == "error"]
    if args.json:
        print(json.dumps({"dataset": dataset.name, "statistics": stats,
                          "invalid_samples": [p.as_dict() for p in invalid]}, indent=2))
        return 0
    print(f"dataset {dataset.name} ({dataset.source})")
    for line in statistics_lines(stats):
        print(line)
    if invalid:
        print(f"{len(invalid)} invalid sample problem(s):")
        for problem in invalid[:20]:
            print(f"  {problem}")
    return 0


def _add_validate_config_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE", help="The YAML config file (spec 5.3 structure).")


def _validate_config(args: argparse.Namespace) -> int:
    import tempfile
    from pathlib import Path

    from .config_file import read_config
    from .settings import OPTIONS_BY_NAME

    with tempfile.TemporaryDirectory() as scratch:  # inline prompts are checked, not materialized
        found = read_config(Path(args.file), OPTIONS_BY_NAME, base_dir=Path.cwd(), prompt_dir=Path(scratch))
    for note in found.notes:
        print(f"note: {note}")
    for problem in found.problems:
        print(f"{args.file}: {problem}", file=sys.stderr)
    if found.problems:
        print(f"{args.file}: {len(found.problems)} problem(s)", file=sys.stderr)
        return 1
    print(f"{args.file}: OK ({len(found.values) + len(found.pending)} option(s) set)")
    return 0


COMMANDS: list[Command] = [
    Command("run", "Run the benchmark (pytest --extractbench with the same options).", _add_run_arguments, _run),
    Command("dataset-stats", "Print a dataset's statistics and invalid samples without running a model.",
            _add_dataset_stats_arguments, _dataset_stats),
    Command("validate-config", "Check a config file; report every problem with its key path.",
            _add_validate_config_arguments, _validate_config),
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
