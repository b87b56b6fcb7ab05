"""samples.jsonl streamed: the controller's spool holds a line for every record before the finish (in one process
and under xdist, where the records arrive as the workers' reports), and the file it becomes is byte for byte the
one a serial run writes, with no spool left behind."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DEMO = str(ROOT / "fixtures" / "predictions" / "demo.jsonl")
ARGS = ("--extractbench-predictions", DEMO, "--extractbench-sla", "none", "--extractbench-no-html-report")

# outermost around the plugin's finish: how many lines the spool holds when the finish starts
CONFTEST = """
from pathlib import Path
import pytest

@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_sessionfinish(session):
    if not hasattr(session.config, "workerinput"):
        for spool in Path(".").glob("*/samples.jsonl.spool"):
            Path(spool.parent.name + ".spooled").write_text(str(len(spool.read_bytes().splitlines())))
    return (yield)
"""


@pytest.mark.parametrize("xdist", [(), pytest.param(("-n", "2"), marks=pytest.mark.slow)], ids=["one process", "xdist"])
def test_records_are_spooled_as_they_arrive_and_written_in_order(pytester: pytest.Pytester, run, xdist) -> None:
    pytester.makeconftest(CONFTEST)
    run(*ARGS, "-p", "no:xdist", out="serial")
    run(*ARGS, *xdist, out="streamed", subprocess=bool(xdist))  # xdist's workers need a process to start from
    scored = len(run.records("serial"))
    assert scored > 10
    for out in ("serial", "streamed"):
        assert (pytester.path / f"{out}.spooled").read_text() == str(scored), out
        assert not (pytester.path / out / "samples.jsonl.spool").exists()
    assert (pytester.path / "streamed" / "samples.jsonl").read_bytes() == (
        pytester.path / "serial" / "samples.jsonl"
    ).read_bytes()
