"""samples.jsonl streamed (run/spool.py): the bytes writing every record at the end gives, whatever order the
records arrive in."""

from __future__ import annotations

import json
import random
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_extractbench import SampleRecord, score_sample
from pytest_extractbench.core import rundoc
from pytest_extractbench.run.spool import RecordSpool

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "n": {"type": "number"},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["name"],
}
GOLD = {"name": "Ada", "n": 3, "tags": ["x", "y"]}
VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(-5, 5), st.text(max_size=6), st.lists(st.text(max_size=3), max_size=3)
)
OUTPUTS = st.one_of(
    st.fixed_dictionaries({}, optional={"name": VALUES, "n": VALUES, "tags": VALUES, "extra": VALUES}).map(json.dumps),
    st.text(max_size=20),  # unparseable or wrong-typed output
)
RECORDS = st.lists(
    st.tuples(st.sampled_from(["m-a", "m-b", "m\u202ec"]), st.text(min_size=1, max_size=4), OUTPUTS, st.floats(0, 5)),
    min_size=0,
    max_size=300,
)
PROPERTY = settings(
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)


def records(rows: list[tuple[str, str, str, float]]) -> list[SampleRecord]:
    made = []
    for model, sample_id, output, latency in rows:
        score = score_sample(output, GOLD, SCHEMA, sample_id=sample_id)
        made.append(
            SampleRecord(
                model=model,
                sample_id=sample_id,
                score=score,
                passed=score.valid,
                failure=None if score.valid else "invalid",
                response={"content": output, "latency_s": latency},
                meta={"topic": "t"},
            )
        )
    return made


@PROPERTY
@given(rows=RECORDS, seed=st.integers(0, 2**16))
def test_the_spool_writes_the_bytes_the_records_would(tmp_path_factory, rows, seed) -> None:
    folder = tmp_path_factory.mktemp("spool")
    arrived = records(rows)
    random.Random(seed).shuffle(arrived)  # items finish in any order (xdist)
    spool = RecordSpool(folder / "samples.jsonl.spool")
    for record in arrived:
        spool.add(record)
    assert spool.holds(arrived)
    spool.write_sorted(folder / "streamed.jsonl")
    ordered = sorted(arrived, key=lambda r: r.sort_key)  # what the finish does with the records themselves
    rundoc.write_samples(folder / "written.jsonl", (r.to_dict() for r in ordered))
    assert (folder / "streamed.jsonl").read_bytes() == (folder / "written.jsonl").read_bytes()
    assert not (folder / "samples.jsonl.spool").exists()


def test_a_record_json_cannot_hold_turns_the_spool_off(tmp_path: Path) -> None:
    spool = RecordSpool(tmp_path / "samples.jsonl.spool")
    good, bad = records([("m", "a", "{}", 0.1), ("m", "b", "{}", 0.1)])
    spool.add(good)
    bad.response["usage"] = {"tokens": 10**5000}  # past Python's int-to-text limit: the finish names it instead
    spool.add(bad)
    assert spool.broken and not spool.holds([good, bad])
    assert not RecordSpool(tmp_path / "other.spool").holds([good])  # a record the spool never saw
    assert not (tmp_path / "samples.jsonl.spool").exists()
