"""Samples of a JSONL file read their text and gold again from their line: the same values as held, not held
between uses, and an edited file an error naming the file, the line and the sample."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_extractbench.dataset import rowfile
from pytest_extractbench.dataset.identity import dataset_hash, sample_hash
from pytest_extractbench.dataset.samples import bundled_path, iter_rows, parse_rows
from pytest_extractbench.dataset.sources import load_source
from pytest_extractbench.dataset.statistics import dataset_statistics

SCHEMA = {"type": "object", "properties": {"name": {"type": "string"}, "tags": {"type": "array"}}}


def _held(path: Path, columns: dict[str, str] | None = None) -> Any:
    """The dataset parsed the way other formats are: every sample holding its text and gold."""
    return parse_rows(path.name, str(path), iter_rows(path), columns=columns)


def _same(lazy: Any, held: Any) -> None:
    assert [s.id for s in lazy.samples] == [s.id for s in held.samples]
    assert [str(p) for p in lazy.problems] == [str(p) for p in held.problems]
    for a, b in zip(lazy.samples, held.samples):
        assert (a.text, a.expected, a.schema, a.meta) == (b.text, b.expected, b.schema, b.meta)
        assert sample_hash(a) == sample_hash(b)
        assert repr(a) == repr(b)
    assert dataset_hash(lazy.samples) == dataset_hash(held.samples)
    assert dataset_statistics(lazy.samples) == dataset_statistics(held.samples)


def test_the_bundled_dataset_reads_the_same_values_again() -> None:
    lazy = load_source("bundled")
    assert all("_row" in vars(s) for s in lazy.samples)
    _same(lazy, _held(bundled_path()))


def test_a_loaded_sample_holds_neither_text_nor_gold_until_asked() -> None:
    sample = load_source("bundled").samples[0]
    assert "text" not in vars(sample) and "expected" not in vars(sample)
    assert sample.text and sample.expected is not None
    assert "text" in vars(sample) and "expected" in vars(sample)


def test_only_the_most_recently_read_samples_keep_their_text(tmp_path: Path) -> None:
    path = tmp_path / "many.jsonl"
    rows = [{"id": f"s{i}", "text": f"text {i}", "schema": SCHEMA, "expected": {"name": f"n{i}"}} for i in range(200)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    samples = load_source(str(path)).samples
    for sample in samples:
        assert sample.text == f"text {sample.id[1:]}"
    holding = [s.id for s in samples if "text" in vars(s)]
    assert holding == [s.id for s in samples[-rowfile.KEPT :]]
    assert samples[0].expected == {"name": "n0"}  # read again once dropped


def test_mapped_columns_gold_as_a_json_string_a_bom_and_paraloq_keys(tmp_path: Path) -> None:
    path = tmp_path / "mapped.jsonl"
    lines = [
        {"id": "a", "body": "first ü", "schema": json.dumps(SCHEMA), "gold": json.dumps({"name": "x"})},
        {"id": "b", "body": "second", "schema": SCHEMA, "gold": {"name": "y", "tags": [1, 2.5, None]}},
        "",
        {"id": "c", "body": "third", "schema": SCHEMA, "gold": "not json"},
        {"id": "a", "body": "duplicate", "schema": SCHEMA, "gold": {}},
    ]
    text = "".join((json.dumps(r, ensure_ascii=False) if r else "   ") + "\n" for r in lines)
    path.write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))
    columns = {"text": "body", "expected": "gold"}
    lazy = load_source(str(path), columns=columns)
    assert [s.id for s in lazy.samples] == ["a", "b"]
    _same(lazy, _held(path, columns))

    plain = tmp_path / "paraloq.jsonl"
    plain.write_text(json.dumps({"id": "p", "text": "t", "schema": SCHEMA, "item": {"name": "z"}}) + "\n")
    _same(load_source(str(plain)), _held(plain))


_texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(10**30), 10**30)
    | st.floats(allow_nan=False, allow_infinity=False)
    | _texts,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_texts, inner, max_size=4),
    max_leaves=12,
)


@given(st.lists(st.tuples(_texts, _values, st.booleans()), min_size=1, max_size=8))
def test_any_rows_read_again_as_they_were_loaded(tmp_path_factory: pytest.TempPathFactory, rows: list[Any]) -> None:
    """Whatever the text and gold (unicode, big integers read by the standard parser, gold as a JSON string),
    a sample read again has the values, hash and statistics of one held whole."""
    path = tmp_path_factory.mktemp("rows") / "rows.jsonl"
    lines = [
        json.dumps(
            {
                "id": f"r{i}",
                "text": text,
                "schema": {},
                "expected": json.dumps(gold) if as_string else gold,
            },
            ensure_ascii=i % 2 == 0,
        )
        for i, (text, gold, as_string) in enumerate(rows)
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    _same(load_source(str(path)), _held(path))


def _edit(path: Path, old: str, new: str) -> None:
    path.write_text(path.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")


def test_an_edited_line_is_an_error_naming_file_line_and_sample(tmp_path: Path) -> None:
    path = tmp_path / "data.jsonl"
    rows = [{"id": f"s{i}", "text": f"text {i}", "schema": SCHEMA, "expected": {"name": f"n{i}"}} for i in range(3)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    samples = load_source(str(path)).samples
    _edit(path, '"text 1"', '"TEXT 1"')  # same length: only the content tells
    assert samples[0].text == "text 0"  # an unchanged line still reads
    with pytest.raises(rowfile.DatasetChangedError) as caught:
        samples[1].expected  # noqa: B018 - the read is the test
    message = str(caught.value)
    assert str(path) in message and "line 2" in message and "'s1'" in message


def test_a_shortened_or_removed_file_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "data.jsonl"
    rows = [{"id": f"s{i}", "text": f"text {i}", "schema": SCHEMA, "expected": {"name": f"n{i}"}} for i in range(3)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    samples = load_source(str(path)).samples
    path.write_text(json.dumps(rows[0]) + "\n", encoding="utf-8")
    with pytest.raises(rowfile.DatasetChangedError, match="line 3"):
        samples[2].text  # noqa: B018
    path.unlink()
    with pytest.raises(rowfile.DatasetChangedError, match="cannot be read again"):
        samples[1].text  # noqa: B018


def test_other_formats_and_unknown_attributes_are_as_before(tmp_path: Path) -> None:
    path = tmp_path / "data.json"
    path.write_text(json.dumps([{"id": "j", "text": "t", "schema": SCHEMA, "expected": {"name": "n"}}]))
    sample = load_source(str(path)).samples[0]
    assert "_row" not in vars(sample) and vars(sample)["text"] == "t"
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        sample.nothing  # type: ignore[attr-defined]  # noqa: B018


def test_measures_taken_beside_the_hashes_give_the_same_statistics_and_dataset_hash(tmp_path: Path) -> None:
    """The finish hashes each sample and takes its text measures in one pass; the statistics and the baseline's
    dataset hash from them are those of the samples read on their own."""
    from pytest_extractbench.dataset.identity import dataset_hash_of
    from pytest_extractbench.dataset.statistics import TextMeasures
    from pytest_extractbench.gating import baseline

    samples = load_source("bundled").samples
    measures, hashes = TextMeasures(), {}
    for sample in samples:
        hashes[sample.id] = sample_hash(sample)
        measures.add(sample)
    assert dataset_statistics(samples, measures) == dataset_statistics(samples)
    assert dataset_hash_of(hashes) == dataset_hash(samples)
    dataset = load_source("bundled")
    given = baseline.provenance(models=["m"], dataset=dataset, rootdir=tmp_path, sample_hashes=hashes)
    assert given["dataset"] == baseline.provenance(models=["m"], dataset=dataset, rootdir=tmp_path)["dataset"]


def test_text_measures_taken_in_any_order_give_the_same_statistics() -> None:
    """Items note their samples' measures in the order they run (-k, --lf, random order), the finish the rest in
    dataset order: the statistics of integers do not depend on the order."""
    import random

    from pytest_extractbench.dataset.statistics import TextMeasures

    samples = load_source("bundled").samples
    shuffled = list(samples)
    random.Random(7).shuffle(shuffled)
    assert dataset_statistics(samples, TextMeasures.of(shuffled)) == dataset_statistics(samples)
