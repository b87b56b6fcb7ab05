"""CSV injection: no cell of metrics.csv or samples.csv can start a spreadsheet formula.

A spreadsheet skips what a plain ``startswith`` does not: leading spaces, tabs and line breaks, zero-width
and other invisible characters, and it reads full-width and other compatibility forms (``＝ ＋ － ＠``) as
ASCII. The oracle below models that independently of the neutraliser; hypothesis checks that every
written cell is inert by it, and that benign text is written unchanged.
"""

from __future__ import annotations

import csv
import io
import json
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pytest_extractbench.core import textsafe
from pytest_extractbench.core.spreadsheet import neutral_cell
from pytest_extractbench.report.exports import _csv

# What a spreadsheet skips before deciding, and what makes a formula, spelled out one by one.
INVISIBLE = ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u200e", "\u200f", "\u202a", "\u202e", "\u00ad"]
BLANKS = [" ", "\t", "\r", "\n", "\x0b", "\x0c", "\u00a0", "\u2003", "\u3000", "\u2028", "\u2029", "\x00", "\x1b"]
TRIGGERS = ["=", "+", "-", "@", "|", "＝", "＋", "－", "＠", "﹦", "﹢", "﹣", "⁼", "⁺", "₌", "｜"]


def spreadsheet_reads_a_formula(cell: str) -> bool:
    """The oracle: skip blanks and anything invisible (controls, format characters, separators, unassigned),
    fold compatibility forms, and look at the first character left."""
    i = 0
    while i < len(cell) and (
        cell[i] in BLANKS or cell[i] in INVISIBLE or cell[i].isspace() or unicodedata.category(cell[i])[0] in "CZ"
    ):
        i += 1
    return unicodedata.normalize("NFKC", cell[i : i + 1])[:1] in {"=", "+", "-", "@", "|"}


def written(cells: list[str]) -> list[str]:
    """The cells as a spreadsheet's CSV reader gets them back from the file the plugin writes."""
    rows = list(csv.reader(io.StringIO(_csv(["c"] * len(cells), [cells]), newline="")))
    return rows[1]


prefix = st.lists(st.sampled_from(BLANKS + INVISIBLE), max_size=4).map("".join)
formula = st.builds(lambda p, t, rest: p + t + rest, prefix, st.sampled_from(TRIGGERS), st.text(max_size=20))
any_text = st.one_of(formula, st.text(max_size=30), st.builds(lambda p, t: p + t, prefix, st.text(max_size=10)))


@given(st.lists(any_text, min_size=1, max_size=6))
def test_no_cell_written_reads_as_a_formula(cells: list[str]) -> None:
    for original, back in zip(cells, written(cells)):
        assert not spreadsheet_reads_a_formula(back) or back.startswith("'"), (original, back)
        # nothing is lost: the cell is the original as every sink shows text (controls escaped, credentials
        # masked), or that behind one apostrophe
        shown = textsafe.terminal(original, None, lines=True)
        assert back in (shown, "'" + shown)


@given(formula)
def test_every_formula_form_is_neutralised(text: str) -> None:
    assert spreadsheet_reads_a_formula(text)
    assert neutral_cell(text) == "'" + text


@given(st.text(max_size=40))
def test_benign_text_round_trips_unchanged(text: str) -> None:
    if not spreadsheet_reads_a_formula(text) and not text.startswith(("\t", "\r")):
        assert neutral_cell(text) == text
        assert written([text]) == [textsafe.terminal(text, None, lines=True)]


@pytest.mark.parametrize(
    "text",
    [
        " =1+1",
        "\t=cmd|' /C calc'!A0",
        '\n=HYPERLINK("http://x")',
        "\r+1",
        "\u200b=1",
        "\ufeff@SUM(A1)",
        "＝1+1",
        "＋1",
        "－1",
        "＠SUM(A1)",
        "\u3000=1",
        "\u00a0-1",
        "\u202e=1",
        "|calc",
    ],
)
def test_the_forms_plain_startswith_missed_are_neutralised(text: str) -> None:
    (back,) = written([text])
    shown = textsafe.terminal(text, None, lines=True)  # controls and invisible characters are escaped first
    assert not spreadsheet_reads_a_formula(back)
    # behind an apostrophe, or already inert once escaped (a leading "\u200b" is text a spreadsheet shows)
    assert back == "'" + shown or (back == shown and not spreadsheet_reads_a_formula(shown))


@pytest.mark.parametrize("value", ["Ada", "a=b", "e-mail", "12", "", "'quoted", "naïve", "日本"])
def test_ordinary_text_is_left_alone(value: str) -> None:
    assert neutral_cell(value) == value


@pytest.mark.parametrize("value", ["\tplain", "\rplain", "\t", "\r\n"])
def test_a_cell_starting_with_a_tab_or_carriage_return_is_neutralised_as_owasp_lists(value: str) -> None:
    assert neutral_cell(value) == "'" + value


def test_numbers_and_missing_values_are_not_text() -> None:
    assert neutral_cell(-2.5) == -2.5 and neutral_cell(-3) == -3 and neutral_cell(None) == ""


def test_a_run_with_hostile_ids_writes_inert_csv_files(pytester: pytest.Pytester) -> None:
    ids = ["\u200b=1+1", '＝HYPERLINK("http://x")', " @SUM(A1)", "\t-2+3"]
    schema = {"type": "object", "properties": {"name": {"type": "string"}}}
    rows = [{"id": i, "text": "t", "schema": schema, "expected": {"name": "a"}} for i in ids]
    preds = [{"id": i, "output": {"name": "＝cmd|' /C calc'!A0"}} for i in ids]
    (pytester.path / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (pytester.path / "preds.jsonl").write_text("".join(json.dumps(r) + "\n" for r in preds), encoding="utf-8")
    result = pytester.runpytest(
        "-p",
        "no:randomly",
        "--extractbench",
        "--extractbench-sla",
        "none",
        "--extractbench-dataset",
        "data.jsonl",
        "--extractbench-predictions",
        "preds.jsonl",
        "--extractbench-output",
        "out",
    )
    out = pytester.path / "out"
    assert (out / "samples.csv").is_file(), result.stdout.str()
    found: set[str] = set()
    for name in ("samples.csv", "metrics.csv"):
        with (out / name).open(encoding="utf-8", newline="") as handle:
            for row in csv.DictReader(handle):
                for value in row.values():
                    assert not spreadsheet_reads_a_formula(value) or value.startswith("'"), (name, value)
                found.add(row.get("sample_id") or "")
    for i in ids:
        shown = textsafe.terminal(i, None, lines=True)
        assert ("'" + shown in found) or (shown in found and not spreadsheet_reads_a_formula(shown)), i
