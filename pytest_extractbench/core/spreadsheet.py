"""The one neutraliser of spreadsheet formulas, for every CSV cell the plugin writes.

A spreadsheet opening a CSV file evaluates a cell as a formula when its first significant character is
``=``, ``+``, ``-`` or ``@`` (``|`` starts a DDE call in some), and spreadsheets skip more before that
character than a plain ``startswith`` sees: spaces, tabs, line breaks, zero-width and other invisible
format characters, and they read the full-width forms (``＝ ＋ － ＠``) and other compatibility forms as
the ASCII ones. As OWASP's CSV-injection guidance advises, such a cell, and any cell that starts with a tab or
a carriage return (which OWASP lists among the dangerous first characters), is written with a leading
apostrophe, which every spreadsheet shows as text; any other text is written unchanged.

No pytest import; cheap to import.
"""

from __future__ import annotations

import unicodedata
from typing import Any

__all__ = ["FORMULA_STARTS", "LEADING_CONTROLS", "is_formula", "neutral_cell"]

FORMULA_STARTS = frozenset("=+-@|")
LEADING_CONTROLS = ("\t", "\r")  # OWASP: a cell starting with one is neutralised whatever follows
# Skipped before the first significant character: controls (tab, CR, LF), invisible format characters
# (zero-width space and joiners, BOM, bidi marks), separators of every kind, and what has no glyph
# (private use, unassigned, lone surrogates): erring towards an apostrophe costs nothing.
_SKIPPED_CLASSES = ("C", "Z")


def _first_significant(text: str) -> str | None:
    for char in text:
        if char.isspace() or unicodedata.category(char)[0] in _SKIPPED_CLASSES:
            continue
        # compatibility forms read as their ASCII counterpart: "＝" and "﹦" are "="
        return unicodedata.normalize("NFKC", char)[:1]
    return None


def is_formula(text: str) -> bool:
    """True when a spreadsheet could read ``text`` as a formula."""
    if not text:
        return False
    if text[0] in FORMULA_STARTS:  # the common hostile case, without a table lookup
        return True
    if " " < text[0] <= "~":  # printable ASCII other than a space: decided by that character alone
        return False
    return _first_significant(text) in FORMULA_STARTS


def neutral_cell(value: Any) -> Any:
    """A CSV cell no spreadsheet evaluates: a formula-like string gets a leading apostrophe, None is empty,
    everything else is written as it is."""
    if value is None:
        return ""
    if isinstance(value, str) and (value.startswith(LEADING_CONTROLS) or is_formula(value)):
        return "'" + value
    return value
