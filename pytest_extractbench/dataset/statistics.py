"""Dataset statistics: what a benchmark measures before any model runs.

Pure functions over loaded samples; the per-sample complexity features come from
:mod:`.complexity` (computed once at load time and carried in ``sample.meta``).
"""

from __future__ import annotations

import array as arrays
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from .complexity import BINS, complexity_features
from .samples import Sample

NUMERIC_FEATURES = (
    "total_fields",
    "required_fields",
    "optional_fields",
    "max_nesting_depth",
    "total_possible_paths",
    "field_types_diversity",
    "enum_fields_count",
    "format_constrained_fields",
    "complexity_score",
)


def features_of(sample: Sample) -> dict[str, Any]:
    """The sample's complexity features (computed when the loader did not)."""
    found = sample.meta.get("complexity")
    return found if isinstance(found, dict) else complexity_features(sample.schema)


def summary(values: Iterable[float]) -> dict[str, Any]:
    """count, mean, median, min, p95 and max of ``values`` (nulls when empty)."""
    array = np.asarray(list(values), dtype=float)
    if array.size == 0:
        return {"count": 0, "mean": None, "median": None, "min": None, "p95": None, "max": None}
    return {
        "count": int(array.size),
        "mean": round(float(array.mean()), 4),
        "median": float(np.median(array)),
        "min": float(array.min()),
        "p95": float(np.percentile(array, 95)),
        "max": float(array.max()),
    }


def _counts(values: Iterable[Any]) -> dict[str, int]:
    counter = Counter(str(v) for v in values)
    return dict(sorted(counter.items(), key=lambda kv: (-kv[1], kv[0])))


def _histogram(values: Iterable[int]) -> dict[str, int]:
    counter = Counter(int(v) for v in values)
    return {str(k): counter[k] for k in sorted(counter)}


def gold_field_count(expected: Any) -> int:
    """Leaf values of the gold (non-container values, nulls excluded): what a perfect extraction fills."""
    count, stack = 0, [expected]
    while stack:  # iterative: deep gold cannot hit the recursion limit
        value = stack.pop()
        if isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
        elif value is not None:
            count += 1
    return count


class TextMeasures:
    """Each sample's text length in characters and words and its gold's field count, in sample order, 8 bytes
    each: taken while a sample's text and gold are at hand (a JSONL sample reads them from its line again)."""

    def __init__(self) -> None:
        self.chars = arrays.array("q")
        self.words = arrays.array("q")
        self.gold = arrays.array("q")

    def add(self, sample: Sample) -> None:
        self.add_counts(*self.counts(sample))

    def add_counts(self, chars: int, words: int, gold: int) -> None:
        self.chars.append(chars)
        self.words.append(words)
        self.gold.append(gold)

    @staticmethod
    def counts(sample: Sample) -> tuple[int, int, int]:
        """One sample's measures: what an xdist worker sends the controller with the sample's hash."""
        text = sample.text
        return len(text), len(text.split()), gold_field_count(sample.expected)

    @classmethod
    def of(cls, samples: Iterable[Sample]) -> TextMeasures:
        measures = cls()
        for sample in samples:
            measures.add(sample)
        return measures


def dataset_statistics(samples: Sequence[Sample], measures: TextMeasures | None = None) -> dict[str, Any]:
    """Counts per topic and medium, field counts, depth histogram, complexity bins and text length (``measures``:
    the samples' :class:`TextMeasures`, when they were taken already)."""
    features = [features_of(s) for s in samples]
    measures = measures if measures is not None else TextMeasures.of(samples)
    stats: dict[str, Any] = {
        "num_samples": len(samples),
        "num_schemas": _schema_count(samples),
        "by_topic": _counts(s.meta.get("topic") or "(none)" for s in samples),
        "by_medium": _counts(s.meta.get("medium") or "(none)" for s in samples),
        "by_complexity_bin": {name: sum(1 for f in features if f["complexity_bin"] == name) for name in BINS},
        "depth_histogram": _histogram(f["max_nesting_depth"] for f in features),
        "text_length_chars": summary(measures.chars),
        "text_length_words": summary(measures.words),
        "gold_fields": summary(measures.gold),
        "features": {name: summary(float(f[name]) for f in features) for name in NUMERIC_FEATURES},
        "with_arrays": sum(1 for f in features if f["has_arrays"]),
        "with_nested_objects": sum(1 for f in features if f["has_nested_objects"]),
    }
    return stats


def _schema_key(sample: Sample) -> str:
    import json

    return json.dumps(sample.schema, sort_keys=True, default=str)


def _schema_count(samples: Sequence[Sample]) -> int:
    """Distinct schema contents; each schema object is serialized once (a dataset's samples of one schema share
    it: 10,000 samples, three schemas, three serializations instead of 10,000)."""
    keys: dict[int, str] = {}
    for sample in samples:
        if id(sample.schema) not in keys:
            keys[id(sample.schema)] = _schema_key(sample)
    return len(set(keys.values()))


def statistics_lines(stats: dict[str, Any]) -> list[str]:
    """A plain-text rendering for ``extractbench dataset-stats`` (values are escaped by the caller's JSON)."""
    lines = [f"samples: {stats['num_samples']} ({stats['num_schemas']} distinct schemas)"]

    def counts(label: str, mapping: dict[str, int]) -> None:
        lines.append(f"{label}: " + ", ".join(f"{k!r}={v}" for k, v in mapping.items()))

    counts("by topic", stats["by_topic"])
    counts("by medium", stats["by_medium"])
    counts("complexity bins", stats["by_complexity_bin"])
    counts("max nesting depth", stats["depth_histogram"])
    for key, label in (("text_length_chars", "text length (chars)"), ("gold_fields", "gold fields")):
        s = stats[key]
        if s["count"]:
            lines.append(
                f"{label}: mean {s['mean']:.1f}, median {s['median']:.0f}, min {s['min']:.0f}, "
                f"p95 {s['p95']:.0f}, max {s['max']:.0f}"
            )
    lines.append(f"{'feature':<28}{'mean':>8}{'median':>8}{'max':>8}")
    for name, s in stats["features"].items():
        if s["count"]:
            lines.append(f"{name:<28}{s['mean']:>8.2f}{s['median']:>8.2f}{s['max']:>8.2f}")
    lines.append(f"schemas with arrays: {stats['with_arrays']}; with nested objects: {stats['with_nested_objects']}")
    return lines
