"""The README stays short and points at pages that exist; its guarantees summary names every guarantee
the full account in docs/guarantees.md holds; the two set-up commands and the test command are there
exactly."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).parents[3]
README = (ROOT / "README.md").read_text()


def test_the_readme_is_at_most_300_lines():
    assert len(README.splitlines()) <= 300


def test_the_two_commands_and_the_test_command_are_there_as_ci_runs_them():
    assert "bash scripts/setup.sh && evolve quickstart" in README and "bash .ci/run" in README
    assert "python3 -m pytest -q" in README and "python3 -m pytest -q" in (ROOT / ".ci" / "run").read_text()


def test_every_page_the_readme_links_exists_and_is_in_the_site():
    nav = (ROOT / "mkdocs.yml").read_text()
    for target in re.findall(r"\]\((docs/[^)#]+)", README):
        assert (ROOT / target).is_file(), target
        if target.endswith(".md"):
            assert Path(target).name in nav, f"{target} is not in mkdocs.yml's nav"


def test_the_guarantees_summary_names_every_guarantee_of_the_full_account():
    full = (ROOT / "docs" / "guarantees.md").read_text()
    summary = README.split("## What an agent cannot do", 1)[1].split("\n## ", 1)[0]
    titles = re.findall(r"^- \*\*(.+?)\*\*", full, re.MULTILINE)
    assert len(titles) >= 7
    for title in titles:
        assert f"- **{title.rstrip('.')}" in summary, title
