"""`evolve config ...`: check a run configuration."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from evolve.config import load_config
from evolve.errors import EvolveError

app = typer.Typer(name="config", help="Check run configurations.", no_args_is_help=True)


@app.command("check")
def check(file: Annotated[Path, typer.Argument(help="A run configuration (TOML).")]) -> None:
    """Validate FILE; print one line naming the bad key and exit non-zero when it is wrong."""
    config = load_config(file)
    suite = config.tasks.suite
    # those need a checkout or the network: checked at run
    if not suite.startswith(("polyglot", "swebench-")):
        from evolve.tasks import load_suite

        try:
            load_suite(suite)
        except EvolveError as exc:
            raise EvolveError(f"{file}: key `tasks.suite`: {exc}") from None
    typer.echo(
        f"{file}: ok (run {config.run.name}, seed {config.run.seed}, policy {config.policy.name}, "
        f"suite {config.tasks.suite}/{config.tasks.split}, sandbox {config.sandbox.backend})"
    )
