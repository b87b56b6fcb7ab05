"""Report sections of the toolcall, generate and repair tracks, for summary.md and report.html.

A section renderer turns one model's entry of metrics.json (the track's ``aggregate`` output under
the track's name) into a :class:`Section`: figures and tables of plain text. The Markdown and HTML
writers render every section the same way and do the escaping (Markdown through
:func:`..core.textsafe.markdown`, HTML through jinja2's autoescape), so a renderer never escapes.
Adding a track's section: one function and one :data:`SECTIONS` entry.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..core.wording import counted

MAX_LISTED = 20  # failed sample ids listed per model


@dataclass
class Table:
    caption: str
    header: tuple[str, ...]
    rows: list[tuple[str, ...]]


@dataclass
class Section:
    """What a track reports about one model: headline figures, then tables."""

    title: str
    figures: list[tuple[str, str]] = field(default_factory=list)  # (label, value)
    tables: list[Table] = field(default_factory=list)


def pct(value: Any) -> str:
    return "n/a" if not isinstance(value, (int, float)) else f"{100 * value:.1f}%"


def num(value: Any) -> str:
    return "n/a" if not isinstance(value, (int, float)) else f"{value:.3f}"


def toolcall_section(data: Mapping[str, Any]) -> Section:
    abstention = data.get("abstention") or {}
    calls = data.get("calls") or {}
    return Section(
        "Tool calling",
        [
            ("Accuracy", pct(data.get("accuracy"))),
            ("Output valid", pct(data.get("output_valid_rate"))),
            ("Valid call rate", pct(data.get("valid_call_rate"))),
            ("Name match", pct(data.get("name_match_rate"))),
            ("Arguments exact", pct(data.get("arguments_exact_match_rate"))),
            (
                "Arguments P / R / F1",
                " / ".join(num(data.get(f"arguments_{k}")) for k in ("precision", "recall", "f1")),
            ),
            ("Calls (gold / predicted)", f"{calls.get('gold', 0)} / {calls.get('predicted', 0)}"),
            (
                "Abstention accuracy",
                f"{pct(abstention.get('accuracy'))} over {counted(abstention.get('samples', 0), 'sample')}",
            ),
            ("False abstention", pct(abstention.get("false_abstention_rate"))),
        ],
    )


def generate_section(data: Mapping[str, Any]) -> Section:
    features = data.get("per_feature") or {}
    violated = data.get("most_violated") or []
    return Section(
        "Schema-constrained generation",
        [
            ("JSON valid", pct(data.get("json_valid_rate"))),
            ("Schema compliant", pct(data.get("schema_compliance_rate"))),
        ],
        [
            Table(
                "Compliance per schema feature",
                ("Feature", "Samples", "Compliant", "Rate"),
                [
                    (str(name), str(v.get("samples", 0)), str(v.get("compliant", 0)), pct(v.get("compliance_rate")))
                    for name, v in features.items()
                ],
            ),
            Table(
                "Most violated features",
                ("Feature", "Samples"),
                [(str(v.get("feature", "")), str(v.get("samples", 0))) for v in violated],
            ),
        ],
    )


def repair_section(data: Mapping[str, Any]) -> Section:
    kinds = data.get("by_kind") or {}
    return Section(
        "JSON repair",
        [
            ("JSON valid", pct(data.get("json_valid_rate"))),
            ("Schema valid", pct(data.get("schema_validity_rate"))),
            ("Restored exactly", pct(data.get("exact_match_rate"))),
            ("Fields unchanged", pct(data.get("field_agreement_rate"))),
            ("Field F1 (partial)", num(data.get("field_f1_partial"))),
        ],
        [
            Table(
                "Per kind of damage",
                ("Kind", "Samples", "JSON valid", "Restored exactly"),
                [
                    (str(kind), str(v.get("samples", 0)), pct(v.get("json_valid_rate")), pct(v.get("exact_match_rate")))
                    for kind, v in kinds.items()
                ],
            ),
        ],
    )


# track name -> renderer of one model's section
SECTIONS: dict[str, Callable[[Mapping[str, Any]], Section]] = {
    "toolcall": toolcall_section,
    "generate": generate_section,
    "repair": repair_section,
}


def model_section(track: str, metrics: Mapping[str, Any]) -> Section | None:
    """The track's section of one model, with the samples it failed; None for a track without one."""
    render = SECTIONS.get(track)
    data = metrics.get(track)
    if render is None or not isinstance(data, Mapping):
        return None
    section = render(data)
    passed, total = metrics.get("passed_samples", 0), metrics.get("num_samples", 0)
    section.figures.insert(0, ("Samples passed", f"{passed} of {total}"))
    failed: Sequence[Any] = metrics.get("failed_samples") or []
    if failed:
        rows: list[tuple[str, ...]] = [(str(sample_id),) for sample_id in failed[:MAX_LISTED]]
        if len(failed) > MAX_LISTED:
            rows.append((f"… and {len(failed) - MAX_LISTED} more",))
        section.tables.append(Table("Failed samples", ("Sample",), rows))
    _repeats(section, metrics)
    return section


def _repeats(section: Section, metrics: Mapping[str, Any]) -> None:
    """pass@k and pass^k over ``--extractbench-repeats`` runs, and the samples that passed only some runs."""
    repeats = metrics.get("repeats")
    if not isinstance(repeats, Mapping) or not repeats.get("samples"):
        return
    k = repeats.get("runs")
    section.figures.append(
        (
            f"Repeats ({k} runs)",
            f"pass@{k} (some run passes) {pct(metrics.get('pass_at_k'))}, "
            f"pass^{k} (every run passes) {pct(metrics.get('pass_hat_k'))}; "
            f"{repeats.get('flaky_samples', 0)} of {repeats['samples']} samples flaky",
        )
    )
    flaky = [s for s in repeats.get("flaky_sample_list") or [] if isinstance(s, Mapping)]
    if flaky:
        rows: list[tuple[str, ...]] = [
            (str(s.get("sample_id")), f"{s.get('passed')} of {s.get('runs')}") for s in flaky
        ]
        section.tables.append(Table("Flaky samples (pass in some runs only)", ("Sample", "Runs passed"), rows))
