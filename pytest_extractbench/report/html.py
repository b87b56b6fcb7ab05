"""report.html: one self-contained page (summary, charts, sample viewer) from metrics.json and records.

Nothing is fetched: charts are inline SVG, styles inline, and the one script (the sample viewer) is
inline too, allowed by its hash in the page's Content-Security-Policy, which forbids every other script.
Untrusted text (model output, dataset text, names) is autoescaped by jinja2 in the static sections, and
reaches the viewer as escaped JSON that its script shows through textContent only.
"""

from __future__ import annotations

import json
import secrets
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..analysis import catalog
from ..analysis.provenance import reuse_sentence
from ..core import files, rundoc, textsafe
from ..core.modelsections import extraction_sections
from ..core.wording import counted, plain
from ..gating.gates import gate_verdicts, unmeasured_warnings
from . import run_sections as sections
from . import summary, viewer
from .html_charts import BINS, latency_figures, report_charts
from .rows import RunData
from .sample_table import OnePass, sample_table
from .viewer import ViewerRun
from .viewer_document import ViewerDocument

if TYPE_CHECKING:
    import jinja2

log = textsafe.get_logger(__name__)

REPORT_FILE = "report.html"
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"
VIEWER_FILE = "viewer.html"
MAX_DIFF_FIELDS = 80
MAX_VALUE = 300
MAX_OUTPUT = 2000
CATEGORY_CLASSES = frozenset(("exact", "partial", "incorrect", "missed", "spurious", "error"))


def clip(value: Any, width: int = MAX_VALUE) -> str:
    """A JSON rendering of an untrusted value, cut to ``width`` characters (escaping happens in the template)."""
    if value is None:
        return "—"
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= width else text[: width - 1] + f"… ({len(text):,} characters)"


def _problem_view(problem: rundoc.ProblemDict) -> dict[str, str]:
    """One input problem of metrics.json (every key there: :func:`..core.rundoc.complete`), each part clipped (text
    only: the template escapes it)."""
    parts = {
        "severity": problem["severity"],
        "source": problem["source"],
        "location": problem["location"],
        "sample_id": problem["sample_id"],
        "field": problem["field"],
        "message": problem["message"],
    }
    return {k: "" if v is None else clip(str(v), 1000) for k, v in parts.items()}


@dataclass
class SampleView:
    model: str
    sample_id: str
    eqs: float
    f1: float
    valid: bool
    failure: str | None
    output: str
    problems: list[str]
    fields: list[dict[str, Any]]
    hidden_fields: int = 0


@dataclass
class ModelView:
    name: str
    metrics: Mapping[str, Any]
    summary: summary.Summary
    performance: dict[str, float | None]
    performance_table: list[tuple[str, str]]
    rows: Sequence[Mapping[str, Any]]  # the model's samples as the charts read them (:class:`.sample_table.SampleRows`)
    bins: list[dict[str, Any]] = field(default_factory=list)
    bins_source: str = ""


# what a track's record (no field-level score) shows in the field diff
_NO_SCORE: Mapping[str, Any] = {
    "fields": [],
    "parse_error": None,
    "validation_errors": [],
    "eqs": 0.0,
    "f1": {"partial": 0.0},
    "schema_valid": False,
}


def sample_view(record: Mapping[str, Any]) -> SampleView:
    """One record in full form (:func:`..core.rundoc.expand`, ``SampleRecord.to_dict()``); a track's record has no
    score."""
    score = record.get("score") or _NO_SCORE
    fields = []
    # a field entry keeps path, category and score; the other keys are left out at their defaults
    ordered = sorted(score["fields"], key=lambda f: (f["category"] == "exact", f["path"]))
    for f in ordered[:MAX_DIFF_FIELDS]:
        category = str(f["category"])
        fields.append(
            {
                "path": clip(f["path"], 120),
                "category": category,
                "css": category if category in CATEGORY_CLASSES else "other",
                "score": float(f["score"] or 0.0),
                "expected": clip(f.get("expected")),
                "predicted": clip(f.get("predicted")),
                "types": f"{f.get('expected_type') or '—'} / {f.get('predicted_type') or '—'}",
                "type_ok": f.get("type_ok"),
            }
        )
    content = record["response"]["content"]
    problems = [p for p in [score["parse_error"], *score["validation_errors"][:5]] if p]
    return SampleView(
        model=str(record["model"]),
        sample_id=str(record["sample_id"]),
        eqs=float(score["eqs"]),
        f1=float(score["f1"]["partial"]),
        valid=bool(score["schema_valid"]),
        failure=record["failure"],
        output=clip(content, MAX_OUTPUT),
        problems=[clip(p, 400) for p in problems],
        fields=fields,
        hidden_fields=max(0, len(ordered) - MAX_DIFF_FIELDS),
    )


def _flatten(data: Mapping[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for key, value in data.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            out.extend(_flatten(value, name + "."))
        elif not isinstance(value, (list, tuple)):
            out.append((name, value))
    return out


def _show(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return str(value).lower() if value is not None else "—"
    if isinstance(value, float):
        return plain(value)
    return clip(value, 120)


def _bins(metrics: Mapping[str, Any], rows: Sequence[Mapping[str, Any]]) -> tuple[list[dict[str, Any]], str]:
    """Per complexity bin: metrics.json's metrics_by_complexity_bin when present, else means of the rows."""
    given = extraction_sections(metrics)["metrics_by_complexity_bin"]
    if given:
        out = []
        for name, entry in given.items():
            if isinstance(entry, Mapping):  # an empty bin has its sample count alone
                out.append(
                    {
                        "bin": str(name),
                        "n": entry.get("num_samples", entry.get("count")),
                        "eqs": entry.get("extraction_quality_score"),
                        "f1": entry.get("field_f1_partial"),
                        "precision": entry.get("field_precision_partial"),
                        "recall": entry.get("field_recall_partial"),
                        "validity": entry.get("schema_validity_rate"),
                    }
                )
        return out, "metrics.json (metrics_by_complexity_bin)"
    grouped: dict[str, list[Mapping[str, Any]]] = defaultdict(list)
    for row in rows:
        if row.get("complexity_bin"):
            grouped[str(row["complexity_bin"])].append(row)
    order = [b for b in BINS if b in grouped] + sorted(b for b in grouped if b not in BINS)
    return [
        {
            "bin": b,
            "n": len(grouped[b]),
            "eqs": float(np.mean([r["eqs"] for r in grouped[b]])),
            "f1": float(np.mean([r["f1_partial"] for r in grouped[b]])),
            "precision": None,
            "recall": None,
            "validity": float(np.mean([r["schema_valid"] for r in grouped[b]])),
        }
        for b in order
    ], "means of per-sample scores"


def _extras(metrics_by_model: Mapping[str, Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per model, the subsets/groups, calibration and consistency it has (models with none left out)."""
    out = []
    for name, metrics in metrics_by_model.items():
        found = {
            "groups": sections.groups_view(metrics),
            "calibration": sections.calibration_view(metrics),
            "consistency": sections.consistency_view(metrics),
        }
        if any(found.values()):
            out.append({"model": name, **found})
    return out


def viewer_context(runs: Sequence[ViewerRun]) -> dict[str, str | viewer.EmbeddedJson]:
    """The viewer's embedded data, its script and the CSP that allows that script alone."""
    script = viewer.script()
    document = ViewerDocument(runs)  # the data encoded and compressed as it is read: written out piece by piece
    return {
        "json": viewer.EmbeddedJson(texts=document.head_parts),  # renders as the packed JSON
        "body": viewer.EmbeddedJson(texts=document.body_parts),
        "encoding": viewer.ENCODING,
        "script": script,
        "csp": CSP.replace("default-src 'none';", f"default-src 'none'; script-src {viewer.script_hash(script)};"),
    }


def build_context(run: RunData, *, title: str | None = None, charts: bool = True) -> dict[str, Any]:
    """Everything the template shows; numbers come from metrics.json, the sample viewer's from the records."""
    document = run.document
    metrics_by_model: Mapping[str, Mapping[str, Any]] = document["models"]
    # the viewer reads the records whole first: a OnePass (sample_table.py) keeps what the charts need of them, taken
    # here without a second read (the finish's OnePass also keeps samples.csv's lines, written after the page)
    if not isinstance(run.records, OnePass):
        run = replace(run, records=OnePass(run.records, csv_lines=False))
    samples = viewer_context([ViewerRun("current", run)])
    rows = sample_table(run.records, csv_lines=False).models
    views: list[ModelView] = []
    for name, metrics in metrics_by_model.items():
        model_rows = rows.get(name, ())
        perf = summary.performance(metrics)
        if all(v is None for v in perf.values()):
            perf.update(latency_figures(model_rows))
        perf_data = extraction_sections(metrics)["performance"]
        bins, bins_source = _bins(metrics, model_rows)
        views.append(
            ModelView(
                name=name,
                metrics=metrics,
                summary=summary.summarize(name, metrics, model_rows),
                performance=perf,
                performance_table=[(k, _show(v)) for k, v in _flatten(perf_data)] if perf_data["measured"] else [],
                rows=model_rows,
                bins=bins,
                bins_source=bins_source,
            )
        )
    run_info = document["run"]
    names = [v.name for v in views]
    return {
        "title": title or ("Model Evaluation Report: " + ", ".join(names) if names else "Model Evaluation Report"),
        "csp": samples["csp"],
        "viewer": samples,
        "generated_at": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "run": run_info,
        "dataset": run_info["dataset"],
        "dataset_stats": [(k, _show(v)) for k, v in _flatten(document["dataset"])]
        if isinstance(document.get("dataset"), Mapping)
        else [],
        "options_table": [(k, _show(v)) for k, v in _flatten(run_info["options"])],
        # a metric only some runs measure (the judge's grade) is listed when some model has it
        "primary_metrics": tuple(
            name
            for name, metric in catalog.resampled().items()
            if metric.measured_by is None or any(name in v.metrics for v in views)
        ),
        "whole_output_cost": document.get("whole_output_cost"),
        "models": views,
        "gates": (gates := gate_verdicts(document)),
        "gate_warnings": unmeasured_warnings(gates),
        "reuse": reuse_sentence(run_info["live"]),
        "exactness": summary.exactness_text(document),
        "charts": report_charts(views, document) if charts else defaultdict(list),
        "comparison": document.get("comparison") if len(views) > 1 else None,
        "baseline": sections.baseline_view(document),
        "extras": _extras(metrics_by_model),
        # input problems quote the rows they found (clipped here too: a foreign metrics.json may not be)
        "problems": [_problem_view(p) for p in run_info["problems"][:50]],
        "num_problems": len(run_info["problems"]),
        "weakest_fields": summary.weakest_fields,
        "fmt": summary.fmt,
        "labels": {m.name: m.label for m in catalog.metrics()},
        "grade": summary.grade,
    }


def _inert(value: Any) -> Any:
    """Every plain string a template prints goes through the one sanitizer (controls escaped, credentials masked)
    before autoescaping; markup made here (charts, the viewer's data) is left as it is."""
    return textsafe.terminal(value, None, lines=True) if type(value) is str else value


@lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    import jinja2

    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("pytest_extractbench.report", "templates"),
        autoescape=True,  # every template, whatever its name: all data shown is untrusted
        finalize=_inert,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    # the terminal's and summary.md's words: "1 sample", a zero as 0
    environment.filters["counted"] = counted
    environment.filters["plain"] = plain
    return environment


def render(context: Mapping[str, Any], template: str = "report.html.j2") -> str:
    return _environment().get_template(template).render(**context)


def render_fragment(template: str, **context: Any) -> str:
    """A small autoescaped template (pytest-html extras)."""
    return _environment().get_template(template).render(**context)


def write_report(run: RunData, output: Path, *, title: str | None = None, charts: bool = True) -> Path:
    """Render the run into ``output`` (written atomically); ``charts=False`` leaves the charts out."""
    return _write_page("report.html.j2", build_context(run, title=title, charts=charts), output)


def _write_page(template: str, context: dict[str, Any], output: Path) -> Path:
    """Render ``template`` into ``output`` as the template yields it, the viewer's data packed as its JSON is
    made: a large run's JSON is tens of megabytes, and is never held whole beside the data it was made from. The
    page is the same text :func:`render` gives."""
    embedded = {key: value for key, value in context["viewer"].items() if isinstance(value, viewer.EmbeddedJson)}
    if not embedded:
        return _write_parts(_environment().get_template(template).generate(**context), output)
    # nothing else in the page can hold these marks
    marks = {key: f"\x00viewer-data-{secrets.token_hex(16)}\x00" for key in embedded}
    by_mark = {mark: embedded[key] for key, mark in marks.items()}
    context = {**context, "viewer": {**context["viewer"], **marks}}

    def parts() -> Iterator[str]:
        for part in _environment().get_template(template).generate(**context):
            while (mark := next((m for m in by_mark if m in part), None)) is not None:
                before, part = part.split(mark, 1)
                yield before
                yield from by_mark[mark].parts()
            yield part

    return _write_parts(parts(), output)


def _write_parts(parts: Iterable[str], output: Path) -> Path:
    """The page written piece by piece (atomically: a failure leaves the previous file, if any)."""
    with files.atomic(output, "w", encoding="utf-8") as handle:
        handle.writelines(parts)
    return output


def write_viewer(runs: Sequence[ViewerRun], output: Path, *, title: str | None = None) -> Path:
    """A page with the sample viewer alone: the first run is the current one, the others compared with it."""
    context = {
        "title": title or "Samples: " + " vs ".join(r.label for r in runs),
        "runs": runs,
        "generated_at": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "viewer": viewer_context(runs),
    }
    return _write_page("viewer.html.j2", context, output)
