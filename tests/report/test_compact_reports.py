"""The reports' per-sample data in compact form: the text spool, the charts' columns and samples.csv's lines made in
the one pass over the records, and the viewer's data encoded as it is read. Each gives back exactly what it was
given, so report.html, summary.md and the CSVs come out as before."""

from __future__ import annotations

import csv
import io
import json
import math
import random
from pathlib import Path

import pytest
from _runs import DATASET, fixture_outputs, make_run
from hypothesis import given
from hypothesis import strategies as st

from pytest_extractbench.core import redact
from pytest_extractbench.core.rundoc import iter_samples
from pytest_extractbench.report import exports, viewer
from pytest_extractbench.report.rows import RunData, read_run, sample_row
from pytest_extractbench.report.sample_table import CHART_KEYS, OnePass, SampleTable, _Numbers, cell, sample_table
from pytest_extractbench.report.spool import TextSpool
from pytest_extractbench.report.viewer_document import ViewerDocument

# --- the spool ---------------------------------------------------------------------------------------------------


@given(st.lists(st.text(), max_size=60))
def test_the_spool_gives_back_every_text_in_order_and_again(texts: list[str]) -> None:
    spool = TextSpool()
    for text in texts:
        spool.append(text)
    assert len(spool) == len(texts) and list(spool) == texts and list(spool) == texts


def test_texts_past_many_batches_come_back_whole_and_are_held_compressed(monkeypatch) -> None:
    monkeypatch.setattr("pytest_extractbench.report.spool._AS_TEXT", 1_000_000)  # the first megabyte as text
    rng = random.Random(7)
    words = ["alpha", "bravo", "cedar", "ümlaut", "日本", "\ud800", ""]  # a lone surrogate and an empty text too
    texts = [" ".join(rng.choice(words) for _ in range(rng.randrange(0, 400))) for _ in range(3000)]
    spool = TextSpool()
    for text in texts:
        spool.append(text)
    assert list(spool) == texts
    raw = sum(len(t.encode("utf-8", "surrogatepass")) for t in texts)  # ~7 MB of text drawn from 7 words
    # the text kept as it is (at most 1,000,000 characters) and the rest a fifth or less of its size
    assert raw > 2_000_000 and spool.size() < 1_000_000 + (raw - 1_000_000) / 3


# --- the charts' columns and samples.csv ---------------------------------------------------------------------------

_NUMBERS = st.one_of(st.floats(), st.booleans(), st.none(), st.integers(), st.text(max_size=3))


@given(st.lists(_NUMBERS, max_size=40))
def test_a_column_gives_back_each_value_with_its_type(values: list) -> None:
    column = _Numbers()
    for value in values:
        column.append(value)
    for index, value in enumerate(values):
        got = column[index]
        assert type(got) is type(value)
        # NaN is not equal to itself, -0.0 equals 0.0: compare the written form too
        assert repr(got) == repr(value) and (got == value or (isinstance(value, float) and math.isnan(value)))


@given(st.one_of(_NUMBERS, st.text(), st.sampled_from(["=1+1", "+x", "@a", "-2", "\r=1", "Bearer abcdefgh1"])))
def test_a_table_cell_is_the_cell_the_exports_write(value) -> None:
    table = SampleTable()
    secrets = redact.env_secrets()
    for shared in (True, False, True):  # the second time a shared text comes from the table's own copy
        # a float cell is the value itself: NaN is not equal to itself, so compare the CSV text written of each
        assert [repr(table._cell(value, shared)), repr(cell(value, secrets))] == [repr(exports.cell(value))] * 2


@pytest.fixture(scope="module")
def two_models(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_run(
        tmp_path_factory.mktemp("compact") / "run",
        {"good": fixture_outputs("demo.jsonl"), "weak": fixture_outputs("weak.jsonl")},
        timed=True,
    )


def test_the_table_holds_each_records_chart_values_and_samples_csv_lines(two_models: Path) -> None:
    records = list(iter_samples(two_models / "samples.jsonl"))
    table = sample_table(lambda: iter(records))
    rows = [sample_row(r) for r in records]
    assert list(table.models) == ["good", "weak"]  # in the order the records name them
    for model, kept in table.models.items():
        mine = [r for r in rows if r["model"] == model]
        assert len(kept) == len(mine) == len(DATASET.samples)
        for got, want in zip(kept, mine):
            assert dict(got) == {key: want[key] for key in CHART_KEYS}
            assert [type(got[key]) for key in CHART_KEYS] == [type(want[key]) for key in CHART_KEYS]
        assert kept[-1] == kept[len(kept) - 1] and len(kept[1:3]) == 2
        with pytest.raises(IndexError):
            kept[len(kept)]
    assert "".join(table.csv_lines()) == exports.samples_csv(rows)
    # the timed run's latencies reach the charts as numbers, a flag stays a flag
    assert all(isinstance(r["latency_s"], float) for r in table.models["good"])
    assert {type(r["schema_valid"]) for r in table.models["weak"]} == {bool}


def test_one_pass_lends_its_table_and_a_table_without_lines_says_so(two_models: Path) -> None:
    reads = []

    def records():
        reads.append(1)
        return iter_samples(two_models / "samples.jsonl")

    once = OnePass(records)
    assert sample_table(once) is not None and len(reads) == 1  # not read whole yet: read for the table
    for _ in once():
        pass
    assert len(reads) == 2 and sample_table(once) is once.table  # then lent, without a read
    bare = OnePass(records, csv_lines=False)
    list(bare())
    assert sample_table(bare, csv_lines=False) is bare.table and len(reads) == 3
    assert sample_table(bare) is not bare.table and len(reads) == 4  # the lines are wanted: read for them
    with pytest.raises(ValueError):
        next(bare.table.csv_lines())


def test_a_cell_that_cannot_be_written_fails_samples_csv_not_the_pass(monkeypatch) -> None:
    table = SampleTable()
    monkeypatch.setattr("pytest_extractbench.report.sample_table.cell", lambda *a: 1 / 0)
    row = {
        "model": "m",
        "sample_id": "s",
        "passed": True,
        "meta": {},
        "response": {"content": None, "latency_s": None, "finished_at": None, "error_class": "missing"},
        "failure": "no output",
    }
    table.add(row)  # a track-like record: no score
    assert len(table.models["m"]) == 1 and table.models["m"][0]["eqs"] == 0.0
    with pytest.raises(ZeroDivisionError):
        list(table.csv_lines())


# --- the environment's keys read once -----------------------------------------------------------------------------


def test_a_snapshot_of_the_keys_masks_as_reading_them_does(monkeypatch) -> None:
    monkeypatch.setenv("EXTRACTBENCH_API_KEY", "k3y-not-shaped-like-one")
    text = "server said: k3y-not-shaped-like-one and password=hunter2"
    snapshot = redact.env_secrets()
    assert redact.mask(text, snapshot) == redact.mask(text) == "server said: *** and password=***"
    # a caller's snapshot is what it masks: read before the key was set, it does not know it
    assert redact.mask("k3y-not-shaped-like-one", ()) == "k3y-not-shaped-like-one"


@given(st.text(alphabet=st.sampled_from("abcdeiknoprsty:/-KEYİ "), max_size=30))
def test_the_hint_scan_finds_what_the_substring_checks_found(text: str) -> None:
    lowered = text.lower()
    assert bool(redact._HINTED.search(lowered)) == any(hint in lowered for hint in redact._HINTS)


# --- the viewer's data encoded as read ------------------------------------------------------------------------------


def _texts(document: ViewerDocument) -> tuple[str, str]:
    return "".join(document.head_parts()), "".join(document.body_parts())


def test_the_viewers_texts_are_the_json_of_the_data_they_hold(two_models: Path) -> None:
    document = ViewerDocument(viewer.runs_from_dirs([two_models]))
    head, body = _texts(document)
    data = document.data()
    # exactly the text the page wrote when it encoded the whole document at once
    assert (head, body) == tuple(viewer.embed_json(part) for part in viewer.split(data))
    assert _texts(document) == (head, body)  # and again: a page rendered twice is the same page
    assert len(data["samples"]) == len(DATASET.samples) and [c["model"] for c in data["columns"]] == ["good", "weak"]
    assert data["details"][0][0] == DATASET.samples[0].text


def _run_with_records(run: Path, records: list[dict]) -> RunData:
    found = read_run(run)
    return RunData(found.document, lambda: iter(records), run)


def _shown(content: object) -> object:
    return content if content is None or isinstance(content, str) else json.dumps(content)


def test_a_run_read_in_another_order_or_twice_puts_each_result_on_its_samples_row(two_models: Path) -> None:
    records = [r for r in iter_samples(two_models / "samples.jsonl") if r["model"] == "good"]
    shuffled = records[::-1]  # the other run lists the samples the other way round
    twice = [*records, {**records[0], "response": {**records[0]["response"], "content": "read again"}}]
    runs = [
        viewer.ViewerRun("now", _run_with_records(two_models, records)),
        viewer.ViewerRun("reversed", _run_with_records(two_models, shuffled)),
        viewer.ViewerRun("twice", _run_with_records(two_models, twice)),
    ]
    document = ViewerDocument(runs)
    data = document.data()
    ids = [s[0] for s in data["samples"]]
    assert ids == [r["sample_id"] for r in records]  # rows in the order the first run gave them
    # an output that was JSON already is shown as its text
    outputs = {r["sample_id"]: _shown(r["response"]["content"]) for r in records}
    for k in (0, 1):
        assert [r[3] for r in data["results"][k]] == [outputs[sid] for sid in ids]
    # a sample read twice shows its last result; the scores of the head agree with the results
    assert data["results"][2][0][3] == "read again" and data["results"][2][1][3] == outputs[ids[1]]
    head, body = _texts(document)
    assert (head, body) == tuple(viewer.embed_json(part) for part in viewer.split(data))


def test_a_column_without_some_samples_has_null_on_their_rows(two_models: Path) -> None:
    records = [r for r in iter_samples(two_models / "samples.jsonl") if r["model"] == "good"]
    some = records[2:5] + records[8:9]  # rows 2, 3, 4 and 8 of the first run
    runs = [
        viewer.ViewerRun("all", _run_with_records(two_models, records)),
        viewer.ViewerRun("some", _run_with_records(two_models, some)),
    ]
    data = ViewerDocument(runs).data()
    present = [i for i, r in enumerate(data["results"][1]) if r is not None]
    assert present == [2, 3, 4, 8] and len(data["results"][1]) == len(records)
    head = json.loads("".join(ViewerDocument(runs).head_parts()))
    assert [i for i, eqs in enumerate(head["scores"][1][0]) if eqs is not None] == [2, 3, 4, 8]


# --- the files the finish writes ------------------------------------------------------------------------------------


def test_samples_csv_from_the_pass_is_the_file_written_from_the_rows(two_models: Path, tmp_path: Path) -> None:
    data = read_run(two_models)
    once = OnePass(data.records)
    for _ in once():
        pass
    exports.write_exports(tmp_path, data.document, once)
    written = (tmp_path / "samples.csv").read_bytes().decode("utf-8")
    assert written == exports.samples_csv(sample_row(r) for r in iter_samples(two_models / "samples.jsonl"))
    rows = list(csv.DictReader(io.StringIO(written)))
    assert len(rows) == 2 * len(DATASET.samples) and written.endswith("\r\n")


def test_nothing_here_keeps_the_records(two_models: Path) -> None:
    # the document keeps encoded text, not the parsed records: none of them is referenced once it is made
    import gc
    import weakref

    class Record(dict):
        pass

    records = [Record(r) for r in iter_samples(two_models / "samples.jsonl")]
    refs = [weakref.ref(r) for r in records]
    run = _run_with_records(two_models, records)
    document = ViewerDocument([viewer.ViewerRun("now", run)])
    del records, run
    gc.collect()
    assert not [r for r in refs if r() is not None] and document.data()["columns"]
