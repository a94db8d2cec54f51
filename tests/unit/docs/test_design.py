"""Code, docs and tests cite the design by a section of docs/design.md that exists, and never a design file
outside the repository."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).parents[3]
CITATION = re.compile(r"docs/design\.md §(.{0,60})")


def _sources() -> list[Path]:
    found = [ROOT / "README.md", ROOT / "mkdocs.yml"]
    for folder, pattern in [
        ("evolve", "*.py"),
        ("evolve", "*.toml"),
        ("tests", "*.py"),
        ("docs", "*.md"),
        ("scripts", "*"),
        ("notebooks", "*.ipynb"),
    ]:
        found += [p for p in (ROOT / folder).rglob(pattern) if p.is_file() and "data" not in p.parts]
    return found


def test_every_citation_names_a_section_of_the_design_page():
    headings = set(re.findall(r"^#+ (.+)$", (ROOT / "docs" / "design.md").read_text(), re.MULTILINE))
    cited = [
        (path.relative_to(ROOT), after)
        for path in _sources()
        for after in CITATION.findall(path.read_text(errors="replace"))
    ]
    assert len(cited) >= 20

    def names_a_heading(after: str) -> bool:
        return any(
            after.startswith(heading) and not after[len(heading) : len(heading) + 1].isalnum()
            for heading in headings
        )

    assert [(str(path), after) for path, after in cited if not names_a_heading(after)] == []


def test_nothing_cites_a_design_file_outside_the_repository():
    outside = "DESIGN" + ".md"  # spelled apart, so this file is not a hit of its own search
    assert [str(p.relative_to(ROOT)) for p in _sources() if outside in p.read_text(errors="replace")] == []
