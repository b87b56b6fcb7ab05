"""What the plugin leaves on pytest's items and reports, and when it gives the heap back: the per-item costs of a
large run, each kept to what the run needs.

- a sample item's report keeps who it was (model, sample id, passed) as a three-slot mapping once the session has
  the record, read as the dict it replaces;
- items of one topic or complexity bin share one mark object per marker;
- the heap stays frozen through pytest's own last garbage collections (at unconfigure) and is thawed after them.
"""

from __future__ import annotations

import json

import pytest
from benchrun import OFFLINE_ARGS, BenchRun

from pytest_extractbench.plugin.scored import ScoredSample

SCHEMA = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
TOPICS = ["medical", "legal", "medical", "legal"]
SAMPLES = [
    {"id": f"s{i}", "text": f"n is {i}", "schema": SCHEMA, "expected": {"n": i}, "topic": topic}
    for i, topic in enumerate(TOPICS)
]
# s1 answers a string for the integer: schema-invalid, the item fails; the others are exact
OUTPUTS = [{"id": s["id"], "output": json.dumps({"n": "1" if s["id"] == "s1" else i})} for i, s in enumerate(SAMPLES)]
ARGS = OFFLINE_ARGS


@pytest.fixture(autouse=True)
def _inputs(run: BenchRun) -> None:
    run.write_jsonl("data.jsonl", SAMPLES)
    run.write_jsonl("preds.jsonl", OUTPUTS)


def test_a_scored_sample_reads_as_the_dict_it_replaces() -> None:
    kept = ScoredSample("m", "s1", False)
    assert kept == {"model": "m", "sample_id": "s1", "passed": False} and dict(kept) == kept
    assert kept["sample_id"] == "s1" and kept.get("passed") is False and kept.get("score") is None
    assert list(kept) == ["model", "sample_id", "passed"] and len(kept) == 3 and "model" in kept
    with pytest.raises(KeyError):
        kept["score"]
    with pytest.raises(AttributeError):  # slots only: nothing else can be hung on it
        kept.score = 1  # type: ignore[attr-defined]
    assert repr(kept) == "{'model': 'm', 'sample_id': 's1', 'passed': False}"


# the reports pytest holds at the end of the session, as a plugin reading them then sees them
REPORTS_AT_THE_END = """
import json

def pytest_terminal_summary(terminalreporter):
    kept = []
    for outcome in ("passed", "failed"):
        for report in terminalreporter.stats.get(outcome, []):
            data = getattr(report, "extractbench", None)
            if data is not None:
                kept.append([report.when, type(data).__name__, data["model"], data.get("sample_id"), data["passed"]])
    with open("kept.json", "w") as out:
        json.dump(sorted(kept, key=lambda row: row[3]), out)
"""


def test_each_sample_report_keeps_who_it_was_and_nothing_more(run: BenchRun, pytester: pytest.Pytester) -> None:
    pytester.makeconftest(REPORTS_AT_THE_END)
    result = run(*ARGS)
    result.assert_outcomes(passed=3, failed=1)
    kept = json.loads((pytester.path / "kept.json").read_text())
    # by hand: one call report per sample, s1 failed (its string for the integer), the others passed
    assert kept == [
        ["call", "ScoredSample", "predictions", "s0", True],
        ["call", "ScoredSample", "predictions", "s1", False],
        ["call", "ScoredSample", "predictions", "s2", True],
        ["call", "ScoredSample", "predictions", "s3", True],
    ]


# each item's topic marks, and the identity of each mark object, as collected
MARKS_COLLECTED = """
import json

def pytest_collection_finish(session):
    with open("marks.json", "w") as out:
        json.dump([[m.name, id(m)] for item in session.items for m in item.own_markers if m.name in ("medical", "legal")], out)
"""


def test_items_of_one_topic_share_its_mark(run: BenchRun, pytester: pytest.Pytester) -> None:
    pytester.makeconftest(MARKS_COLLECTED)
    run(*ARGS, "--collect-only")
    marks = json.loads((pytester.path / "marks.json").read_text())
    assert [name for name, _ in marks] == TOPICS  # each item carries its own topic's marker, in dataset order
    s0, s1, s2, s3 = (identity for _, identity in marks)
    assert s0 == s2 and s1 == s3 and s0 != s1  # one object per marker, not one per item
    result = run(*ARGS, "-m", "legal")  # and -m still selects by it
    result.assert_outcomes(passed=1, failed=1, deselected=2)  # s1 (fails) and s3


# trylast: after every other pytest_unconfigure, pytest's own collection among them (unraisableexception)
FREEZE_AT_UNCONFIGURE = """
import gc
import pytest

@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config):
    with open("frozen_at_unconfigure", "w") as out:
        out.write(str(gc.get_freeze_count()))
"""


def test_the_heap_stays_frozen_through_pytests_last_collections(run: BenchRun, pytester: pytest.Pytester) -> None:
    import gc

    if gc.get_freeze_count():
        pytest.skip("this process already holds frozen objects: the run leaves the GC alone")
    pytester.makeconftest(FREEZE_AT_UNCONFIGURE)
    run(*ARGS).assert_outcomes(passed=3, failed=1)
    assert int((pytester.path / "frozen_at_unconfigure").read_text()) > 0  # still frozen when pytest collects
    assert gc.get_freeze_count() == 0  # and thawed once the session's cleanups have run
