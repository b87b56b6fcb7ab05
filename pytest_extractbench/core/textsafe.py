"""The one sanitizer for untrusted text on its way to a terminal, a log, Markdown, HTML or a CSV cell.

Sample ids, model names, model-output keys, gold keys, server messages and echoed dataset
lines come from files, models and servers we do not control. Before any of it reaches a
sink it is clipped (a 50 MB line must not be echoed whole) and every character a terminal
or a viewer would act on is made visible instead: C0/C1 controls (ESC starts an escape
sequence, CR rewrites a line), DEL, bidirectional overrides and other format characters,
line/paragraph separators, lone surrogates and noncharacters (U+FDD0-U+FDEF, U+xFFFE, U+xFFFF) become ``\\x1b``-style escapes, and credentials (the keys
of the environment, ``Bearer ...``, ``sk-...``) are masked (:func:`..redact.mask`). Markdown additionally gets
HTML and inline syntax escaped and ``@mentions`` defused.
"""

from __future__ import annotations

import json
import logging
import re
import unicodedata
from typing import Any

from .redact import mask

LIMIT = 300
"""Default length of one untrusted value (sample id, model name, key, message)."""
LINE_LIMIT = 2000
"""Longest line a sink prints; a longer one is clipped and says how long it was."""
ELLIPSIS = "…"
_SECRET_MARGIN = 512
"""Characters read past a cut before masking, so a key that straddles the cut is still recognised whole."""

# Categories a terminal or a text viewer acts on: controls, format characters (bidi overrides,
# zero-width joiners), line/paragraph separators, surrogates, private use.
_UNSAFE_CATEGORIES = frozenset(("Cc", "Cf", "Zl", "Zp", "Cs", "Co"))
_MARKDOWN = re.compile(r"([\\`*_{}\[\]|~])")  # inline syntax only: escaped text never starts a line
_MENTION = re.compile(r"@(?=[\w-])")
# U+200B keeps GitHub and GitLab from linking "@name" (a notification to a stranger) or "@team".
_MENTION_BREAK = "@&#8203;"


_PRINTABLE = re.compile(r"[ -~]*")
_PRINTABLE_LINES = re.compile(r"[ -~\n\t]*")


def _escape(char: str) -> str:
    code = ord(char)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def _is_noncharacter(code: int) -> bool:
    """Unicode's 66 noncharacters (unassigned "Cn" to unicodedata): never text, some tools treat them as markers."""
    return 0xFDD0 <= code <= 0xFDEF or code & 0xFFFE == 0xFFFE


def _is_unsafe(char: str) -> bool:
    if " " <= char <= "~":  # printable ASCII: the common case, decided without a table lookup
        return False
    return unicodedata.category(char) in _UNSAFE_CATEGORIES or _is_noncharacter(ord(char))


def _cut(text: str, limit: int, total: int) -> str:
    """``text`` cut to ``limit`` characters, ending with how long the original was when there is room."""
    note = f"{ELLIPSIS} ({total:,} characters)"
    if limit < 3 * len(note):  # a narrow column: just the ellipsis
        note = ELLIPSIS
    return text[: max(0, limit - len(note))] + note


def clip(text: str, limit: int | None) -> str:
    """``text`` cut to ``limit`` characters, saying how long it was."""
    if limit is None or len(text) <= limit:
        return text
    return _cut(text, limit, len(text))


def terminal(
    text: Any, limit: int | None = LIMIT, *, lines: bool = False, secrets: tuple[str, ...] | None = None
) -> str:
    """Untrusted text as inert terminal/log text: unsafe characters escaped, then clipped to ``limit``.

    ``lines=True`` keeps newlines and tabs (a multi-line message); otherwise the result is one line.
    ``secrets``: the environment's keys when the caller read them once for many texts (:func:`..redact.mask`).
    """
    text = str(text)
    total = len(text)
    if limit is not None and total > limit + _SECRET_MARGIN:
        text = text[: limit + _SECRET_MARGIN]  # escaping only lengthens the text: never scan more than can be shown
    text = mask(text, secrets)
    if limit is not None and len(text) > limit:
        text = text[:limit]
    if (_PRINTABLE_LINES if lines else _PRINTABLE).fullmatch(text):
        out: str = text  # printable ASCII, the common case: one regex scan instead of a check per character
    else:
        keep = "\n\t" if lines else ""
        out = "".join(_escape(c) if c not in keep and _is_unsafe(c) else c for c in text)
    if limit is not None and (len(out) > limit or total > limit):
        out = _cut(out, limit, total)
    return out


def text_lines(text: Any, line_limit: int = LINE_LIMIT) -> str:
    """A multi-line message (a failure explanation, a summary): each line made safe and clipped."""
    return "\n".join(terminal(line, line_limit) for line in str(text).split("\n"))


def markdown(text: Any, limit: int | None = LIMIT) -> str:
    """Untrusted text as inert Markdown: one line, HTML escaped, inline syntax and @mentions defused."""
    text = " ".join(terminal(text, limit).split())
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return _MENTION.sub(_MENTION_BREAK, _MARKDOWN.sub(r"\\\1", text))


class SafeLogFilter(logging.Filter):
    """Formats each record once and makes the message and the traceback safe for any handler."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = text_lines(record.getMessage())
        record.args = None
        if record.exc_info and not record.exc_text:
            record.exc_text = text_lines(logging.Formatter().formatException(record.exc_info))
        return True


_FILTER = SafeLogFilter()


def get_logger(name: str) -> logging.Logger:
    """``logging.getLogger(name)`` whose records are made safe before any handler sees them."""
    logger = logging.getLogger(name)
    if _FILTER not in logger.filters:
        logger.addFilter(_FILTER)
    return logger


def json_line(value: Any, width: int) -> str:
    """A one-line JSON rendering of ``value``, cut to ``width`` characters."""
    text = "-" if value is None else json.dumps(value, ensure_ascii=False, default=str)
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"
