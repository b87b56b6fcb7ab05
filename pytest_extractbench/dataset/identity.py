"""Content hashes of samples and datasets: what a comparison, a baseline or a cassette checks is the same.

A sample's hash covers its text, schema and gold answer (canonical JSON: key order and spacing do not
matter) and, when it has one, its document's content hash (so an edited PDF makes the sample "changed" even
where its extracted text is given beside it); a dataset's hash covers its samples' ids and hashes, in id order.
A sample of another track (tool calls, generation, repair) hashes every input it carries (its ``data``: the
question and tools, the broken output to repair) with its reference, so an edited question is a changed sample too.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["CHANGED", "SchemaTexts", "dataset_hash", "dataset_hash_of", "sample_hash"]

CHANGED = "changed while the run read it"
"""The hash of a sample whose dataset line changed before the run could hash it as loaded: it equals no content
hash, so no comparison pairs the sample and the dataset's hash is not a clean run's."""


def _as_json(value: Any) -> Any:
    # a read-only mapping (a track sample's inputs) hashes by its content, anything else unknown by its text
    return dict(value) if isinstance(value, Mapping) else str(value)


def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=_as_json).encode(
        "utf-8"
    )


SchemaTexts = dict[int, tuple[Any, bytes]]
"""Canonical JSON of schemas already hashed, by the schema object's id (the object is kept, so the id stays its)."""
SCHEMA_TEXTS_LIMIT = 256


def sample_hash(sample: Any, schemas: SchemaTexts | None = None) -> str:
    """sha256 of the sample's text, schema, gold answer and document (a sample without one hashes as before);
    for a track sample, of all its inputs and its reference.

    ``schemas``: a run's samples share their schema objects, and serializing a schema is half the hash; a caller
    hashing many samples whose schemas do not change meanwhile passes one dict for them all, and each schema
    object is serialized once. The bytes hashed are the same: the canonical JSON of ``{"document", "expected",
    "schema", "text"}`` is those keys in order, each followed by its value's canonical JSON."""
    data = getattr(sample, "data", None)
    if isinstance(data, Mapping):
        return hashlib.sha256(_canonical({"data": data, "expected": sample.expected})).hexdigest()
    text, schema, expected = sample.text, sample.schema, sample.expected
    if schemas is None:
        schema_json = _canonical(schema)
    else:
        known = schemas.get(id(schema))
        if known is None or known[0] is not schema:
            if len(schemas) >= SCHEMA_TEXTS_LIMIT:  # a dataset of distinct schemas: keep a few, not all
                schemas.clear()
            known = schemas[id(schema)] = (schema, _canonical(schema))
        schema_json = known[1]
    document = getattr(sample, "document", None)
    digest = hashlib.sha256(b"{" if document is None else b'{"document":' + _canonical(document.sha256) + b",")
    for part in (b'"expected":', _canonical(expected), b',"schema":', schema_json, b',"text":', _canonical(text), b"}"):
        digest.update(part)
    return digest.hexdigest()


def dataset_hash(samples: Iterable[Any]) -> str:
    """sha256 of every sample's id and content hash, in id order."""
    return hashlib.sha256(_canonical(sorted((s.id, sample_hash(s)) for s in samples))).hexdigest()


def dataset_hash_of(hashes: Mapping[str, str]) -> str:
    """:func:`dataset_hash` from the samples' hashes already computed (sample id -> hash; ids are unique in a
    dataset): hashing 10,000 samples' content takes over a second, and the run needs both."""
    return hashlib.sha256(_canonical(sorted(hashes.items()))).hexdigest()
