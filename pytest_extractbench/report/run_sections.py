"""The sections of summary.md and report.html that only some runs have: the comparison with a baseline,
subsets and groups, confidence calibration, consistency over repeats, the pairwise model comparison and
the input problems.

Each ``*_view`` reads metrics.json and returns plain data, or None when the run has no such section;
the Markdown renderers are here, the HTML ones in ``templates/_sections.html.j2``. Both show the same
rows, so a number never appears in one file and not the other.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..analysis import catalog, track_metrics
from ..analysis.stats import format_p
from ..core import rundoc
from ..core.modelsections import GroupSummary, model_sections
from ..core.sections import Buckets, FieldDelta, IntervalDict, MetricDelta, Pairing
from ..core.textsafe import markdown as md
from ..core.wording import counted, plain

MAX_FIELD_DELTAS = 10  # per direction: the largest drops and the largest gains
MAX_GROUPS = 10  # values of one group_by field shown (the rest stay in metrics.json)
MAX_CONSISTENCY_FIELDS = 10
MAX_FLAKY_SAMPLES_SHOWN = 10  # flaky samples named in summary.md (metrics.json lists up to 50)
MAX_PROBLEMS = 20
MAX_REGRESSIONS = 10  # regressed samples listed in summary.md, worst first (every one is in metrics.json)
MAX_FLIPS_SHOWN = 3  # field flips listed per regressed sample
HEADLINE_REGRESSIONS = 3  # regressed samples named at the top of summary.md, beside the verdict
EQS = "extraction_quality_score"  # the extraction track's verdict metric


def _label(metric: str) -> str:
    found = catalog.get(metric)
    return found.label if found else (track_metrics.label(metric) or metric.replace("_", " "))


def _catalog_order(names: Sequence[str]) -> list[str]:
    """The catalog's order, then the other tracks' figures in theirs (the pass rate first), then the rest by name."""
    known = [m.name for m in catalog.metrics() if m.name in names]
    known += [n for n in track_metrics.find_names() if n in names and n not in known]
    return known + sorted(n for n in names if n not in known)


def _delta_row(metric: str, found: MetricDelta) -> dict[str, Any]:
    ci = found["ci"]
    delta = found["delta"]
    higher = found["higher_is_better"]
    if higher is None:
        higher = not catalog.lower_is_better(metric)
    return {
        "metric": metric,
        "label": _label(metric),
        "baseline": found["b"],
        "current": found["a"],
        "delta": delta,
        "low": ci["low"],
        "high": ci["high"],
        "p": format_p(found["p_value"]),
        "significant": bool(found["significant"]),
        # which way is worse depends on the metric (a higher hallucination rate is worse)
        "worse": delta is not None and (delta < 0 if higher else delta > 0),
    }


def _field_deltas(fields: Mapping[str, FieldDelta]) -> tuple[list[dict[str, Any]], list[dict[str, Any]], int]:
    """Per-field F1 (partial) deltas: the largest drops, the largest gains and how many did not move."""
    rows: list[dict[str, Any]] = [
        {
            "field": path,
            "baseline": f["baseline"],
            "current": f["current"],
            "delta": f["delta"],
            "occurrences": f["expected"],
        }
        for path, f in fields.items()
        if isinstance(f["delta"], (int, float))
    ]

    # most score moved first: a field seen 40 times that lost 0.5 matters more than one seen once that lost 1
    def moved(r: Mapping[str, Any]) -> float:
        weight = r["occurrences"] if isinstance(r["occurrences"], (int, float)) else 1.0
        return float(abs(r["delta"]) * weight)

    drops = sorted((r for r in rows if r["delta"] < 0), key=lambda r: (-moved(r), r["field"]))
    gains = sorted((r for r in rows if r["delta"] > 0), key=lambda r: (-moved(r), r["field"]))
    return drops[:MAX_FIELD_DELTAS], gains[:MAX_FIELD_DELTAS], sum(r["delta"] == 0 for r in rows)


def baseline_view(document: rundoc.MetricsDocument) -> dict[str, Any] | None:
    """The comparison with ``--extractbench-compare``'s baseline: verdicts, metric and per-field deltas, checks."""
    found = document.get("baseline_comparison")  # each key filled by rundoc.complete when the section is there
    if found is None:
        return None
    models = []
    for model, entry in found["models"].items():
        deltas = entry["metrics"]
        drops, gains, unchanged = _field_deltas(entry["per_field_deltas"])
        models.append(
            {
                "model": model,
                "baseline_model": model if entry["baseline_model"] is None else entry["baseline_model"],
                "verdict": entry["verdict"],
                # what the verdict reads: EQS, or the pass rate of a toolcall, generate or repair run
                "verdict_metric": entry.get("verdict_metric", EQS),
                "n_shared": entry["n_shared"],
                "paired_on": entry["paired_on"],
                "metrics": [_delta_row(name, deltas[name]) for name in _catalog_order(list(deltas))],
                "drops": drops,
                "gains": gains,
                "unchanged": unchanged,
                "buckets": _buckets(entry.get("buckets"), eqs=entry.get("verdict_metric", EQS) == EQS),
            }
        )
    test = found["test"]
    return {
        "name": found["baseline"]["name"],
        "created_at": found["baseline"]["created_at"],
        "test": "paired permutation test" if test == "permutation" else f"paired {test}",
        "alpha": found["alpha"],
        "confidence": found["confidence"],
        "notes": list(found["notes"]),
        "pairing": _pairing_text(found["pairing"]),
        "models": models,
        "checks": [{"message": c["message"], "failed": bool(c["failed"])} for c in found["checks"]],
        "passed": found["passed"],
    }


def _buckets(found: Buckets | None, *, eqs: bool = True) -> dict[str, Any] | None:
    """A model's buckets against the baseline (counts, the worst regressions with their field flips), or None;
    ``eqs``: the run has EQS (a toolcall, generate or repair sample regresses by pass -> fail alone)."""
    if found is None:
        return None
    regressions = found["regressions"]
    return {
        "eqs": eqs,
        "delta": found["eqs_delta"],
        "counts": dict(found["counts"]),
        "worst": regressions[:MAX_REGRESSIONS],
        "hidden": max(0, len(regressions) - MAX_REGRESSIONS),
        "field_flips": dict(list(found["field_flips"].items())[:MAX_FIELD_DELTAS]),
    }


def _bucket_counts(counts: Mapping[str, Any]) -> str:
    return ", ".join(f"{n} {str(bucket).replace('_', ' ')}" for bucket, n in counts.items())


def _flips(flips: Any) -> str:
    return "; ".join(f"{md(str(p))}: {md(str(b))} -> {md(str(a))}" for p, b, a in (flips or [])[:MAX_FLIPS_SHOWN]) + (
        f"; +{len(flips) - MAX_FLIPS_SHOWN} more" if len(flips or []) > MAX_FLIPS_SHOWN else ""
    )


def _bucket_md(buckets: Mapping[str, Any] | None) -> list[str]:
    if not buckets:
        return []
    rule = f"pass -> fail or EQS drop > {buckets['delta']}" if buckets.get("eqs", True) else "pass -> fail"
    lines = ["", f"Samples by bucket (regressed: {rule}): {_bucket_counts(buckets['counts'])}."]
    if buckets["worst"] and not buckets.get("eqs", True):
        listed = ", ".join(md(str(r.get("sample_id"))) for r in buckets["worst"])
        lines += ["", f"Regressed samples (pass -> fail): {listed}."]
    elif buckets["worst"]:
        lines += [
            "",
            "| Regressed sample | EQS baseline | EQS current | Pass -> fail | Field flips |",
            "|---|---|---|---|---|",
        ]
        for r in buckets["worst"]:
            lost = "yes" if r["baseline_passed"] and r["current_passed"] is False else "no"
            lines.append(
                f"| {md(str(r['sample_id']))} | {num(r['baseline_eqs'])} | {num(r['current_eqs'])} "
                f"| {lost} | {_flips(r['field_flips']) or '-'} |"
            )
        if buckets["hidden"]:
            lines.append(
                f"\n{buckets['hidden']} more regressed sample(s) in metrics.json "
                "(`baseline_comparison.models.<model>.buckets`)."
            )
    if buckets["field_flips"]:
        flips = (
            f"{' -> '.join(md(part) for part in str(k).split(' -> '))} {v}" for k, v in buckets["field_flips"].items()
        )
        lines += ["", "Field flips: " + ", ".join(flips) + "."]
    return lines


def _pairing_text(pairing: Pairing | None) -> str | None:
    """The sample pairing line of a comparison read back from metrics.json (None when it has none)."""
    if pairing is None:
        return None
    if not pairing["checked"]:
        return (
            "WARNING: sample pairing could not be checked: the baseline has no per-sample content hashes (saved "
            "by an older version), so its samples are paired by id alone; save it again to pair only unchanged "
            "samples"
        )
    counts = ", ".join(f"{pairing[key]} {key}" for key in ("unchanged", "changed", "added", "removed"))
    return (
        f"Samples: {counts} of the baseline's {pairing['baseline_samples']} by content hash; "
        "only the unchanged are compared"
    )


def _group_row(kind: str, name: str, entry: GroupSummary) -> dict[str, Any]:
    # an empty subset has its count alone: no score, metrics or intervals
    values = entry.get("metrics", {})
    ci = entry.get("confidence_intervals", {}).get("extraction_quality_score")
    return {
        "kind": kind,
        "name": name,
        "count": entry["count"],
        "aggregation": entry["aggregation"],
        "score": entry.get("score"),
        "eqs": values.get("extraction_quality_score"),
        "low": None if ci is None else ci["low"],
        "high": None if ci is None else ci["high"],
        "validity": values.get("schema_validity_rate"),
        "f1": values.get("field_f1_partial"),
        "hallucination": values.get("hallucination_rate"),
    }


def _weakest_first(item: tuple[str, GroupSummary]) -> tuple[bool, float, str]:
    score = item[1].get("score")  # an empty group has none
    return score is None, score or 0.0, str(item[0])


def groups_view(metrics: Mapping[str, Any]) -> dict[str, Any] | None:
    """One model's subsets and groups: a row each (at most MAX_GROUPS values per group field)."""
    subsets = model_sections(metrics).get("subsets", {})
    groups = model_sections(metrics).get("groups", {})
    if not subsets and not groups:
        return None
    rows = [_group_row("subset", str(name), entry) for name, entry in subsets.items()]
    hidden = []
    for field, values in groups.items():
        # the weakest groups first: they are what a reader looks for
        ordered = sorted(values.items(), key=_weakest_first)
        rows += [_group_row("group", f"{field} = {value}", entry) for value, entry in ordered[:MAX_GROUPS]]
        if len(ordered) > MAX_GROUPS:
            hidden.append(f"{len(ordered) - MAX_GROUPS} more groups of {field} in metrics.json")
    return {"rows": rows, "hidden": hidden}


def calibration_view(metrics: Mapping[str, Any]) -> dict[str, Any] | None:
    """Confidence calibration (token logprobs): ECE, MCE, Brier and the filled reliability bins."""
    found = model_sections(metrics).get("calibration")
    if found is None or not found["fields"]:
        return None
    return {
        "fields": found["fields"],
        "samples": found["samples"],
        "ece": found["ece"],
        "mce": found["mce"],
        "brier": found["brier"],
        "mean_confidence": found["mean_confidence"],
        "accuracy": found["accuracy"],
        "bins": [b for b in found["bins"] if b["count"]],
    }


def consistency_view(metrics: Mapping[str, Any]) -> dict[str, Any] | None:
    """Consistency over ``--extractbench-repeats`` runs of each sample."""
    found = model_sections(metrics).get("consistency")
    if found is None or not found["samples"]:
        return None
    return {
        "samples": found["samples"],
        "runs_per_sample": found["runs_per_sample"],
        "exact": found["exact_match_consistency"],
        "field_level": found["field_level_consistency"],
        "value_std": found["value_variance"],
        "fully_consistent": found["fully_consistent_samples"],
        "least_consistent": list(found["least_consistent_fields"])[:MAX_CONSISTENCY_FIELDS],
    }


def repeats_view(metrics: Mapping[str, Any]) -> dict[str, Any] | None:
    """Is it flaky: pass counts over ``--extractbench-repeats`` runs, pass@k and pass^k, the fields that flip."""
    typed = model_sections(metrics)
    found = typed.get("repeats")
    if found is None or not found["samples"]:
        return None
    intervals = typed.get("confidence_intervals", {})
    return {
        "samples": found["samples"],
        "k": found["runs"],
        "pass_at_k": typed.get("pass_at_k"),  # written with the repeats section; absent in a hand-made document
        "pass_hat_k": typed.get("pass_hat_k"),
        "ci_at": intervals.get("pass_at_k"),
        "ci_hat": intervals.get("pass_hat_k"),
        "pass_counts": dict(found["pass_counts"]),
        "pass_at": dict(found["pass_at"]),
        "pass_hat": dict(found["pass_hat"]),
        "flaky_samples": found["flaky_samples"],
        "flaky_list": list(found["flaky_sample_list"])[:MAX_FLAKY_SAMPLES_SHOWN],
        "fields": list(found["flaky_fields"])[:MAX_CONSISTENCY_FIELDS],
        "more_fields": max(0, len(found["flaky_fields"]) - MAX_CONSISTENCY_FIELDS) + int(found["more_flaky_fields"]),
    }


def pairwise_view(document: rundoc.MetricsDocument) -> list[dict[str, Any]]:
    """EQS differences between the run's models on shared samples, with significance and win rates."""
    comparison = document.get("comparison")
    if comparison is None:
        return []
    wins = comparison["win_rate_matrix"]  # a pair that shares no sample has no rate
    rows = []
    for pair in comparison["pairwise"].values():
        a, b = pair["a"], pair["b"]
        eqs = pair.get("metrics", {}).get("extraction_quality_score")  # no metrics when no sample is shared
        row: dict[str, Any] = {"a": a, "b": b, "n_shared": pair["n_shared"], "note": pair.get("note")}
        if eqs:
            row |= _delta_row("extraction_quality_score", eqs)
            row["a_wins"] = wins.get(a, {}).get(b)
            row["b_wins"] = wins.get(b, {}).get(a)
        rows.append(row)
    return rows


def problems_view(document: rundoc.MetricsDocument) -> dict[str, Any] | None:
    """The dataset and predictions problems of the run, errors first."""
    items = sorted(document["run"]["problems"], key=lambda p: p["severity"] != "error")  # each with every key
    if not items:
        return None
    shown = []
    for p in items[:MAX_PROBLEMS]:
        where = ":".join(str(part) for part in (p["source"], p["location"]) if part not in (None, ""))
        what = " ".join(str(part) for part in (p["sample_id"], p["field"]) if part not in (None, ""))
        shown.append(
            {"severity": p["severity"] or "warning", "where": where, "what": what, "message": str(p["message"])}
        )
    return {"total": len(items), "errors": sum(p["severity"] == "error" for p in items), "shown": shown}


# -- Markdown ------------------------------------------------------------------------------------


def num(value: Any, signed: bool = False) -> str:
    """A metric value for Markdown: three decimals (signed for a delta), "-" when there is none."""
    if not isinstance(value, (int, float)):
        return "-"
    return f"{value:+.3f}" if signed else f"{value:.3f}"


def _count(value: Any) -> str:
    return f"{value:g}" if isinstance(value, (int, float)) else "-"


def _pct(value: Any) -> str:
    return f"{100 * value:.1f}%" if isinstance(value, (int, float)) else "-"


def _ci(row: Mapping[str, Any]) -> str:
    return f"[{row['low']:+.3f}, {row['high']:+.3f}]" if row["low"] is not None else "-"


def baseline_md(view: Mapping[str, Any] | None) -> list[str]:
    if not view:
        return []
    lines = ["## Against the baseline", "", f"Baseline {md(view['name'])}; {md(view['test'])}, alpha {view['alpha']}."]
    if view["pairing"]:
        lines += ["", md(view["pairing"]), ""]
    lines += [f"- note: {md(note)}" for note in view["notes"]]
    for m in view["models"]:
        against = "" if m["baseline_model"] == m["model"] else f" (against baseline model {md(m['baseline_model'])})"
        lines += [
            "",
            f"### {md(m['model'])}{against}: {md(str(m['verdict']).upper())} on {m['n_shared']} shared samples",
            "",
            "| Metric | Baseline | Current | Delta | CI | p | Significant |",
            "|---|---|---|---|---|---|---|",
        ]
        for r in m["metrics"]:
            worse = " (worse)" if r["worse"] and r["significant"] else ""
            lines.append(
                f"| {md(r['label'])} | {num(r['baseline'])} | {num(r['current'])} | {num(r['delta'], True)}{worse} | "
                f"{_ci(r)} | {md(r['p'])} | {'yes' if r['significant'] else 'no'} |"
            )
        for title, rows in (("Largest field drops", m["drops"]), ("Largest field gains", m["gains"])):
            if rows:
                lines += [
                    "",
                    f"{title} (F1 partial per field):",
                    "",
                    "| Field | Baseline | Current | Delta | Occurrences |",
                    "|---|---|---|---|---|",
                ]
                lines += [
                    f"| {md(r['field'])} | {num(r['baseline'])} | {num(r['current'])} | {num(r['delta'], True)} | "
                    f"{_count(r['occurrences'])} |"
                    for r in rows
                ]
        lines += _bucket_md(m["buckets"])
        if m["verdict_metric"] == EQS:  # other tracks compare no fields
            lines += ["", f"{m['unchanged']} field(s) unchanged."]
    if view["checks"]:
        lines += ["", "Checks:"]
        lines += [f"- {'**FAILED**' if c['failed'] else 'passed'}: {md(c['message'])}" for c in view["checks"]]
    return [*lines, ""]


def groups_md(view: Mapping[str, Any] | None) -> list[str]:
    if not view:
        return []
    lines = [
        "",
        "### Subsets and groups",
        "",
        "| Subset / group | Samples | Score | EQS | EQS CI | Validity | F1 (partial) | Hallucination |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in view["rows"]:
        if not r["count"]:
            lines.append(f"| {md(r['name'])} | 0 | - | - | - | - | - | - |")
            continue
        ci = f"[{num(r['low'])}, {num(r['high'])}]" if r["low"] is not None else "-"
        lines.append(
            f"| {md(r['name'])} | {r['count']} | {num(r['score'])} ({md(r['aggregation'])}) | {num(r['eqs'])} | {ci} | "
            f"{_pct(r['validity'])} | {num(r['f1'])} | {_pct(r['hallucination'])} |"
        )
    lines += [f"- {md(h)}" for h in view["hidden"]]
    return lines


def calibration_md(view: Mapping[str, Any] | None) -> list[str]:
    if not view:
        return []
    lines = [
        "",
        "### Confidence calibration",
        "",
        f"ECE {num(view['ece'])}, MCE {num(view['mce'])}, Brier {num(view['brier'])} over {counted(view['fields'], 'field')} "
        f"(mean confidence {_pct(view['mean_confidence'])}, accuracy {_pct(view['accuracy'])}).",
        "",
        "| Confidence | Fields | Mean confidence | Accuracy | Gap |",
        "|---|---|---|---|---|",
    ]
    lines += [
        f"| {b['low']:.1f}-{b['high']:.1f} | {b['count']} | {_pct(b['confidence'])} | {_pct(b['accuracy'])} | "
        f"{_pct(b['gap'])} |"
        for b in view["bins"]
    ]
    return lines


def consistency_md(view: Mapping[str, Any] | None) -> list[str]:
    if not view:
        return []
    std = "n/a" if view["value_std"] is None else plain(view["value_std"])
    lines = [
        "",
        "### Consistency over repeats",
        "",
        f"{counted(view['samples'], 'sample')} run {view['runs_per_sample']} times: identical outputs "
        f"{_pct(view['exact'])}, field-level agreement {_pct(view['field_level'])}, numeric std {std}; "
        f"{counted(view['fully_consistent'], 'sample')} fully consistent.",
    ]
    if view["least_consistent"]:
        lines += [
            "",
            "Least consistent fields: "
            + ", ".join(f"{md(f['field'])} ({_pct(f['agreement'])})" for f in view["least_consistent"]),
        ]
    return lines


def _interval(ci: IntervalDict | None) -> str:
    if ci is None or ci["low"] is None:
        return ""
    return f" [{100 * float(ci['confidence']):g}% CI: {_pct(ci['low'])}, {_pct(ci['high'])}]"


def repeats_md(view: Mapping[str, Any] | None) -> list[str]:
    if not view:
        return []
    k = view["k"]
    counts = ", ".join(
        f"{n} in {c} of {k}" for c, n in sorted(view["pass_counts"].items(), key=lambda i: -int(i[0])) if n
    )
    lines = [
        "",
        "### Repeats: is it flaky?",
        "",
        f"{counted(view['samples'], 'sample')} run {k} times. pass@{k} (some run passes) {_pct(view['pass_at_k'])}"
        f"{_interval(view['ci_at'])}; pass^{k} (every run passes) {_pct(view['pass_hat_k'])}"
        f"{_interval(view['ci_hat'])}. Samples by passing runs: {counts}.",
        "",
        "| k | " + " | ".join(view["pass_at"]) + " |",
        "|---|" + "---|" * len(view["pass_at"]),
        "| pass@k | " + " | ".join(_pct(v) for v in view["pass_at"].values()) + " |",
        "| pass^k | " + " | ".join(_pct(v) for v in view["pass_hat"].values()) + " |",
    ]
    if view["flaky_samples"]:
        shown = ", ".join(f"{md(str(s['sample_id']))} ({s['passed']}/{s['runs']})" for s in view["flaky_list"])
        more = view["flaky_samples"] - len(view["flaky_list"])
        lines += [
            "",
            f"Flaky samples (pass in some runs, fail in others): {view['flaky_samples']}: {shown}"
            + (f", ... {more} more in metrics.json (`repeats.flaky_sample_list`)" if more > 0 else ""),
        ]
    if view["fields"]:
        lines += [
            "",
            "Fields whose category changes between runs (rate: of the sample fields compared):",
            "",
            "| Field | Flipped | Compared | Rate | Changes |",
            "|---|---|---|---|---|",
        ]
        for f in view["fields"]:
            changes = ", ".join(f"{md(t)} {n}" for t, n in list(f["transitions"].items())[:MAX_FLIPS_SHOWN])
            lines.append(f"| {md(f['field'])} | {f['flipped']} | {f['occurrences']} | {_pct(f['rate'])} | {changes} |")
        if view["more_fields"]:
            lines.append(f"\n{view['more_fields']} more flaky field(s) in metrics.json (`repeats.flaky_fields`).")
    else:
        lines += ["", "No field changed category between runs."]
    return lines


def pairwise_md(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    if not rows:
        return []
    lines = [
        "### Pairwise EQS differences (shared samples)",
        "",
        "| Pair | Shared | EQS delta (a - b) | CI | p | Significant | a wins | b wins |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        pair = f"{md(r['a'])} vs {md(r['b'])}"
        if "delta" not in r:
            lines.append(f"| {pair} | {r['n_shared']} | {md(r['note'] or 'not compared')} | | | | | |")
            continue
        lines.append(
            f"| {pair} | {r['n_shared']} | {num(r['delta'], True)} | {_ci(r)} | {md(r['p'])} | "
            f"{'yes' if r['significant'] else 'no'} | {_pct(r['a_wins'])} | {_pct(r['b_wins'])} |"
        )
    return [*lines, ""]


def problems_md(view: Mapping[str, Any] | None) -> list[str]:
    if not view:
        return []
    lines = ["## Input problems", "", f"{view['total']} problem(s), {view['errors']} error(s):", ""]
    for p in view["shown"]:
        at = " ".join(part for part in (p["where"], p["what"]) if part)
        lines.append(f"- [{md(p['severity'])}] " + (f"{md(at)}: " if at else "") + md(p["message"]))
    if view["total"] > len(view["shown"]):
        lines.append(f"- ... {view['total'] - len(view['shown'])} more in metrics.json")
    return [*lines, ""]


def baseline_headline_md(view: Mapping[str, Any] | None) -> list[str]:
    """One line per model with the regression verdict, for the top of summary.md beside the gate."""
    if not view:
        return []
    lines = []
    for m in view["models"]:
        eqs = next((r for r in m["metrics"] if r["metric"] == m["verdict_metric"]), None)
        name = "EQS" if m["verdict_metric"] == EQS else md(str(eqs["label"] if eqs else "")).lower()
        change = (
            f": {name} {num(eqs['baseline'])} -> {num(eqs['current'])} ({num(eqs['delta'], True)}, {md(eqs['p'])})"
            if eqs
            else ""
        )
        buckets = m["buckets"]
        counts = f"; samples: {_bucket_counts(buckets['counts'])}" if buckets else ""
        lines.append(
            f"- **Against baseline {md(view['name'])}**: {md(m['model'])} "
            f"**{md(str(m['verdict']).upper())}**{change}{counts}"
        )
        # the worst few with their field flips, so a PR comment names them before any table
        for r in buckets["worst"][:HEADLINE_REGRESSIONS] if buckets else []:
            scores = (
                f": EQS {num(r['baseline_eqs'])} -> {num(r['current_eqs'])}" if buckets["eqs"] else ": pass -> fail"
            )
            lines.append(
                f"  - regressed {md(str(r['sample_id']))}{scores}"
                + (f"; {flips}" if (flips := _flips(r["field_flips"])) else "")
            )
        if buckets and len(buckets["worst"]) + buckets["hidden"] > HEADLINE_REGRESSIONS:
            more = len(buckets["worst"]) + buckets["hidden"] - HEADLINE_REGRESSIONS
            lines.append(f'  - ... {more} more regressed sample(s) under "Against the baseline" below')
    return [*lines, ""]
