"""The drawing plumbing of the report charts: SVG written from Python (a canvas, a cartesian frame, legends,
ticks, colour maps), so the base install carries no plotting library.

Safety: every text (model and field names come from untrusted files) is made one inert line by
:func:`..core.textsafe.terminal` (controls escaped, credentials masked, clipped), the characters XML forbids
are escaped as well, and the result is XML-escaped; attributes are escaped the same way. Only shapes, text
and presentation attributes are written (no style attribute, script, link or external reference), so the
page's Content-Security-Policy holds, and the one id is prefixed per chart so several charts share one page.
Determinism: numbers are written with fixed precision and nothing depends on the date.
"""

from __future__ import annotations

import html
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..core import textsafe

MAX_POINTS = 1500
MAX_LABEL = 28
FONT = 12  # px: the size of tick labels and legends; titles live in the figure caption
SMALL = 10
CHAR = 0.6  # mean glyph width of a sans-serif font, in font sizes: enough to lay labels out without a font
CATEGORY_COLORS = {
    "exact": "#2e7d32",
    "partial": "#9ccc65",
    "incorrect": "#ffb300",
    "missed": "#e53935",
    "spurious": "#8e24aa",
}
UNIT = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)  # the ticks of a 0-1 axis
INK, GREY = "#222222", "#555555"  # marks drawn over the data (whiskers, medians) and guide lines
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf")
# ColorBrewer's sequential and diverging schemes (the stops matplotlib's maps of the same names interpolate)
COLOR_MAPS = {
    "Reds": ("#fff5f0", "#fee0d2", "#fcbba1", "#fc9272", "#fb6a4a", "#ef3b2c", "#cb181d", "#a50f15", "#67000d"),
    "Greens": ("#f7fcf5", "#e5f5e0", "#c7e9c0", "#a1d99b", "#74c476", "#41ab5d", "#238b45", "#006d2c", "#00441b"),
    "RdBu_r": (
        "#053061",
        "#2166ac",
        "#4393c3",
        "#92c5de",
        "#d1e5f0",
        "#f7f7f7",
        "#fddbc7",
        "#f4a582",
        "#d6604d",
        "#b2182b",
        "#67001f",
    ),
}
DASHES = {"-": None, "--": "6 3", ":": "1.5 2.5"}
_XML_FORBIDDEN = re.compile("[^\t\n\r -\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


@dataclass
class Chart:
    """One figure of the report: its title, the SVG markup and what it shows."""

    key: str
    title: str
    svg: str
    caption: str = ""  # what the figure shows
    reading: str = ""  # what the data says, in one line (set from the numbers the chart was drawn from)


def label(text: Any, width: int = MAX_LABEL, *, keep_end: bool = False) -> str:
    """A short one-line label (long untrusted names would squeeze the plot), controls shown as escapes.

    ``keep_end`` cuts the middle instead of the end: a field path is told apart by its leaf.
    """
    text = " ".join(str(text).split())
    if keep_end and len(text) > width:
        head = width // 3
        text = text[:head] + "…" + text[len(text) - (width - head - 1) :]
    return textsafe.terminal(text, width)


def escape(text: Any) -> str:
    """Untrusted text as the content or attribute value of an SVG element: one inert line, XML-escaped."""
    line = textsafe.terminal(text)
    if not line.isascii():
        line = _XML_FORBIDDEN.sub(lambda m: f"\\u{ord(m.group()):04x}", line)
    return html.escape(line, quote=True)


def color(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


def num(value: float) -> str:
    """A coordinate with one decimal, no trailing zero (SVG in pixels needs no more)."""
    text = f"{value:.1f}"
    text = text[:-2] if text.endswith(".0") else text
    return "0" if text == "-0" else text


def text_width(text: str, size: float = FONT) -> float:
    return len(text) * size * CHAR


def sample_points(values: Sequence[Any], limit: int = MAX_POINTS, seed: int = 0) -> list[Any]:
    """At most ``limit`` of ``values``, a seeded random subset in original order."""
    if len(values) <= limit:
        return list(values)
    keep = np.sort(np.random.default_rng(seed).choice(len(values), size=limit, replace=False))
    return [values[i] for i in keep]


def color_map(name: str, fraction: float) -> str:
    """The colour at ``fraction`` (0 to 1) of a named map, interpolated linearly between its stops."""
    stops = COLOR_MAPS[name]
    position = min(max(fraction, 0.0), 1.0) * (len(stops) - 1)
    i = min(int(position), len(stops) - 2)
    t = position - i
    a, b = (tuple(int(s[k : k + 2], 16) for k in (1, 3, 5)) for s in (stops[i], stops[i + 1]))
    return "#" + "".join(f"{round(x + (y - x) * t):02x}" for x, y in zip(a, b))


def ink_on(fill: str) -> str:
    """Black or white, whichever reads better on ``fill`` (its relative luminance)."""
    r, g, b = (int(fill[k : k + 2], 16) / 255 for k in (1, 3, 5))
    return "#ffffff" if 0.2126 * r + 0.7152 * g + 0.0722 * b < 0.5 else "#000000"


# -- the canvas --------------------------------------------------------------------------------


def _attributes(values: dict[str, Any]) -> str:
    out = []
    for name, value in values.items():
        if value is None:
            continue
        if isinstance(value, float):
            value = num(value)
        out.append(f' {name.rstrip("_").replace("_", "-")}="{escape(value)}"')
    return "".join(out)


class Canvas:
    """An SVG document built element by element; :meth:`render` gives the markup to inline."""

    def __init__(self, width: float, height: float, key: str, title: str) -> None:
        self.width, self.height, self.key, self.title = width, height, key, title
        self.parts: list[str] = []

    def element(self, tag: str, **attributes: Any) -> None:
        self.parts.append(f"<{tag}{_attributes(attributes)}/>")

    def rect(self, x: float, y: float, width: float, height: float, fill: str, **attributes: Any) -> None:
        if width < 0:
            x, width = x + width, -width
        if height < 0:
            y, height = y + height, -height
        self.parts.append(
            f'<rect x="{num(x)}" y="{num(y)}" width="{num(width)}" height="{num(height)}" '
            f'fill="{fill}"{_attributes(attributes)}/>'
        )

    def line(
        self,
        x1: float,
        y1: float,
        x2: float,
        y2: float,
        stroke: str = "#222222",
        width: float = 1.0,
        dash: str = "-",
        **attributes: Any,
    ) -> None:
        more = _attributes({"stroke_dasharray": DASHES[dash], **attributes})
        self.parts.append(
            f'<line x1="{num(x1)}" y1="{num(y1)}" x2="{num(x2)}" y2="{num(y2)}" stroke="{stroke}" '
            f'stroke-width="{num(width)}"{more}/>'
        )

    def circle(self, x: float, y: float, r: float, fill: str, **attributes: Any) -> None:
        self.parts.append(f'<circle cx="{num(x)}" cy="{num(y)}" r="{num(r)}" fill="{fill}"{_attributes(attributes)}/>')

    def polyline(
        self, points: Iterable[tuple[float, float]], stroke: str, width: float = 1.5, dash: str = "-", **attributes: Any
    ) -> None:
        self.element(
            "polyline",
            points=_points(points),
            fill="none",
            stroke=stroke,
            stroke_width=float(width),
            stroke_dasharray=DASHES[dash],
            **attributes,
        )

    def polygon(self, points: Iterable[tuple[float, float]], **attributes: Any) -> None:
        self.element("polygon", points=_points(points), **attributes)

    def path(self, d: str, **attributes: Any) -> None:
        self.element("path", d=d, **attributes)

    def text(
        self,
        x: float,
        y: float,
        text: Any,
        *,
        size: float = FONT,
        anchor: str = "start",
        baseline: str = "middle",
        rotate: float = 0.0,
        **attributes: Any,
    ) -> None:
        """One text, escaped; ``\\n`` starts another line below; ``baseline``: where the first line sits against
        ``y`` (top, middle or bottom)."""
        lines = str(text).split("\n")
        shift = {"top": "0.8em", "middle": "0.35em", "bottom": None}[baseline]
        attributes = {
            "x": float(x),
            "y": float(y),
            "dy": shift,
            "font_size": size if size != FONT else None,
            "text_anchor": anchor if anchor != "start" else None,
            **attributes,
        }
        if rotate:
            attributes["transform"] = f"rotate({num(rotate)} {num(x)} {num(y)})"
        if len(lines) == 1:
            self.parts.append(f"<text{_attributes(attributes)}>{escape(lines[0])}</text>")
            return
        spans = "".join(
            f'<tspan x="{num(x)}" dy="{shift if i == 0 else "1.2em"}">{escape(line)}</tspan>'
            for i, line in enumerate(lines)
        )
        attributes["dy"] = None
        self.parts.append(f"<text{_attributes(attributes)}>{spans}</text>")

    def render(self) -> str:
        title_id = f"eb-{self.key}-title"
        head = (
            f'<svg xmlns="http://www.w3.org/2000/svg" role="img"{_attributes({"aria_labelledby": title_id})}'
            f' width="{num(self.width)}" height="{num(self.height)}"'
            f' viewBox="0 0 {num(self.width)} {num(self.height)}" font-family="system-ui, sans-serif"'
            f' font-size="{FONT}" fill="#1d2330">'
            f"<title{_attributes({'id': title_id})}>{escape(self.title)}</title>"
        )
        return head + "".join(self.parts) + "</svg>"


def _points(points: Iterable[tuple[float, float]]) -> str:
    return " ".join(f"{num(x)},{num(y)}" for x, y in points)


# -- axes --------------------------------------------------------------------------------------


@dataclass
class Axis:
    """One axis: the data range drawn (``lo`` at the left or bottom; swap them to invert), ticks and a label."""

    lo: float
    hi: float
    ticks: Sequence[tuple[float, str]] = ()
    label: str = ""
    slanted: bool = False  # tick labels at an angle (long names side by side)


def nice_ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """Round tick values (steps of 1, 2, 2.5 or 5 times a power of ten) between ``lo`` and ``hi``."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return [lo] if math.isfinite(lo) else []
    raw = (hi - lo) / count
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw * (1 - 1e-9))
    first = math.ceil(lo / step - 1e-9)
    return [round((first + i) * step, 12) for i in range(int(math.floor(hi / step + 1e-9)) - first + 1)]


def tick_text(value: float) -> str:
    return f"{round(value, 10):g}"


def numeric(lo: float, hi: float, label_: str = "", *, ticks: Sequence[float] | None = None) -> Axis:
    values = nice_ticks(lo, hi) if ticks is None else ticks
    return Axis(lo, hi, [(v, tick_text(v)) for v in values], label_)


def fitted(values: Iterable[float], label_: str = "", *, floor: float | None = None, margin: float = 0.05) -> Axis:
    """A numeric axis over ``values`` with a margin each side (from ``floor`` when given, e.g. 0 for counts)."""
    finite = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    lo, hi = (min(finite), max(finite)) if finite else (0.0, 1.0)
    if floor is not None:
        lo = min(lo, floor)
    if hi <= lo:
        pad = abs(hi) * 0.05 or 0.5
        lo, hi = lo - pad, hi + pad
    pad = (hi - lo) * margin
    return numeric(lo if floor is not None and lo == floor else lo - pad, hi + pad, label_)


def categorical(names: Sequence[str], label_: str = "", *, top_down: bool = False, slanted: bool = False) -> Axis:
    """Categories at 0, 1, 2 ...; ``top_down`` puts the first at the top of a vertical axis."""
    lo, hi = -0.5, len(names) - 0.5
    ticks = list(enumerate(names))
    return Axis(hi, lo, ticks, label_, slanted) if top_down else Axis(lo, hi, ticks, label_, slanted)


@dataclass
class Legend:
    """Entries drawn in rows above the plot: (text, colour, kind) with kind "box", "line", "dot" or a dash style."""

    entries: list[tuple[str, str, str]] = field(default_factory=list)

    def rows(self, width: float) -> list[list[tuple[str, str, str, float]]]:
        rows: list[list[tuple[str, str, str, float]]] = [[]]
        used = 0.0
        for text, fill, kind in self.entries:
            span = 22 + text_width(text, SMALL) + 14
            if rows[-1] and used + span > width:
                rows.append([])
                used = 0.0
            rows[-1].append((text, fill, kind, span))
            used += span
        return rows if self.entries else []

    def draw(self, canvas: Canvas, top: float, width: float) -> float:
        """Draw centred rows from ``top``; returns their height."""
        rows = self.rows(width - 20)
        for r, row in enumerate(rows):
            x = (canvas.width - sum(e[3] for e in row)) / 2
            y = top + 8 + 16 * r
            for text, fill, kind, span in row:
                if kind == "box":
                    canvas.rect(x, y - 5, 16, 10, fill, class_="legend")
                elif kind == "dot":
                    canvas.circle(x + 8, y, 3.5, fill, class_="legend")
                else:
                    canvas.line(x, y, x + 16, y, fill, 2.0, kind if kind in DASHES else "-", class_="legend")
                canvas.text(x + 20, y, text, size=SMALL)
                x += span
        return 16 * len(rows) + (4 if rows else 0)

    def height(self, width: float) -> float:
        return 16 * len(self.rows(width - 20)) + (4 if self.entries else 0)


def models_legend(names: Sequence[str], kind: str = "box", *, show: bool = True) -> Legend:
    """One entry per model, in the model colours the marks use (none when ``show`` is false: one model)."""
    return Legend([(label(n), color(i), kind) for i, n in enumerate(names)] if show else [])


class Plot:
    """A cartesian plot: margins sized from its tick labels, scales from data to pixels, spines, ticks and axis
    labels. Give the plot area's size; the canvas grows around it."""

    def __init__(
        self,
        key: str,
        title: str,
        x: Axis,
        y: Axis,
        *,
        width: float,
        height: float,
        legend: Legend | None = None,
        right: float = 16,
        spines: bool = True,
    ) -> None:
        self.x, self.y = x, y
        y_labels = [line for _, t in y.ticks for line in str(t).split("\n")] or [""]
        x_lines = max((len(str(t).split("\n")) for _, t in x.ticks), default=1)
        x_widest = max((text_width(str(t)) for _, t in x.ticks), default=0.0)
        left = 8 + (18 if y.label else 0) + max(text_width(t) for t in y_labels) + 8
        if x.slanted:
            x_height = x_widest * math.sin(math.radians(25)) + FONT
            left = max(left, x_widest * math.cos(math.radians(25)) - 10)
        else:
            x_height = 15 * x_lines
            right = max(right, (text_width(str(x.ticks[-1][1])) / 2 if x.ticks else 0))
        legend = legend or Legend()
        canvas_width = left + width + right
        top = 10 + legend.height(canvas_width)
        bottom = 8 + x_height + (20 if x.label else 0) + 4
        self.left, self.top, self.width, self.height = left, top, width, height
        self.canvas = Canvas(canvas_width, top + height + bottom, key, title)
        legend.draw(self.canvas, 6, canvas_width)
        self._frame(spines)

    def px(self, value: float) -> float:
        return self.left + (value - self.x.lo) / ((self.x.hi - self.x.lo) or 1.0) * self.width

    def py(self, value: float) -> float:
        return self.top + self.height - (value - self.y.lo) / ((self.y.hi - self.y.lo) or 1.0) * self.height

    def _frame(self, spines: bool) -> None:
        c, bottom, right = self.canvas, self.top + self.height, self.left + self.width
        if spines:
            c.line(self.left, self.top, self.left, bottom, "#444444", 0.8)
            c.line(self.left, bottom, right, bottom, "#444444", 0.8)
        for value, text in self.x.ticks:
            x = self.px(value)
            c.line(x, bottom, x, bottom + 4, "#444444", 0.8)
            if self.x.slanted:
                c.text(x, bottom + 8, text, anchor="end", baseline="top", rotate=-25, class_="tick")
            else:
                c.text(x, bottom + 7, text, anchor="middle", baseline="top", class_="tick")
        for value, text in self.y.ticks:
            y = self.py(value)
            c.line(self.left - 4, y, self.left, y, "#444444", 0.8)
            lines = str(text).count("\n")
            c.text(self.left - 7, y - 7 * lines, text, anchor="end", class_="tick")
        if self.x.label:
            c.text(
                self.left + self.width / 2,
                c.height - 8,
                self.x.label,
                anchor="middle",
                baseline="bottom",
                class_="xlabel",
            )
        if self.y.label:
            middle = self.top + self.height / 2
            c.text(14, middle, self.y.label, anchor="middle", baseline="middle", rotate=-90, class_="ylabel")

    def svg(self) -> str:
        return self.canvas.render()
