"""The drawing plumbing of the report charts: a figure, its safe inline SVG, labels and colours.

Safety: text is drawn as glyph outlines (``svg.fonttype = "path"``), so model names and
field names from untrusted files never appear as SVG text; the comments matplotlib writes
(which repeat the text) are removed, and every id is prefixed per chart so several charts
share one page. Determinism: a fixed hash salt and no date, so the same data gives the same SVG.
"""

from __future__ import annotations

import io
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..core import textsafe

MAX_POINTS = 1500
MAX_LABEL = 28
CATEGORY_COLORS = {
    "exact": "#2e7d32",
    "partial": "#9ccc65",
    "incorrect": "#ffb300",
    "missed": "#e53935",
    "spurious": "#8e24aa",
}
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf")
RC = {
    "svg.fonttype": "path",
    "svg.hashsalt": "extractbench",
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.spines.top": False,
    "axes.spines.right": False,
}
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)
_ID = re.compile(r'\bid="([^"]+)"')


@dataclass
class Chart:
    """One figure of the report: its title, the SVG markup and what it shows."""

    key: str
    title: str
    svg: str
    caption: str = ""  # what the figure shows
    reading: str = ""  # what the data says, in one line (set from the numbers the chart was drawn from)


def label(text: Any, width: int = MAX_LABEL, *, keep_end: bool = False) -> str:
    """A short one-line label (long untrusted names would squeeze the plot).

    Control characters are shown as escapes (no font has them, and matplotlib's "missing glyph"
    warning would carry them raw to the terminal) and ``$`` is escaped so no name becomes mathtext.
    ``keep_end`` cuts the middle instead of the end: a field path is told apart by its leaf.
    """
    text = " ".join(str(text).split())
    if keep_end and len(text) > width:
        head = width // 3
        text = text[:head] + "…" + text[len(text) - (width - head - 1):]
    return textsafe.terminal(text, width).replace("$", r"\$")


def color(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def to_svg(fig: Any, key: str) -> str:
    """The figure as an ``<svg>`` element safe to inline: no prolog, no comments, ids prefixed."""
    import matplotlib

    buffer = io.StringIO()
    with matplotlib.rc_context(RC):
        fig.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None}, bbox_inches="tight")
    text = buffer.getvalue()
    text = _COMMENT.sub("", text[text.index("<svg") :])
    prefix = f"eb-{key}-"
    for name in set(_ID.findall(text)):
        text = text.replace(f'id="{name}"', f'id="{prefix}{name}"').replace(f'#{name}"', f'#{prefix}{name}"')
        text = text.replace(f"#{name})", f"#{prefix}{name})")
    return text.replace("<svg ", '<svg role="img" ', 1)


def figure(width: float = 6.0, height: float = 3.2, **kwargs: Any) -> Any:
    import matplotlib
    from matplotlib.figure import Figure

    with matplotlib.rc_context(RC):
        return Figure(figsize=(width, height), layout="constrained", **kwargs)


def _axes(fig: Any, *args: Any, **kwargs: Any) -> Any:
    import matplotlib

    with matplotlib.rc_context(RC):
        return fig.add_subplot(*args, **kwargs)


def sample_points(values: Sequence[Any], limit: int = MAX_POINTS, seed: int = 0) -> list[Any]:
    """At most ``limit`` of ``values``, a seeded random subset in original order."""
    if len(values) <= limit:
        return list(values)
    keep = np.sort(np.random.default_rng(seed).choice(len(values), size=limit, replace=False))
    return [values[i] for i in keep]
