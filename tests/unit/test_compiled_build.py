"""The optional compiled scoring core: when a process uses it, and that it scores exactly as the pure modules do.

The comparisons need a current build (``python -m pytest_extractbench.scoring.build_compiled``) and are skipped
without one: CI does not compile. Each side runs in its own process (a module is either compiled or not in one
interpreter), one with ``EXTRACTBENCH_PURE=1``; both score the same inputs and answer with a digest of everything
a score holds.
"""

from __future__ import annotations

import json
import math
import os
import pickle
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_extractbench.scoring import compiled

ROOT = Path(__file__).resolve().parents[2]


def _current_build() -> str | None:
    """Why the comparisons cannot run, or None when a build made from these sources exists."""
    saved = os.environ.pop(compiled.PURE_ENV, None)
    try:
        directory, why = compiled.status()
    finally:
        if saved is not None:
            os.environ[compiled.PURE_ENV] = saved
    return None if directory is not None else why


needs_build = pytest.mark.skipif(
    _current_build() is not None,
    reason=f"{_current_build()}: build one with python -m pytest_extractbench.scoring.build_compiled",
)


# -- when the build is used (no build needed) --------------------------------------------------------------------


@pytest.fixture
def fake_build(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A build directory whose manifest matches the sources as they are (no extension in it: status() reads the
    manifest only)."""
    monkeypatch.setattr(compiled, "DIRECTORY", str(tmp_path))
    monkeypatch.delenv(compiled.PURE_ENV, raising=False)
    (tmp_path / compiled.MANIFEST).write_text(json.dumps(compiled.fingerprint()), encoding="utf-8")
    return tmp_path


def test_a_current_build_is_used(fake_build: Path) -> None:
    assert compiled.status()[0] == str(fake_build)


@pytest.mark.parametrize("value", ["1", "yes"])
def test_the_pure_variable_wins_over_a_build(fake_build: Path, monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv(compiled.PURE_ENV, value)
    directory, why = compiled.status()
    assert directory is None and compiled.PURE_ENV in why


def test_pure_zero_keeps_the_build(fake_build: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(compiled.PURE_ENV, "0")
    assert compiled.status()[0] == str(fake_build)


@pytest.mark.parametrize("key", ["sources", "suffix"])
def test_a_build_of_other_sources_or_another_python_is_not_used(fake_build: Path, key: str) -> None:
    recorded = compiled.fingerprint()
    recorded[key] += "x"
    (fake_build / compiled.MANIFEST).write_text(json.dumps(recorded), encoding="utf-8")
    directory, why = compiled.status()
    assert directory is None and why.startswith("pure Python")


def test_an_edited_source_makes_the_build_stale(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every module of scoring/ is in the fingerprint, not only the compiled ones: their types are compiled in."""
    for name in os.listdir(compiled.HERE):
        if name.endswith(".py"):
            (tmp_path / name).write_bytes((Path(compiled.HERE) / name).read_bytes())
    monkeypatch.setattr(compiled, "HERE", str(tmp_path))
    before = compiled.fingerprint()
    with open(tmp_path / "options.py", "a", encoding="utf-8") as file:
        file.write("\n")
    assert compiled.fingerprint()["sources"] != before["sources"]


def test_no_build_means_pure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(compiled, "DIRECTORY", str(tmp_path / "none"))
    monkeypatch.delenv(compiled.PURE_ENV, raising=False)
    assert compiled.status() == (None, "pure Python: no compiled build")


# -- compiled and pure give the same results (a build needed) -----------------------------------------------------

# Reads (gold, output, schema, options) pickled and length-prefixed on stdin, answers each with the digest
# benchmarks/check_identical.py takes: the score as a dict, its repr and its diagnostics.
_WORKER = r"""
import hashlib, pickle, struct, sys
from pytest_extractbench import ScoringOptions, score_sample
from pytest_extractbench.analysis.diagnostics import sample_diagnostics
from pytest_extractbench.scoring import compiled
sys.stdout.buffer.write(b"compiled\n" if compiled.active() else b"pure\n"); sys.stdout.buffer.flush()
read = sys.stdin.buffer.read
while True:
    head = read(4)
    if len(head) < 4:
        break
    gold, output, schema, settings = pickle.loads(read(struct.unpack("<I", head)[0]))
    options = ScoringOptions(**settings)
    try:
        score = score_sample(output, gold, schema, options=options, sample_id="s")
        text = repr((score.as_dict(), repr(score), sample_diagnostics(score, None, gold, output, schema, options)))
    except Exception as exc:
        text = "raised " + type(exc).__name__ + ": " + str(exc)
    sys.stdout.buffer.write(hashlib.sha256(text.encode()).hexdigest().encode() + b" " + text[:300].encode("unicode_escape") + b"\n")
    sys.stdout.buffer.flush()
"""


class _Worker:
    def __init__(self, pure: bool) -> None:
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        env.pop(compiled.PURE_ENV, None)
        if pure:
            env[compiled.PURE_ENV] = "1"
        self.process = subprocess.Popen(
            [sys.executable, "-c", _WORKER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, cwd=ROOT
        )
        assert self.process.stdout is not None
        self.mode = self.process.stdout.readline().decode().strip()

    def score(self, case: tuple[Any, ...]) -> str:
        assert self.process.stdin is not None and self.process.stdout is not None
        data = pickle.dumps(case)
        self.process.stdin.write(struct.pack("<I", len(data)) + data)
        self.process.stdin.flush()
        return self.process.stdout.readline().decode().strip()

    def close(self) -> None:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.close()
        self.process.wait(timeout=30)
        self.process.stdout.close()


@pytest.fixture(scope="module")
def workers() -> Any:
    pair = (_Worker(pure=True), _Worker(pure=False))
    yield pair
    for worker in pair:
        worker.close()


# Values where a compiled module could part from Python: ints past a C double's 53 bits and past a C long, NaN,
# -0.0, True against 1, blank strings, keys that are not text (a Python caller's dict), nested arrays.
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=2**53 - 2, max_value=2**53 + 2),
    st.floats(),
    st.sampled_from([0.0, -0.0, 1.0, 1, True, "", " ", "1", "true", "1,000", "N/A"]),
    st.text(max_size=12),
)
keys = st.one_of(st.sampled_from(["a", "b", "name", "items", "sku", ""]), st.text(min_size=1, max_size=4))
values = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=5),
        st.dictionaries(st.one_of(keys, st.integers(0, 3)), children, max_size=4),
    ),
    max_leaves=20,
)
golds = st.dictionaries(keys, values, min_size=1, max_size=5)
settings = st.fixed_dictionaries(
    {},
    optional={
        "null_equals_absent": st.booleans(),
        "empty_equals_absent": st.booleans(),
        "strict_types": st.booleans(),
        "array_order_matters": st.booleans(),
        "case_sensitive": st.booleans(),
        "exact_within": st.sampled_from([0.0, 0.01]),
        "list_similarity": st.sampled_from([0.5, 0.8]),
        "float_epsilon": st.sampled_from([0, 1e-9, 0.5]),
    },
)


def _near(value: Any, choice: int) -> Any:
    """A variant sharing most of ``value`` (equal subtrees are the walk's fast paths)."""
    if isinstance(value, dict) and value:
        key = list(value)[choice % len(value)]
        return {**value, key: _near(value[key], choice // 3)}
    if isinstance(value, list) and value:
        return value[::-1] if choice % 2 else value[:-1]
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return value + choice % 3 - 1
    if isinstance(value, float):
        return value * 1.01 if math.isfinite(value) else None
    if isinstance(value, str):
        return value.upper() + "x" if choice % 2 else value[1:]
    return value


def _schema(gold: dict[Any, Any], align: str | None) -> dict[str, Any] | None:
    """None, or a schema whose arrays of the gold's top level align as ``align`` says."""
    if align is None:
        return None
    properties: dict[str, Any] = {}
    for key, value in gold.items():
        if type(key) is str and type(value) is list:
            properties[key] = {"type": "array", "x-eval-align": align}
    return {"type": "object", "properties": properties}


@needs_build
def test_the_workers_run_one_compiled_and_one_pure(workers: tuple[_Worker, _Worker]) -> None:
    assert [worker.mode for worker in workers] == ["pure", "compiled"]


@needs_build
@given(
    gold=golds,
    output=st.one_of(values, st.text(max_size=40)),
    choice=st.integers(0, 10**6),
    near=st.booleans(),
    align=st.sampled_from([None, "ordered", "hungarian"]),
    options=settings,
)
def test_compiled_scores_equal_pure_scores(
    workers: tuple[_Worker, _Worker],
    gold: dict[Any, Any],
    output: Any,
    choice: int,
    near: bool,
    align: str | None,
    options: dict[str, Any],
) -> None:
    case = (gold, _near(gold, choice) if near else output, _schema(gold, align), options)
    pure, native = (worker.score(case) for worker in workers)
    assert native == pure


@needs_build
@pytest.mark.slow
def test_the_benchmark_workloads_score_identically(tmp_path: Path) -> None:
    """benchmarks/check_identical.py's six workloads (1,000 samples each, two option sets), one dump a side."""
    dumps = []
    for pure in (True, False):
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        env.pop(compiled.PURE_ENV, None)
        if pure:
            env[compiled.PURE_ENV] = "1"
        out = tmp_path / f"{'pure' if pure else 'compiled'}.json"
        subprocess.run(
            [sys.executable, str(ROOT / "benchmarks" / "check_identical.py"), "dump", str(out), "--samples", "1000"],
            check=True,
            env=env,
            cwd=ROOT,
            capture_output=True,
        )
        dumps.append(json.loads(out.read_text(encoding="utf-8")))
    assert len(dumps[0]) >= 8 and all(len(digests) == 1000 for digests in dumps[0].values())
    assert dumps[1] == dumps[0]
