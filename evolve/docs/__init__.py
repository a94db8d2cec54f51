"""The documentation site's reference pages, generated from the code so they cannot drift: the
configuration reference from the pydantic models (`evolve.config.RunConfig`, each field's type,
default, bounds and the docstring under it) and the CLI reference from the typer app (every command,
argument and option with its help). `docs/hooks.py` writes them when `mkdocs build` starts."""

from evolve.docs.reference import cli_reference, config_reference

__all__ = ["cli_reference", "config_reference"]
