"""String similarity distributions and schema complexity correlations.

Similarities are those of compared string pairs (token-overlap F1, normalized
Levenshtein similarity, containment: the three parts of the composite score), over
all compared pairs and over the pairs that are not exact. Correlations are Pearson's r
with its two-sided p-value (``scipy.stats.pearsonr``) of per-sample partial F1 and of
latency against each numeric complexity feature; a constant input, fewer than three
samples or no latency at all give ``r = p_value = null`` and a ``note`` (never NaN).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ..dataset.records import SampleRecord
from ..scoring import ScoringOptions, normalize_text, string_similarity
from ..scoring.result import EXACT, INCORRECT, PARTIAL

SIMILARITIES = ("token_overlap_f1", "levenshtein_similarity", "containment_score")
HISTOGRAM_EDGES = tuple(round(x, 1) for x in np.linspace(0.0, 1.0, 11))
_COMPARED = (EXACT, PARTIAL, INCORRECT)


def _distribution(values: list[float]) -> dict[str, Any]:
    if not values:
        return {
            "count": 0,
            "mean": None,
            "median": None,
            "histogram": {"edges": list(HISTOGRAM_EDGES), "counts": [0] * (len(HISTOGRAM_EDGES) - 1)},
        }
    array = np.asarray(values, dtype=float)
    counts, _ = np.histogram(array, bins=HISTOGRAM_EDGES)
    return {
        "count": int(array.size),
        "mean": float(array.mean()),
        "median": float(np.median(array)),
        "histogram": {"edges": list(HISTOGRAM_EDGES), "counts": [int(c) for c in counts]},
    }


def string_similarity_section(records: Sequence[SampleRecord], options: ScoringOptions) -> dict[str, Any]:
    """Mean, median and a 10-bin histogram of each string similarity."""
    every: list[tuple[float, float, float]] = []
    inexact: list[tuple[float, float, float]] = []
    for record in records:
        for field in record.score.fields:
            if field.category not in _COMPARED or type(field.expected) is not str or type(field.predicted) is not str:
                continue
            similarity = field.similarity
            if similarity is None:  # a comparator that did not compute them
                exp = normalize_text(field.expected, options)
                pred = normalize_text(field.predicted, options)
                similarity = (1.0, 1.0, 1.0) if exp == pred else string_similarity(pred, exp, options)[1:]
            every.append(similarity)
            if not field.equal:
                inexact.append(similarity)
    out = {}
    for index, name in enumerate(SIMILARITIES):
        out[name] = _distribution([s[index] for s in every])
        out[name]["non_exact"] = _distribution([s[index] for s in inexact])
    return {"string_similarity": out}


_NONE: dict[str, Any] = {}  # a record without complexity features: one id for all of them


def _features(found: Mapping[str, Any]) -> dict[str, float]:
    return {k: float(v) for k, v in found.items() if isinstance(v, (int, float)) and not isinstance(v, str)}


def correlation(x: Sequence[float], y: Sequence[float], test: Callable[..., Any], key: str) -> dict[str, Any]:
    """``{key, "p_value", "n"}`` from a scipy correlation test; null values with a ``note`` where it is undefined."""
    n = len(x)
    if n < 3:
        return {key: None, "p_value": None, "n": n, "note": "fewer than 3 samples"}
    a, b = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return {key: None, "p_value": None, "n": n, "note": "constant input"}
    result = test(a, b)
    r, p = float(result.statistic), float(result.pvalue)
    if not (math.isfinite(r) and math.isfinite(p)):
        return {key: None, "p_value": None, "n": n, "note": "undefined"}
    return {key: r, "p_value": p, "n": n}


def pearson(x: Sequence[float], y: Sequence[float]) -> dict[str, Any]:
    """``{"r", "p_value", "n"}``: Pearson's r with its p-value."""
    from scipy.stats import pearsonr  # scipy.stats takes a second to import: only when a run correlates

    return correlation(x, y, pearsonr, "r")


def complexity_correlation_section(records: Sequence[SampleRecord], options: ScoringOptions) -> dict[str, Any]:
    """``f1_vs_<feature>`` and ``latency_vs_<feature>`` for every numeric complexity feature."""
    # one features map per complexity map, not per record: samples of one schema share theirs (100,000 records
    # made 100,000 equal maps, about 70 MB at once); the maps are only read
    made: dict[int, dict[str, float]] = {}
    rows = []
    for record in records:
        found = record.meta.get("complexity") or _NONE
        features = made.get(id(found))
        if features is None:
            features = made[id(found)] = _features(found)
        rows.append((record.score.f1["partial"], record.response.get("latency_s"), features))
    names = sorted({name for _, _, features in rows for name in features})
    out: dict[str, Any] = {}
    for name in names:
        pairs = [(f1, features[name]) for f1, _, features in rows if name in features]
        out[f"f1_vs_{name}"] = pearson([p[1] for p in pairs], [p[0] for p in pairs])
        timed = [
            (latency, features[name])
            for _, latency, features in rows
            if name in features and isinstance(latency, (int, float)) and not isinstance(latency, bool)
        ]
        if timed:
            out[f"latency_vs_{name}"] = pearson([p[1] for p in timed], [p[0] for p in timed])
        else:
            out[f"latency_vs_{name}"] = {"r": None, "p_value": None, "n": 0, "note": "no latency measured"}
    return {"complexity_correlation": out}
