"""The README and the documentation pages under docs/, as the tests that keep them honest read them."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = ROOT / "docs"
SITE_CONFIG = DOCS / "mkdocs" / "mkdocs.yml"


def pages() -> list[Path]:
    """The README and every Markdown page of the docs (the generated references too)."""
    return [README, *sorted(DOCS.rglob("*.md"))]


def read(page: str) -> str:
    """A docs page by its path under docs/ (``guides/python.md``)."""
    return (DOCS / page).read_text(encoding="utf-8")


def blocks(text: str, *languages: str) -> list[str]:
    """The fenced code blocks of a page in one of ``languages``, in order."""
    names = "|".join(re.escape(language) for language in languages)
    return re.findall(rf"^```(?:{names})\n(.*?)^```", text, re.DOTALL | re.MULTILINE)


def name(path: Path) -> str:
    return str(path.relative_to(ROOT))
