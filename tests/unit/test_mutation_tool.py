"""The mutation tool's two decisions that a wrong verdict would hide behind: a mutant changes only its own span
(every other line keeps its number and its code), and the warm runner patches a function only when nothing that
ran at import changed (tests/mutation/README.md); and how the coverage run is split over the jobs."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "mutation"))

import covermap  # noqa: E402
import mutants  # noqa: E402
import mutate  # noqa: E402
import warmserver  # noqa: E402

SOURCE = """\
LIMIT = 3


def scale(x, factor=2):
    if (x > LIMIT and
            x < 10):
        return x * factor
    return x


class Box:
    size = 1

    def grow(self, n):
        return [v + n for v in range(self.size)]
"""


def _mutants_at(line: int, operator: str) -> list[mutants.Mutant]:
    finder = mutants._Finder("m.py", SOURCE)
    finder.visit(__import__("ast").parse(SOURCE))
    return [m for m in finder.mutants if m.line == line and m.operator == operator]


def _compile(source: str) -> types.CodeType:
    return compile(source, "m.py", "exec", dont_inherit=True)


def test_every_mutant_keeps_every_line_number_even_when_its_span_had_several_lines() -> None:
    finder = mutants._Finder("m.py", SOURCE)
    finder.visit(__import__("ast").parse(SOURCE))
    assert len(finder.mutants) > 10
    for mutant in finder.mutants:
        mutated = mutants.apply(SOURCE, mutant)
        _compile(mutated)
        assert mutated.count("\n") == SOURCE.count("\n"), mutant
        assert mutated.splitlines()[12:] == SOURCE.splitlines()[12:] or mutant.line >= 12
    (negated,) = _mutants_at(5, "condition negated")  # the `if` test spans lines 5-6
    assert mutants.apply(SOURCE, negated).splitlines()[5] == ")):"


def _live(namespace: dict) -> dict:
    live: dict = {}
    for value in namespace.values():
        functions = [value] if isinstance(value, types.FunctionType) else []
        if isinstance(value, type):
            functions = [f for f in vars(value).values() if isinstance(f, types.FunctionType)]
        for function in functions:
            live.setdefault(function.__code__, []).append(function)
    return live


def test_a_mutant_in_a_function_body_patches_that_function_and_nothing_else() -> None:
    namespace: dict = {}
    exec(_compile(SOURCE), namespace)  # noqa: S102 - the module under test, as an import would run it
    live = _live(namespace)
    (mutant,) = _mutants_at(7, "* -> /")
    pairs = warmserver.plan(_compile(SOURCE), _compile(mutants.apply(SOURCE, mutant)), live)
    assert [original.co_name for original, _ in pairs] == ["scale"]
    for original, mutated in pairs:
        for function in live[original]:
            function.__code__ = mutated
    assert namespace["scale"](4) == 2.0  # 4 / 2: the live function now runs the mutant
    (comprehension,) = _mutants_at(15, "+ -> -")  # inside a comprehension of a method: the method is patched
    pairs = warmserver.plan(_compile(SOURCE), _compile(mutants.apply(SOURCE, comprehension)), live)
    assert [original.co_qualname for original, _ in pairs] == ["Box.grow"]


@pytest.mark.parametrize(
    ("line", "operator"),
    [
        (1, "3 -> 4"),  # a module constant
        (4, "2 -> 3"),  # a default value, evaluated when the def ran
        (12, "1 -> 0"),  # a class attribute
    ],
)
def test_a_mutant_of_code_that_ran_at_import_is_cold(line: int, operator: str) -> None:
    namespace: dict = {}
    exec(_compile(SOURCE), namespace)  # noqa: S102
    (mutant,) = _mutants_at(line, operator)
    with pytest.raises(warmserver.Cold):
        warmserver.plan(_compile(SOURCE), _compile(mutants.apply(SOURCE, mutant)), _live(namespace))


def test_a_changed_function_with_no_live_instance_is_cold() -> None:
    (mutant,) = _mutants_at(7, "* -> /")
    with pytest.raises(warmserver.Cold, match="no live function"):
        warmserver.plan(_compile(SOURCE), _compile(mutants.apply(SOURCE, mutant)), {})


def test_the_coverage_run_is_split_longest_file_first_onto_the_least_loaded_share() -> None:
    hints = {"a.py": 10.0, "b.py": 7.0, "c.py": 6.0, "d.py": 4.0, "e.py": 3.0}
    # a (10) | b (7); c onto b (13); d onto a (14); e onto b (16)
    assert covermap.shards(list(hints), 2, hints) == [["a.py", "d.py"], ["b.py", "c.py", "e.py"]]
    # a file the hints do not know weighs their median (4.0 of 2, 4, 10): c, new.py and b (4 + 4 + 2) balance a
    hints = {"a.py": 10.0, "b.py": 2.0, "c.py": 4.0}
    assert covermap.shards(["a.py", "b.py", "c.py", "new.py"], 2, hints) == [["a.py"], ["c.py", "new.py", "b.py"]]
    # never more shares than files
    assert covermap.shards(["a.py"], 2, hints) == [["a.py"]]


def test_a_directory_is_split_into_its_test_files_each_in_one_share() -> None:
    unit = Path(__file__).resolve().parent
    files = sorted(f"tests/unit/{f.name}" for f in unit.glob("test_*.py"))
    groups = covermap.shards(["tests/unit"], 2, {})
    assert len(groups) == 2 and sorted(f for g in groups for f in g) == files


def test_the_kill_rate_counts_every_mutant_and_the_score_leaves_out_only_the_listed_equivalents() -> None:
    report = mutate.ModuleReport("m.py", mutants=10, killed=7, survived=2, listed=1, not_covered=1)
    assert report.kill_rate == 7 / 10
    assert report.score == 7 / 9
    assert mutate.ModuleReport("m.py").kill_rate is None
    assert mutate.ModuleReport("m.py", mutants=1, survived=1, listed=1).score is None


def test_a_survivor_is_listed_by_its_module_its_line_text_spaces_aside_and_its_operator(tmp_path: Path) -> None:
    table = tmp_path / "equivalents.md"
    table.write_text(
        "| module | line | mutant | why |\n|---|---|---|---|\n"
        "| `scoring/x.py` | `limit: int \\| None = None` | `None -> 0` | only tested for truth |\n"
    )
    rows = mutate.listed_equivalents(table)
    entry = {
        "where": "pytest_extractbench/scoring/x.py:12:5",
        "line": "limit: int | None  =  None",
        "operator": "None -> 0",
    }
    assert mutate.is_listed(entry, rows)
    assert not mutate.is_listed({**entry, "operator": "None -> 1"}, rows)
    assert not mutate.is_listed({**entry, "where": "pytest_extractbench/scoring/y.py:12:5"}, rows)
    assert not mutate.is_listed({**entry, "line": "limit: int | None = 0"}, rows)


@pytest.mark.parametrize(
    ("mode", "listed", "again"),
    [("unlisted", False, True), ("unlisted", True, False), ("all", True, True), ("none", False, False)],
)
def test_a_listed_survivor_is_spared_the_slow_tests_unless_asked(mode: str, listed: bool, again: bool) -> None:
    assert mutate.rejudged(mode, listed) is again


def _project(root: Path) -> None:
    for name, text in {
        "pytest_extractbench/m.py": "X = 1\n",
        "tests/unit/conftest.py": "",
        "tests/unit/helpers.py": "H = 1\n",
        "tests/unit/test_a.py": "def test_a(): pass\n",
        "tests/unit/test_b.py": "def test_b(): pass\n",
        "tests/unit/test_c.py": "def test_c(): pass\n",
        "conftest.py": "",
        "pyproject.toml": "",
    }.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def _cached_map(root: Path, cache: Path, cov_args: list[str]) -> None:
    a, b, c = ("tests/unit/test_a.py::test_a", "tests/unit/test_b.py::test_b", "tests/unit/test_c.py::test_c")
    cov = {
        # line 1 ran at import ("") and in all three tests; line 2 only in test_b's
        "lines": {"pytest_extractbench/m.py": {1: {"", a, b, c}, 2: {b}}},
        "durations": {a: 1.0, b: 2.0, c: 3.0},
        "failed": [c],
    }
    covermap.save_coverage(
        cache, covermap.support_key(cov_args, root), covermap.test_file_hashes(["tests/unit"], root), cov
    )


def test_a_test_file_edited_added_or_removed_is_all_the_cached_map_maps_again(tmp_path: Path) -> None:
    _project(tmp_path)
    cache, cov_args, module = tmp_path / "cov.json", ["tests/unit", "profile=p"], "pytest_extractbench/m.py"
    _cached_map(tmp_path, cache, cov_args)
    unchanged = covermap.cached_coverage(cache, [module], cov_args, ["tests/unit"], tmp_path)
    assert (
        unchanged[1] == []
        and unchanged[0] is not None
        and unchanged[0]["lines"][module][2] == {"tests/unit/test_b.py::test_b"}
    )
    (tmp_path / "tests/unit/test_b.py").write_text("def test_b(): assert 1\n")  # edited
    (tmp_path / "tests/unit/test_c.py").unlink()  # removed
    (tmp_path / "tests/unit/test_d.py").write_text("def test_d(): pass\n")  # added
    cov, again = covermap.cached_coverage(cache, [module], cov_args, ["tests/unit"], tmp_path)
    assert again == ["tests/unit/test_b.py", "tests/unit/test_d.py"]
    assert cov is not None
    # test_b's and test_c's contexts are gone: line 2 is run by no test until test_b is mapped again
    assert cov["lines"][module] == {1: {"", "tests/unit/test_a.py::test_a"}, 2: set()}
    assert cov["durations"] == {"tests/unit/test_a.py::test_a": 1.0} and cov["failed"] == []
    fresh = {"lines": {module: {2: {"tests/unit/test_d.py::test_d"}, 3: set()}}, "durations": {"d": 0.5}, "failed": []}
    merged = covermap.merge_coverage(cov, fresh)
    # line 2 now by test_d's context; line 3, which no test ran, is not in the map
    assert merged["lines"][module] == {1: {"", "tests/unit/test_a.py::test_a"}, 2: {"tests/unit/test_d.py::test_d"}}
    assert merged["durations"] == {"tests/unit/test_a.py::test_a": 1.0, "d": 0.5}


@pytest.mark.parametrize(
    "changed", ["pytest_extractbench/m.py", "tests/unit/helpers.py", "tests/unit/conftest.py", "pyproject.toml"]
)
def test_a_change_outside_the_test_files_makes_the_whole_map_again(tmp_path: Path, changed: str) -> None:
    _project(tmp_path)
    cache, cov_args, module = tmp_path / "cov.json", ["tests/unit"], "pytest_extractbench/m.py"
    _cached_map(tmp_path, cache, cov_args)
    (tmp_path / changed).write_text("# edited\n")
    assert covermap.cached_coverage(cache, [module], cov_args, ["tests/unit"], tmp_path) == (None, [])


def test_a_cached_map_without_the_module_or_with_other_arguments_is_not_used(tmp_path: Path) -> None:
    _project(tmp_path)
    cache, module = tmp_path / "cov.json", "pytest_extractbench/m.py"
    _cached_map(tmp_path, cache, ["tests/unit"])
    assert (
        covermap.cached_coverage(cache, [module, "pytest_extractbench/n.py"], ["tests/unit"], ["tests/unit"], tmp_path)[
            0
        ]
        is None
    )
    assert covermap.cached_coverage(cache, [module], ["tests/unit", "-x"], ["tests/unit"], tmp_path)[0] is None
    assert covermap.cached_coverage(tmp_path / "none.json", [module], ["tests/unit"], ["tests/unit"], tmp_path) == (
        None,
        [],
    )


ONCE = """\
def low(x):
    return x > 1


def high(x):
    return x > 1 and x < 9
"""


def test_a_row_names_a_mutant_alone_only_when_no_other_mutant_shares_its_line_text_and_operator(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(mutate, "ROOT", tmp_path)
    monkeypatch.setattr(mutants, "ROOT", tmp_path)
    (tmp_path / "m.py").write_text(ONCE)
    found = mutants.find_mutants("m.py")
    run = mutate.ModuleRun("m.py", {}, found, found)
    flips = [m for m in run.mutants if m.operator == "> -> >="]
    # line 2's `x > 1` and line 6's `x > 1` are on lines of different text: each row names one mutant
    assert [(m.line, run.named_alone(m)) for m in flips] == [(2, True), (6, True)]
    (tmp_path / "m.py").write_text(ONCE.replace("x > 1 and x < 9", "x > 1"))
    found = mutants.find_mutants("m.py")
    run = mutate.ModuleRun("m.py", {}, found, found)
    flips = [m for m in run.mutants if m.operator == "> -> >="]
    # now `return x > 1` stands on lines 2 and 6: a row naming that text and operator could mean either
    assert [(m.line, run.named_alone(m)) for m in flips] == [(2, False), (6, False)]
