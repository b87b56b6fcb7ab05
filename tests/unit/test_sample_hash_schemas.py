"""A sample's content hash with its schema's canonical JSON serialized once per schema object (dataset/identity.py):
the bytes hashed are the canonical JSON of the sample's content as before, so baselines and cassettes hashed by
earlier runs still pair."""

from __future__ import annotations

import hashlib
import json
from types import SimpleNamespace
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from pytest_extractbench.dataset import identity
from pytest_extractbench.dataset.identity import SCHEMA_TEXTS_LIMIT, SchemaTexts, sample_hash
from pytest_extractbench.dataset.samples import Sample

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=12,
)


def _whole(content: dict[str, Any]) -> str:
    """The hash as it was made before: the canonical JSON of the whole content dict at once."""
    text = json.dumps(content, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def test_the_bytes_hashed_are_the_keys_in_order_with_their_canonical_values() -> None:
    sample = Sample("s0", "t", {"type": "object"}, {"b": 2, "a": 1})
    # by hand: keys sorted (expected, schema, text), no spaces, the gold's keys sorted too
    written = b'{"expected":{"a":1,"b":2},"schema":{"type":"object"},"text":"t"}'
    assert sample_hash(sample) == sample_hash(sample, {}) == hashlib.sha256(written).hexdigest()
    with_document = Sample("s0", "t", {"type": "object"}, {"b": 2, "a": 1}, document=SimpleNamespace(sha256="ab"))  # type: ignore[arg-type]
    written = b'{"document":"ab","expected":{"a":1,"b":2},"schema":{"type":"object"},"text":"t"}'
    assert sample_hash(with_document, {}) == hashlib.sha256(written).hexdigest()


@given(text=st.text(max_size=10), schema=JSON, expected=JSON, document=st.none() | st.text(max_size=8))
def test_a_hash_is_the_whole_contents_hash_with_or_without_the_schemas_kept(
    text: str, schema: Any, expected: Any, document: str | None
) -> None:
    content = {"text": text, "schema": schema, "expected": expected}
    if document is not None:
        content["document"] = document
    sample = Sample(
        "s", text, schema, expected, document=None if document is None else SimpleNamespace(sha256=document)
    )  # type: ignore[arg-type]
    schemas: SchemaTexts = {}
    assert sample_hash(sample) == sample_hash(sample, schemas) == sample_hash(sample, schemas) == _whole(content)


def test_samples_sharing_a_schema_object_serialize_it_once(monkeypatch) -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}
    samples = [Sample(f"s{i}", f"n is {i}", schema, {"n": i}) for i in range(5)]
    other = Sample("o", "x", {"type": "object", "properties": {"n": {"type": "integer"}}}, {"n": 0})  # equal, not it
    serialized: list[Any] = []
    canonical = identity._canonical

    def counting(value: Any) -> bytes:
        serialized.append(value)
        return canonical(value)

    monkeypatch.setattr(identity, "_canonical", counting)
    schemas: SchemaTexts = {}
    for sample in [*samples, other]:
        sample_hash(sample, schemas)
    # by hand: 6 samples, each serializing its text and gold (12), and two schema objects (2)
    assert len(serialized) == 14
    assert sum(1 for value in serialized if value is schema) == 1
    assert [entry[0] for entry in schemas.values()] == [schema, other.schema]


def test_a_dataset_of_distinct_schemas_keeps_a_few_of_them_not_all() -> None:
    schemas: SchemaTexts = {}
    kept = [{"const": i} for i in range(SCHEMA_TEXTS_LIMIT + 3)]  # held here, so no id is reused meanwhile
    for i, schema in enumerate(kept):
        sample_hash(Sample(f"s{i}", "t", schema, None), schemas)
    # by hand: the table is emptied when it holds SCHEMA_TEXTS_LIMIT entries, then takes the remaining 3
    assert len(schemas) == 3
