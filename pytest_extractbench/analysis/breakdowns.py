"""Field-level precision/recall/F1 and omission rates by group.

Groups: field type (the gold's type; the predicted type for spurious fields), nesting
depth (0 = a top-level field; array elements keep their array's depth), field name
(index-free path, ``items[].sku``) and required vs optional. Per-complexity-bin metrics
live with the dataset statistics, not here.

P/R/F1 use the credited counts, like the headline metrics: the fields of an output that
is invalid earn nothing. Omission rates use what was observed, like ``field_omission_rate``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..dataset.records import SampleRecord
from ..scoring import MODES, FieldCounts, ScoringOptions
from ..scoring.result import EXACT, INCORRECT, MISSED, PARTIAL, SPURIOUS, FieldResult
from .diagnostics import field_name

_INDEX = {EXACT: 0, PARTIAL: 1, INCORRECT: 3, MISSED: 4, SPURIOUS: 5}


def _type(field: FieldResult) -> str:
    return (field.predicted_type if field.category == SPURIOUS else field.expected_type) or "unknown"


GROUPINGS: dict[str, Callable[[FieldResult], str]] = {
    "field_metrics_by_type": _type,
    "field_metrics_by_depth": lambda f: str(f.depth),
    "field_metrics_by_name": lambda f: field_name(f.path),
    "field_metrics_by_required": lambda f: "required" if f.required else "optional",
}


def _tally(records: Sequence[SampleRecord], options: ScoringOptions, credited: bool) -> dict[str, dict[str, list[int]]]:
    """grouping -> group -> [exact, partial, partial_lenient, incorrect, missed, spurious], every grouping of
    GROUPINGS in one walk over the fields.

    The walk only counts each distinct (type, depth, name, required, slot, lenient) combination: a large run
    has hundreds of thousands of fields but few combinations, which are then spread over the groupings."""
    lenient = options.lenient_threshold
    # (type, depth, name, required, slot, lenient) -> [a field with them, how many]
    combos: dict[tuple[str, int, str, bool, int, bool], list[Any]] = {}
    for record in records:
        invalid = credited and not record.score.valid
        for field in record.score.fields:
            category = field.category
            index = _INDEX.get(category)
            if index is None:  # error / pending: outside every metric
                continue
            if invalid and index < 4:  # no credit for an invalid output
                index, also_lenient = 3, False
            else:
                also_lenient = category == PARTIAL or (category == INCORRECT and field.score >= lenient)
            key = (_type(field), field.depth, field_name(field.path), field.required, index, also_lenient)
            found = combos.get(key)
            if found is None:
                combos[key] = [field, 1]
            else:
                found[1] += 1
    tallies: dict[str, dict[str, list[int]]] = {name: {} for name in GROUPINGS}
    groupings = [(key, tallies[name]) for name, key in GROUPINGS.items()]
    # every field of a combination falls in the same group of each grouping
    for (*_, index, also_lenient), (field, count) in combos.items():
        for group_of, tally in groupings:
            group = group_of(field)
            row = tally.get(group)
            if row is None:
                row = tally[group] = [0] * 6
            row[index] += count
            if also_lenient:
                row[2] += count
    return tallies


def _metrics(row: list[int]) -> dict[str, Any]:
    counts = FieldCounts(*row)
    out: dict[str, Any] = {"support": counts.expected, "predicted": counts.predicted}
    for mode in MODES:
        p, r, f = counts.precision_recall_f1(mode)
        out.update({f"precision_{mode}": p, f"recall_{mode}": r, f"f1_{mode}": f})
    return out


def _order(keys: Any) -> list[str]:
    return sorted(keys, key=lambda k: (0, int(k)) if k.isdigit() else (1, k))


def breakdown_section(records: Sequence[SampleRecord], options: ScoringOptions) -> dict[str, Any]:
    """P/R/F1 (strict, partial, lenient) per field type, depth, name and required/optional."""
    out: dict[str, Any] = {}
    for name, tallies in _tally(records, options, credited=True).items():
        out[name] = {group: _metrics(tallies[group]) for group in _order(tallies)}
    return out


def omission_section(records: Sequence[SampleRecord], options: ScoringOptions) -> dict[str, Any]:
    """Which expected fields are missed, by name, type, required/optional and depth."""
    observed = _tally(records, options, credited=False)

    def rates(grouping: str) -> dict[str, dict[str, Any]]:
        tallies = observed[grouping]
        out = {}
        for group in _order(tallies):
            row = tallies[group]
            expected = row[0] + row[1] + row[3] + row[4]
            if expected:
                out[group] = {"omission_rate": row[4] / expected, "missed": row[4], "total_occurrences": expected}
        return out

    by_name = rates("field_metrics_by_name")
    flat = {
        label: {group: entry["omission_rate"] for group, entry in rates(grouping).items()}
        for label, grouping in (
            ("by_field_type", "field_metrics_by_type"),
            ("by_required_vs_optional", "field_metrics_by_required"),
            ("by_nesting_depth", "field_metrics_by_depth"),
        )
    }
    return {"omission_analysis": {"by_field_name": by_name, **flat}}


# what each category counts as in a per-field tally (partial kept apart from matches and mismatches)
_FIELD_COUNTS = {
    EXACT: "matches",
    PARTIAL: "partial",
    INCORRECT: "mismatches",
    MISSED: "omissions",
    SPURIOUS: "hallucinations",
}


def field_score_section(records: Sequence[SampleRecord], options: ScoringOptions) -> dict[str, Any]:
    """Per field name: how often it occurred, its mean score, and how often it matched exactly, partly, not at
    all (mismatch), was missed or was invented. Observed categories: an invalid output's fields count as what
    they were, since this table is for finding the fields an extractor struggles with. A missed or invented
    field scores 0 in the mean."""
    tallies: dict[str, dict[str, Any]] = {}
    for record in records:
        for field in record.score.fields:
            kind = _FIELD_COUNTS.get(field.category)
            if kind is None:  # error / pending: outside every metric
                continue
            name = field_name(field.path)
            entry = tallies.get(name)
            if entry is None:
                entry = tallies[name] = {"occurrences": 0, "score_sum": 0.0, **dict.fromkeys(_FIELD_COUNTS.values(), 0)}
            entry["occurrences"] += 1
            entry[kind] += 1
            if kind in ("matches", "partial", "mismatches"):
                entry["score_sum"] += field.score
    out = {}
    for name in sorted(tallies):
        entry = tallies[name]
        total = entry.pop("score_sum")
        out[name] = {
            "occurrences": entry["occurrences"],
            "mean_score": total / entry["occurrences"],
            **{key: entry[key] for key in _FIELD_COUNTS.values()},
        }
    return {"field_scores_by_name": out}


def anls_star_field_section(records: Sequence[SampleRecord], options: ScoringOptions) -> dict[str, Any]:
    """Per key path (``items[].sku``, intermediate objects and lists included): the mean over samples of its ANLS*,
    and on how many samples it was scored. Observed values, like :func:`field_score_section`: an invalid output's
    keys count as what they scored."""
    sums: dict[str, list[float]] = {}
    for record in records:
        for path, value in record.score.anls_star_fields.items():
            entry = sums.setdefault(path, [0.0, 0])
            entry[0] += value
            entry[1] += 1
    if not sums:
        return {}
    return {
        "anls_star_by_field": {
            path: {"anls_star": sums[path][0] / sums[path][1], "samples": int(sums[path][1])} for path in sorted(sums)
        }
    }
