"""The README's two commands are the ones that work: CI runs the test command, adding only how it runs."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    quick_start = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```bash\n(.+?)\n```", quick_start, re.DOTALL)


def test_ci_runs_the_readme_test_command() -> None:
    main_command, test_command = readme_commands()
    ci_lines = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    # CI adds only how the suite runs (workers, the durations report, a lane's arguments), never what it selects
    (ci_command,) = [line for line in ci_lines if line.startswith(test_command + " ")]
    assert ci_command.removeprefix(test_command + " ").split() == [
        "-n",
        "2",
        "--dist",
        "loadgroup",
        "--durations=30",
        '"$@"',
        "||",
        "status=$?",
    ]


def all_readme_commands() -> list[str]:
    """Every command the README shows: its ```bash blocks and its inline `pytest ...`-style commands."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```(?:bash|sh|console)\n(.+?)\n```", text, re.DOTALL)
    inline = re.findall(r"`((?:pytest --|extractbench |python -m |pip install )[^`\n]*)`", text)
    return blocks + inline


def repo_paths_in(command: str) -> set[str]:
    """Tokens of a command that name a path inside one of the repository's top-level directories."""
    top = {entry.name for entry in ROOT.iterdir() if entry.is_dir() and not entry.name.startswith(".")}
    paths = set()
    for token in re.split(r"[\s\"'`]+", command):
        token = token.split("=", 1)[-1]  # NAME=PATH, -DOPTION=$PWD/PATH
        token = token.removeprefix("$PWD/").removeprefix("./")
        if "/" in token and token.split("/", 1)[0] in top:
            paths.add(token.rstrip("/"))
    return paths


def test_the_main_command_points_at_files_that_exist() -> None:
    main_command, _ = readme_commands()
    commands = all_readme_commands()
    assert main_command in commands
    checked = set().union(*(repo_paths_in(command) for command in commands))
    # the commands that name repository files: the demo predictions, the weak ones, the cmake include
    assert {
        "fixtures/predictions/demo.jsonl",
        "fixtures/predictions/weak.jsonl",
        "ci/llama-server-only.cmake",
    } <= checked
    missing = sorted(path for path in checked if not (ROOT / path).exists())
    assert not missing, f"README commands name files that do not exist: {missing}"


def test_the_x_eval_example_is_a_valid_eval_schema() -> None:
    import json

    from pytest_extractbench.scoring import parse_eval_schema

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("### Schema-driven rules and diagnostics", 1)[1]
    example = re.search(r"```json\n(.+?)\n```", section, re.DOTALL).group(1)
    root = parse_eval_schema(json.loads(example))  # raises on any bad x-eval key
    assert root.properties["items"].rule.align == "key_field"
