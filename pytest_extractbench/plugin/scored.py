"""What a sample item's test report keeps once the session has the item's record: who it was.

pytest holds every report until the session ends. A report's ``extractbench`` attribute carries the record's
headline (or, from an xdist worker, the whole record) to the controller; once the session has the record, the
report keeps only the model, the sample id and whether it passed, as a read-only mapping of three slots (56 bytes
instead of a 184-byte dict: 13 MB at 100,000 items).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

_KEYS = ("model", "sample_id", "passed")


class ScoredSample(Mapping[str, Any]):
    """``{"model": ..., "sample_id": ..., "passed": ...}`` as a mapping: ``report.extractbench["model"]``,
    ``.get("passed")`` and ``dict(...)`` read it as they read the dict it replaces."""

    __slots__ = _KEYS

    def __init__(self, model: Any, sample_id: Any, passed: Any) -> None:
        self.model = model
        self.sample_id = sample_id
        self.passed = passed

    def __getitem__(self, key: str) -> Any:
        if key not in _KEYS:
            raise KeyError(key)
        return getattr(self, key)

    def __iter__(self) -> Iterator[str]:
        return iter(_KEYS)

    def __len__(self) -> int:
        return len(_KEYS)

    def __repr__(self) -> str:
        return repr(dict(self))
