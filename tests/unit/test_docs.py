"""The README and the docs pages: links land on real pages and headings, every page is in the site's navigation,
no page cites or names a document users do not have, and the clone keeps the pytest habits the docs promise."""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path

import yaml
from _docpages import DOCS, README, ROOT, SITE_CONFIG, name, pages

SPEC_CITATION = re.compile(r"\b(spec(?:'s)?\s+\d+(?:\.\d+)*|seed\s+00\d)", re.IGNORECASE)
# names from documents a user of this project never sees: a client's rule names, the design notes' sections
FOREIGN_NAME = re.compile(
    r"bizsupply|match_rules|\bspec\s*\d|\bseeds?\s*/?\s*00\d|\bseeds/|\bthe (?:extraction |design )?spec\b|\bspec's",
    re.IGNORECASE,
)
LINK = re.compile(r"\]\(([^)\s]+)\)")


def slug(heading: str) -> str:
    """The anchor of a heading, as GitHub and MkDocs' toc both make it for the headings these pages use."""
    text = re.sub(r"`|\*|\\", "", heading.strip().lower())
    text = unicodedata.normalize("NFKD", text)
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(markdown: str) -> set[str]:
    markdown = re.sub(r"^```.*?^```", "", markdown, flags=re.DOTALL | re.MULTILINE)  # a '# comment' is no heading
    return {slug(heading) for heading in re.findall(r"^#+\s+(.+)$", markdown, re.MULTILINE)}


def test_links_land_on_pages_and_headings() -> None:
    broken = []
    for source in pages():
        for target in LINK.findall(source.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:", target):  # https:, mailto:
                continue
            path, _, anchor = target.partition("#")
            page = (source.parent / path).resolve() if path else source
            if not page.exists():
                broken.append(f"{name(source)}: {target} (no such file)")
            elif anchor and anchor not in anchors(page.read_text(encoding="utf-8")):
                broken.append(f"{name(source)}: {target} (no such heading)")
    assert not broken, "links to missing pages or headings:\n" + "\n".join(broken)


def test_the_link_checker_sees_a_missing_heading() -> None:
    assert slug("Subsets and groups (`group_by`)") == "subsets-and-groups-group_by"
    assert "exit-codes" in anchors("# Exit codes\n```bash\n# not a heading\n```\n")
    assert "not-a-heading" not in anchors("```bash\n# not a heading\n```\n")


def test_every_docs_page_is_in_the_site_navigation() -> None:
    config = yaml.load(SITE_CONFIG.read_text(encoding="utf-8"), Loader=yaml.SafeLoader)

    def listed(nav: object) -> set[str]:
        if isinstance(nav, str):
            return {nav}
        if isinstance(nav, list):
            return set().union(*map(listed, nav))
        if isinstance(nav, dict):
            return set().union(*map(listed, nav.values()))
        return set()

    in_nav = listed(config["nav"])
    on_disk = {str(path.relative_to(DOCS)) for path in DOCS.rglob("*.md")}
    assert in_nav == on_disk, f"not in the nav: {sorted(on_disk - in_nav)}; no such page: {sorted(in_nav - on_disk)}"


def test_no_citation_of_the_spec_or_the_seeds() -> None:
    for path in pages():
        cited = SPEC_CITATION.findall(path.read_text(encoding="utf-8"))
        assert not cited, f"{name(path)} cites {cited}: link to docs/metrics.md or 'How scoring works' instead"


def test_no_name_from_a_document_users_do_not_have() -> None:
    """Docs, messages, comments and fixtures explain a rule where it applies instead of naming where it came from."""
    this = Path(__file__).resolve()
    roots = [README, DOCS, ROOT / "fixtures", ROOT / "pytest_extractbench", ROOT / "tests", ROOT / "benchmarks"]
    roots += [ROOT / "ci", ROOT / "conftest.py", ROOT / "pyproject.toml"]
    suffixes = {".md", ".py", ".yaml", ".yml", ".json", ".jsonl", ".j2", ".js", ".sh", ".toml", ".txt", ".cmake"}
    found = []
    for root in roots:
        for path in [root] if root.is_file() else sorted(root.rglob("*")):
            if path.suffix not in suffixes or path.resolve() == this or not path.is_file():
                continue
            for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
                # the layering test holds the package's own pattern for the same rule
                if FOREIGN_NAME.search(line) and "re.compile(" not in line:
                    found.append(f"{name(path)}:{number}: {line.strip()[:120]}")
    assert not found, "\n".join(found)


def test_every_headline_metric_of_a_run_is_documented() -> None:
    golden = json.loads((ROOT / "tests" / "golden" / "expected" / "demo" / "metrics.json").read_text())
    doc = (DOCS / "metrics.md").read_text(encoding="utf-8")
    model = next(iter(golden["models"].values()))
    undocumented = [key for key in model if f"`{key}`" not in doc and f"`{key.rsplit('_', 1)[0]}_<mode>`" not in doc]
    assert not undocumented, f"metrics.json keys missing from docs/metrics.md: {undocumented}"


def test_the_clone_keeps_pytests_cache_on() -> None:
    """The docs promise --lf, --ff and --sw; they need the cache provider, in this repository's own runs too."""
    configs = [ROOT / "pyproject.toml", ROOT / "conftest.py", ROOT / "tests" / "conftest.py", ROOT / ".ci" / "run"]
    assert not [name(path) for path in configs if "no:cacheprovider" in path.read_text(encoding="utf-8")]
    assert "--lf" in (DOCS / "guides" / "recorded-outputs.md").read_text(encoding="utf-8")
