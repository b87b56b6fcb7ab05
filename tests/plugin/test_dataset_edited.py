"""A JSONL dataset edited while its run reads it: the item that meets the change fails with a message naming the
file, the line and the sample, no sample is scored on text that was not loaded, and the run goes on: every other
sample is scored and written, the changed one is named among the run's problems and its hash marks it changed."""

from __future__ import annotations

import pytest
from benchrun import OFFLINE_ARGS

from pytest_extractbench.dataset.identity import CHANGED, sample_hash
from pytest_extractbench.dataset.samples import Sample

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


def score(run, *more):  # the four samples scored offline, the dataset given as a JSONL file
    return run(
        *more,
        *OFFLINE_ARGS,
        files={"data.jsonl": ROWS, "preds.jsonl": PREDICTIONS},
    )


@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["one process", "xdist"])
def test_an_edited_line_fails_its_item_and_the_run_goes_on(pytester: pytest.Pytester, run, workers) -> None:
    pytester.makeconftest(CONFTEST)
    result = score(run, *workers)
    result.assert_outcomes(passed=3, failed=1, errors=0)
    text = result.stdout.str() + result.stderr.str()
    assert "changed while the run was reading it" in text
    assert "line 3 (sample 's2')" in text and "data.jsonl" in text
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert sorted(run.records()) == ["s0", "s1", "s3"]  # the rest scored and written: nothing measured is lost
    document = run.document()
    info = document["run"]
    assert [n for n in info["unscored_items"] if "s2" in n] and document["models"]
    hashes = info["dataset"]["sample_hashes"]
    if not workers:  # the process that read the dataset finishes the run: the changed line is named and marked
        assert [(p["location"], p["sample_id"]) for p in info["problems"]] == [("line 3", "s2")]
        assert "changed while the run was reading it" in info["problems"][0]["message"]
        assert hashes["s2"] == CHANGED
    else:  # xdist's controller reads the dataset first at the finish: s2's hash is of the line it read
        assert not info["problems"] and hashes["s2"] != CHANGED
    assert len({hashes[s] for s in ("s0", "s1", "s2", "s3")}) == 4
    assert info["partial"]["scored"] == 3 and info["partial"]["collected"] == 4
    assert not (pytester.path / "out" / "samples.jsonl.spool").exists()


# after the first sample is scored, its line is rewritten: the run's identity must be of what was scored
EDITED_AFTER = """
from pathlib import Path

def pytest_runtest_teardown(item):
    if item.name.endswith("-s0]"):
        path = Path("data.jsonl")
        path.write_text(path.read_text().replace("Name: N0.", "Name: Z0."))
"""


@pytest.mark.parametrize("workers", [(), ("-n", "2")], ids=["one process", "xdist"])
def test_a_line_edited_after_its_item_keeps_the_hash_it_was_scored_with(
    pytester: pytest.Pytester, run, workers
) -> None:
    pytester.makeconftest(EDITED_AFTER)
    result = score(run, *workers)
    result.assert_outcomes(passed=4)
    info = run.document()["run"]
    row = ROWS[0]
    assert info["dataset"]["sample_hashes"]["s0"] == sample_hash(Sample("s0", row["text"], SCHEMA, row["expected"]))
    assert not info["problems"]
    assert run.document()["dataset"]["statistics"]["text_length_chars"]["count"] == 4


def test_an_unchanged_file_reads_every_sample_again(pytester: pytest.Pytester, run) -> None:
    result = score(run)
    result.assert_outcomes(passed=4)
    assert sorted(run.records()) == ["s0", "s1", "s2", "s3"]
    assert run.document()["dataset"]["statistics"]["text_length_chars"]["count"] == 4
