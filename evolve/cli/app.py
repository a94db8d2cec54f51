"""The top-level `evolve` app: command groups live in sibling modules and are mounted here."""

from __future__ import annotations

import sqlite3
import sys

import git
import typer
from rich.console import Console

from evolve.cli import agent, archive, bench, config, faults, models, sandbox, tasks
from evolve.cli import compare as compare_cli
from evolve.cli import eval as eval_cli
from evolve.cli import plan as plan_cli
from evolve.cli import replay as replay_cli
from evolve.cli import report as report_cli
from evolve.cli import run as run_cli
from evolve.cli import traces as traces_cli
from evolve.errors import EvolveError

app = typer.Typer(
    name="evolve",
    help="Grow a tree of self-modifying coding agents, chosen by clade metaproductivity (HGM).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

run_cli.register(app)
plan_cli.register(app)
archive.register(app)
models.register(app)
eval_cli.register(app)
compare_cli.register(app)
replay_cli.register(app)
report_cli.register(app)
traces_cli.register(app)
for group in (config, sandbox, bench, tasks, agent):
    if group.app.registered_commands or group.app.registered_groups:
        app.add_typer(group.app)


def main() -> None:
    """Console entry point: user errors and machine faults (disk, file system, database, git) become
    one line on stderr and exit status 1."""
    try:
        app()
    except EvolveError as exc:
        _fail(str(exc))
    except (OSError, sqlite3.Error, git.GitCommandError) as exc:
        line = faults.describe(exc)
        if line is None:
            raise
        _fail(line)
    except KeyboardInterrupt:  # Ctrl-C outside a run's own handling (starting up, a short command)
        _fail("interrupted", status=130)


def _fail(line: str, status: int = 1) -> None:
    Console(stderr=True, highlight=False, soft_wrap=True).print(f"error: {line}", markup=False)
    sys.exit(status)
