"""MkDocs hook: write the generated reference pages (docs/reference/config.md, cli.md) from the code
before each build (`evolve.docs`), so the configuration and CLI references cannot drift from it."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def on_pre_build(config: Any) -> None:
    from evolve.docs import cli_reference, config_reference

    reference = Path(config["docs_dir"]) / "reference"
    reference.mkdir(exist_ok=True)
    for name, text in (("config.md", config_reference()), ("cli.md", cli_reference())):
        page = reference / name
        if not page.is_file() or page.read_text() != text:  # unchanged: `mkdocs serve` does not loop
            page.write_text(text)
