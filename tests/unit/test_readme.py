"""The README's two commands are the ones that work: CI runs the test command verbatim."""

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
    assert test_command in ci_lines


def test_the_main_command_points_at_files_that_exist() -> None:
    main_command, _ = readme_commands()
    for token in main_command.split():
        if token.startswith("fixtures/"):
            assert (ROOT / token).is_file(), token


def test_the_x_eval_example_is_a_valid_eval_schema() -> None:
    import json

    from pytest_extractbench.scoring import parse_eval_schema

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text.split("### Schema-driven rules and diagnostics", 1)[1]
    example = re.search(r"```json\n(.+?)\n```", section, re.DOTALL).group(1)
    root = parse_eval_schema(json.loads(example))  # raises on any bad x-eval key
    assert root.properties["items"].rule.align == "key_field"
