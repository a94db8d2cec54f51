"""Archive commands: status, tree, show, diff, export, import."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Mount the archive commands on the top-level app."""
