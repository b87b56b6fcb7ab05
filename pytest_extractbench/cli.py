"""The ``extractbench`` command (also ``python -m pytest_extractbench``).

Each subcommand is a ``(name, help, add_arguments, run)`` entry in
:data:`COMMANDS`; ``run`` returns the process exit code.
"""

from __future__ import annotations

import argparse
import sys
import textwrap
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NamedTuple


def say(text: object, *, err: bool = False) -> None:
    """Print a message that may quote untrusted text (file names, sample ids, server answers), made safe."""
    from .core.textsafe import text_lines

    print(text_lines(text), file=sys.stderr if err else sys.stdout)


class Command(NamedTuple):
    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


# Short spellings for typing `extractbench run` by hand, accepted beside the plugin's own long options.
RUN_ALIASES = {
    "--config": "--extractbench-config",
    "--sample": "--extractbench-sample",
    "--seed": "--extractbench-seed",
    "--models": "--model",
}


RUN_USAGE = "extractbench run [--config FILE] [--sample N] [--seed S] [--models A,B] [PYTEST OPTIONS ...]"


def _run_epilog() -> str:
    from .config.table import OPTIONS

    entries = []
    for spec in OPTIONS:
        names = ", ".join(
            (spec.option if spec.flag or spec.metavar is None else f"{spec.option} {spec.metavar}", *spec.aliases)
        )
        entries.append(
            f"  {names}\n" + textwrap.fill(spec.help, width=100, initial_indent=" " * 6, subsequent_indent=" " * 6)
        )
    return (
        textwrap.fill(
            "Every other argument goes to pytest unchanged: pytest's own options (-k, -m, -x, -q, -n, "
            "--lf, ...) and the plugin's options (also settable by ini key, environment variable and "
            "config file: docs/reference/options.md):",
            width=100,
        )
        + "\n  --extractbench\n      Turn the plugin on (implied by `extractbench run`).\n"
        + "\n".join(entries)
    )


def _add_run_arguments(parser: argparse.ArgumentParser) -> None:
    parser.usage = RUN_USAGE
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = _run_epilog()
    # not parser arguments: they must stay in the pass-through list for run_arguments() to map
    parser.description = textwrap.fill(
        "Run the benchmark: the same as `pytest --extractbench ...`. Short spellings: "
        + ", ".join(f"{short} (= {long})" for short, long in RUN_ALIASES.items())
        + "."
    )
    parser.set_defaults(passthrough=True)  # every other argument goes to pytest unchanged


def run_arguments(extra: Sequence[str]) -> list[str]:
    """pytest's arguments for ``extractbench run``: the short spellings (``--config FILE``, ``--sample N``,
    ``--seed S``, ``--models A,B``, also as ``--config=FILE``) become the plugin's options."""
    out = []
    for arg in extra:
        name, eq, value = arg.partition("=")
        if name in RUN_ALIASES:
            arg = RUN_ALIASES[name] + eq + value
        out.append(arg)
    return out


def _run(args: argparse.Namespace) -> int:
    import pytest

    return int(pytest.main(["--extractbench", *run_arguments(args.extra)]))


def _add_report_arguments(parser: argparse.ArgumentParser) -> None:
    # positional like compare's and view's run directories; --results-dir is the earlier spelling and still works
    what = "A run directory (metrics.json, samples.jsonl)."
    parser.add_argument("run_dir", nargs="?", type=Path, metavar="RUN_DIR", help=what)
    parser.add_argument("--results-dir", type=Path, metavar="DIR", help=what + " Same as RUN_DIR.")
    parser.add_argument(
        "--output", type=Path, metavar="FILE", help="Where to write the HTML report (default RUN_DIR/report.html)."
    )
    parser.add_argument("--title", help="Report title.")


def _write_html(command: str, write: Callable[[], str]) -> int:
    """Run ``write`` (returns the line to print); a run directory that cannot be read, or a report that cannot
    be written, exits 2 with one line saying why."""
    from .core.files import OutputWriteError
    from .core.rundir import RunDirError

    try:
        message = write()
    except (RunDirError, OutputWriteError, OSError) as exc:
        say(f"extractbench {command}: {exc}", err=True)
        return 2
    except (RecursionError, MemoryError) as exc:  # what the readers' limits let through, the renderer still refuses
        say(
            f"extractbench {command}: the run's files are too deeply nested or too large to render "
            f"({type(exc).__name__})",
            err=True,
        )
        return 2
    say(message)
    return 0


def _report(args: argparse.Namespace) -> int:
    from .report.html import REPORT_FILE, write_report
    from .report.rows import read_run

    if (args.run_dir is None) == (args.results_dir is None):
        say("extractbench report: give the run directory once, as RUN_DIR or --results-dir DIR", err=True)
        return 2
    run_dir: Path = args.run_dir or args.results_dir

    def write() -> str:
        run = read_run(run_dir)
        output = args.output or run_dir / REPORT_FILE
        if run.document["track"] != "extraction":  # a toolcall, generate or repair run has its own page
            from .report.exports import write_text
            from .report.track_report import track_report_html

            write_text(output, track_report_html(run.document))
        else:
            write_report(run, output, title=args.title)
        return f"report written to {output}"

    return _write_html("report", write)


def _add_compare_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "run_dirs", nargs="*", type=Path, metavar="RUN_DIR", help="Run directories (metrics.json, samples.jsonl)."
    )
    parser.add_argument(
        "--runs", default="", metavar="A,B,C", help="Run directories, comma-separated (added to RUN_DIR)."
    )
    parser.add_argument(
        "--output",
        type=Path,
        default=Path("comparison.html"),
        metavar="FILE",
        help="Where to write the comparison report (default comparison.html).",
    )
    parser.add_argument("--title", help="Report title.")


def _compare(args: argparse.Namespace) -> int:
    from .report.compare_runs import merge_runs
    from .report.html import write_report

    paths = list(args.run_dirs) + [Path(p.strip()) for p in args.runs.split(",") if p.strip()]

    def write() -> str:
        merged = merge_runs(paths)
        title = args.title or "Run comparison: " + ", ".join(str(p) for p in paths)
        path = write_report(merged, args.output, title=title)
        return f"comparison of {len(merged.document['models'])} models written to {path}"

    return _write_html("compare", write)


VIEW_DESCRIPTION = (
    "Write the sample viewer of one run, or of several runs side by side, and open it in a browser (without one, "
    "print the page's path). The first run is the current one: the others' models are compared with it "
    "(EQS deltas to sort by, outputs and field-level diffs next to each other). The page is one offline HTML file."
)


def _add_view_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = VIEW_DESCRIPTION
    parser.add_argument(
        "run_dirs",
        nargs="+",
        type=Path,
        metavar="RUN_DIR",
        help="Run directories (metrics.json, samples.jsonl); the first is the current run.",
    )
    parser.add_argument(
        "--output", type=Path, metavar="FILE", help="Where to write the page (default FIRST_RUN_DIR/viewer.html)."
    )
    parser.add_argument("--title", help="Page title (default: the runs' folder names).")
    parser.add_argument("--no-browser", action="store_true", help="Only write the page and print its path.")


def _view(args: argparse.Namespace) -> int:
    from .report.html import VIEWER_FILE, write_viewer
    from .report.viewer import runs_from_dirs

    def write() -> str:
        path = write_viewer(
            runs_from_dirs(args.run_dirs), args.output or args.run_dirs[0] / VIEWER_FILE, title=args.title
        )
        if not args.no_browser and _open_in_browser(path):
            return f"viewer opened in a browser: {path}"
        return f"viewer written to {path}"

    return _write_html("view", write)


def _open_in_browser(path: Path) -> bool:
    """Open ``path`` in the user's browser; False when there is none (a server, CI, a text console)."""
    import webbrowser

    try:
        webbrowser.get()
    except webbrowser.Error:
        return False
    return bool(webbrowser.open(path.resolve().as_uri()))


def _add_connection_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--base-url", required=True, metavar="URL", help="OpenAI-compatible base URL, e.g. http://localhost:8000/v1."
    )
    parser.add_argument(
        "--model",
        help="Also check that the server serves this model (a server without "
        "GET /models, which answers 404, passes unverified).",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="How long to wait for the server's answer (default 10).",
    )


def _test_connection(args: argparse.Namespace) -> int:
    from .live.connection import check_connection

    result = check_connection(args.base_url, args.model, timeout=args.timeout)
    say(result.message, err=not result.ok)
    return 0 if result.ok else 1


# --- datasets and configuration ---


def _add_dataset_stats_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "spec",
        metavar="SPEC",
        help="Dataset: bundled, a .jsonl/.json/.parquet file, a Benchson folder or hf:NAME[:split].",
    )
    parser.add_argument("--columns", default="", metavar="OURS=THEIRS[,...]", help="Column mapping.")
    parser.add_argument("--sample", type=int, default=None, metavar="N", help="Statistics of N sampled samples.")
    parser.add_argument("--seed", type=int, default=42, metavar="S", help="Sampling seed.")
    parser.add_argument("--json", action="store_true", help="Print the statistics as JSON.")


def _dataset_stats(args: argparse.Namespace) -> int:
    import json

    from .dataset.samples import subsample
    from .dataset.sources import DatasetSourceError, load_source, parse_columns
    from .dataset.statistics import dataset_statistics, statistics_lines

    try:
        dataset = load_source(args.spec, columns=dict(parse_columns(args.columns)))
    except (argparse.ArgumentTypeError, DatasetSourceError, OSError) as exc:
        say(f"extractbench dataset-stats: {exc}", err=True)
        return 2
    samples = subsample(dataset.samples, args.sample, args.seed)
    stats = dataset_statistics(samples)
    invalid = dataset.skipped
    if args.json:
        print(
            json.dumps(
                {"dataset": dataset.name, "statistics": stats, "invalid_samples": [p.as_dict() for p in invalid]},
                indent=2,
            )
        )
        return 0
    say(f"dataset {dataset.name} ({dataset.source})")
    for line in statistics_lines(stats):
        say(line)
    if invalid:
        say(f"{len(invalid)} invalid sample problem(s):")
        for problem in invalid[:20]:
            say(f"  {problem}")
    return 0


def _add_validate_config_arguments(parser: argparse.ArgumentParser) -> None:
    what = "The YAML config file (model, dataset, prompts, metrics, output, performance)."
    parser.add_argument("file", metavar="FILE", nargs="?", help=what)
    parser.add_argument("--config", dest="config_file", metavar="FILE", help=what + " Same as FILE.")


def _validate_config(args: argparse.Namespace) -> int:
    import tempfile

    if (args.file is None) == (args.config_file is None):
        say("extractbench validate-config: give the config file once, as FILE or --config FILE", err=True)
        return 2
    args.file = args.file or args.config_file

    from .config.file import read_config
    from .config.settings import OPTIONS_BY_NAME

    with tempfile.TemporaryDirectory() as scratch:  # inline prompts are checked, not materialized
        found = read_config(Path(args.file), OPTIONS_BY_NAME, base_dir=Path.cwd(), prompt_dir=Path(scratch))
    for note in found.notes:
        say(f"note: {note}")
    for problem in found.problems:
        say(f"{args.file}: {problem}", err=True)
    if found.problems:
        say(f"{args.file}: {len(found.problems)} problem(s)", err=True)
        return 1
    say(f"{args.file}: OK ({len(found.values) + len(found.pending)} option(s) set)")
    return 0


COMMANDS: list[Command] = [
    Command("run", "Run the benchmark (pytest --extractbench with the same options).", _add_run_arguments, _run),
    # --- reports ---
    Command("report", "Write the HTML report of a run directory.", _add_report_arguments, _report),
    Command(
        "compare", "Compare the models of several run directories in one HTML report.", _add_compare_arguments, _compare
    ),
    Command(
        "view", "Open the sample viewer of one or more run directories (side by side).", _add_view_arguments, _view
    ),
    Command(
        "test-connection",
        "Check that an OpenAI-compatible server answers (GET /models).",
        _add_connection_arguments,
        _test_connection,
    ),
    # --- datasets and configuration ---
    Command(
        "dataset-stats",
        "Print a dataset's statistics and invalid samples without running a model.",
        _add_dataset_stats_arguments,
        _dataset_stats,
    ),
    Command(
        "validate-config",
        "Check a config file; report every problem with its key path.",
        _add_validate_config_arguments,
        _validate_config,
    ),
]


def _version() -> str:
    from importlib import metadata

    try:
        return metadata.version("pytest-extractbench")
    except metadata.PackageNotFoundError:  # run from a source tree that was never installed
        return "unknown"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="extractbench", description="Benchmark LLM structured-data extraction.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
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
    status: int = args.handler(args)
    return status


if __name__ == "__main__":
    sys.exit(main())
