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

__all__ = ["CHANGED", "dataset_hash", "dataset_hash_of", "sample_hash"]

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


def sample_hash(sample: Any) -> str:
    """sha256 of the sample's text, schema, gold answer and document (a sample without one hashes as before);
    for a track sample, of all its inputs and its reference."""
    data = getattr(sample, "data", None)
    if isinstance(data, Mapping):
        return hashlib.sha256(_canonical({"data": data, "expected": sample.expected})).hexdigest()
    content: dict[str, Any] = {"text": sample.text, "schema": sample.schema, "expected": sample.expected}
    document = getattr(sample, "document", None)
    if document is not None:
        content["document"] = document.sha256
    return hashlib.sha256(_canonical(content)).hexdigest()


def dataset_hash(samples: Iterable[Any]) -> str:
    """sha256 of every sample's id and content hash, in id order."""
    return hashlib.sha256(_canonical(sorted((s.id, sample_hash(s)) for s in samples))).hexdigest()


def dataset_hash_of(hashes: Mapping[str, str]) -> str:
    """:func:`dataset_hash` from the samples' hashes already computed (sample id -> hash; ids are unique in a
    dataset): hashing 10,000 samples' content takes over a second, and the run needs both."""
    return hashlib.sha256(_canonical(sorted(hashes.items()))).hexdigest()
