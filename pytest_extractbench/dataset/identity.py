"""Content hashes of samples and datasets: what a comparison, a baseline or a cassette checks is the same.

A sample's hash covers its text, schema and gold answer (canonical JSON: key order and spacing do not
matter) and, when it has one, its document's content hash (so an edited PDF makes the sample "changed" even
where its extracted text is given beside it); a dataset's hash covers its samples' ids and hashes, in id order.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["dataset_hash", "dataset_hash_of", "sample_hash"]


def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str).encode("utf-8")


def sample_hash(sample: Any) -> str:
    """sha256 of the sample's text, schema, gold answer and document (a sample without one hashes as before)."""
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
