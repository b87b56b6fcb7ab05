"""summary.md (the executive summary for a CI job summary or a PR comment), metrics.csv and samples.csv.

Untrusted text is neutralised for each format: Markdown and HTML syntax is escaped in
summary.md; in the CSV files a text cell that a spreadsheet would read as a formula gets a leading
apostrophe (OWASP's advice; :mod:`..core.spreadsheet` says which cells).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..analysis import catalog
from ..analysis.provenance import reuse_sentence
from ..core import files, redact, rundoc, textsafe
from ..core.modelsections import extraction_sections, model_sections
from ..core.wording import counted
from ..gating.gates import gate_verdicts, unmeasured_warnings
from ..gating.verdict import partial_text
from . import run_sections as sections
from . import summary
from .sample_table import cell, sample_columns, sample_table
from .terminal import context_text

SUMMARY_FILE = "summary.md"
METRICS_CSV = "metrics.csv"
SAMPLES_CSV = "samples.csv"
# metrics.csv: these columns lead, then the catalog's metrics, then their CIs and the rest
LEADING_COLUMNS = ("num_samples",)
BAND_COLUMNS = ("eqs_band", "recommendation")  # right after EQS


# A PR comment holds at most 65,536 characters and a job summary 1 MiB: summary.md stays well under both.
SUMMARY_LIMIT = 60_000  # bytes of UTF-8


def cap_summary(text: str, limit: int = SUMMARY_LIMIT) -> str:
    """``text`` cut at a line end to at most ``limit`` bytes of UTF-8, its last line saying how many lines and which
    sections were cut (the run directory keeps everything)."""
    if len(text.encode("utf-8")) <= limit:
        return text
    lines = text.split("\n")

    def trailer(cut: Sequence[str]) -> str:
        headings = [line.lstrip("#").strip() for line in cut if line.startswith("## ")]
        shown = headings if len(headings) <= 6 else [*headings[:3], "...", *headings[-2:]]
        where = f" ({len(headings)} section(s): {', '.join(shown)})" if headings else ""
        return (
            f"\n\n*\u2026 {len(cut)} more lines not shown{where}: summary.md is cut at {limit // 1000} KB; "
            "see report.html and metrics.json in the run directory.*\n"
        )

    kept, size = 0, 0
    budget = limit - len(trailer(lines).encode("utf-8"))
    for line in lines:
        cost = len(line.encode("utf-8")) + 1
        if size + cost > budget:
            break
        size += cost
        kept += 1
    out = "\n".join(lines[:kept]) + trailer(lines[kept:])
    while kept and len(out.encode("utf-8")) > limit:  # a cut's own headings can make its trailer longer
        kept -= 1
        out = "\n".join(lines[:kept]) + trailer(lines[kept:])
    return out


def metric_columns() -> tuple[str, ...]:
    """The fixed columns of metrics.csv: the catalog's CSV metrics, with EQS's band and recommendation."""
    columns = list(LEADING_COLUMNS)
    for name in catalog.names("csv"):
        columns.append(name)
        if name == "extraction_quality_score":
            columns.extend(BAND_COLUMNS)
    return tuple(columns)


def md(text: Any, limit: int = textsafe.LIMIT) -> str:
    """Untrusted text as inert Markdown (one line, clipped): see :func:`..textsafe.markdown`."""
    return textsafe.markdown(text, limit)


def write_text(path: Path, text: str) -> None:
    """``text`` written atomically, line ends as given (the CSV files' CRLF rows stay CRLF)."""
    files.write_text(path, text, newline="")


def _csv(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer)  # RFC 4180: CRLF rows, so a CR inside a cell gets quoted
    writer.writerow(header)
    secrets = redact.env_secrets()  # read once for every cell
    for row in rows:
        writer.writerow([cell(v, secrets) for v in row])
    return buffer.getvalue()


def metrics_csv(models: Mapping[str, Mapping[str, Any]]) -> str:
    """One row per model: the headline and core metrics, their CIs, EQS components and performance."""
    extra: list[str] = []
    flat_rows: dict[str, dict[str, Any]] = {}
    columns = metric_columns()
    for model, m in models.items():
        typed = extraction_sections(m)
        flat: dict[str, Any] = {k: m.get(k) for k in columns}  # the catalog's columns: a run may lack some
        intervals = typed.get("confidence_intervals", {})
        for key in catalog.names("ci_columns"):
            ci = intervals.get(key)
            flat[f"{key}_ci_low"], flat[f"{key}_ci_high"] = (None, None) if ci is None else (ci["low"], ci["high"])
        flat.update((f"eqs_component_{name}", value) for name, value in typed.get("eqs_components", {}).items())
        flat.update(summary.performance(m))
        flat.update((f"fields_{name}", count) for name, count in typed["match_categories"].items())
        flat["sla_passed"] = typed["sla"]["passed"]
        for key in flat:
            if key not in columns and key not in extra:
                extra.append(key)
        flat_rows[model] = flat
    header = ["model", *columns, *extra]
    return _csv(header, ([model, *(flat.get(k) for k in header[1:])] for model, flat in flat_rows.items()))


def samples_csv(rows: Iterable[Mapping[str, Any]]) -> str:
    """One row per (model, sample): the :func:`~.rows.sample_row` of each record (the finish writes the same lines
    as it reads the records: :class:`.sample_table.SampleTable`)."""
    columns = sample_columns()
    return _csv(columns, ([row[k] for k in columns] for row in rows))


def _context_lines(run: rundoc.RunInfo, model: str, metrics: Mapping[str, Any]) -> list[str]:
    """The embedded server's context and why, and how many samples did not fit (live runs only)."""
    lines = []
    context = context_text(((run["live"] or {}).get("embedded") or {}).get(model) or {})
    if context:
        lines.append(f"- **Context**: {md(context, textsafe.LINE_LIMIT)}")
    errors = extraction_sections(metrics)["performance"]["reliability"]["error_counts"]
    if errors.get("context_exceeded"):
        lines.append(
            f"- **Did not fit the model's context**: {int(errors['context_exceeded'])} sample(s) (`context_exceeded`)"
        )
    return lines


def gate_md(document: rundoc.MetricsDocument) -> list[str]:
    """The session gate first: each verdict, with what decided it."""
    verdicts = gate_verdicts(document)
    partial = document["run"].get("partial")  # only in a partial run
    # a partial run's gate judged only the samples that ran: say so before any verdict is read as the whole story
    seen = [
        f"- **Partial run**: for `{md(model)}` {md(text)}"
        for model, counts in (partial["models"] if partial else {}).items()
        if (text := partial_text(counts))
    ]
    if not verdicts:
        return [
            "**Gate**: none asserted (SLA tier `none`, no regression check against a baseline): the session passes whatever "
            "the scores.",
            "",
            *([*seen, ""] if seen else []),
        ]
    failed = sum(not v.passed for v in verdicts)
    head = f"**Gate: FAILED** ({failed} of {len(verdicts)} failed)" if failed else f"**Gate: passed** ({len(verdicts)})"
    warned = unmeasured_warnings(verdicts)
    # thresholds let pass without a measurement: said before the verdicts, so a green gate is not read as "all held"
    warning = [
        f"**Warning**: {len(warned)} threshold(s) could not be measured and were let pass "
        "(`--extractbench-unmeasured warn`):",
        *(f"- {md(text, textsafe.LINE_LIMIT)}" for text in warned),
        "",
    ]
    lines = [*(warning if warned else []), head, "", *seen]
    for verdict in verdicts:
        lines.append(f"- {'passed' if verdict.passed else '**FAILED**'}: {md(verdict.headline, textsafe.LINE_LIMIT)}")
        lines += [f"  - {md(detail, textsafe.LINE_LIMIT)}" for detail in verdict.details]
    return [*lines, ""]


_BREAKDOWN_PARTS = (
    ("time_to_first_token_ms", "time to first token"),
    ("after_first_token_ms", "after the first token"),
    ("server_prompt_ms", "prompt processing (server)"),
    ("server_generation_ms", "generation (server)"),
    ("network_and_queue_ms", "network and server queue"),
    ("client_wait_ms", "waiting for a request slot"),
)


def _whole_output_md(metrics: Mapping[str, Any]) -> list[str]:
    lines = []
    for name in ("semantic_similarity", "judge_score"):
        value = metrics.get(name)
        if isinstance(value, (int, float)):
            entry = catalog.get(name)
            ci = model_sections(metrics).get("confidence_intervals", {}).get(name)
            interval = (
                f" [95% CI: {sections.num(ci['low'])}, {sections.num(ci['high'])}]"
                if ci is not None and ci["low"] is not None
                else ""
            )
            grade = f" (mean grade {value * 7:.2f} of 7)" if name == "judge_score" else ""
            lines.append(f"- **{entry.label if entry else name}**: {sections.num(value)}{interval}{grade}")
    return ["", *lines] if lines else []


def whole_output_cost_md(document: rundoc.MetricsDocument) -> list[str]:
    """What the whole-output similarity and the judge cost this run."""
    cost = document.get("whole_output_cost")  # only when the run measured whole-output scores
    if cost is None:
        return []
    lines = ["## Whole-output scores: cost", ""]
    if cost["embedded_texts"] or cost["embedding_errors"]:
        lines.append(
            f"- **Embeddings**: {cost['embedded_texts']} texts in {cost['embedding_seconds']:.1f} s "
            f"({cost['embedding_errors']} failed)"
        )
    if cost["judge_requests"] or cost["judge_errors"]:
        lines.append(
            f"- **LLM judge**: {cost['judge_requests']} requests, {cost['judge_prompt_tokens']:,} prompt + "
            f"{cost['judge_completion_tokens']:,} completion tokens in {cost['judge_seconds']:.1f} s "
            f"({counted(cost['judge_errors'], 'sample')} without a grade)"
        )
    return [*lines, ""] if len(lines) > 2 else []


def _latency_breakdown_md(metrics: Mapping[str, Any]) -> list[str]:
    breakdown = extraction_sections(metrics)["performance"]["latency_breakdown"]
    parts = [
        f"{label} {breakdown[key]['p50']:,.0f} / {breakdown[key]['p95']:,.0f} ms"
        for key, label in _BREAKDOWN_PARTS
        if (breakdown.get(key) or {}).get("count")
    ]
    return ["", f"- **Where the time went** (p50 / p95): {'; '.join(parts)}"] if parts else []


def breakdown_md(metrics: Mapping[str, Any]) -> list[str]:
    """The per-sample EQS spread, the fields to look at and precision/recall per complexity bin."""
    lines: list[str] = []
    typed = extraction_sections(metrics)
    dist = typed["eqs_distribution"]
    if dist["median"] is not None:
        lines += [
            "",
            f"- **Per-sample EQS**: min {sections.num(dist['min'])}, median {sections.num(dist['median'])}, max "
            f"{sections.num(dist['max'])}; {dist['perfect_samples']} perfect (EQS 1), {dist['zero_samples']} at 0",
        ]
    weakest = summary.weakest_fields(metrics)
    if weakest:
        lines += [
            "",
            "### Fields to look at",
            "",
            "| Field | Occurrences | Mean score | ANLS* | Matches | Partial | Mismatches | Omissions | Hallucinations |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        lines += [
            f"| {md(name)} | {f['occurrences']} | {sections.num(f['mean_score'])} | {sections.num(f['anls_star'])} | "
            f"{f['matches']} | {f['partial']} | {f['mismatches']} | {f['omissions']} | {f['hallucinations']} |"
            for name, f in weakest
        ]
    lines += _whole_output_md(metrics)
    lines += _latency_breakdown_md(metrics)
    retried = summary.retried_text(typed["performance"])
    if retried:
        lines += ["", f"- **Attempts**: {md(retried, textsafe.LINE_LIMIT)}"]
    bins = {
        name: entry
        for name, entry in typed["metrics_by_complexity_bin"].items()
        if isinstance(entry, Mapping) and entry.get("num_samples")  # an empty bin has no metrics
    }
    if bins:
        lines += [
            "",
            "### By schema complexity",
            "",
            "| Bin | Samples | EQS | Precision (partial) | Recall (partial) | F1 (partial) |",
            "|---|---|---|---|---|---|",
        ]
        lines += [
            f"| {md(name)} | {e['num_samples']} | {sections.num(e.get('extraction_quality_score'))} | "
            f"{sections.num(e.get('field_precision_partial'))} | {sections.num(e.get('field_recall_partial'))} | "
            f"{sections.num(e.get('field_f1_partial'))} |"
            for name, e in bins.items()
        ]
    lines += sections.groups_md(sections.groups_view(metrics))
    lines += sections.calibration_md(sections.calibration_view(metrics))
    lines += sections.consistency_md(sections.consistency_view(metrics))
    lines += sections.repeats_md(sections.repeats_view(metrics))
    return lines


def summary_md(document: rundoc.MetricsDocument, rows: Mapping[str, Sequence[Mapping[str, Any]]] | None = None) -> str:
    """The executive summary in Markdown, one block per model."""
    run = document["run"]
    dataset = run["dataset"]
    models = document["models"]
    names = ", ".join(md(m) for m in models) or "no model"
    reuse = reuse_sentence(run["live"])
    lines = [
        f"# Model Evaluation Report: {names}",
        "",
        *([f"> **Reused answers**: {md(reuse, textsafe.LINE_LIMIT)}", ""] if reuse else []),
        *gate_md(document),
        *sections.baseline_headline_md(sections.baseline_view(document)),
    ]
    if not models:
        lines.append("No sample was scored.")
    for model, metrics in models.items():
        s = summary.summarize(model, metrics, (rows or {}).get(model, ()))
        if len(models) > 1:
            lines += [f"## {md(model)}", ""]
        else:
            lines += ["## Executive Summary", ""]
        band = f" ({md(s.verdict_band)})" if s.verdict_band else ""
        lines += [
            f"- **Overall Score (EQS)**: {md(s.eqs_text)}{band}",
            f"- **Evaluation Date**: {md((run['started_at'] or '')[:10] or '-')}",
            f"- **Dataset**: {md(dataset['name'] or '-')} ({counted(int(metrics.get('num_samples', 0)), 'sample')})",
            f"- **Exact means**: {md(summary.exactness_text(document), textsafe.LINE_LIMIT)}",
            *_context_lines(run, model, metrics),
            f"- **Key Strengths**: {md(', '.join(s.strengths) or 'none stands out', textsafe.LINE_LIMIT)}",
            f"- **Key Weaknesses**: {md(', '.join(s.weaknesses) or 'none stands out', textsafe.LINE_LIMIT)}",
            f"- **Recommendation**: {md(s.recommendation or '-', textsafe.LINE_LIMIT)}",
            "",
            "### At a Glance",
            "| Metric | Value | Grade |",
            "|--------|-------|-------|",
        ]
        for h in s.headlines:
            value = f"{h.text} {h.ci}".strip()
            lines.append(f"| {md(h.label)} | {md(value)} | {md(h.grade)} |")
        sla = extraction_sections(metrics)["sla"]
        if sla["tier"] not in (None, "none"):
            lines += ["", f"SLA tier {md(sla['tier'])}: **{'passed' if sla['passed'] else 'FAILED'}**"]
        lines += breakdown_md(metrics)
        if s.next_steps:
            steps = [f"{i}. {md(step, textsafe.LINE_LIMIT)}" for i, step in enumerate(s.next_steps, start=1)]
            lines += ["", "### Next steps", *steps]
        lines.append("")
    lines += whole_output_cost_md(document)
    comparison = document.get("comparison")  # only with two or more models
    if comparison is not None and comparison["eqs_ranking"]:
        lines += [
            "## Ranking",
            "",
            "| Rank | Model | EQS | 95% CI | Significantly better than next |",
            "|---|---|---|---|---|",
        ]
        for e in comparison["eqs_ranking"]:
            ci = f"[{e['ci_low']:.3f}, {e['ci_high']:.3f}]" if e["ci_low"] is not None else "-"
            better = {True: "yes", False: "no", None: "-"}[e["significantly_better_than_next"]]
            lines.append(f"| {e['rank']} | {md(e['model'])} | {e['extraction_quality_score']:.3f} | {ci} | {better} |")
        lines.append("")
        lines += sections.pairwise_md(sections.pairwise_view(document))
    lines += sections.baseline_md(sections.baseline_view(document))
    lines += sections.problems_md(sections.problems_view(document))
    return cap_summary("\n".join(lines))


def write_exports(run_dir: Path, document: rundoc.MetricsDocument, records: Any) -> list[Path]:
    """summary.md, metrics.csv and samples.csv in the run directory; ``records()`` yields record dicts in full
    form (a :class:`.sample_table.OnePass` that has read them all lends its table instead)."""
    table = sample_table(records)
    texts = {SUMMARY_FILE: summary_md(document, table.models), METRICS_CSV: metrics_csv(document["models"])}
    written = []
    for name, text in texts.items():
        write_text(run_dir / name, text)
        written.append(run_dir / name)
    # samples.csv line by line, as the pass over the records wrote them: one line per (model, sample)
    with files.atomic(run_dir / SAMPLES_CSV, "w", encoding="utf-8", newline="") as handle:
        handle.writelines(table.csv_lines())
    return [*written, run_dir / SAMPLES_CSV]
