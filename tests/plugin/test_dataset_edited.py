"""A JSONL dataset edited while its run reads it: the item that meets the change fails with a message naming the
file, the line and the sample, the session stops, and no sample is scored on text that was not loaded."""

from __future__ import annotations

import pytest

SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
ROWS = [{"id": f"s{i}", "text": f"Name: N{i}.", "schema": SCHEMA, "expected": {"name": f"N{i}"}} for i in range(4)]
PREDICTIONS = [{"id": f"s{i}", "output": {"name": f"N{i}"}} for i in range(4)]

# before the third item runs, the third sample's line is rewritten (same length: only its content differs)
CONFTEST = """
from pathlib import Path

def pytest_runtest_setup(item):
    if item.name.endswith("-s2]"):
        path = Path("data.jsonl")
        path.write_text(path.read_text().replace("Name: N2.", "Name: X2."))
"""


def score(run):  # the four samples scored offline, the dataset given as a JSONL file
    return run(
        "--extractbench-dataset",
        "data.jsonl",
        "--extractbench-predictions",
        "preds.jsonl",
        "--extractbench-sla",
        "none",
        files={"data.jsonl": ROWS, "preds.jsonl": PREDICTIONS},
    )


def test_an_edited_line_fails_its_item_and_stops_the_session(pytester: pytest.Pytester, run) -> None:
    pytester.makeconftest(CONFTEST)
    result = score(run)
    result.assert_outcomes(passed=2, failed=1, errors=0)
    text = result.stdout.str() + result.stderr.str()
    assert "changed while the run was reading it" in text
    assert "line 3 (sample 's2')" in text and "data.jsonl" in text
    assert result.ret == pytest.ExitCode.INTERRUPTED
    assert "the run's files are not written" in text
    assert not (pytester.path / "out" / "metrics.json").exists()  # nothing describes a file that is not the one read
    assert not (pytester.path / "out" / "samples.jsonl.spool").exists()


def test_an_unchanged_file_reads_every_sample_again(pytester: pytest.Pytester, run) -> None:
    result = score(run)
    result.assert_outcomes(passed=4)
    assert sorted(run.records()) == ["s0", "s1", "s2", "s3"]
    assert run.document()["dataset"]["statistics"]["text_length_chars"]["count"] == 4
