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
            cwd=workspace,
            env={**env, **plain(step.get("env"))},
            capture_output=True,
            text=True,
            timeout=600,
        )
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


def pull_request(
    origin: Path, workspace: Path, change: dict[str, Path | str], extra: dict[str, str] | None = None
) -> JobRun:
    """A branch off main with `change` (path in the repository -> source file or text), run by the compare job
    (``extra``: more of the runner's environment, e.g. a stand-in GitHub)."""
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
    return run_job("compare", workspace, {**github, **(extra or {})})


def main_push(origin: Path, workspace: Path) -> JobRun:
    checkout(origin, workspace)
    github = {"GITHUB_EVENT_NAME": "push", "GITHUB_REF_NAME": "main", "GITHUB_REF": "refs/heads/main"}
    return run_job("baseline", workspace, github)


# -- GitHub's REST API, as far as the comment step uses it through gh --------------------------------------

FAKE_GH = """#!{python}
import json, os, sys

state_path = os.environ["FAKE_GH_STATE"]
with open(state_path, encoding="utf-8") as f:
    state = json.load(f)
args = sys.argv[1:]
state["calls"].append(args)
method, fields, endpoint = "GET", {{}}, None
rest = iter(args[1:])
for arg in rest:
    if arg == "-X":
        method = next(rest)
    elif arg in ("-F", "--field"):
        key, value = next(rest).split("=", 1)
        fields[key] = open(value[1:], encoding="utf-8").read() if value.startswith("@") else value
    elif not arg.startswith("-"):
        endpoint = arg
issues = "repos/" + os.environ["GITHUB_REPOSITORY"] + "/issues/"
path = endpoint.split("?")[0]
if method != "GET" and state.get("read_only"):
    sys.stderr.write("HTTP 403: Resource not accessible by integration\\n")
    code = 1
elif method == "GET" and path == issues + os.environ["EXTRACTBENCH_CI_PR"] + "/comments":
    half = len(state["comments"]) // 2  # two pages, as --paginate prints them
    print(json.dumps(state["comments"][:half]))
    print(json.dumps(state["comments"][half:]))
    code = 0
elif method == "POST" and path == issues + os.environ["EXTRACTBENCH_CI_PR"] + "/comments":
    state["comments"].append({{"id": 100 + len(state["comments"]), "body": fields["body"],
                              "user": {{"login": "github-actions[bot]", "type": "Bot"}}}})
    code = 0
elif method == "PATCH" and path.startswith(issues + "comments/"):
    comment = next(c for c in state["comments"] if str(c["id"]) == path.rsplit("/", 1)[1])
    assert comment["user"]["type"] == "Bot", "edits someone else's comment"
    comment["body"] = fields["body"]
    code = 0
else:
    sys.stderr.write("unexpected call: " + " ".join(args) + "\\n")
    code = 2
with open(state_path, "w", encoding="utf-8") as f:
    json.dump(state, f)
sys.exit(code)
"""


class FakeGitHub:
    """A stand-in ``gh`` on PATH that keeps the pull request's comments in a JSON file."""

    def __init__(self, where: Path, comments: list[dict] | None = None, read_only: bool = False) -> None:
        self.bin = where / "gh-bin"
        self.bin.mkdir()
        gh = self.bin / "gh"
        gh.write_text(FAKE_GH.format(python=sys.executable), encoding="utf-8")
        gh.chmod(0o755)
        self.state = where / "gh-state.json"
        self.state.write_text(json.dumps({"comments": comments or [], "calls": [], "read_only": read_only}))
        self.env = {
            "PATH": f"{self.bin}{os.pathsep}{os.environ['PATH']}",
            "FAKE_GH_STATE": str(self.state),
            "GITHUB_REPOSITORY": "team/project",
            "EXTRACTBENCH_CI_PR": "7",
            "GH_TOKEN": "not-a-token",
        }

    def read(self) -> dict:
        return json.loads(self.state.read_text(encoding="utf-8"))

    def methods(self) -> list[str]:
        return [call[call.index("-X") + 1] if "-X" in call else "GET" for call in self.read()["calls"]]


MARKER = "<!-- extractbench -->"


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
    assert re.search(
        r"^\s*REGRESSION model 'predictions': extraction_quality_score 0\.\d+ -> 0\.\d+", benchmark.output, re.MULTILINE
    ), benchmark.output
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
def test_a_pull_request_gets_one_comment_updated_on_later_pushes(
    after_main: tuple[Path, JobRun], tmp_path: Path
) -> None:
    origin, _ = after_main
    others = [
        {"id": 1, "body": f"quoting it: {MARKER}", "user": {"login": "ann", "type": "User"}},
        {"id": 2, "body": "coverage: 91%", "user": {"login": "codecov[bot]", "type": "Bot"}},
    ]
    github = FakeGitHub(tmp_path, others)
    first = pull_request(origin, tmp_path / "push-1", {predictions_path(): WEAK}, github.env)
    assert first.step("comment").returncode == 0, first.step("comment").output
    comments = github.read()["comments"]
    assert comments[:2] == others and len(comments) == 3
    ours = comments[2]
    summary = (first.workspace / "results" / "summary.md").read_text(encoding="utf-8")
    assert ours["body"] == f"{MARKER}\n{summary}"
    # what a reviewer needs leads: the failed gate, the verdict against the baseline with its bucket counts
    head = ours["body"][:3000]
    assert "**Gate: FAILED**" in head and "**REGRESSED**" in head and " regressed" in head
    assert "Pull request comment created." in first.summary
    second = pull_request(origin, tmp_path / "push-2", {"NOTES.md": "outputs as on main\n"}, github.env)
    assert second.step("pr").returncode == 0
    comments = github.read()["comments"]
    assert len(comments) == 3 and comments[2]["id"] == ours["id"]  # the same comment, edited
    assert comments[2]["body"].startswith(MARKER) and "**Gate: passed**" in comments[2]["body"]
    assert github.methods() == ["GET", "POST", "GET", "PATCH"]
    assert "Pull request comment updated." in second.summary


@needs_git
def test_the_pull_request_compares_with_mains_baseline_not_its_own_copy(
    after_main: tuple[Path, JobRun], tmp_path: Path
) -> None:
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
        assert [command[2] for command in commands] == [
            "install",
            expected,
            "summary",
            *(["comment"] if job_id == "compare" else []),
        ]


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


def requirements() -> list[str]:
    path = ROOT / load_workflow()["env"]["EXTRACTBENCH_CI_REQUIREMENTS"]
    return [
        line.strip()
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.strip().startswith("#")
    ]


def test_the_install_step_brings_what_the_runs_use_pinned() -> None:
    addopts = shlex.split(load_workflow()["env"].get("PYTEST_ADDOPTS", ""))
    pins = dict(line.split("==", 1) for line in requirements())
    assert all("==" in line for line in requirements()), requirements()  # every requirement pinned
    version = re.search(r'^version = "(.+)"', (ROOT / "pyproject.toml").read_text(encoding="utf-8"), re.MULTILINE)
    assert pins["pytest-extractbench"] == version.group(1)
    if "-n" in addopts or any(option.startswith("--numprocesses") for option in addopts):
        assert "pytest-xdist" in pins
    install = re.search(r"^install\)\n(.*?)\n\s*;;", SCRIPT.read_text(encoding="utf-8"), re.MULTILINE | re.DOTALL)
    assert "$REQUIREMENTS" in install.group(1) and "pip install" in install.group(1)
    for path in (WORKFLOW, SCRIPT, ROOT / "ci" / "requirements.txt"):
        assert "OWNER" not in path.read_text(encoding="utf-8"), path


def test_jobs_have_a_timeout_and_a_pip_cache_keyed_on_the_pins() -> None:
    for job_id, job in load_workflow()["jobs"].items():
        assert 0 < job["timeout-minutes"] <= 120, job_id
        setup = next(step for step in job["steps"] if str(step.get("uses", "")).startswith("actions/setup-python"))
        assert setup["with"]["cache"] == "pip"
        assert setup["with"]["cache-dependency-path"] == load_workflow()["env"]["EXTRACTBENCH_CI_REQUIREMENTS"]
    assert load_workflow()["jobs"]["compare"]["permissions"]["pull-requests"] == "write"


FAKE_PYTHON = """#!/bin/sh
printf '%s\\n' "$@" >>"$PIP_LOG"
while [ $# -gt 0 ]; do
    if [ "$1" = -r ]; then cat "$2" >>"$PIP_LOG"; fi
    shift
done
"""


def run_install(cwd: Path, tmp_path: Path, python: str, **env: str) -> subprocess.CompletedProcess[str]:
    """The install step in ``cwd`` with a stand-in ``python`` script (nothing is downloaded)."""
    fake_python = tmp_path / "python"
    fake_python.write_text(python, encoding="utf-8")
    fake_python.chmod(0o755)
    return subprocess.run(
        ["bash", str(SCRIPT), "install"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        env={**clean_environ(), "PYTHON": str(fake_python), **env},
    )


def install_words(cwd: Path, tmp_path: Path) -> list[str]:
    """What the install step hands pip in ``cwd`` (the stand-in python records it)."""
    log = tmp_path / "pip.log"
    done = run_install(cwd, tmp_path, FAKE_PYTHON, PIP_LOG=str(log))
    assert done.returncode == 0, done.stderr
    return log.read_text(encoding="utf-8").split()


def test_a_project_installs_the_pinned_requirements(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "ci").mkdir(parents=True)
    shutil.copyfile(ROOT / "ci" / "requirements.txt", project / "ci" / "requirements.txt")
    words = install_words(project, tmp_path)
    assert words[:5] == ["-m", "pip", "install", "-r", "ci/requirements.txt"]
    assert set(requirements()) <= set(words)


FAILING_PIP = """#!/bin/sh
echo "ERROR: No matching distribution found for pytest-extractbench==0.1.0" >&2
exit 1
"""


@pytest.mark.parametrize(
    "line, explained",
    [
        ("pytest-extractbench==0.1.0", True),
        ("pytest-extractbench @ git+https://example.invalid/x/pytest-extractbench@abc123", False),
    ],
)
def test_a_pin_the_index_lacks_says_what_to_write_instead(tmp_path: Path, line: str, explained: bool) -> None:
    project = tmp_path / "project"
    (project / "ci").mkdir(parents=True)
    (project / "ci" / "requirements.txt").write_text(f"# pinned\n{line}\npytest-xdist==3.8.0\n", encoding="utf-8")
    summary = tmp_path / "summary.md"
    done = run_install(project, tmp_path, FAILING_PIP, GITHUB_STEP_SUMMARY=str(summary))
    assert done.returncode == 1
    assert ("replace the line with where you install the plugin from" in done.stderr) is explained, done.stderr
    assert ("Not installed" in (summary.read_text(encoding="utf-8") if summary.exists() else "")) is explained


def test_the_plugins_own_checkout_installs_the_commit_under_test(tmp_path: Path) -> None:
    """In a checkout of the plugin the install step installs it (.), with the other pins, not the release."""
    words = install_words(ROOT, tmp_path)
    assert words[:4] == ["-m", "pip", "install", "."]
    others = [line for line in requirements() if not line.startswith("pytest-extractbench")]
    assert others and set(others) <= set(words) and not any(w.startswith("pytest-extractbench") for w in words)


@needs_git
def test_a_live_run_without_a_server_stops_with_a_clear_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fork's pull request: the workflow's live variant, whose vars (the server URL) and secrets are empty."""
    origin = make_origin(tmp_path)
    workflow = load_workflow()
    live = {key: value for key, value in workflow["env"].items() if key != "EXTRACTBENCH_PREDICTIONS"}
    live.update(EXTRACTBENCH_BASE_URL="", EXTRACTBENCH_MODEL="qwen")
    monkeypatch.setattr(sys.modules[__name__], "load_workflow", lambda: {**workflow, "env": live})
    github = FakeGitHub(tmp_path, read_only=True)  # a fork's token reads, never writes
    run = pull_request(origin, tmp_path / "pr", {"NOTES.md": "from a fork\n"}, github.env)
    benchmark = run.step("pr")
    assert benchmark.returncode != 0
    assert "no model server configured" in benchmark.output, benchmark.output
    assert "chunk" not in benchmark.output and not (run.workspace / "results").exists()  # no embedded fallback
    assert "no model server configured" in run.summary and "No results/summary.md" in run.summary
    # the comment step tried, was refused, and did not fail the job a second time
    assert run.step("comment").returncode == 0 and github.methods() == ["GET", "POST"]
    assert "GitHub refused it" in run.summary
