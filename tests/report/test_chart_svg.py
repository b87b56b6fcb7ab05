"""The report charts as SVG written from Python: well-formed, inert, escaped, and drawn where the data says.

Every check parses the SVG with xml.etree and reads positions back through the chart's own tick labels, so a
scale that maps a value to the wrong place, or a label that breaks out of its element, fails here.
"""

from __future__ import annotations

import math
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest
from _runs import fixture_outputs, gold_outputs, make_run
from hypothesis import given
from hypothesis import strategies as st

from pytest_extractbench.report import charts, html, svg
from pytest_extractbench.report import distribution_charts as spread
from pytest_extractbench.report.rows import read_run

NS = "{http://www.w3.org/2000/svg}"
HOSTILE = '<script>alert("x")</script>\'&amp;\x1b[31m\x00\u202e\udcff\ufffe</svg>'
CONTROLS = "m\x1b[31m\x00\u202e\udcff\ufffe"
ALLOWED_TAGS = {"svg", "title", "g", "rect", "line", "circle", "polyline", "polygon", "path", "text", "tspan"}


def parse(chart: svg.Chart) -> ET.Element:
    return ET.fromstring(chart.svg)


def marks(chart: svg.Chart, cls: str) -> list[ET.Element]:
    return [e for e in parse(chart).iter() if e.get("class") == cls]


def texts(chart: svg.Chart) -> list[str]:
    return ["".join(e.itertext()) for e in parse(chart).iter(f"{NS}text")]


def tick(chart: svg.Chart, text: str, axis: str) -> float:
    """The position the chart's own axis gives to the tick labelled ``text`` (x: a bottom tick, y: a left tick)."""
    anchor = "middle" if axis == "x" else "end"
    (found,) = [e for e in marks(chart, "tick") if e.text == text and e.get("text-anchor") == anchor]
    return float(found.get(axis))


def bar_width(e: ET.Element) -> float:
    return float(e.get("width"))


def bar_height(e: ET.Element) -> float:
    return float(e.get("height"))


def every_chart(name: str) -> list[svg.Chart]:
    """Each chart function called directly with ``name`` as a model and a field name."""
    m = {
        "schema_validity_rate": 0.9,
        "field_f1_partial": 0.7,
        "type_accuracy": 1.0,
        "hallucination_rate": 0.1,
        "extraction_quality_score": 0.8,
        "match_category_distribution": {"exact": 0.6, "missed": 0.4},
        "error_patterns": {"extraction": {name: 3, "missing_value": 1}},
    }
    points = {name: [(0.1 * i, 0.05 * i) for i in range(10)], "b": [(0.5, 0.5)]}
    return [
        charts.eqs_gauge(name, 0.8, 0.7, 0.9, "0"),
        charts.radar({name: m, "b": m}),
        charts.categories({name: m}),
        charts.grouped_bars({name: m, "b": m}, [("field_f1_partial", name)], "grouped", name, ""),
        charts.scatter(points, "pr", name, name, name, ""),
        spread.latency_histogram({name: [0.1, 0.2, 0.3, 0.3, 0.5], "b": [0.2, 0.4]}),
        spread.throughput({name: [1.0, 2.0, 2.5, 3.0], "b": [1.5, 4.0]}),
        charts.error_patterns({name: m, "b": m}),
        charts.heatmap(
            np.array([[0.5, np.nan], [0.1, 0.9]]),
            [name, "r"],
            [name, "c"],
            "omissions",
            name,
            "",
            xlabel=name,
            ylabel=name,
        ),
        charts.stacked_counts(
            {name: {"critical": 2, "minor": 1}}, [("critical", "#b71c1c"), ("minor", "#fdd835")], "severity", name, ""
        ),
        spread.box_by_bin(
            {name: {"simple": [0.1, 0.2, 0.3, 0.4, 0.9], "complex": [1.0]}, "b": {"simple": [0.5]}},
            ("simple", "complex"),
        ),
        charts.eqs_ranking(
            [
                {
                    "rank": 1,
                    "model": name,
                    "extraction_quality_score": 0.9,
                    "ci_low": 0.8,
                    "ci_high": 0.95,
                    "significantly_better_than_next": True,
                },
                {
                    "rank": 2,
                    "model": "b",
                    "extraction_quality_score": 0.6,
                    "ci_low": None,
                    "ci_high": None,
                    "significantly_better_than_next": None,
                },
            ]
        ),
        charts.pareto(
            {
                name: {"latency_p95_ms": 100.0, "extraction_quality_score": 0.9},
                "b": {"latency_p95_ms": 50.0, "extraction_quality_score": 0.7},
                "c": {"latency_p95_ms": 200.0, "extraction_quality_score": 0.5},
            },
            [name, "b"],
            "latency_p95_ms",
        ),
        spread.reliability_diagram(
            {
                name: {
                    "bins": [
                        {"count": 3, "confidence": 0.2, "accuracy": 0.1},
                        {"count": 0, "confidence": 0.5, "accuracy": 0.0},
                        {"count": 4, "confidence": 0.9, "accuracy": 0.8},
                    ]
                }
            }
        ),
    ]


# -- well-formed and inert ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def report_charts(tmp_path_factory: pytest.TempPathFactory) -> list[svg.Chart]:
    """Every chart of a real three-model timed run, a hostile model name among them."""
    run = make_run(
        tmp_path_factory.mktemp("svg"),
        {
            "demo": fixture_outputs("demo.jsonl"),
            "gold": gold_outputs(),
            "weak" + HOSTILE.replace("\udcff", ""): fixture_outputs("weak.jsonl"),
        },
        timed=True,
    )
    context = html.build_context(read_run(run))
    return [c for section in context["charts"].values() for c in section]


def test_every_report_chart_is_well_formed_inert_svg(report_charts: list[svg.Chart]) -> None:
    assert len(report_charts) >= 19
    keys = [c.key for c in report_charts]
    assert len(set(keys)) == len(keys)
    for chart in report_charts:
        root = parse(chart)
        assert root.tag == f"{NS}svg" and root.get("role") == "img", chart.key
        assert root.find(f"{NS}title").text == chart.title
        for element in root.iter():
            assert element.tag.removeprefix(NS) in ALLOWED_TAGS, (chart.key, element.tag)
            for name in element.attrib:
                assert not name.startswith("on") and "href" not in name and name != "style", (chart.key, name)
        # the one id, prefixed per chart: charts sharing a page never share an id
        assert [e.get("id") for e in root.iter() if e.get("id")] == [f"eb-{chart.key}-title"]


@pytest.mark.parametrize("name", [HOSTILE, CONTROLS])
def test_hostile_names_are_escaped_in_every_chart(name: str) -> None:
    for chart in every_chart(name):
        chart.svg.encode("utf-8")  # no lone surrogate: the page is written as UTF-8
        assert "<script" not in chart.svg and "</svg>" not in chart.svg[:-6], chart.key
        assert "\x1b" not in chart.svg and "\x00" not in chart.svg and "\ufffe" not in chart.svg, chart.key
        assert "\u202e" not in chart.svg, chart.key  # a bidi override would reorder what the reader sees
        shown = texts(chart) + [parse(chart).find(f"{NS}title").text]
        # the name is shown (clipped to a label's width), as text: markup characters come back as themselves
        if name == HOSTILE:
            assert any('<script>alert("x")' in t for t in shown), chart.key
        else:  # a short name is shown whole, its controls as visible escapes (a label's width counts them)
            whole = "m\\x1b[31m\\x00\\u202e\\udcff\\ufffe"
            clipped = whole[: svg.MAX_LABEL - 1] + "…"
            assert any(whole in t or clipped in t for t in shown) or chart.key.startswith("pareto"), chart.key
            assert any(whole[:12] in t for t in shown), chart.key  # the pareto point's label is 20 characters


@given(st.text())
def test_any_text_escapes_to_one_inert_xml_line(text: str) -> None:
    escaped = svg.escape(text)
    parsed = ET.fromstring(f"<t>{escaped}</t>").text or ""
    assert "\n" not in parsed and "<" not in escaped and '"' not in escaped
    assert all(ch == "\t" or ord(ch) >= 0x20 for ch in parsed)
    ET.fromstring(f'<t a="{escaped}"/>')  # as an attribute value too


# -- the data where it belongs ------------------------------------------------------------------


def test_grouped_bars_are_as_tall_as_their_values() -> None:
    models = {"a": {"x": 0.2, "y": 0.9}, "b": {"x": 0.5, "y": 0.4}}
    chart = charts.grouped_bars(models, [("x", "X"), ("y", "Y")], "grouped", "t", "")
    bars = marks(chart, "bar")  # model a's bars, then model b's, in metric order
    values = [0.2, 0.9, 0.5, 0.4]
    assert max(bars, key=bar_height) is bars[values.index(max(values))]
    unit = tick(chart, "0", "y") - tick(chart, "1", "y")  # pixels from 0 to 1 on the axis
    for bar, value in zip(bars, values):
        assert bar_height(bar) == pytest.approx(value * unit, abs=0.2)
        assert float(bar.get("y")) + bar_height(bar) == pytest.approx(tick(chart, "0", "y"), abs=0.2)
    # the groups sit at their metric's tick, model a left of model b
    assert float(bars[0].get("x")) < tick(chart, "X", "x") < float(bars[2].get("x")) + bar_width(bars[2])
    assert float(bars[1].get("x")) < tick(chart, "Y", "x") < float(bars[3].get("x")) + bar_width(bars[3])


def test_grouped_bars_draw_each_models_interval_over_its_own_bar() -> None:
    models = {"a": {"x": 0.2, "y": 0.9}, "b": {"x": 0.5, "y": 0.4}}
    errors = {"b": {"x": (0.3, 0.7)}, "a": {"y": (0.8, 0.95)}}
    chart = charts.grouped_bars(models, [("x", "X"), ("y", "Y")], "grouped", "t", "", errors=errors)
    bars = marks(chart, "bar")  # a.x, a.y, b.x, b.y
    whiskers = sorted(marks(chart, "whisker"), key=lambda e: float(e.get("x1")))
    assert len(whiskers) == 2
    zero, unit = tick(chart, "0", "y"), tick(chart, "0", "y") - tick(chart, "1", "y")
    # model b's interval on metric x sits on b's x bar, model a's on metric y on a's y bar (x order: b.x < a.y)
    for whisker, bar, (low, high) in zip(whiskers, (bars[2], bars[1]), ((0.3, 0.7), (0.8, 0.95))):
        assert float(whisker.get("x1")) == pytest.approx(float(bar.get("x")) + bar_width(bar) / 2, abs=0.2)
        ys = sorted((float(whisker.get("y1")), float(whisker.get("y2"))))
        assert ys == pytest.approx([zero - high * unit, zero - low * unit], abs=0.2)


@given(st.lists(st.floats(0.0, 1.0), min_size=1, max_size=6))
def test_bar_heights_keep_the_order_of_the_values(values: list[float]) -> None:
    models = {f"m{i}": {"v": v} for i, v in enumerate(values)}
    bars = marks(charts.grouped_bars(models, [("v", "V")], "g", "t", ""), "bar")
    heights = [bar_height(b) for b in bars]
    for (va, ha), (vb, hb) in zip(zip(values, heights), zip(values[1:], heights[1:])):
        if vb - va > 0.01:
            assert hb > ha
        elif va - vb > 0.01:
            assert ha > hb


def test_scatter_points_land_on_their_coordinates() -> None:
    chart = charts.scatter({"m": [(0.0, 1.0), (0.5, 0.25), (1.0, 0.0)]}, "pr", "t", "recall", "precision", "")
    x0, x1, y0, y1 = tick(chart, "0", "x"), tick(chart, "1", "x"), tick(chart, "0", "y"), tick(chart, "1", "y")
    got = [(float(p.get("cx")), float(p.get("cy"))) for p in marks(chart, "point")]
    want = [(x0 + x * (x1 - x0), y0 + y * (y1 - y0)) for x, y in [(0.0, 1.0), (0.5, 0.25), (1.0, 0.0)]]
    assert got == [pytest.approx(w, abs=0.15) for w in want]


def test_scatter_with_fitted_axes_keeps_every_point_inside_the_plot() -> None:
    data = [(120.0, 0.3), (480.0, 0.9), (300.0, 0.1)]
    chart = charts.scatter({"m": data}, "latency-eqs", "t", "latency (s)", "EQS", "", xlim=None, ylim=None)
    (xaxis,) = [e for e in marks(chart, "xlabel")]
    points = marks(chart, "point")
    rightmost = max(points, key=lambda p: float(p.get("cx")))
    assert points.index(rightmost) == 1  # the largest x
    assert max(points, key=lambda p: -float(p.get("cy"))) is rightmost  # and the largest y: highest on screen
    assert all(0 < float(p.get("cy")) < float(xaxis.get("y")) for p in points)


def test_the_tallest_histogram_bar_is_the_most_frequent_latency() -> None:
    latencies = [0.1] * 2 + [0.5] * 9 + [0.9] * 4
    chart = spread.latency_histogram({"m": latencies})
    bars = marks(chart, "bar")
    tallest = max(bars, key=bar_height)
    middle = float(tallest.get("x")) + bar_width(tallest) / 2
    x0, x5 = tick(chart, "0.2", "x"), tick(chart, "0.4", "x")
    assert (middle - x0) / (x5 - x0) * 0.2 + 0.2 == pytest.approx(0.5, abs=0.05)
    # heights count samples: 9 against 4 against 2
    assert sorted(round(bar_height(b) / bar_height(tallest) * 9) for b in bars) == [2, 4, 9]
    # the p50 marker stands at 0.5
    p50 = marks(chart, "marker")[0]
    assert float(p50.get("x1")) == pytest.approx(x0 + (0.5 - 0.2) / 0.2 * (x5 - x0), abs=0.2)


def test_stacked_shares_fill_the_axis_in_category_order() -> None:
    dist = {"exact": 0.5, "partial": 0.1, "incorrect": 0.0, "missed": 0.3, "spurious": 0.1}
    chart = charts.categories({"m": {"match_category_distribution": dist}})
    bars = marks(chart, "bar")
    fills = [b.get("fill") for b in bars]
    assert fills == [svg.CATEGORY_COLORS[k] for k, v in dist.items() if v]
    x0, x1 = tick(chart, "0", "x"), tick(chart, "1", "x")
    assert [bar_width(b) for b in bars] == [pytest.approx(v * (x1 - x0), abs=0.2) for v in dist.values() if v]
    assert float(bars[0].get("x")) == pytest.approx(x0, abs=0.1)
    assert "50%" in texts(chart) and "30%" in texts(chart)


def test_ranking_bars_follow_the_ranking_from_the_top() -> None:
    unknown = {"ci_low": None, "ci_high": None, "significantly_better_than_next": None}
    ranking = [
        {"rank": 1, "model": "a", "extraction_quality_score": 0.9, **unknown},
        {"rank": 2, "model": "b", "extraction_quality_score": 0.6, **unknown},
        {"rank": 3, "model": "c", "extraction_quality_score": 0.3, **unknown},
    ]
    chart = charts.eqs_ranking(ranking)
    bars = marks(chart, "bar")
    assert [float(b.get("y")) for b in bars] == sorted(float(b.get("y")) for b in bars)  # first rank on top
    assert [bar_width(b) for b in bars] == sorted((bar_width(b) for b in bars), reverse=True)
    assert bar_width(bars[0]) / bar_width(bars[2]) == pytest.approx(3.0, rel=0.01)


def test_heatmap_cells_darken_with_their_value_and_blank_the_missing() -> None:
    matrix = np.array([[0.1, 0.9], [np.nan, 0.5]])
    chart = charts.heatmap(matrix, ["r1", "r2"], ["c1", "c2"], "omissions", "t", "", xlabel="model", ylabel="field")
    cells = marks(chart, "cell")
    assert len(cells) == 3

    def luminance(fill: str) -> float:
        return sum(w * int(fill[k : k + 2], 16) for w, k in ((0.2126, 1), (0.7152, 3), (0.0722, 5)))

    by_value = dict(zip([0.1, 0.9, 0.5], cells))
    shades = [luminance(by_value[v].get("fill")) for v in (0.1, 0.5, 0.9)]
    assert shades == sorted(shades, reverse=True) and len(set(shades)) == 3
    assert {"10%", "90%", "50%"} <= set(texts(chart))


def test_the_gauge_needle_points_at_the_score() -> None:
    for eqs in (0.0, 0.3, 0.82, 1.0):
        (needle,) = marks(charts.eqs_gauge("m", eqs, None, None, "0"), "needle")
        dx = float(needle.get("x2")) - float(needle.get("x1"))
        dy = float(needle.get("y1")) - float(needle.get("y2"))
        assert math.atan2(dy, dx) == pytest.approx(math.pi * (1 - eqs), abs=0.01)


def test_radar_corners_sit_at_their_values() -> None:
    m = {"schema_validity_rate": 1.0, "field_f1_partial": 0.5, "type_accuracy": 0.25, "hallucination_rate": 0.0}
    chart = charts.radar({"m": m})
    (area,) = marks(chart, "area")
    corners = [tuple(map(float, p.split(","))) for p in area.get("points").split()]
    rings = {float(c.get("r")) for c in parse(chart).iter(f"{NS}circle")}
    outer = max(rings)
    cx, cy = corners[0][0] - outer, corners[0][1]  # validity 1.0 lies on the outer ring, to the right
    distances = [math.hypot(x - cx, y - cy) / outer for x, y in corners]
    assert distances == [pytest.approx(v, abs=0.01) for v in (1.0, 0.5, 0.25, 1.0)]


def test_the_error_pattern_bars_grow_with_their_counts() -> None:
    models = {"m": {"error_patterns": {"extraction": {"missing_value": 12, "wrong_value": 3}}}}
    chart = charts.error_patterns(models)
    bars = marks(chart, "bar")
    assert bar_width(bars[0]) / bar_width(bars[1]) == pytest.approx(4.0, rel=0.02)
    x0, x10 = tick(chart, "0", "x"), tick(chart, "10", "x")
    assert bar_width(bars[0]) == pytest.approx(12 / 10 * (x10 - x0), abs=0.2)


@pytest.mark.slow
def test_the_report_needs_no_plotting_library(tmp_path: Path) -> None:
    """With matplotlib unimportable, every chart of a full run is still drawn."""
    run = make_run(tmp_path, {"demo": fixture_outputs("demo.jsonl"), "weak": fixture_outputs("weak.jsonl")}, timed=True)
    code = (
        "import sys\n"
        "for name in ('matplotlib', 'PIL', 'fontTools', 'kiwisolver', 'contourpy'):\n"
        "    sys.modules[name] = None\n"
        "from pathlib import Path\n"
        "from pytest_extractbench.report import html\n"
        "from pytest_extractbench.report.rows import read_run\n"
        f"context = html.build_context(read_run(Path({str(run)!r})))\n"
        "print(sum(len(v) for v in context['charts'].values()))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    drawn = html.build_context(read_run(run))["charts"]
    assert int(done.stdout.strip()) == sum(len(v) for v in drawn.values()) >= 16
    assert "failed" not in done.stderr
