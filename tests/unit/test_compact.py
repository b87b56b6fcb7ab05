"""Held records with their equal values shared (run/compact.py): every record reads and writes as before, and the
run's metrics are the same, while equal values are kept once."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_extractbench import SampleRecord, ScoringOptions, score_sample
from pytest_extractbench.analysis.diagnostics import sample_diagnostics
from pytest_extractbench.analysis.metrics import metrics_by_model
from pytest_extractbench.analysis.performance import output_chars
from pytest_extractbench.core import rundoc
from pytest_extractbench.core.recordform import RESPONSE_DEFAULTS
from pytest_extractbench.dataset.records import HeldOutput, TrackRecord
from pytest_extractbench.dataset.responses import ModelResponse
from pytest_extractbench.run import compact
from pytest_extractbench.run.compact import HeldScore, SharedValues, shares_safely
from pytest_extractbench.scoring import MISSING
from pytest_extractbench.scoring.result import FieldResult

SCHEMA = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "n": {"type": "number"},
        "ok": {"type": "boolean"},
        "tags": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["name"],
}
# values equal in Python but not the same JSON (1, 1.0, True; 0.0, -0.0), texts that repeat, lists
VALUES = st.sampled_from([None, 1, 1.0, True, 0, 0.0, -0.0, False, "Ada", "ada", "", 2.5, ["x"], ["x", "y"]])
OBJECTS = st.fixed_dictionaries({}, optional={"name": VALUES, "n": VALUES, "ok": VALUES, "tags": VALUES})
OUTPUTS = st.one_of(OBJECTS.map(json.dumps), st.sampled_from(["", "{", "not json", '{"name": "Ada"']))
# answers as each source gives them: offline (nothing but the content), live (timed, counted), cached, failed
ANSWERS = st.sampled_from(
    [
        {},
        {"latency_s": 0.5, "attempts": 1, "usage": {"prompt_tokens": 9, "completion_tokens": 4}},
        {"cached": True, "attempts": 0, "finish_reason": "stop"},
        {"latency_s": 1.5, "attempts": 2, "finish_reason": "length", "timings": {"prompt_ms": 3.0}},
        {"latency_s": 30.0, "attempts": 3, "error_class": "timeout", "error": "read timed out"},
    ]
)
ROWS = st.lists(st.tuples(st.sampled_from(["m-a", "m-b"]), OBJECTS, OUTPUTS, ANSWERS), max_size=40)
PROPERTY = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
OPTIONS = ScoringOptions()


def record(
    model: str, sample_id: str, gold: dict[str, object], output: str, answer: dict[str, object] | None = None
) -> SampleRecord:
    score = score_sample(output, gold, SCHEMA, options=OPTIONS, sample_id=sample_id)
    score.anls_star_observed  # noqa: B018 - computed as an item computes it, before its record is held
    return SampleRecord(
        model=model,
        sample_id=sample_id,
        score=score,
        meta={"text_chars": 10},
        response=ModelResponse(
            content=MISSING if "error_class" in (answer or {}) else output,
            **(answer or {}),  # type: ignore[arg-type]
        ).as_dict(),
        passed=score.valid,
        failure=None if score.valid else "output violates the schema",
        diagnostics=sample_diagnostics(score, "Ada has 1 tag", gold, output, SCHEMA, OPTIONS),
    )


def exact(item: SampleRecord) -> str:
    """Everything a finish pass can read of a record, as text that tells 1 from 1.0, True and -0.0 from 0.0: its
    samples.jsonl line, its score's parts, and what each response key reads as (None for a default left out; the
    output as its length)."""
    score, line = item.score, rundoc.compact(item.to_dict())
    line.pop("response", None)
    read = {key: item.response.get(key) for key in RESPONSE_DEFAULTS}
    read["content"] = output_chars(read["content"])
    read = {key: value for key, value in read.items() if value not in (None, {}, 0, False) or value is True}
    return repr((line, score.fields, score.counts, score.observed, score.anls_star_fields, read))


@PROPERTY
@given(rows=ROWS)
def test_shared_records_read_and_aggregate_as_before(
    rows: list[tuple[str, dict[str, object], str, dict[str, object]]],
) -> None:
    made = [record(model, f"s{i % 7}", gold, output, answer) for i, (model, gold, output, answer) in enumerate(rows)]
    before = [exact(r) for r in made]
    metrics = repr(metrics_by_model(made, OPTIONS))
    shared = SharedValues()
    held = [shared.compact(r) for r in made]
    assert all(type(r.score) is HeldScore and r.score is not m.score for r, m in zip(held, made))
    assert [exact(r) for r in held] == before
    assert [repr((r.score.precision, r.score.recall, r.score.f1)) for r in held] == [
        repr((r.score.precision, r.score.recall, r.score.f1)) for r in made
    ]
    assert repr(metrics_by_model(held, OPTIONS)) == metrics
    assert [exact(r) for r in made] == before  # the records given read as they did


def test_equal_values_are_kept_once() -> None:
    gold = {"name": "Ada Lovelace", "n": 3, "tags": ["x"]}
    output = json.dumps({"name": "Ada Lovelace", "n": 3, "tags": ["x"], "extra": "made up"})
    first, second = (record("m", sample_id, gold, output) for sample_id in ("a", "b"))
    shared = SharedValues()
    first, second = shared.compact(first), shared.compact(second)
    for one, other in zip(first.score.fields, second.score.fields):
        assert one == other
        assert one.path is other.path  # a field's shape (path, category, types...) is kept once in the run's table
    assert first.diagnostics is second.diagnostics
    held, other_held = first.score, second.score
    assert isinstance(held, HeldScore) and isinstance(other_held, HeldScore)
    # the values are one string each (a record's own), equal for equal records
    assert held._blob is not None and held._loose is None and held._blob == other_held._blob
    assert held._anls_keys is other_held._anls_keys  # ANLS* per key path: the keys once, the values as bits
    assert held._credit is None  # P/R/F1 computed again from the counts when read, not kept
    assert held.f1 == other_held.f1 == first.score.f1


def test_values_equal_in_python_but_not_in_json_stay_apart() -> None:
    shared = SharedValues()
    outputs = {value: f'{{"name": "Ada", "n": {value}}}' for value in ("1", "1.0", "true", "0.0", "-0.0")}
    made = {value: shared.compact(record("m", value, {"name": "Ada", "n": 1}, text)) for value, text in outputs.items()}
    predicted = {value: next(f.predicted for f in r.score.fields if f.path == "n") for value, r in made.items()}
    assert [repr(p) for p in predicted.values()] == ["1", "1.0", "True", "0.0", "-0.0"]
    names = [next(f for f in r.score.fields if f.path == "name") for r in made.values()]
    assert all(name == names[0] and name.expected is names[0].expected for name in names)  # one text kept


def test_a_record_of_another_track_is_left_as_it_is() -> None:
    track = TrackRecord("m", "a", "toolcall", {"valid": True}, meta={"k": 1})
    before = repr(track.to_dict())
    assert SharedValues().compact(track) is track
    assert repr(track.to_dict()) == before


def test_only_a_finish_that_writes_into_records_keeps_them_apart() -> None:
    class Settings:
        def __init__(self, **scoring: object) -> None:
            self.scoring = ScoringOptions(**scoring)  # type: ignore[arg-type]

    assert shares_safely(Settings())
    assert not shares_safely(Settings(semantic="local"))
    assert not shares_safely(Settings(judge_model="judge"))


def test_a_run_that_writes_its_answers_out_keeps_them_whole() -> None:
    given = record("m", "a", {"name": "Ada"}, '{"name": "Ada"}')
    kept, slim = SharedValues(whole_responses=True).compact(given), SharedValues().compact(given)
    assert kept.response == given.response == ModelResponse(content='{"name": "Ada"}').as_dict()
    assert slim.response == {"content": HeldOutput(15.0)}  # what the finish reads of it: its length


def test_a_full_table_is_emptied_and_sharing_goes_on(monkeypatch) -> None:
    monkeypatch.setattr(compact, "TABLE_LIMIT", 3)
    shared = SharedValues()
    # pairs of equal samples, each pair unlike the others: the tables fill and empty many times over
    made = [
        record("m", f"s{i}", {"name": f"n{i // 2}", "n": i // 2}, json.dumps({"name": f"n{i // 2}", "x": i // 2}))
        for i in range(40)
    ]
    before = [exact(r) for r in made]
    held = [shared.compact(r) for r in made]
    assert [exact(r) for r in held] == before
    tables = (shared._strings, shared._tuples, shared._maps, shared._outputs, shared._numbers)
    assert all(0 < len(table) <= 3 for table in tables)
    assert len(shared._shapes) < 40  # the shapes' table is never emptied: held scores name their fields' shapes in it


def test_past_65535_shapes_a_field_names_its_shape_in_four_bytes() -> None:
    shared = SharedValues()
    shared._shapes.extend([("filler",)] * 70_000)  # as if a run had seen that many shapes already
    given = record("m", "a", {"name": "Ada", "n": 2}, '{"name": "Ada", "n": 3, "extra": 1}')
    held = shared.compact(given).score
    packed = held._held()[0]
    assert packed is not None and packed[-1] == 4  # the width of a shape's place
    assert repr(held.fields) == repr(given.score.fields)


def test_a_field_that_does_not_fit_the_packed_form_is_kept_as_it_is() -> None:
    given = record("m", "a", {"name": "Ada"}, '{"name": "Ada"}')
    odd = FieldResult("name", "exact", 1.0, "Ada", "Ada", equal=1)  # type: ignore[arg-type]
    given.score.fields = (odd,)
    held = SharedValues().compact(given).score
    assert held._held()[0] is None and held.fields == (odd,) and type(held.fields[0].equal) is int  # not True


def test_a_held_score_keeps_what_is_assigned_to_it() -> None:
    held = SharedValues().compact(record("m", "a", {"name": "Ada"}, '{"name": "Bob"}')).score
    replaced = (FieldResult("name", "exact", 1.0, "Ada", "Ada"),)
    held.fields = replaced
    held.f1 = {"strict": 0.25, "partial": 0.5, "lenient": 0.75}
    assert held.fields == replaced
    assert held.f1 == {"strict": 0.25, "partial": 0.5, "lenient": 0.75}
    assert held.precision == held.recall == {"strict": 0.0, "partial": 0.0, "lenient": 0.0}  # "Bob" is incorrect


# --- the values as one marshal string ---

JSON_VALUES = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),  # past 64 bits too
        st.floats(allow_nan=True, allow_infinity=True),  # NaN and -0.0 keep their bits
        st.text(),  # lone surrogates too, as JSON's \\ud800 gives them
    ),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=3), inner, max_size=3)),
    max_leaves=12,
)


def held_with(fields: tuple[FieldResult, ...], errors: tuple[str, ...] = ()) -> tuple[SampleRecord, HeldScore]:
    given = record("m", "a", {"name": "Ada"}, '{"name": "Ada"}')
    given.score.fields, given.score.validation_errors = fields, errors
    held = SharedValues().compact(given).score
    assert isinstance(held, HeldScore)
    return given, held


@PROPERTY
@given(expected=JSON_VALUES, predicted=JSON_VALUES, score=st.floats(allow_nan=True), messages=st.lists(st.text()))
def test_json_values_read_back_from_the_string_with_their_types(
    expected: object, predicted: object, score: float, messages: list[str]
) -> None:
    fields = (
        FieldResult("a", "partial", score, expected, predicted, "string", "string", True, False),
        FieldResult("b", "incorrect", 0.25, predicted, expected, similarity=(0.5, -0.0, float("nan"))),
    )
    given, held = held_with(fields, tuple(messages))
    assert held._blob is not None  # JSON's own types only: all in the string
    # repr tells 1 from 1.0 and True, -0.0 from 0.0, and shows NaN; a second read gives the same again
    assert repr(held.fields) == repr(fields) == repr(held.fields)
    assert [[type(v) for v in f] for f in held.fields] == [[type(v) for v in f] for f in fields]
    assert held.validation_errors == tuple(messages) and type(held.validation_errors) is tuple


class Text(str):
    """A text of another type, as a transform may return: marshal would refuse it."""


def test_a_value_of_another_type_keeps_the_values_as_objects() -> None:
    odd_values = (Text("Ada"), bytearray(b"Ada"), {1: "x"})  # marshal refuses the first, makes bytes of the second
    for odd in odd_values:
        fields = (FieldResult("name", "exact", 1.0, "Ada", odd), FieldResult("n", "missed", 0.0, 3, None))
        _, held = held_with(fields, ("too long",))
        assert held._blob is None and held._loose is not None
        assert held.fields == fields and held.fields[0].predicted is odd  # the object itself, not a copy
        assert held.validation_errors == ("too long",)


def test_a_value_nested_too_deep_for_marshal_keeps_the_values_as_objects() -> None:
    deep: list[object] = []
    for _ in range(3000):  # marshal refuses more than 2,000 levels
        deep = [deep]
    _, held = held_with((FieldResult("tags", "incorrect", 0.0, ["x"], deep),))
    assert held._blob is None and held.fields[0].predicted is deep


def test_equal_texts_are_written_once_as_expected_and_read_back_as_one() -> None:
    expected, predicted = "Ada Lovelace", "".join(["Ada ", "Lovelace"])  # equal, two objects
    assert expected is not predicted
    _, held = held_with((FieldResult("name", "exact", 1.0, expected, predicted),))
    packed, values, _, _ = held._held()
    # 1.0 is a flag, the predicted text is flagged as the expected one: the one value is the text
    assert values == ("Ada Lovelace",)
    (read,) = held.fields
    assert read.predicted == "Ada Lovelace" and read.predicted is read.expected


def test_assigning_the_messages_or_the_fields_keeps_the_other_parts() -> None:
    fields = (FieldResult("name", "incorrect", 0.5, "Ada", "Bob"),)
    _, held = held_with(fields, ("first",))
    anls = held.anls_star_fields
    held.validation_errors = ("second", "third")  # type: ignore[assignment]
    assert held._blob is None and held.validation_errors == ("second", "third") and held.fields == fields
    replaced = (FieldResult("n", "missed", 0.0, 3, None),)
    held.fields = replaced
    assert held.fields == replaced and held.validation_errors == ("second", "third")
    assert held.anls_star_fields == anls


# --- the values' strings compressed with a dictionary of the first records' ---


@PROPERTY
@given(rows=ROWS, pending=st.integers(1, 5))
def test_records_read_the_same_before_and_after_their_values_are_compressed(
    rows: list[tuple[str, dict[str, object], str, dict[str, object]]], pending: int
) -> None:
    made = [record(model, f"s{i % 7}", gold, output, answer) for i, (model, gold, output, answer) in enumerate(rows)]
    before = [exact(r) for r in made]
    metrics = repr(metrics_by_model(made, OPTIONS))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(compact, "_PENDING_RECORDS", pending)  # the dictionary made after the first few records
        shared = SharedValues()
        held = [shared.compact(r) for r in made]
    assert (shared._codec.zdict is not None) == (len(rows) >= pending)
    assert not shared._pending or len(shared._pending) < pending
    assert [exact(r) for r in held] == before
    assert repr(metrics_by_model(held, OPTIONS)) == metrics


def test_values_seen_in_the_dictionary_take_a_few_bytes(monkeypatch) -> None:
    monkeypatch.setattr(compact, "DICTIONARY_SIZE", 1 << 20)  # made from the first 256 records, not from their size
    gold = {"name": "Ada Lovelace", "n": 3, "tags": ["analytical", "engine"]}
    output = json.dumps({"name": "Ada King", "n": 4, "tags": ["analytical"], "extra": "made up"})
    shared = SharedValues()
    first = [shared.compact(record("m", f"s{i}", gold, output)).score for i in range(compact._PENDING_RECORDS - 1)]
    raw = first[0]._blob
    assert shared._codec.zdict is None and raw is not None and all(held._blob == raw for held in first)
    last = shared.compact(record("m", "last", gold, output)).score  # the dictionary is made, the first compressed
    assert shared._codec.zdict is not None and not shared._pending
    compressed = first[0]._blob
    assert compressed is not None and last._blob == compressed
    # the raw string is in the dictionary: a few back-references of at most 258 bytes each, a few bytes apiece
    assert len(compressed) <= 3 * (len(raw) // 258 + 2) < len(raw)
    assert shared._codec.inflate(compressed) == raw
    assert repr(last.fields) == repr(first[0].fields) and last.anls_star_fields == first[0].anls_star_fields


def test_the_dictionary_is_made_once_four_dictionaries_worth_of_bytes_arrived(monkeypatch) -> None:
    made = [record("m", f"s{i}", {"name": "Ada Lovelace"}, '{"name": "Ada"}') for i in range(3)]
    raw = SharedValues().compact(made[0]).score._blob  # one record's string: no dictionary after one record
    assert raw is not None
    monkeypatch.setattr(compact, "DICTIONARY_SIZE", len(raw) // 2)  # 4 halves: made at the second record
    shared = SharedValues()
    first = shared.compact(made[0]).score
    assert shared._codec.zdict is None and first._blob == raw
    held = [first, shared.compact(made[1]).score, shared.compact(made[2]).score]
    assert shared._codec.zdict == (raw + raw)[-(len(raw) // 2) :]  # the last half record of the two joined
    assert all(h._blob is not None and len(h._blob) < len(raw) for h in held)
    assert [repr(h.fields) for h in held] == [repr(m.score.fields) for m in made]


def test_a_pending_record_whose_fields_were_assigned_stays_as_objects(monkeypatch) -> None:
    monkeypatch.setattr(compact, "_PENDING_RECORDS", 2)
    shared = SharedValues()
    first = shared.compact(record("m", "a", {"name": "Ada"}, '{"name": "Bob"}')).score
    replaced = (FieldResult("name", "exact", 1.0, "Ada", "Ada"),)
    first.fields = replaced
    second = shared.compact(record("m", "b", {"name": "Ada"}, '{"name": "Bob"}')).score
    assert shared._codec.zdict is not None and first._blob is None and first.fields == replaced
    assert second._blob is not None and second.fields[0].predicted == "Bob"


# --- a held record's metadata as one tuple ---


def test_a_held_records_metadata_reads_back_as_the_same_map_of_the_same_values() -> None:
    complexity = {"total_fields": 4, "complexity_bin": "simple"}
    made = []
    for i in range(2):
        given = record("m", f"s{i}", {"name": "Ada"}, '{"name": "Ada"}')
        given.meta = {"source": "data.jsonl", "location": f"line {i + 1}", "complexity": complexity, "text_chars": 10}
        made.append(given)
    shared = SharedValues()
    first, second = (shared.compact(given) for given in made)
    assert type(first).__name__ == "HeldRecord" and isinstance(first, SampleRecord)
    held = compact._META.__get__(first, SampleRecord)
    # the keys' tuple, shared by both records, then the values: 8 + 4 references instead of a map of 4 keys
    assert held == (("source", "location", "complexity", "text_chars"), "data.jsonl", "line 1", complexity, 10)
    assert held[0] is compact._META.__get__(second, SampleRecord)[0]
    for given, kept in zip(made, (first, second)):
        assert kept.meta == given.meta and list(kept.meta) == list(given.meta)  # the same keys in the same order
        assert kept.meta["complexity"] is complexity  # the same object: sections key their caches by it
        assert repr(kept.to_dict()["meta"]) == repr(given.to_dict()["meta"])
    first.meta = {"other": 1}
    assert first.meta == {"other": 1}


def test_a_metadata_map_with_a_key_that_is_not_a_text_stays_a_map() -> None:
    given = record("m", "a", {"name": "Ada"}, '{"name": "Ada"}')
    given.meta = {1: "one"}  # type: ignore[dict-item]
    kept = SharedValues().compact(given)
    assert compact._META.__get__(kept, SampleRecord) is given.meta and kept.meta == {1: "one"}
