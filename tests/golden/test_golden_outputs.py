"""Golden outputs of the fixture runs: the files a run writes stay byte-identical across refactors.

Each case runs the plugin on fixed inputs (the bundled dataset with the demo and weak predictions, a
replayed live journal with faults, each track, a baseline comparison) and compares metrics.json,
samples.jsonl, summary.md and the CSVs with the stored copies in ``tests/golden/expected/``, after
replacing what legitimately differs between two runs (timestamps, durations, temporary paths,
library versions).

A deliberate change of output is recorded with ``EXTRACTBENCH_UPDATE_GOLDEN=1 pytest tests/golden``;
review the diff of ``tests/golden/expected`` before committing it.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
EXPECTED = HERE / "expected"
UPDATE = os.environ.get("EXTRACTBENCH_UPDATE_GOLDEN") == "1"
# The runs are a user's default runs, charts included: their recorded options must not carry the test switch.
pytestmark = [pytest.mark.charts, pytest.mark.slow]  # whole runs, up to three each
FILES = ("metrics.json", "samples.jsonl", "summary.md", "metrics.csv", "samples.csv")
BASE = (
    "-p",
    "no:randomly",
    "-W",
    "ignore::pytest.PytestAssertRewriteWarning",
    "--extractbench",
    "--extractbench-resamples",
    "200",
)

# Keys whose values change from one run to the next whatever the inputs.
VOLATILE_KEYS = frozenset(
    {
        "started_at",
        "finished_at",
        "duration_s",
        "created_at",
        "saved_at",
        "timestamp",
        "versions",
        "wall_s",
        "elapsed_s",
        "scoring_s",
        "item_s",
        "run_dir",
        "output_dir",
        "hostname",
        "python",
        "platform",
    }
)
_ISO_TIME = re.compile(r"\d{4}-\d\d-\d\d([T ]\d\d:\d\d:\d\d(\.\d+)?(\+00:00|Z)?)?")
_DURATION = re.compile(r"\b\d+(\.\d+)?\s?(s|ms|min)\b(?= |$|\)|,|\|)")


def _track_predictions(track: str) -> list[dict[str, Any]]:
    """Deterministic predictions for a bundled track: the gold answer for every other row, a wrong one otherwise."""
    rows = [
        json.loads(line) for line in (ROOT / "pytest_extractbench" / "data" / f"{track}.jsonl").read_text().splitlines()
    ]
    out = []
    for i, row in enumerate(rows):
        if track == "toolcall":
            calls = [
                {"name": name, "arguments": {k: v[0] for k, v in args.items() if v and v[0] != ""}}
                for call in row.get("expected_calls") or []
                for name, args in call.items()
            ]
            output: Any = calls if i % 2 == 0 else "I cannot help with that."
        elif track == "repair":
            output = row["original"] if i % 2 == 0 else '{"broken": '
        else:  # generate: a minimal object for even rows, not JSON for odd rows
            output = {} if i % 2 == 0 else "no"
        out.append({"id": row["id"], "output": output})
    return out


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path.name


def _demo(p: pytest.Pytester) -> list[tuple[str, ...]]:
    return [("--extractbench-predictions", str(ROOT / "fixtures/predictions/demo.jsonl"))]


def _demo_and_weak(p: pytest.Pytester) -> list[tuple[str, ...]]:
    return [
        (
            "--extractbench-predictions",
            f"demo={ROOT / 'fixtures/predictions/demo.jsonl'}",
            "--extractbench-predictions",
            f"weak={ROOT / 'fixtures/predictions/weak.jsonl'}",
        )
    ]


def _live_faults(p: pytest.Pytester) -> list[tuple[str, ...]]:
    journal = p.path / "recorded"
    journal.mkdir()
    shutil.copy(HERE / "inputs/live-faults/responses.jsonl", journal / "responses.jsonl")
    shutil.copy(HERE / "inputs/live-faults/data.jsonl", p.path / "data.jsonl")
    return [("--extractbench-dataset", "data.jsonl", "--extractbench-replay", "recorded")]


def _track(track: str) -> Callable[[pytest.Pytester], list[tuple[str, ...]]]:
    def setup(p: pytest.Pytester) -> list[tuple[str, ...]]:
        name = _write_jsonl(p.path / "preds.jsonl", _track_predictions(track))
        return [("--extractbench-track", track, "--extractbench-predictions", name)]

    return setup


def _baseline_compare(p: pytest.Pytester) -> list[tuple[str, ...]]:
    demo, weak = ROOT / "fixtures/predictions/demo.jsonl", ROOT / "fixtures/predictions/weak.jsonl"
    return [
        ("--extractbench-predictions", f"m={demo}", "--extractbench-save", "main"),
        (
            "--extractbench-predictions",
            f"m={weak}",
            "--extractbench-compare",
            "main",
            "--extractbench-compare-fail",
            "eqs:-0.02",
        ),
    ]


CASES: dict[str, Callable[[pytest.Pytester], list[tuple[str, ...]]]] = {
    "demo": _demo,
    "demo-weak": _demo_and_weak,
    "live-faults-replay": _live_faults,
    "track-toolcall": _track("toolcall"),
    "track-generate": _track("generate"),
    "track-repair": _track("repair"),
    "baseline-compare": _baseline_compare,
}


def _normalize_value(value: Any, roots: tuple[str, ...]) -> Any:
    if isinstance(value, dict):
        return {k: ("<volatile>" if k in VOLATILE_KEYS else _normalize_value(v, roots)) for k, v in value.items()}
    if isinstance(value, list):
        return [_normalize_value(v, roots) for v in value]
    if isinstance(value, str):
        return _normalize_text(value, roots)
    if isinstance(value, float):
        # 12 significant digits: the last bits of scipy's reductions differ between CPUs (SIMD paths)
        return float(f"{value:.12g}")
    return value


def _normalize_text(text: str, roots: tuple[str, ...]) -> str:
    for root, name in zip(roots, ("<tmp>", "<root>")):
        text = text.replace(root, name)
    return _ISO_TIME.sub("<time>", text)


def normalize(name: str, text: str, roots: tuple[str, ...]) -> str:
    """The file with run-to-run differences replaced by placeholders."""
    if name.endswith(".json"):
        return json.dumps(_normalize_value(json.loads(text), roots), indent=1, sort_keys=True) + "\n"
    if name.endswith(".jsonl"):
        return "".join(
            json.dumps(_normalize_value(json.loads(line), roots), sort_keys=True) + "\n"
            for line in text.splitlines()
            if line.strip()
        )
    text = _normalize_text(text, roots)
    return (
        "\n".join(
            _DURATION.sub("<duration>", line) if re.search(r"(?i)duration|took|wall|time", line) else line
            for line in text.splitlines()
        )
        + "\n"
    )


@pytest.mark.parametrize("case", sorted(CASES))
def test_run_outputs_match_the_golden_copy(pytester: pytest.Pytester, case: str) -> None:
    runs = CASES[case](pytester)
    for i, args in enumerate(runs):
        out = "out" if i == len(runs) - 1 else f"out{i}"
        pytester.runpytest(*BASE, "--extractbench-output", out, *args)
    run_dir = pytester.path / "out"
    roots = (str(pytester.path), str(ROOT))
    expected_dir = EXPECTED / case
    produced = {
        name: normalize(name, (run_dir / name).read_text(encoding="utf-8"), roots)
        for name in FILES
        if (run_dir / name).exists()
    }
    assert "metrics.json" in produced and "samples.jsonl" in produced, f"the {case} run wrote no results"
    if UPDATE:
        shutil.rmtree(expected_dir, ignore_errors=True)
        expected_dir.mkdir(parents=True)
        for name, text in produced.items():
            (expected_dir / name).write_text(text, encoding="utf-8")
        return
    stored = {p.name: p.read_text(encoding="utf-8") for p in sorted(expected_dir.glob("*"))}
    assert sorted(produced) == sorted(stored), f"{case}: files written differ from the golden set"
    for name, text in produced.items():
        assert text == stored[name], f"{case}/{name} differs from tests/golden/expected/{case}/{name}"
