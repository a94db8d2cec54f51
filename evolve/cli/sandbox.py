"""`evolve sandbox ...`: build images, run one command in a sandbox, sweep leftovers."""

from __future__ import annotations

import typer

app = typer.Typer(name="sandbox", help="Sandbox images, debugging and cleanup.", no_args_is_help=True)
