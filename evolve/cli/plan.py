"""`evolve plan CONFIG`: what a run will need and cost, before it starts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer


def plan(
    config: Annotated[Path, typer.Argument(help="Run configuration (TOML).")],
    measured_from: Annotated[
        list[Path] | None,
        typer.Option(
            "--from",
            help="Take per-job tokens and times from this run (repeatable; default: earlier "
            "runs in the config's archive on the same suite and solving model).",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the plan as JSON.")] = False,
    offline: Annotated[
        bool, typer.Option("--offline", help="Do not look for missing prerequisites.")
    ] = False,
) -> None:
    """Print the evaluations, expansions, tokens per role, dollars, container- and CPU-hours, images and
    disk a run of CONFIG will need, at most, and which prerequisites are missing now."""
    from evolve.config import load_config
    from evolve.plan import make_plan, plan_json, render_table

    made = make_plan(load_config(config), measured_from=measured_from or None, check=not offline)
    typer.echo(json.dumps(plan_json(made), indent=2) if as_json else render_table(made))


def register(app: typer.Typer) -> None:
    app.command("plan")(plan)
