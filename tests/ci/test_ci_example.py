"""ci/github-actions.yml works as written: its jobs' run steps, executed in a scratch git repository with a
bare "origin", save and commit a baseline on main and gate pull requests on it.

The run steps all call ci/extractbench-ci.sh, so running them here runs what the workflow runs; only the
install step is skipped (it downloads the plugin; here the worktree's plugin is on PYTHONPATH).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

# each test runs the workflow's script on a scratch git repository: several full benchmark runs in subprocesses
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / "ci" / "github-actions.yml"
SCRIPT = ROOT / "ci" / "extractbench-ci.sh"
DATASET = ROOT / "pytest_extractbench" / "data" / "extraction.jsonl"
DEMO = ROOT / "fixtures" / "predictions" / "demo.jsonl"
WEAK = ROOT / "fixtures" / "predictions" / "weak.jsonl"
SCRIPT_IN_REPO = "ci/extractbench-ci.sh"
TEST_IDENTITY = ["-c", "user.name=test", "-c", "user.email=test@example.invalid"]

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="the workflow's steps need git")


def load_workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))


def run_steps(job: dict) -> list[dict]:
    return [step for step in job["steps"] if "run" in step]


def plain(env: dict | None) -> dict[str, str]:
    """An env block without GitHub expressions (secrets, vars): those are GitHub's to fill in."""
    return {key: str(value) for key, value in (env or {}).items() if "${{" not in str(value)}


def clean_environ() -> dict[str, str]:
    """This process's environment without anything that would steer the plugin, pytest, git or the script."""
    drop = ("EXTRACTBENCH_", "GITHUB_", "PYTEST_", "GIT_", "RUNNER_")
    env = {key: value for key, value in os.environ.items() if not key.startswith(drop)}
    # No user or system git configuration: the script must bring its own commit identity.
    env.update(GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")
    return env


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, env=clean_environ(), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout


# -- a GitHub Actions job, run step by step -----------------------------------------------------------


@dataclass
class Step:
    command: str
    returncode: int
    output: str


@dataclass
class JobRun:
    steps: list[Step]
    summary: str  # what the steps wrote to $GITHUB_STEP_SUMMARY
    workspace: Path

    def step(self, subcommand: str) -> Step:
        return next(step for step in self.steps if step.command.split()[-1] == subcommand)


def run_job(job_id: str, workspace: Path, github: dict[str, str]) -> JobRun:
    """The job's run steps in order, as the runner does: bash -eo pipefail, the workflow's, job's and step's
    env, a later step only when no earlier one failed unless it says `if: always()`."""
    workflow = load_workflow()
    job = workflow["jobs"][job_id]
    summary = workspace.parent / f"{workspace.name}-step-summary.md"
    summary.write_text("", encoding="utf-8")
    env = {
        **clean_environ(),
        **plain(workflow.get("env")),
        **plain(job.get("env")),
        # the workflow's -n auto would start workers on every core of a shared machine
        "PYTEST_ADDOPTS": "-p no:cacheprovider -p no:randomly",
        "PYTHON": sys.executable,
        "PYTHONPATH": str(ROOT),
        "CI": "true",
        "GITHUB_ACTIONS": "true",
        "GITHUB_STEP_SUMMARY": str(summary),
        **github,
    }
    steps, failed = [], False
    for step in run_steps(job):
        if shlex.split(step["run"])[-1] == "install":
            continue
        if failed and "always()" not in str(step.get("if", "")):
            continue
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
            cwd=workspace, env={**env, **plain(step.get("env"))}, capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        steps.append(Step(step["run"], done.returncode, done.stdout + done.stderr))
        failed = failed or done.returncode != 0
    return JobRun(steps, summary.read_text(encoding="utf-8"), workspace)


# -- the project: a repository with the workflow's inputs ---------------------------------------------


def make_origin(where: Path) -> Path:
    """A bare repository whose main holds the script, the dataset and predictions the workflow names."""
    env = load_workflow()["env"]
    seed = where / "seed"
    seed.mkdir()
    git(seed, "init", "--quiet", "-b", "main")
    (seed / "ci").mkdir()
    shutil.copy2(SCRIPT, seed / SCRIPT_IN_REPO)
    for name, source in (("EXTRACTBENCH_DATASET", DATASET), ("EXTRACTBENCH_PREDICTIONS", DEMO)):
        target = seed / env[name]
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
    (seed / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    (seed / ".gitignore").write_text(".extractbench/\nresults/\n", encoding="utf-8")
    git(seed, "add", "-A")
    git(seed, *TEST_IDENTITY, "commit", "--quiet", "-m", "project")
    origin = where / "origin.git"
    git(where, "clone", "--quiet", "--bare", str(seed), str(origin))
    return origin


def checkout(origin: Path, workspace: Path) -> Path:
    """A fresh clone, as actions/checkout gives every job."""
    git(origin.parent, "clone", "--quiet", str(origin), str(workspace))
    return workspace


def pull_request(origin: Path, workspace: Path, change: dict[str, Path | str]) -> JobRun:
    """A branch off main with `change` (path in the repository -> source file or text), run by the compare job."""
    checkout(origin, workspace)
    git(workspace, "checkout", "--quiet", "-b", "change")
    for path, content in change.items():
        if isinstance(content, Path):
            shutil.copyfile(content, workspace / path)
        else:
            (workspace / path).write_text(content, encoding="utf-8")
    git(workspace, "add", "-A")
    git(workspace, *TEST_IDENTITY, "commit", "--quiet", "-m", "change")
    github = {"GITHUB_EVENT_NAME": "pull_request", "GITHUB_BASE_REF": "main", "GITHUB_HEAD_REF": "change"}
    return run_job("compare", workspace, github)


def main_push(origin: Path, workspace: Path) -> JobRun:
    checkout(origin, workspace)
    github = {"GITHUB_EVENT_NAME": "push", "GITHUB_REF_NAME": "main", "GITHUB_REF": "refs/heads/main"}
    return run_job("baseline", workspace, github)


def baseline_path() -> str:
    return load_workflow()["env"]["EXTRACTBENCH_CI_BASELINE"]


def predictions_path() -> str:
    return load_workflow()["env"]["EXTRACTBENCH_PREDICTIONS"]


def metrics(run: JobRun) -> dict:
    return json.loads((run.workspace / "results" / "metrics.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def after_main(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, JobRun]:
    """The origin after main's first run, and that run."""
    where = tmp_path_factory.mktemp("after-main")
    origin = make_origin(where)
    return origin, main_push(origin, where / "main-run")


# -- the jobs -------------------------------------------------------------------------------------------


@needs_git
def test_main_saves_the_baseline_and_commits_it(after_main: tuple[Path, JobRun]) -> None:
    origin, run = after_main
    assert [step.returncode for step in run.steps] == [0, 0], run.steps
    saved = run.workspace / baseline_path()
    document = json.loads(saved.read_text(encoding="utf-8"))
    assert document["kind"] == "pytest-extractbench baseline" and document["name"] == "main"
    assert list(document["models"]) == ["predictions"] and len(document["models"]["predictions"]["samples"]) == 52
    # committed and pushed: main on the remote holds exactly this file, nothing else changed
    assert git(origin, "show", f"main:{baseline_path()}") == saved.read_text(encoding="utf-8")
    assert git(origin, "show", "--name-only", "--format=", "main").split() == [baseline_path()]
    assert git(run.workspace, "status", "--porcelain", "--untracked-files=no") == ""
    assert "saved and committed" in run.summary
    assert "# Model Evaluation Report" in run.summary  # the summary step appended results/summary.md


@needs_git
def test_main_commits_again_only_when_the_scores_change(after_main: tuple[Path, JobRun], tmp_path: Path) -> None:
    origin, _ = after_main
    tip = git(origin, "rev-parse", "main")
    run = main_push(origin, tmp_path / "main-again")
    assert run.step("main").returncode == 0, run.step("main").output
    assert git(origin, "rev-parse", "main") == tip
    assert "kept" in run.summary


@needs_git
def test_a_pull_request_whose_outputs_regress_fails(after_main: tuple[Path, JobRun], tmp_path: Path) -> None:
    origin, _ = after_main
    run = pull_request(origin, tmp_path / "pr", {predictions_path(): WEAK})
    benchmark = run.step("pr")
    assert benchmark.returncode == 1, benchmark.output
    assert re.search(r"^\s*REGRESSION model 'predictions': extraction_quality_score 0\.\d+ -> 0\.\d+",
                     benchmark.output, re.MULTILINE), benchmark.output
    assert metrics(run)["baseline_comparison"]["passed"] is False
    # the summary step still runs, after the failure
    assert run.step("summary").returncode == 0
    assert "Compared with the baseline" in run.summary and "# Model Evaluation Report" in run.summary


@needs_git
def test_an_unchanged_pull_request_passes(after_main: tuple[Path, JobRun], tmp_path: Path) -> None:
    origin, _ = after_main
    run = pull_request(origin, tmp_path / "pr", {"NOTES.md": "a change that leaves the outputs alone\n"})
    benchmark = run.step("pr")
    assert benchmark.returncode == 0, benchmark.output
    comparison = metrics(run)["baseline_comparison"]  # it was compared, and held
    assert comparison["passed"] is True
    assert "REGRESSION" not in benchmark.output


@needs_git
def test_the_pull_request_compares_with_mains_baseline_not_its_own_copy(after_main: tuple[Path, JobRun],
                                                                       tmp_path: Path) -> None:
    """A branch that also rewrites the committed baseline is still compared with main's (its copy here is not
    even a baseline: read, it would stop the run with exit code 4)."""
    origin, _ = after_main
    run = pull_request(origin, tmp_path / "pr", {predictions_path(): WEAK, baseline_path(): "{}"})
    benchmark = run.step("pr")
    assert benchmark.returncode == 1 and "REGRESSION model 'predictions'" in benchmark.output, benchmark.output


@needs_git
def test_a_pull_request_before_any_baseline_does_not_fail_for_it(tmp_path: Path) -> None:
    origin = make_origin(tmp_path)
    run = pull_request(origin, tmp_path / "pr", {"NOTES.md": "first change\n"})
    benchmark = run.step("pr")
    assert benchmark.returncode == 0, benchmark.output
    assert "baseline_comparison" not in metrics(run)
    assert "No baseline yet" in run.summary and "# Model Evaluation Report" in run.summary


# -- the workflow file ----------------------------------------------------------------------------------


def script_subcommands() -> set[str]:
    return set(re.findall(r"^([a-z]+)\)$", SCRIPT.read_text(encoding="utf-8"), re.MULTILINE))


def test_the_workflow_runs_on_main_and_on_pull_requests() -> None:
    workflow = load_workflow()
    triggers = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as true
    assert triggers["push"]["branches"] == ["main"]
    assert "pull_request" in triggers
    assert workflow["jobs"]["baseline"]["if"] == "github.event_name == 'push'"
    assert workflow["jobs"]["compare"]["if"] == "github.event_name == 'pull_request'"


def test_every_run_step_calls_the_script() -> None:
    known = script_subcommands()
    assert {"install", "main", "pr", "summary"} <= known
    for job_id, expected in (("baseline", "main"), ("compare", "pr")):
        commands = [shlex.split(step["run"]) for step in run_steps(load_workflow()["jobs"][job_id])]
        for command in commands:
            assert command[:2] == ["bash", SCRIPT_IN_REPO] and len(command) == 3 and command[2] in known, command
        assert [command[2] for command in commands] == ["install", expected, "summary"]


def test_results_are_summarized_and_uploaded_even_after_a_failure() -> None:
    for job in load_workflow()["jobs"].values():
        summary = next(step for step in job["steps"] if step.get("run", "").endswith(" summary"))
        upload = next(step for step in job["steps"] if str(step.get("uses", "")).startswith("actions/upload-artifact"))
        assert summary.get("if") == "always()" and upload.get("if") == "always()"
        assert upload["with"]["path"].rstrip("/") == "results"


def test_secrets_reach_the_steps_only_through_the_environment() -> None:
    text = WORKFLOW.read_text(encoding="utf-8")
    uses = re.findall(r"^\s*([A-Z_]+):\s*\$\{\{\s*secrets\.", text, re.MULTILINE)
    assert uses and set(uses) == {"EXTRACTBENCH_API_KEY"}, uses
    assert text.count("secrets.") == len(uses)  # no other mention, e.g. in a run: line
    for job in load_workflow()["jobs"].values():
        for step in run_steps(job):
            assert "secrets" not in step["run"] and "api-key" not in step["run"].lower()


def test_the_install_step_brings_what_the_runs_use() -> None:
    addopts = shlex.split(load_workflow()["env"].get("PYTEST_ADDOPTS", ""))
    install = re.search(r"^install\)\n(.*?)\n\s*;;", SCRIPT.read_text(encoding="utf-8"), re.MULTILINE | re.DOTALL)
    command = [line for line in install.group(1).splitlines() if not line.strip().startswith("#")]
    words = shlex.split(" ".join(command))
    assert "pip" in words and "install" in words
    assert any(word.startswith("pytest-extractbench") for word in words)
    if "-n" in addopts or any(option.startswith("--numprocesses") for option in addopts):
        assert "pytest-xdist" in words
