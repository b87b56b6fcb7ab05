"""The compiled core's build command, without a compiler: mypyc and setuptools are stand-ins that record what they
are asked and write a made-up extension, so what ``build`` asks of them, where it puts the result, the manifest it
writes and the figures it returns are each checked by hand; ``clean`` and the command line too."""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import sys
import sysconfig
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest

from pytest_extractbench.scoring import compiled

# what the stand-in compiler "builds": the shared library and one extension, 7 + 5 bytes
BUILT = {"_native__mypyc.so": b"natives", "fields.so": b"walks"}


@pytest.fixture
def build_compiled() -> ModuleType:
    """The module, imported by the test that needs it rather than at collection: a module that ran its command line
    on import then fails that test instead of stopping the collection."""
    return importlib.import_module("pytest_extractbench.scoring.build_compiled")


class _Toolchain:
    """mypyc's ``mypycify`` and setuptools' ``Distribution``, recording their calls."""

    def __init__(self) -> None:
        self.mypycify_args: tuple[Any, ...] = ()
        self.mypycify_kwargs: dict[str, Any] = {}
        self.config_text = ""
        self.attrs: dict[str, Any] = {}
        self.command = SimpleNamespace(build_lib="", build_temp="", parallel=0)
        self.ran: list[str] = []

    def mypycify(self, *args: Any, **kwargs: Any) -> list[str]:
        self.mypycify_args, self.mypycify_kwargs = args, kwargs
        paths = args[0]
        self.config_text = Path(paths[paths.index("--config-file") + 1]).read_text(encoding="utf-8")
        return ["the extensions"]

    def distribution(self, attrs: dict[str, Any]) -> Any:
        self.attrs = attrs
        toolchain = self

        class _Distribution:
            def get_command_obj(self, name: str) -> SimpleNamespace:
                assert name == "build_ext"
                return toolchain.command

            def run_command(self, name: str) -> None:
                toolchain.ran.append(name)
                out = Path(toolchain.command.build_lib, "pytest_extractbench", "scoring")
                out.mkdir(parents=True)
                for file, data in BUILT.items():
                    (out / file).write_bytes(data)

        return _Distribution()


@pytest.fixture
def toolchain(build_compiled: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> _Toolchain:
    tools = _Toolchain()
    mypyc, mypyc_build, setuptools = ModuleType("mypyc"), ModuleType("mypyc.build"), ModuleType("setuptools")
    mypyc_build.mypycify = tools.mypycify  # type: ignore[attr-defined]
    setuptools.Distribution = tools.distribution  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "mypyc", mypyc)
    monkeypatch.setitem(sys.modules, "mypyc.build", mypyc_build)
    monkeypatch.setitem(sys.modules, "setuptools", setuptools)
    monkeypatch.setattr(compiled, "DIRECTORY", str(tmp_path / "_compiled"))
    # the clock read at the start, after mypyc, and at the end
    readings = iter([100.0, 112.5, 150.0])
    monkeypatch.setattr(build_compiled, "time", SimpleNamespace(perf_counter=lambda: next(readings)))
    return tools


def test_a_build_compiles_the_modules_and_installs_them_with_their_manifest(
    build_compiled: ModuleType, toolchain: _Toolchain
) -> None:
    figures = build_compiled.build(jobs=3, opt_level="1", verbose=True)
    # mypyc: 112.5 - 100.0; the C compiler and the copy: 150.0 - 112.5; 7 + 5 bytes copied
    assert figures == {"generate_s": 12.5, "compile_s": 37.5, "bytes": 12.0}
    installed = Path(compiled.DIRECTORY)
    assert sorted(os.listdir(installed)) == ["_native__mypyc.so", "build.json", "fields.so"]
    assert (installed / "fields.so").read_bytes() == b"walks"
    text = (installed / "build.json").read_text(encoding="utf-8")
    assert text.startswith('{\n "suffix": ')  # one space of indent a level
    manifest = json.loads(text)
    assert manifest == {**compiled.fingerprint(), "modules": ["anls", "anls_walk", "compare", "emit", "fields", "flat"]}


def test_mypyc_is_given_the_modules_the_config_and_the_options(
    build_compiled: ModuleType, toolchain: _Toolchain
) -> None:
    build_compiled.build(jobs=3, opt_level="1", verbose=True)
    (paths,) = toolchain.mypycify_args
    sources = [os.path.join(compiled.HERE, f"{name}.py") for name in compiled.MODULES]
    assert paths[:-2] == sources and paths[-2] == "--config-file"
    scratch = os.path.dirname(paths[-1])
    assert toolchain.mypycify_kwargs == {
        "group_name": "pytest_extractbench.scoring._native",
        "target_dir": os.path.join(scratch, "c"),
        "opt_level": "1",
        "verbose": True,
    }
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    assert f"python_version = {version}\n" in toolchain.config_text
    assert f"cache_dir = {scratch}\n" in toolchain.config_text
    assert toolchain.attrs == {"name": "pytest-extractbench-compiled", "ext_modules": ["the extensions"]}
    assert toolchain.ran == ["build_ext"]
    assert toolchain.command.build_lib == os.path.join(scratch, "lib")
    assert toolchain.command.build_temp == os.path.join(scratch, "temp")
    assert toolchain.command.parallel == 3
    assert not os.path.exists(scratch)  # the scratch folder is gone once the build is installed


def test_a_new_build_replaces_the_old_one(build_compiled: ModuleType, toolchain: _Toolchain) -> None:
    old = Path(compiled.DIRECTORY)
    old.mkdir()
    (old / "stale.so").write_bytes(b"old")
    build_compiled.build()
    assert sorted(os.listdir(old)) == ["_native__mypyc.so", "build.json", "fields.so"]


def test_the_build_defaults_are_two_jobs_level_three_and_quiet(
    build_compiled: ModuleType, toolchain: _Toolchain
) -> None:
    build_compiled.build()
    assert toolchain.command.parallel == 2
    assert (toolchain.mypycify_kwargs["opt_level"], toolchain.mypycify_kwargs["verbose"]) == ("3", False)


def test_clean_removes_a_build_and_says_whether_there_was_one(
    build_compiled: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    directory = tmp_path / "_compiled"
    monkeypatch.setattr(compiled, "DIRECTORY", str(directory))
    assert build_compiled.clean() is False
    directory.mkdir()
    (directory / "fields.so").write_bytes(b"x")
    assert build_compiled.clean() is True
    assert not directory.exists()


def test_the_command_line_builds_with_its_options_and_reports_the_figures(
    build_compiled: ModuleType, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    asked: list[dict[str, Any]] = []

    def fake_build(**kwargs: Any) -> dict[str, float]:
        asked.append(kwargs)
        return {"generate_s": 41.6, "compile_s": 80.2, "bytes": 2_345_678.0}

    monkeypatch.setattr(build_compiled, "build", fake_build)
    monkeypatch.setattr(compiled, "status", lambda: (None, "the status line"))
    assert build_compiled.main([]) == 0
    assert build_compiled.main(["--jobs", "1", "--opt-level", "0", "--verbose"]) == 0
    assert asked == [
        {"jobs": 2, "opt_level": "3", "verbose": False},
        {"jobs": 1, "opt_level": "0", "verbose": True},
    ]
    # 41.6 s and 80.2 s to whole seconds; 2,345,678 bytes is 2.3 MB
    line = (
        f"compiled anls, anls_walk, compare, emit, fields, flat in 42 s (mypyc) + 80 s (C compiler): 2.3 MB in "
        f"{compiled.DIRECTORY}\nthe status line\n"
    )
    assert capsys.readouterr().out == line + line


def test_the_command_line_status_and_clean(
    build_compiled: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(build_compiled, "build", lambda **kwargs: pytest.fail("status and clean never build"))
    monkeypatch.setattr(compiled, "status", lambda: (None, "pure Python: no compiled build"))
    monkeypatch.setattr(compiled, "DIRECTORY", str(tmp_path / "_compiled"))
    assert build_compiled.main(["--status"]) == 0
    assert build_compiled.main(["--clean"]) == 0
    (tmp_path / "_compiled").mkdir()
    assert build_compiled.main(["--clean"]) == 0
    assert capsys.readouterr().out == "pure Python: no compiled build\nno compiled build to remove\nremoved\n"


# --- whether a process uses a build ---


def test_the_fingerprint_digests_each_source_by_name_then_the_dependencies(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "b.py").write_bytes(b"B = 2\n")
    (tmp_path / "a.py").write_bytes(b"A = 1\n")
    (tmp_path / "notes.txt").write_bytes(b"not a source")
    errors = tmp_path / "core" / "errors.py"
    errors.parent.mkdir()
    errors.write_bytes(b"class E(Exception): ...\n")
    monkeypatch.setattr(compiled, "HERE", str(tmp_path))
    monkeypatch.setattr(compiled, "_DEPENDENCIES", (str(tmp_path / "x" / os.pardir / "core" / "errors.py"),))
    # sorted names first (a.py, b.py; not notes.txt), then the dependency: each as name, NUL, bytes, NUL
    expected = hashlib.sha256(
        b"a.py\0A = 1\n\0" + b"b.py\0B = 2\n\0" + b"errors.py\0class E(Exception): ...\n\0"
    ).hexdigest()
    assert compiled.fingerprint() == {"suffix": str(sysconfig.get_config_var("EXT_SUFFIX")), "sources": expected}


@pytest.fixture
def build_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(compiled, "DIRECTORY", str(tmp_path))
    monkeypatch.delenv(compiled.PURE_ENV, raising=False)
    monkeypatch.setattr(compiled, "fingerprint", lambda: {"suffix": ".so-now", "sources": "now"})
    return tmp_path


def _manifest(directory: Path, recorded: dict[str, str]) -> None:
    (directory / "build.json").write_text(json.dumps(recorded), encoding="utf-8")


def test_each_reason_for_pure_python_is_said(build_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = os.path.join(str(build_dir), "build.json")
    (build_dir / "build.json").write_text("{not json", encoding="utf-8")
    assert compiled.status() == (None, f"pure Python: unreadable {path}")
    _manifest(build_dir, {"suffix": ".so-then", "sources": "now"})
    assert compiled.status() == (None, "pure Python: the build is for .so-then, this interpreter loads .so-now")
    _manifest(build_dir, {"suffix": ".so-now", "sources": "then"})
    assert compiled.status() == (None, "pure Python: the compiled build is stale (scoring/ changed since it was made)")
    _manifest(build_dir, {"suffix": ".so-now", "sources": "now"})
    monkeypatch.setenv(compiled.PURE_ENV, " 1 ")
    assert compiled.status() == (None, "pure Python: EXTRACTBENCH_PURE is set")


@pytest.mark.parametrize("pure", [None, "", " 0 "])
def test_a_current_build_is_used_unless_pure_is_asked_for(
    build_dir: Path, monkeypatch: pytest.MonkeyPatch, pure: str | None
) -> None:
    if pure is not None:
        monkeypatch.setenv(compiled.PURE_ENV, pure)
    _manifest(build_dir, {"suffix": ".so-now", "sources": "now"})
    assert compiled.status() == (
        str(build_dir),
        f"compiled: anls, anls_walk, compare, emit, fields, flat from {build_dir}",
    )


def test_a_build_found_goes_first_on_the_package_path(monkeypatch: pytest.MonkeyPatch) -> None:
    package = ModuleType("pytest_extractbench.scoring")
    package.__path__ = ["/the/sources"]
    monkeypatch.setitem(sys.modules, "pytest_extractbench.scoring", package)
    monkeypatch.setattr(compiled, "status", lambda: ("/the/build", "compiled: ..."))
    assert compiled._search_first() == ("/the/build", "compiled: ...")
    assert package.__path__ == ["/the/build", "/the/sources"]
    monkeypatch.setattr(compiled, "status", lambda: (None, "pure Python: no compiled build"))
    assert compiled._search_first() == (None, "pure Python: no compiled build")
    assert package.__path__ == ["/the/build", "/the/sources"]  # nothing more added


@pytest.mark.parametrize(
    ("file", "active"),
    [
        ("/x/scoring/fields.cpython-311-x86_64-linux-gnu.so", True),
        ("/x/scoring/fields.py", False),
        (None, True),  # no __file__ at all is no pure source either
    ],
)
def test_the_compiled_core_is_active_when_the_field_walk_is_no_python_source(
    monkeypatch: pytest.MonkeyPatch, file: str | None, active: bool
) -> None:
    fields = ModuleType("pytest_extractbench.scoring.fields")
    if file is not None:
        fields.__file__ = file
    monkeypatch.setitem(sys.modules, "pytest_extractbench.scoring.fields", fields)
    assert compiled.active() is active


def test_the_compiled_core_is_not_active_before_the_field_walk_is_imported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, "pytest_extractbench.scoring.fields")
    assert compiled.active() is False


def test_this_process_scores_with_what_it_found_at_import() -> None:
    directory, why = compiled.STATUS
    assert compiled.active() is (directory is not None)
    assert why.startswith("compiled: " if directory else "pure Python: ")


def test_run_as_a_script_the_module_runs_its_command_line_and_builds_with_its_defaults(
    build_compiled: ModuleType,
    toolchain: _Toolchain,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # what ``python -m`` does, in this process: the module's source run as __main__ inside its package (runpy
    # cannot, under pytest: the package's modules are loaded by pytest's assertion-rewriting hook)
    path = build_compiled.__file__
    code = compile(Path(path).read_text(encoding="utf-8"), path, "exec")
    monkeypatch.setattr(sys, "argv", ["build_compiled", "--status"])
    namespace: dict[str, Any] = {"__name__": "__main__", "__package__": "pytest_extractbench.scoring", "__file__": path}
    with pytest.raises(SystemExit) as exited:
        exec(code, namespace)
    assert exited.value.code == 0
    assert capsys.readouterr().out == compiled.status()[1] + "\n"
    # the module as run there builds as imported: two jobs, level 3, quiet
    namespace["time"] = SimpleNamespace(perf_counter=lambda: 0.0)
    namespace["build"]()
    assert toolchain.command.parallel == 2
    assert (toolchain.mypycify_kwargs["opt_level"], toolchain.mypycify_kwargs["verbose"]) == ("3", False)


def test_the_command_line_help_starts_with_the_module_summary(
    build_compiled: ModuleType, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        build_compiled.main(["--help"])
    assert exited.value.code == 0
    summary = "Build, check or remove the optional compiled scoring core (scoring/compiled.py says how it is used)."
    assert summary in " ".join(capsys.readouterr().out.split())
