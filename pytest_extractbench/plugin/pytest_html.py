"""pytest-html integration: model/EQS/validity/F1 columns, a field-diff extra per sample item, and the
headline metrics in the summary. Registered by plugin.py only when pytest-html is installed.

The columns read the JUnit properties every sample report carries (``report.user_properties``),
and the extra is attached where the item ran, so both work under xdist. pytest-html inserts
cells and extras as HTML: every untrusted value goes through jinja2's autoescaping.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import pytest

from ..core import textsafe

if TYPE_CHECKING:
    from .session import BenchSession

# The rendering modules (jinja2 templates, summary) are imported where they are used: this module is
# imported with the plugin, for the JUnit properties every benchmark item gets.

# JUnit XML property names (record_property): CI systems show them per test case.
PROPERTIES = ("extractbench_model", "extractbench_eqs", "extractbench_validity", "extractbench_f1_partial")
COLUMNS = (("model", "Model"), ("eqs", "EQS"), ("validity", "Validity"), ("f1", "F1 (partial)"))


def junit_properties(record: Mapping[str, Any]) -> list[tuple[str, Any]]:
    """The per-sample scores as (name, value) pairs for ``item.user_properties``; the model name is untrusted
    (a predictions file names it): made inert, as in every other sink."""
    score = record.get("score")
    model = textsafe.terminal(record["model"])
    if not score:  # the other tracks' records carry their own results, not an extraction score
        return [_shared(("extractbench_model", model))]
    return [
        _shared(pair)
        for pair in zip(
            PROPERTIES,
            (
                model,
                round(score["eqs"], 4),
                "valid" if score["schema_valid"] else "invalid",
                round(score["f1"]["partial"], 4),
            ),
        )
    ]


_PAIRS: dict[tuple[str, Any], tuple[str, Any]] = {}
_PAIRS_LIMIT = 1 << 15


def _shared(pair: tuple[str, Any]) -> tuple[str, Any]:
    """An equal (name, value) pair seen before, else ``pair``: pytest keeps every report until the session ends,
    and most pairs repeat (the model's name, the validity, scores rounded to 4 places), so 100,000 items keep a
    few thousand pairs instead of 400,000. Equal only with the same value type and text (``1.0`` is not ``1``)."""
    found = _PAIRS.get(pair)
    value = pair[1]
    if (
        found is not None
        and type(found[1]) is type(value)
        and (type(value) is not float or repr(found[1]) == repr(value))
    ):
        return found  # (-0.0 equals 0.0 but is written apart)
    if len(_PAIRS) >= _PAIRS_LIMIT:
        _PAIRS.clear()
    _PAIRS[pair] = pair
    return pair


def wants_extras(config: pytest.Config) -> bool:
    """True when pytest-html writes a report in this session (workers see the same option)."""
    return bool(getattr(config.option, "htmlpath", None))


def attach_extra(report: pytest.TestReport, record: Mapping[str, Any]) -> None:
    """Add the sample's field-by-field diff to the report's pytest-html extras."""
    from pytest_html import extras

    from ..report.html import render_fragment, sample_view

    view = sample_view(record)
    # pytest-html reads the extras from this attribute of the report, which pytest does not declare
    report.extras = [  # type: ignore[attr-defined]
        *getattr(report, "extras", []),
        extras.html(render_fragment("item_extra.html.j2", sample=view)),
    ]


class PytestHtmlHooks:
    """Hooks of pytest-html, on the controller."""

    def __init__(self, bench: BenchSession) -> None:
        self.bench = bench

    def pytest_html_results_table_header(self, cells: list[str]) -> None:
        for offset, (key, title) in enumerate(COLUMNS):
            cells.insert(2 + offset, f'<th class="sortable" data-column-type="{key}">{title}</th>')

    def pytest_html_results_table_row(self, report: pytest.TestReport, cells: list[str]) -> None:
        from ..report.html import render_fragment

        found = dict(getattr(report, "user_properties", ()) or ())
        values = [found.get(name, "") for name in PROPERTIES]
        for offset, ((key, _), value) in enumerate(zip(COLUMNS, values)):
            cells.insert(2 + offset, render_fragment("cell.html.j2", key=key, value=value))

    def pytest_html_results_summary(
        self, prefix: list[str], summary: list[str], postfix: list[str], session: Any
    ) -> None:
        from ..report.html import render_fragment
        from ..report.summary import fmt, headlines

        metrics = self.bench.metrics
        if metrics:
            rows = {model: headlines(m) for model, m in metrics.items()}
            prefix.append(render_fragment("html_summary.html.j2", rows=rows, run_dir=str(self.bench.run_dir), fmt=fmt))
