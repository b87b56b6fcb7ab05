"""A run of one sample says so in the singular, in the terminal and in summary.md."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DEMO = str(ROOT / "fixtures" / "predictions" / "demo.jsonl")


def test_one_sample_is_one_sample_everywhere(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest(
        "-p",
        "no:randomly",
        "--extractbench",
        "--extractbench-predictions",
        DEMO,
        "--extractbench-sample",
        "1",
        "--extractbench-output",
        "out",
    )
    lines = result.stdout.lines
    assert any(line.startswith("dataset bundled: 1 sample; results in ") for line in lines), lines
    assert "model predictions: 1 sample" in lines
    assert any(line.endswith(" on 1 sample") for line in lines if line.startswith("  predictions: EQS ")), lines
    # pytest's counts line, whatever warnings the host process adds: "1 gate passed", not "1 gates passed"
    assert lines[-1].startswith("=") and re.search(r" 1 passed, (\d+ warnings?, )?1 gate passed in ", lines[-1])
    summary = (pytester.path / "out" / "summary.md").read_text(encoding="utf-8")
    assert "(1 sample)" in summary and "1 samples" not in summary
    assert not [line for line in lines if "1 samples" in line]
