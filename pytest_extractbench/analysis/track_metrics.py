"""The figures a toolcall, generate or repair run is compared with its baseline on, and each sample's row of them.

Each figure is a catalog :class:`~.catalog.Metric` (recomputed from per-sample rows, with a per-sample value for the
paired tests), so a track's baseline comparison runs the same bootstrap CIs and paired tests as the extraction
track's (:func:`.resampled.paired_deltas`). Every track has its pass rate (the share of items that passed) and its
headline figures, with the names its metrics.json entry gives them; pass@k and pass^k come from the pass counts
over repeats, as on the extraction track. A row is a flat dict of numbers read from one sample's track result
(``Track.score``'s dict, as samples.jsonl keeps it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .catalog import Metric, mean_of, prf_of, ratio_of

Row = dict[str, float]

PASS_RATE = Metric(
    "pass_rate",
    "Samples passed",
    "pass rate",
    tag="passed",
    percent=True,
    columns=("passed",),
    compute=mean_of("passed"),
    per_sample="passed",
    aggregation="mean",
    aliases=("passed",),
)


def _mean(name: str, label: str, key: str, *aliases: str) -> Metric:
    """A rate that is the mean of one 0/1 per-sample value."""
    return Metric(
        name,
        label,
        label.lower(),
        percent=True,
        columns=(key,),
        compute=mean_of(key),
        per_sample=key,
        aggregation="mean",
        aliases=aliases,
    )


def _ratio(name: str, label: str, numerator: str, denominator: str, per_sample: str) -> Metric:
    """A micro rate: one summed count over another (0 when nothing was counted)."""
    return Metric(
        name,
        label,
        label.lower(),
        percent=True,
        columns=(numerator, denominator),
        compute=ratio_of(numerator, denominator),
        per_sample=per_sample,
    )


TRACK_METRICS: dict[str, tuple[Metric, ...]] = {
    "toolcall": (
        PASS_RATE,
        _mean("accuracy", "Accuracy", "correct"),
        _mean("output_valid_rate", "Output valid", "output_valid", "output_valid"),
        _ratio("valid_call_rate", "Valid call rate", "valid_calls", "predicted_calls", "valid_call_share"),
        _ratio("name_match_rate", "Name match", "name_matches", "calls", "name_match_share"),
        _ratio("arguments_exact_match_rate", "Arguments exact", "arguments_exact", "calls", "arguments_exact_share"),
        Metric(
            "arguments_f1",
            "Arguments F1",
            "arguments F1",
            columns=("arguments_tp", "arguments_predicted", "arguments_expected"),
            compute=prf_of(2, "arguments_tp", "arguments_predicted", "arguments_expected"),
            per_sample="arguments_f1_sample",
        ),
    ),
    "generate": (
        PASS_RATE,
        _mean("json_valid_rate", "JSON valid", "json_valid", "json_valid"),
        _mean("schema_compliance_rate", "Schema compliant", "schema_valid", "schema_compliance", "compliance"),
    ),
    "repair": (
        PASS_RATE,
        _mean("json_valid_rate", "JSON valid", "json_valid", "json_valid"),
        _mean("schema_validity_rate", "Schema valid", "schema_valid", "schema_validity", "validity"),
        _mean("exact_match_rate", "Restored exactly", "exact_match", "exact_match"),
        Metric(
            "field_f1_partial",
            "Field F1 (partial)",
            "field F1 (partial)",
            tag="F1 partial",
            columns=("tp_partial", "predicted", "expected"),
            compute=prf_of(2, "tp_partial", "predicted", "expected"),
            per_sample="f1_partial",
            aliases=("f1", "f1_partial", "field_f1"),
        ),
        _ratio("field_agreement_rate", "Fields unchanged", "fields_equal", "fields_expected", "field_agreement"),
    ),
}


def _share(part: float, whole: float) -> float:
    return part / whole if whole else 0.0


def _toolcall(result: Mapping[str, Any]) -> Row:
    arguments = result.get("arguments") or {}
    tp, fp, fn = (float(arguments.get(k) or 0) for k in ("tp", "fp", "fn"))
    calls, predicted = float(result.get("calls") or 0), float(result.get("predicted_calls") or 0)
    precision = _share(tp, tp + fp) if tp + fp else (0.0 if tp + fn else 1.0)
    recall = _share(tp, tp + fn) if tp + fn else (0.0 if tp + fp else 1.0)
    row = {
        "correct": float(bool(result.get("correct"))),
        "output_valid": float(result.get("format_error") is None),
        "valid_calls": float(result.get("valid_calls") or 0),
        "predicted_calls": predicted,
        "name_matches": float(result.get("name_matches") or 0),
        "arguments_exact": float(result.get("arguments_exact") or 0),
        "calls": calls,
        "arguments_tp": tp,
        "arguments_predicted": tp + fp,
        "arguments_expected": tp + fn,
        "arguments_f1_sample": _share(2 * precision * recall, precision + recall),
    }
    row["valid_call_share"] = _share(row["valid_calls"], predicted)
    row["name_match_share"] = _share(row["name_matches"], calls)
    row["arguments_exact_share"] = _share(row["arguments_exact"], calls)
    return row


def _generate(result: Mapping[str, Any]) -> Row:
    return {
        "json_valid": float(bool(result.get("json_valid"))),
        "schema_valid": float(bool(result.get("schema_valid"))),
    }


def _repair(result: Mapping[str, Any]) -> Row:
    counts = {k: float(v) for k, v in (result.get("counts") or {}).items() if isinstance(v, (int, float))}
    compared = counts.get("exact", 0.0) + counts.get("partial", 0.0) + counts.get("incorrect", 0.0)
    equal, expected = float(result.get("fields_equal") or 0), float(result.get("fields_expected") or 0)
    return {
        "json_valid": float(bool(result.get("json_valid"))),
        "schema_valid": float(bool(result.get("schema_valid"))),
        "exact_match": float(bool(result.get("exact_match"))),
        "tp_partial": counts.get("exact", 0.0) + 0.5 * counts.get("partial", 0.0),
        "predicted": compared + counts.get("spurious", 0.0),
        "expected": compared + counts.get("missed", 0.0),
        "f1_partial": float(result.get("field_f1_partial") or 0.0),
        "fields_equal": equal,
        "fields_expected": expected,
        "field_agreement": _share(equal, expected),
    }


_ROWS: dict[str, Callable[[Mapping[str, Any]], Row]] = {"toolcall": _toolcall, "generate": _generate, "repair": _repair}


def compared(track: str) -> dict[str, Metric] | None:
    """The figures of ``track`` a baseline comparison reads, by name; None for the extraction track (the catalog's)."""
    found = TRACK_METRICS.get(track)
    return None if found is None else {m.name: m for m in found}


def headline(track: str) -> tuple[str, ...]:
    """The figures compared whether or not a check names them: all of the track's."""
    return tuple(m.name for m in TRACK_METRICS.get(track, ()))


def sample_row(track: str, result: Mapping[str, Any], passed: bool) -> Row:
    """One sample's row of the track's figures, from its track result."""
    return {"passed": float(bool(passed)), **_ROWS[track](result)}


def row_keys(track: str) -> tuple[str, ...]:
    """The keys every row of ``track`` has (a baseline's rows are checked against them)."""
    keys: dict[str, None] = {}
    for metric in TRACK_METRICS.get(track, ()):
        keys.update(dict.fromkeys(metric.columns))
        keys[metric.per_sample or metric.columns[0]] = None
    return tuple(keys)


def find(name: str) -> Metric | None:
    """A track figure by its name or alias, from any track (the option parser does not know the run's track)."""
    key = name.strip().lower().replace("-", "_")
    for metrics in TRACK_METRICS.values():
        for metric in metrics:
            if key == metric.name or key in metric.aliases:
                return metric
    return None


def find_names() -> tuple[str, ...]:
    """Every track figure's name, once."""
    return tuple(dict.fromkeys(m.name for metrics in TRACK_METRICS.values() for m in metrics))


def label(name: str, *, compact: bool = False) -> str | None:
    """A track figure's label (``compact``: its short name, where space is short), None for a name no track has."""
    found = find(name)
    if found is None or found.name != name:
        return None
    return found.compact if compact else found.label
