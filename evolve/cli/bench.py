"""`evolve bench ...`: benchmark commands that print numbers (speed and quality targets)."""

from __future__ import annotations

import typer

app = typer.Typer(name="bench", help="Benchmarks that print numbers.", no_args_is_help=True)
