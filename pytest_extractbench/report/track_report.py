"""summary.md and report.html of a toolcall, generate or repair run: the gate (required thresholds, regression
checks against a baseline) when the run asserted one, the comparison with the baseline, one track section per model.

The sections come from :mod:`.track_sections`, the gate and the baseline's from the extraction report's renderers
(:func:`.exports.gate_md`, :mod:`.run_sections`); untrusted text (model names, sample ids, schema feature names) is
escaped here, through :func:`..core.textsafe.markdown` for Markdown and jinja2's autoescape for HTML.
"""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..core import rundoc, textsafe
from ..gating.gates import gate_verdicts, unmeasured_warnings
from ..gating.verdict import partial_text
from . import run_sections
from .track_sections import Section, model_section


def _md(text: Any) -> str:
    return textsafe.markdown(text, textsafe.LINE_LIMIT)


def sections(document: rundoc.MetricsDocument) -> dict[str, Section]:
    """Model -> its track section (models of a track without a section renderer are left out)."""
    track = document["track"]
    found = document["run"].get("partial")  # only in a partial run
    partial = found["models"] if found else {}
    out = {}
    for model, metrics in document["models"].items():
        section = model_section(track, metrics)
        if section is None:
            continue
        if seen := partial_text(partial.get(model), gated=False):
            section.figures.insert(1, ("Partial run", seen))
        out[str(model)] = section
    return out


def section_md(section: Section) -> list[str]:
    """One track section in Markdown (a heading is the caller's)."""
    lines = [f"- **{_md(label)}**: {_md(value)}" for label, value in section.figures]
    for table in section.tables:
        if not table.rows:
            continue
        lines += [
            "",
            f"### {_md(table.caption)}",
            "| " + " | ".join(_md(h) for h in table.header) + " |",
            "|" + "---|" * len(table.header),
        ]
        lines += ["| " + " | ".join(_md(c) for c in row) + " |" for row in table.rows]
    return lines


def track_summary_md(document: rundoc.MetricsDocument) -> str:
    """summary.md of a track run."""
    run = document["run"]
    found = sections(document)
    names = ", ".join(_md(m) for m in document["models"]) or "no model"
    lines = [f"# {_md(document['track'].capitalize())} Track Report: {names}", ""]
    lines += [
        f"- **Evaluation Date**: {_md((run['started_at'] or '')[:10] or '-')}",
        f"- **Dataset**: {_md(run['dataset']['name'] or '-')}",
        "",
    ]
    from .exports import cap_summary, gate_md

    baseline = run_sections.baseline_view(document)
    if gate_verdicts(document):  # a run without a gate says nothing here: its failed items decide the session
        lines += [*gate_md(document), *run_sections.baseline_headline_md(baseline)]
    if not found:
        lines += ["No sample was scored.", ""]
    for model, section in found.items():
        lines += [f"## {_md(model)}: {_md(section.title)}", "", *section_md(section), ""]
    lines += run_sections.baseline_md(baseline)
    return cap_summary("\n".join(lines))


def track_report_html(document: rundoc.MetricsDocument) -> str:
    """report.html of a track run: a self-contained page, no script."""
    from .html import CSP, render_fragment

    found = sections(document)
    track = document["track"]
    gates = gate_verdicts(document)
    return render_fragment(
        "track_report.html.j2",
        title=f"{track.capitalize()} Track Report: " + ", ".join(found),
        csp=CSP,
        generated_at=datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        run=document["run"],
        sections=found,
        gates=gates,
        gate_warnings=unmeasured_warnings(gates),
        baseline=run_sections.baseline_view(document),
    )


def write_track_reports(run_dir: Path, document: rundoc.MetricsDocument, *, html: bool = True) -> list[Path]:
    """summary.md and (unless turned off) report.html of a track run."""
    from .exports import SUMMARY_FILE, write_text
    from .html import REPORT_FILE

    written = [run_dir / SUMMARY_FILE]
    write_text(written[0], track_summary_md(document))
    if html:
        written.append(run_dir / REPORT_FILE)
        write_text(written[1], track_report_html(document))
    return written
