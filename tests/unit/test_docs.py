"""The README and docs/metrics.md: links land on real headings, no citations of documents users do not have."""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
METRICS_DOC = ROOT / "docs" / "metrics.md"
SPEC_CITATION = re.compile(r"\b(spec(?:'s)?\s+\d+(?:\.\d+)*|seed\s+00\d)", re.IGNORECASE)


def anchors(markdown: str) -> set[str]:
    """GitHub's anchors for a document's headings."""
    found = set()
    for heading in re.findall(r"^#+\s+(.+)$", markdown, re.MULTILINE):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        found.add(slug)
    return found


def test_links_into_the_docs_land_on_headings():
    targets = {
        "README.md": anchors(README.read_text(encoding="utf-8")),
        "docs/metrics.md": anchors(METRICS_DOC.read_text(encoding="utf-8")),
    }
    broken = []
    for source in (README, METRICS_DOC):
        text = source.read_text(encoding="utf-8")
        for target, anchor in re.findall(r"\]\(((?:\.\./)?(?:README\.md|docs/metrics\.md))?#([\w-]+)\)", text):
            name = target.removeprefix("../") or ("README.md" if source == README else "docs/metrics.md")
            if anchor not in targets[name]:
                broken.append(f"{source.name}: {name}#{anchor}")
    assert not broken, f"links to missing headings: {broken}"


def test_no_citation_of_the_spec_or_the_seeds():
    for path in (README, METRICS_DOC):
        cited = SPEC_CITATION.findall(path.read_text(encoding="utf-8"))
        assert not cited, f"{path.name} cites {cited}: link to docs/metrics.md or 'How scoring works' instead"


def test_every_headline_metric_of_a_run_is_documented():
    golden = json.loads((ROOT / "tests" / "golden" / "expected" / "demo" / "metrics.json").read_text())
    doc = METRICS_DOC.read_text(encoding="utf-8")
    model = next(iter(golden["models"].values()))
    undocumented = [key for key in model if f"`{key}`" not in doc and f"`{key.rsplit('_', 1)[0]}_<mode>`" not in doc]
    assert not undocumented, f"metrics.json keys missing from docs/metrics.md: {undocumented}"
