"""The line -> tests map of mutate.py: one coverage run over the unit tests with a dynamic context per test (the
test's node id), split over the jobs' copies of the project, and the cache that keeps it while nothing it depends on
has changed.

The map only says which tests run which line, so its run uses the ``mutation-coverage`` hypothesis profile (40
examples of the mutation profile's derandomized search); every verdict still comes from the 500-example search.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

from runners import env_for

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "pytest_extractbench"
# left out of the coverage run: its four writer processes stall for many minutes under coverage's tracer on a
# busy machine, and the journal (live/) is none of the mutated modules
COVERAGE_DESELECT = ("tests/unit/test_journal.py::test_processes_appending_at_once_never_tear_a_line",)

COLLECTOR = r"""
import json, sys, coverage, pytest
out, files, test_args = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3:]
cov = coverage.Coverage(data_file=out + ".coverage", include=files, branch=False)
durations = {}
failed = set()

class Contexts:
    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        cov.switch_context(item.nodeid)
        yield
        cov.switch_context("")

    def pytest_runtest_logreport(self, report):
        durations[report.nodeid] = durations.get(report.nodeid, 0.0) + report.duration
        if report.failed:
            failed.add(report.nodeid)

cov.start()
rc = pytest.main(["-q", "-p", "no:cacheprovider", "--no-header", *test_args], plugins=[Contexts()])
cov.stop()
cov.save()
data = cov.get_data()
lines = {}
for path in data.measured_files():
    by_line = data.contexts_by_lineno(path)
    lines[path] = {str(n): sorted(c for c in ctxs) for n, ctxs in by_line.items()}
json.dump({"rc": int(rc), "lines": lines, "durations": durations, "failed": sorted(failed)}, open(out, "w"))
"""


def test_files(tests: list[str], root: Path = ROOT) -> list[str]:
    """The coverage run's arguments with every directory turned into its test files (pytest's ``test_*.py``)."""
    files: list[str] = []
    for t in tests:
        path = root / t
        if path.is_dir():
            files += sorted(str(f.relative_to(root)) for f in path.rglob("test_*.py"))
        else:
            files.append(t)
    return files


def shards(tests: list[str], jobs: int, hints: dict[str, float]) -> list[list[str]]:
    """The test files split into ``jobs`` groups of about equal time, longest first onto the least loaded group.
    ``hints`` are each file's seconds in an earlier coverage run (a stale cache still knows which files are slow);
    without them a file's size stands in for its time."""
    files = test_files(tests)
    known = [hints[f] for f in files if f in hints]
    fallback = sorted(known)[len(known) // 2] if known else 0.0

    def weight(f: str) -> float:
        if known:
            return hints.get(f, fallback)
        path = ROOT / f.split("::")[0]
        return float(path.stat().st_size) if path.is_file() else 0.0

    groups: list[list[str]] = [[] for _ in range(max(1, min(jobs, len(files))))]
    loads = [0.0] * len(groups)
    for f in sorted(files, key=lambda f: (-weight(f), f)):
        i = loads.index(min(loads))
        groups[i].append(f)
        loads[i] += weight(f)
    return [g for g in groups if g]


def coverage_map(
    copies: list[Path], modules: list[str], tests: list[str], extra: list[str], hints: dict, profile: str
) -> dict:
    """The line -> tests map: one coverage run per copy, each over its share of the test files, at once."""
    deselect = [f"--deselect={t}" for t in COVERAGE_DESELECT]
    runs = []
    for copy, group in zip(copies, shards(tests, len(copies), hints), strict=False):
        out = copy / ".mutation-coverage.json"
        script = copy / ".mutation-collect.py"
        script.write_text(COLLECTOR)
        files = [str(copy / m) for m in modules]
        cmd = [sys.executable, str(script), str(out), json.dumps(files), *deselect, *extra, *group]
        log = (copy / ".mutation-collect.log").open("w")
        env = env_for(copy, profile=profile)
        proc = subprocess.Popen(cmd, cwd=copy, env=env, stdout=log, stderr=subprocess.STDOUT)
        runs.append((copy, out, proc, log))
    result: dict[str, dict[int, set[str]]] = {m: {} for m in modules}
    durations: dict[str, float] = {}
    failed: set[str] = set()
    try:
        for copy, out, proc, log in runs:
            proc.wait()
            log.close()
            tail = (copy / ".mutation-collect.log").read_text(errors="replace")[-3000:]
            if not out.exists():
                sys.exit(f"coverage run failed:\n{tail}")
            data = json.loads(out.read_text())
            if data["rc"] not in (0, 1):
                sys.exit(f"the coverage run did not complete (pytest exit {data['rc']}):\n{tail}")
            durations.update(data["durations"])
            failed |= set(data["failed"])
            for module in modules:
                for n, ctxs in data["lines"].get(str(copy / module), {}).items():
                    result[module].setdefault(int(n), set()).update(ctxs)
    finally:  # one share that failed stops the others
        for _, _, proc, _ in runs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    if failed:  # a test that fails unmutated cannot judge a mutant: it is left out of the map
        print(f"  {len(failed)} test(s) fail unmutated and are left out: {', '.join(sorted(failed))}", flush=True)
    for by_line in result.values():
        for n in by_line:
            by_line[n] -= failed
    return {"lines": result, "durations": durations, "failed": sorted(failed)}


def file_durations(durations: dict[str, float]) -> dict[str, float]:
    """Each test file's seconds, from its tests' seconds."""
    files: Counter[str] = Counter()
    for test, seconds in durations.items():
        files[test.split("::")[0]] += seconds
    return dict(files)


def hint_durations(path: Path | None) -> dict[str, float]:
    """Each test file's seconds in the coverage map cached at ``path``, whatever sources it was made from."""
    if path is None or not path.exists():
        return {}
    return file_durations(json.loads(path.read_text()).get("durations", {}))


def _is_test_file(path: Path) -> bool:
    return path.name.startswith("test_") and path.suffix == ".py"


def support_key(tests: list[str], root: Path = ROOT) -> str:
    """A hash of what every test's coverage depends on: the package, the tests' support files (conftests,
    helpers, data: every file under tests/ but the test files and this tool), the root conftest and pyproject, and
    the coverage run's arguments. When it changes the whole map is made again."""
    digest = hashlib.sha1(json.dumps([tests, COVERAGE_DESELECT]).encode())
    for top in (PACKAGE, "tests", "conftest.py", "pyproject.toml"):
        path = root / top
        files = sorted(path.rglob("*")) if path.is_dir() else [path]
        for f in files:
            skipped = {"__pycache__", ".hypothesis"} | ({"mutation"} if top == "tests" else set())  # the tool itself
            if not f.is_file() or skipped & set(f.relative_to(root).parts) or (top == "tests" and _is_test_file(f)):
                continue
            digest.update(str(f.relative_to(root)).encode() + b"\0" + f.read_bytes())
    return digest.hexdigest()


def test_file_hashes(tests: list[str], root: Path = ROOT) -> dict[str, str]:
    """Each test file the coverage run collects (or test, as the arguments name it), by its file's hash: one added
    or edited since the map was made is mapped again alone (a test's contexts depend on the package and its own
    file, not on the other test files)."""
    entries = test_files(tests, root)
    return {e: hashlib.sha1((root / e.split("::")[0]).read_bytes()).hexdigest() for e in entries}


def _test_file(context: str) -> str:
    return context.split("::")[0]


def cached_coverage(
    path: Path, modules: list[str], cov_args: list[str], tests: list[str], root: Path = ROOT
) -> tuple[dict | None, list[str]]:
    """The cached map, and the test files to map again before it is whole: ``(None, [])`` when there is no usable
    cache (the package or the tests' support changed, or a module was not mapped); otherwise the map without the
    contexts of test files edited or removed since, and the edited or added files, which :func:`merge_coverage`
    adds back once mapped."""
    if not path.exists():
        return None, []
    data = json.loads(path.read_text())
    if data.get("support") != support_key(cov_args, root) or not set(modules) <= set(data["lines"]):
        return None, []
    now, then = test_file_hashes(tests, root), data.get("tests", {})
    stale = {e.split("::")[0] for e in then if now.get(e) != then[e]}
    again = sorted(e for e in now if then.get(e) != now[e])

    def kept(contexts: list[str]) -> set[str]:
        return {c for c in contexts if _test_file(c) not in stale}

    lines = {m: {int(n): kept(c) for n, c in data["lines"][m].items()} for m in modules}
    durations = {t: s for t, s in data["durations"].items() if _test_file(t) not in stale}
    failed = [t for t in data["failed"] if _test_file(t) not in stale]
    return {"lines": lines, "durations": durations, "failed": failed}, again


def merge_coverage(cov: dict, fresh: dict) -> dict:
    """``cov`` with the map of the test files mapped again added (a line neither ran is dropped)."""
    lines = {m: {n: set(c) for n, c in by_line.items()} for m, by_line in cov["lines"].items()}
    for m, by_line in fresh["lines"].items():
        for n, ctxs in by_line.items():
            lines.setdefault(m, {}).setdefault(n, set()).update(ctxs)
    lines = {m: {n: c for n, c in by_line.items() if c} for m, by_line in lines.items()}
    failed = sorted(set(cov["failed"]) | set(fresh["failed"]))
    return {"lines": lines, "durations": {**cov["durations"], **fresh["durations"]}, "failed": failed}


def save_coverage(path: Path, support: str, hashes: dict[str, str], cov: dict) -> None:
    """The map with the hashes of the sources it was made from (taken before its run: the copies' sources)."""
    lines = {m: {str(n): sorted(c) for n, c in by_line.items()} for m, by_line in cov["lines"].items()}
    payload = {"support": support, "tests": hashes, "lines": lines, "durations": cov["durations"]}
    path.write_text(json.dumps({**payload, "failed": cov["failed"]}))
