"""The README's two commands are the ones that work: CI runs the test command, adding only how it runs; every
command of the README and the docs names files that exist, and the docs' examples are valid as written."""

from __future__ import annotations

import json
import re

import yaml
from _docpages import README, ROOT, blocks, name, pages, read


def readme_commands() -> list[str]:
    text = README.read_text(encoding="utf-8")
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


def all_commands() -> dict[str, list[str]]:
    """Every command each page shows: its ```bash blocks and its inline `pytest ...`-style commands."""
    found = {}
    for path in pages():
        text = path.read_text(encoding="utf-8")
        inline = re.findall(r"`((?:pytest --|extractbench |python -m |pip install )[^`\n]*)`", text)
        found[name(path)] = [*blocks(text, "bash", "sh", "console"), *inline]
    return found


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


def test_the_commands_point_at_files_that_exist() -> None:
    main_command, _ = readme_commands()
    commands = all_commands()
    assert f"{main_command}\n" in "\n".join(commands["README.md"]) + "\n"
    checked = {path: set().union(*map(repo_paths_in, listed)) for path, listed in commands.items() if listed}
    # the commands that name repository files: the demo predictions, the weak ones, the cmake include
    assert {"fixtures/predictions/demo.jsonl", "fixtures/predictions/weak.jsonl"} <= checked["README.md"]
    assert "ci/llama-server-only.cmake" in checked["docs/development.md"]
    assert "fixtures/documents/dataset.jsonl" in checked["docs/guides/documents.md"]
    missing = sorted(
        f"{page}: {path}" for page, paths in checked.items() for path in paths if not (ROOT / path).exists()
    )
    assert not missing, f"commands name files that do not exist: {missing}"


def test_the_x_eval_example_is_a_valid_eval_schema() -> None:
    from pytest_extractbench.scoring import parse_eval_schema

    (example, *_) = blocks(read("explanation/eval-schemas.md"), "json")
    root = parse_eval_schema(json.loads(example))  # raises on any bad x-eval key
    assert root.properties["items"].rule.align == "key_field"


def test_every_json_and_yaml_example_parses() -> None:
    """JSON and YAML blocks are read as written (a block with a `...` placeholder is a shape, not a value)."""
    broken = []
    for path in pages():
        text = path.read_text(encoding="utf-8")
        for block in blocks(text, "json"):
            if "..." not in block:
                try:
                    json.loads(block)
                except ValueError as exc:
                    broken.append(f"{name(path)}: {exc}: {block[:60]!r}")
        for block in blocks(text, "yaml", "yml"):
            try:
                yaml.safe_load(block)
            except yaml.YAMLError as exc:
                broken.append(f"{name(path)}: {exc}")
    assert not broken, "\n".join(broken)


def test_the_subsets_example_is_a_valid_subsets_file(tmp_path) -> None:
    from pytest_extractbench.gating.subsets import load_subsets

    (example,) = blocks(read("guides/ci-gating.md"), "yaml")
    path = tmp_path / "subsets.yaml"
    path.write_text(example, encoding="utf-8")
    loaded = load_subsets(path)
    assert [rule.name for rule in loaded.rules] == ["complex-schemas"] and loaded.rules[0].compare_fail
    assert [group.field for group in loaded.group_by] == ["topic"]


def test_every_python_example_compiles_and_the_python_guide_runs_them() -> None:
    """guides/python.md's blocks run in tests/unit/test_python_api.py; a Python block elsewhere would be run by
    nothing, so there is none, and every block compiles."""
    for path in pages():
        for block in blocks(path.read_text(encoding="utf-8"), "python", "py"):
            compile(block, name(path), "exec")
            assert name(path) == "docs/guides/python.md", f"{name(path)} has a Python block no test runs"
