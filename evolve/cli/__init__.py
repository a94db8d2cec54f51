"""The `evolve` command: thin typer wrappers over plain functions that the tests call too."""

from evolve.cli.app import app, main

__all__ = ["app", "main"]
