"""A small AST mutation tester for the metric core (see README.md beside this file).

    python tests/mutation/mutate.py                      # the whole scope (SCOPE below)
    python tests/mutation/mutate.py pytest_extractbench/scoring/compare.py [more modules] [--jobs 1]

Never edits the working tree: the package, the tests and the root conftest are copied to a temp dir per worker,
each mutant is written over that copy and only the unit tests that cover the mutated line run (PYTHONPATH and the
working directory point at the copy). The line -> tests map comes from one coverage run over ``tests/unit`` with a
per-test dynamic context (the test's node id). By default the tests run in the warm server (warmserver.py): the
package imported and the tests collected once, each mutant patched into the functions' code objects of a forked
child; mutants on code that ran at import go to the fork server (forkserver.py), whose children import the package
afresh from the mutated file (runners.py says more).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import resource
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from covermap import (
    cached_coverage,
    coverage_map,
    file_durations,
    hint_durations,
    merge_coverage,
    save_coverage,
    shards,
    support_key,
    test_file_hashes,
)
from mutants import Mutant, apply, find_mutants
from runners import COVERAGE_PROFILE, RUNNERS, Verdict, drop_bytecode, make_copy

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
PACKAGE = "pytest_extractbench"
# every module of the scoring core, the analysis and the gates, and the dataset readers: what no argument mutates
SCOPE = tuple(
    str(path.relative_to(ROOT))
    for package in ("scoring", "analysis", "gating")
    for path in sorted((ROOT / PACKAGE / package).glob("*.py"))
    if path.name != "__init__.py"
) + tuple(
    # the dataset readers that decide what a sample, its gold and a recorded answer are
    f"{PACKAGE}/dataset/{name}.py"
    for name in ("records", "samples", "sources", "predictions", "responses")
)
# a run that times out is tried once more with this much more time before its timeout counts as a kill
PATIENCE = 4.0

# ----------------------------------------------------------------------------------------------
# the run


@dataclass
class ModuleReport:
    module: str
    mutants: int = 0
    killed: int = 0
    survived: int = 0
    listed: int = 0  # of the survived: listed in equivalents.md
    not_covered: int = 0
    errors: int = 0
    timeouts: int = 0  # of the killed: twice past their deadline
    cold: int = 0  # judged by the fork server (their code ran at import)
    spared: int = 0  # of the survived: not judged again with the slow tests (--rejudge)
    trusted: int = 0  # of the listed: not run at all (--listed trust)
    seconds: float = 0.0
    survivors: list[dict] = field(default_factory=list)

    @property
    def kill_rate(self) -> float | None:
        """Killed of every mutant: a listed equivalent, an uncovered or unjudged mutant counts against it."""
        return self.killed / self.mutants if self.mutants else None

    @property
    def score(self) -> float | None:
        """Killed of the mutants a test could kill (every mutant but the listed equivalents): the mutation score."""
        killable = self.mutants - self.listed
        return self.killed / killable if killable else None


@dataclass
class ModuleRun:
    """One module's mutants and what judging them shares: its line -> tests map, its source, its tests' kills."""

    module: str
    lines: dict[int, set[str]]
    mutants: list[Mutant]  # those to judge
    every: list[Mutant]  # all the module has (--only and --limit judge some)
    report: ModuleReport = field(init=False)
    original: str = field(init=False)
    source_lines: list[str] = field(init=False)
    kills: Counter[str] = field(default_factory=Counter)
    keys: Counter[tuple[str, str]] = field(init=False)
    started: float = float("inf")  # the first of its mutants taken, the last one done (monotonic)
    ended: float = 0.0

    def __post_init__(self) -> None:
        self.report = ModuleReport(self.module, mutants=len(self.mutants))
        self.original = (ROOT / self.module).read_text()
        self.source_lines = self.original.splitlines()
        self.keys = Counter(self.key(m) for m in self.every)

    def key(self, mutant: Mutant) -> tuple[str, str]:
        """What a row of equivalents.md names a mutant by: its line's text (spaces aside) and its operator."""
        return "".join(self.source_lines[mutant.line - 1].split()), mutant.operator

    def named_alone(self, mutant: Mutant) -> bool:
        """Whether no other mutant of the module has the same line text and operator, so that a row naming them
        names this mutant and no other."""
        return self.keys[self.key(mutant)] == 1


def _at(mutant: Mutant, place: str) -> bool:
    """Whether a mutant is at ``file:line`` or ``file:line:col`` (col 1-based, as the survivor list shows)."""
    parts = place.rsplit(":", 2) if place.count(":") >= 2 else place.rsplit(":", 1)
    if not parts[0].endswith(mutant.module) and not mutant.module.endswith(parts[0]):
        return False
    if len(parts) > 1 and int(parts[1]) != mutant.line:
        return False
    return len(parts) < 3 or int(parts[2]) == mutant.start[1] + 1


def covering_tests(mutant: Mutant, lines: dict[int, set[str]]) -> list[str]:
    """The tests whose context covered the mutated line; a line run only at import (module level,
    default values) is covered by every test that runs any of the module's code."""
    contexts = lines.get(mutant.stmt_line, set()) | lines.get(mutant.line, set())
    tests = {c for c in contexts if c}
    if not tests and "" in contexts:
        tests = {c for ctxs in lines.values() for c in ctxs if c}
    return sorted(tests)


def write_survivors(out: Path, modules: list[str], tests: list[str], reports: list[ModuleReport]) -> Path:
    payload = {
        "command": "python tests/mutation/mutate.py " + " ".join(modules),
        "tests": tests,
        "source_sha1": {m: hashlib.sha1((ROOT / m).read_bytes()).hexdigest() for m in modules},
        "modules": [
            {
                "module": r.module,
                "mutants": r.mutants,
                "killed": r.killed,
                "survived": r.survived,
                "not_covered": r.not_covered,
                "errors": r.errors,
                "timeouts": r.timeouts,
                "cold": r.cold,
                "listed": r.listed,
                "spared": r.spared,
                "trusted": r.trusted,
                "kill_rate": None if r.kill_rate is None else round(r.kill_rate, 4),
                "score": None if r.score is None else round(r.score, 4),
                "seconds": round(r.seconds),
                "survivors": r.survivors,
            }
            for r in reports
        ],
    }
    out.write_text(json.dumps(payload, indent=2) + "\n")
    return out


def listed_equivalents(path: Path) -> list[tuple[str, str, str]]:
    """(module, line text, operator) of every row of equivalents.md: a row names its line by the line's text, not
    its number, so edits elsewhere in the module do not stale it. A ``|`` of the code is written ``\\|``, as a
    markdown table needs it."""
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines() if path.exists() else ():
        cells = [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]
        if len(cells) >= 4 and cells[0].startswith("`") and cells[0].endswith(".py`"):
            rows.append((cells[0].strip("`"), cells[1].strip("`"), cells[2].strip("`")))
    return rows


def is_listed(entry: dict, rows: list[tuple[str, str, str]]) -> bool:
    """Whether a survivor is one equivalents.md lists: same module, same line text (spaces aside), same operator."""
    module = entry["where"].rsplit(":", 2)[0]
    squash = "".join(entry["line"].split())
    return any(
        module.endswith(m) and "".join(text.split()) == squash and operator == entry["operator"]
        for m, text, operator in rows
    )


def rejudged(mode: str, listed: bool) -> bool:
    """Whether a survivor of the fast tests is judged again with the slow ones (``--rejudge``): a listed equivalent
    is spared by default, since no test can kill it and the slow tests were most of a run's time."""
    return mode == "all" or (mode == "unlisted" and not listed)


def ran_at_import(mutant: Mutant, lines: dict[int, set[str]]) -> bool:
    """Whether the mutated line ran outside every test (at import or collection): a value computed there is not
    recomputed by patching a function, so such a mutant needs the package imported afresh."""
    return "" in lines.get(mutant.stmt_line, set()) | lines.get(mutant.line, set())


def order_tests(tests: list[str], durations: dict[str, float], kills: Counter[str]) -> list[str]:
    """Fastest and most killing first: a killed mutant stops at its first failing test."""
    return sorted(tests, key=lambda t: ((durations.get(t, 0.0) + 0.001) / (1 + kills[t]), t))


def judge(
    runner: object, mutant: Mutant, source: str, tests: list[str], durations: dict[str, float], at_import: bool
) -> Verdict:
    """The mutant's verdict in this runner; a timeout is tried once more with PATIENCE times the deadline, and only
    a second timeout kills (a loop the mutant made endless, not a busy machine)."""
    seconds = sum(durations.get(t, 0.0) for t in tests)
    verdict = runner.judge(mutant.module, source, tests, seconds, at_import)  # type: ignore[attr-defined]
    if verdict.status == "timeout":
        verdict = runner.judge(mutant.module, source, tests, seconds, at_import, PATIENCE)  # type: ignore[attr-defined]
    return verdict


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "modules",
        nargs="*",
        default=list(SCOPE),
        help="module paths relative to the repository root (default: the whole scope, SCOPE in this file)",
    )
    parser.add_argument(
        "--jobs", type=int, default=1, help="worker processes (one copy each; the coverage run is split as many ways)"
    )
    parser.add_argument("--tests", nargs="+", default=["tests/unit"], help="what the coverage run collects")
    parser.add_argument(
        "--pytest-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="extra argument for the coverage run, e.g. --pytest-arg=--deselect=NODEID (repeatable)",
    )
    parser.add_argument("--out", default=str(HERE / "survivors.json"), help="where the survivor list goes")
    parser.add_argument(
        "--coverage-cache",
        metavar="FILE",
        default="",
        help="keep the line -> tests map in FILE and reuse it while no source, test or argument has changed",
    )
    parser.add_argument(
        "--max-test-seconds",
        type=float,
        default=1.0,
        metavar="S",
        help="leave out of a mutant's first run the tests that took over S seconds in the baseline run, except on "
        "lines only such tests cover; a survivor is judged again with them (default 1; 0 runs every covering test)",
    )
    parser.add_argument(
        "--coverage-profile",
        default=COVERAGE_PROFILE,
        metavar="NAME",
        help=f"the hypothesis profile of the coverage run (default {COVERAGE_PROFILE}: 40 examples; the verdicts "
        "always use the mutation profile's 500)",
    )
    parser.add_argument("--coverage-only", action="store_true", help="make the coverage map (and cache), then stop")
    parser.add_argument("--list", action="store_true", help="list the mutants and stop")
    parser.add_argument("--limit", type=int, default=0, help="run only the first N mutants per module (smoke)")
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="FILE:LINE[:COL]",
        help="run only the mutants at this place, e.g. pytest_extractbench/analysis/stats.py:120 (repeatable)",
    )
    parser.add_argument(
        "--runner",
        choices=sorted(RUNNERS),
        default="warm",
        help="warm (default): code objects patched in a forked child of a collected session; fork: one fork "
        "server, the package imported by each child; subprocess: one python -m pytest per mutant",
    )
    parser.add_argument("--verdicts", metavar="FILE", default="", help="also write every mutant's verdict to FILE")
    parser.add_argument(
        "--rejudge",
        choices=("unlisted", "all", "none"),
        default="unlisted",
        help="which survivors of the fast tests are judged again with the slow ones (--max-test-seconds): unlisted "
        "(default: a survivor equivalents.md lists is spared, the slow tests were most of a run's time), all, or "
        "none (a quick look for survivors to write tests for; its survivors may be killed by a slow test)",
    )
    parser.add_argument(
        "--listed",
        choices=("trust", "judge"),
        default="trust",
        help="trust (default): a mutant that a row of equivalents.md names, and no other mutant of its module shares "
        "that row's line text and operator, is counted as a listed survivor without running its tests (they were "
        "about 40%% of a run's time); judge: run it like any other mutant, to find rows a test now makes needless",
    )
    args = parser.parse_args(argv)

    modules = [str(Path(m).resolve().relative_to(ROOT)) if Path(m).is_absolute() else m for m in args.modules]
    every_mutant = {m: find_mutants(m) for m in modules}
    all_mutants = every_mutant
    if args.only:
        all_mutants = {
            m: [mu for mu in ms if any(_at(mu, place) for place in args.only)] for m, ms in every_mutant.items()
        }
    if args.list:
        for m, mutants in all_mutants.items():
            for mu in mutants:
                print(f"{m}:{mu.line}  {mu.operator:<18} {mu.original}  ->  {mu.replacement}")
        return 0

    runners: dict[Path, object] = {}

    def stop(*_: object) -> None:  # SIGTERM: stop the servers (and their running child), remove the copies
        for runner in runners.values():
            runner.kill()  # type: ignore[attr-defined]
        shutil.rmtree(workdir, ignore_errors=True)
        os._exit(143)

    signal.signal(signal.SIGTERM, stop)
    started = time.monotonic()
    load_at_start = os.getloadavg()
    workdir = Path(tempfile.mkdtemp(prefix="extractbench-mutation-"))
    verdicts: list[dict] = []
    try:
        copies = [make_copy(workdir, f"w{i}") for i in range(max(1, args.jobs))]
        # what the map depends on besides the sources: the tests it ran, their arguments and hypothesis profile
        cov_args = [*args.tests, *args.pytest_arg, f"profile={args.coverage_profile}"]
        cache = Path(args.coverage_cache) if args.coverage_cache else None
        support, hashes = support_key(cov_args), test_file_hashes(args.tests)  # the sources as the copies have them
        cov, again = cached_coverage(cache, modules, cov_args, args.tests) if cache else (None, [])
        t0 = time.monotonic()
        if cov is None:
            shares = len(copies)
            print(f"coverage run over {' '.join(args.tests)} (per-test contexts, {shares} at once) ...", flush=True)
            cov = coverage_map(
                copies, modules, args.tests, args.pytest_arg, hint_durations(cache), args.coverage_profile
            )
            print(f"  done in {time.monotonic() - t0:.0f}s", flush=True)
        elif again:  # only test files changed: the others' contexts stand
            print(
                f"coverage map reused from {cache}; mapping again {len(again)} test file(s) added or edited since: "
                f"{', '.join(again)} ...",
                flush=True,
            )
            hints = file_durations(cov["durations"])
            fresh = coverage_map(copies, modules, again, args.pytest_arg, hints, args.coverage_profile)
            cov = merge_coverage(cov, fresh)
            print(f"  done in {time.monotonic() - t0:.0f}s", flush=True)
        else:
            print(f"coverage map reused from {cache} (sources unchanged)", flush=True)
        if cache:
            save_coverage(cache, support, hashes, cov)
        if args.coverage_only:
            for m in modules:
                lines = cov["lines"][m]
                tests = {c for ctxs in lines.values() for c in ctxs if c}
                print(f"  {m}: {len(lines)} lines run, by {len(tests)} tests", flush=True)
            return 0
        durations: dict[str, float] = cov["durations"]
        # the tests some mutant will run: those covering a mutated line
        needed: set[str] = set()
        for m in modules:
            for mu in all_mutants[m][: args.limit or None]:
                needed.update(covering_tests(mu, cov["lines"][m]))
        wanted = sorted(needed, key=lambda t: (t.split("::")[0], durations.get(t, 0.0)))
        t0 = time.monotonic()
        runners.update({copy: RUNNERS[args.runner](copy, modules, wanted) for copy in copies})
        print(f"  {len(copies)} {args.runner} runner(s) started in {time.monotonic() - t0:.0f}s", flush=True)
        unfit: set[str] = set()
        # every covering test once, unmutated, in the runners at once: it must pass in a runner too, and its time
        # there (the mutation profile, no tracer) is what orders, times out and sorts out the slow tests
        servers = list(runners.values())
        split = len(servers) > 1 and all(r.splits_baseline for r in servers)  # type: ignore[attr-defined]
        if split:  # the copies are the same: each server runs a share, in about equal time
            order = {t: n for n, t in enumerate(wanted)}
            shares = [sorted(g, key=order.__getitem__) for g in shards(wanted, len(servers), durations)]
        else:
            shares = [wanted] * len(servers)
        with ThreadPoolExecutor(max_workers=len(servers)) as pool:
            warmed = list(pool.map(lambda rs: rs[0].warm(rs[1]), zip(servers, shares)))
        for failed, measured, _ in warmed:
            unfit |= set(failed)
            durations = {**durations, **{t: s for t, s in measured.items() if t in needed}}
        if split:
            loaded = sorted({m for _, _, modules in warmed for m in modules})
            for server in servers:
                server.adopt(loaded)  # type: ignore[attr-defined]
        if unfit:  # as in the coverage run: a test that fails unmutated cannot judge a mutant
            print(
                f"  {len(unfit)} test(s) fail unmutated in the {args.runner} runner and are left out: "
                f"{', '.join(sorted(unfit))}",
                flush=True,
            )
            for m in modules:
                cov["lines"][m] = {n: ctxs - unfit for n, ctxs in cov["lines"][m].items()}
        full_lines: dict[str, dict[int, set[str]]] = {}  # before the slow tests were left out
        if args.max_test_seconds > 0:
            slow = {t for t in needed if durations.get(t, 0.0) > args.max_test_seconds}
            print(
                f"  {len(slow)} of the {len(needed)} covering tests took over {args.max_test_seconds:g}s and run only "
                "for lines no faster test covers, or to judge a survivor again (--max-test-seconds)",
                flush=True,
            )
            for m in modules:
                full_lines[m] = cov["lines"][m]
                cov["lines"][m] = {n: (ctxs - slow) or ctxs for n, ctxs in cov["lines"][m].items()}

        reports = []
        lock = threading.Lock()
        rows = listed_equivalents(HERE / "equivalents.md")
        runs = {
            module: ModuleRun(
                module, cov["lines"][module], all_mutants[module][: args.limit or None], every_mutant[module]
            )
            for module in modules
        }
        free = list(copies)

        def one(run: ModuleRun, mutant: Mutant) -> tuple[ModuleRun, Mutant, Verdict | None]:
            run.started = min(run.started, time.monotonic())
            try:
                return run, mutant, judged(run, mutant)
            finally:
                run.ended = max(run.ended, time.monotonic())

        def judged(run: ModuleRun, mutant: Mutant) -> Verdict | None:
            module, lines, kills = run.module, run.lines, run.kills
            place = {
                "where": f"{module}:{mutant.line}:{mutant.start[1] + 1}",
                "line": run.source_lines[mutant.line - 1].strip(),
                "operator": mutant.operator,
            }
            tests = order_tests(covering_tests(mutant, lines), durations, kills)
            mutant.tests = len(tests)
            if not tests:
                mutant.status = "not covered"
                return None
            if args.listed == "trust" and run.named_alone(mutant) and is_listed(place, rows):
                mutant.status, mutant.listed, mutant.trusted = "survived", True, True
                mutant.detail = "listed in equivalents.md: not run (--listed trust)"
                return None
            source = apply(run.original, mutant)
            with lock:
                copy = free.pop()
            try:
                target = copy / module
                target.write_text(source)  # on disk too: subprocesses and lazy imports read the mutant
                drop_bytecode(target)
                at_import = ran_at_import(mutant, lines)
                verdict = judge(runners[copy], mutant, source, tests, durations, at_import)
                every = covering_tests(mutant, full_lines.get(module, lines))
                listed = verdict.status == "survived" and is_listed(place, rows)
                if verdict.status == "survived" and len(every) > len(tests):  # the slow tests have their say
                    if not rejudged(args.rejudge, listed):
                        mutant.spared = True
                    else:
                        tests = order_tests([t for t in every if t not in unfit], durations, kills)
                        mutant.tests = len(tests)
                        verdict = judge(runners[copy], mutant, source, tests, durations, at_import)
                mutant.listed = verdict.status == "survived" and listed
                mutant.seconds = round(verdict.seconds, 2)
                mutant.status = {"killed": "killed", "timeout": "killed", "survived": "survived"}.get(
                    verdict.status, "error"
                )
                mutant.detail = "the slow tests not run (--rejudge)" if mutant.spared else verdict.detail
                if verdict.killer:
                    kills[verdict.killer] += 1
                return verdict
            finally:
                target.write_text(run.original)
                drop_bytecode(target)
                with lock:
                    free.append(copy)

        def finish(run: ModuleRun) -> None:
            print(flush=True)
            run.report.seconds = run.ended - run.started if run.ended else 0.0
            reports.append(run.report)
            write_survivors(Path(args.out), modules, args.tests, reports)
            if args.verdicts:
                Path(args.verdicts).write_text(json.dumps(verdicts, indent=1) + "\n")

        # one pool over every module's mutants, in order: a worker that finishes its module's last mutant takes the
        # next module's first instead of waiting for the other's slowest (a pool per module left ~14% of the
        # workers' time idle at the module ends)
        work = [(run, mutant) for run in runs.values() for mutant in run.mutants]
        current: ModuleRun | None = None
        i = 0
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            for run, mutant, verdict in pool.map(lambda job: one(*job), work):
                if run is not current:
                    if current is not None:
                        finish(current)
                    current, i = run, 0
                    print(f"{run.module}: {len(run.mutants)} mutants", flush=True)
                i += 1
                report = run.report
                mark = {"killed": ".", "survived": "S", "not covered": "-", "error": "E"}[mutant.status]
                if verdict is not None and verdict.status == "timeout":
                    mark = "T"
                print(mark, end="\n" if i % 80 == 0 else "", flush=True)
                if mutant.status == "killed":
                    report.killed += 1
                    report.timeouts += verdict is not None and verdict.status == "timeout"
                elif mutant.status == "survived":
                    report.survived += 1
                    report.listed += mutant.listed
                    report.spared += mutant.spared
                    report.trusted += mutant.trusted
                elif mutant.status == "not covered":
                    report.not_covered += 1
                else:
                    report.errors += 1
                report.cold += verdict is not None and verdict.path == "cold"
                entry = {
                    "where": f"{run.module}:{mutant.line}:{mutant.start[1] + 1}",
                    "line": run.source_lines[mutant.line - 1].strip(),
                    "status": mutant.status,
                    "operator": mutant.operator,
                    "equivalent": mutant.listed,
                    "original": mutant.original,
                    "mutant": mutant.replacement,
                    "tests": mutant.tests,
                }
                if verdict is not None:
                    verdicts.append(
                        {
                            **entry,
                            "path": verdict.path,
                            "verdict": verdict.status,
                            "killer": verdict.killer,
                            "seconds": round(verdict.seconds, 3),
                            "detail": verdict.detail,
                        }
                    )
                if mutant.status in ("survived", "not covered", "error"):
                    report.survivors.append({**entry, "detail": mutant.detail} if mutant.detail else entry)
                if mutant.status == "error":
                    print(f"\n  could not judge {run.module}:{mutant.line}: {mutant.detail}", flush=True)
                if i % 20 == 0:  # a run stopped half-way keeps what it has judged
                    report.seconds = time.monotonic() - run.started
                    write_survivors(Path(args.out), modules, args.tests, [*reports, report])
        if current is not None:
            finish(current)
        for run in runs.values():  # a module without a mutant to judge
            if not run.mutants:
                print(f"{run.module}: 0 mutants", flush=True)
                finish(run)
        reports.sort(key=lambda r: modules.index(r.module))
    finally:
        for runner in runners.values():
            runner.close()  # type: ignore[attr-defined]
        shutil.rmtree(workdir, ignore_errors=True)

    total = time.monotonic() - started
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    mine = resource.getrusage(resource.RUSAGE_SELF)
    cpu = usage.ru_utime + usage.ru_stime + mine.ru_utime + mine.ru_stime
    unexplained = [e for r in reports for e in r.survivors if e["status"] == "survived" and not e["equivalent"]]
    header = (
        f"{'module':<44} {'mutants':>7} {'killed':>6} {'survived':>8} {'listed':>6} {'not run':>7} {'spared':>6} "
        f"{'not covered':>11} {'errors':>6} {'killed/all':>10} {'score':>6} {'timeouts':>8} {'cold':>5} {'seconds':>7}"
    )
    print("\n" + header + "\n" + "-" * len(header))
    for r in reports:
        rate = f"{100 * r.kill_rate:.1f}%" if r.kill_rate is not None else "n/a"
        score = f"{100 * r.score:.1f}%" if r.score is not None else "n/a"
        print(
            f"{r.module:<44} {r.mutants:>7} {r.killed:>6} {r.survived:>8} {r.listed:>6} {r.trusted:>7} {r.spared:>6} "
            f"{r.not_covered:>11} {r.errors:>6} {rate:>10} {score:>6} {r.timeouts:>8} {r.cold:>5} {r.seconds:>7.0f}"
        )
    print(
        f"{len(unexplained)} survivor(s) neither killed nor listed in equivalents.md (listed: survivors it lists; "
        "not run: of them, counted from the list without running a test (--listed trust); spared: of them, not "
        "judged again with the slow tests; score: killed / (mutants - listed))"
    )
    for e in unexplained:
        print(f"  {e['where']}  {e['operator']}:  {e['line'][:100]}")
    judged = sum(r.mutants - r.not_covered for r in reports)
    print(
        f"total run time (coverage run included): {total:.0f}s with --jobs {args.jobs}, {args.runner} runner; "
        f"CPU {cpu:.0f}s; {judged / total:.2f} mutants judged a second; load average {load_at_start[0]:.1f} at the "
        f"start, {os.getloadavg()[0]:.1f} at the end"
    )
    out = write_survivors(Path(args.out), modules, args.tests, reports)
    print(f"survivors written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
