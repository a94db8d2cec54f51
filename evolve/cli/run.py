"""`evolve run` and `evolve quickstart`: the main job."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from evolve.engine.outcome import RunOutcome


def _report(run, outcome: RunOutcome) -> None:
    """The tree with the final agent marked, then the answer: the same lines the report opens with."""
    from evolve.archive.best import run_best
    from evolve.archive.summary import render_tree
    from evolve.archive.vocab import StopReason
    from evolve.report.headline import headline

    tree = run.tree()
    typer.echo("")
    typer.echo(render_tree(run.nodes(), tree, run_best(run, tree)))
    typer.echo("")
    for line in headline(run, outcome.stop_reason, tree).lines():
        typer.echo(line)
    typer.echo(f"evaluations: {outcome.evaluations_used}, nodes: {outcome.nodes}")
    if outcome.best_node is not None and not outcome.heldout_scored and outcome.heldout_total:
        refused = outcome.stop == StopReason.MODEL_REFUSED
        why = "no model could be reached" if refused else "the run was stopped"
        typer.echo(
            f"final agent not scored on held-out tasks: {why}; `evolve run --resume {run.path}` scores it"
        )
    if outcome.seed_node is not None and outcome.best_node is not None:
        typer.echo(
            f"paired in full: evolve compare {run.path}:{outcome.seed_node} {run.path}:{outcome.best_node} "
            "--split heldout"
        )
    typer.echo(
        f"archive: {run.path}   (evolve tree {run.path}; evolve show {run.path} NODE; evolve report "
        f"{run.path})"
    )


def _execute(config, resume: Path | None, report: Path | None = None) -> None:
    from contextlib import nullcontext

    from evolve.engine.progress import RichProgress, make_progress
    from evolve.launch import exit_status, run_evolution
    from evolve.plan.estimate import plan_priors
    from evolve.report import live_report, write_report

    progress = make_progress()
    run_dir = resume or config.run.archive_dir / config.run.name
    with (
        live_report(run_dir, report) if report is not None else nullcontext(),
        progress if isinstance(progress, RichProgress) else nullcontext(),
    ):
        # The plan's per-job prices are the priors of the prices the run measures (a resume keeps its own).
        from evolve.cli.standins import STANDINS

        run, outcome = run_evolution(
            config,
            resume=resume,
            progress=progress,
            standins=STANDINS,
            priors=None if resume is not None else plan_priors(config),
        )
    _report(run, outcome)
    if report is not None:  # the last page, with the runner's own stop reason
        typer.echo(f"report: {write_report(run, report, stop_reason=str(outcome.stop_reason))}")
    if outcome.signal is not None:  # stopped or cancelled by a signal: 130 (Ctrl-C), 143 (TERM), 129 (HUP)
        raise typer.Exit(exit_status(outcome))


def _confirm_plan(config, yes: bool) -> None:
    """Print the plan's one line; ask before a run planned above `plan.confirm_above_dollars`."""
    import sys

    from evolve.errors import EvolveError
    from evolve.plan import make_plan, summary_line

    planned = make_plan(config, check=False)  # the run itself reports what is missing, at once
    typer.echo(summary_line(planned))
    limit = config.plan.confirm_above_dollars
    if yes or limit is None or planned.dollars <= limit:
        return
    over = f"the plan's ${planned.dollars:,.2f} is over plan.confirm_above_dollars (${limit:,.2f})"
    if not sys.stdin.isatty():
        raise EvolveError(f"{over} and there is no terminal to ask: pass --yes to start the run")
    if not typer.confirm(f"{over}; start the run?", default=False):
        raise EvolveError(f"{over}; not started")


def run(
    config: Annotated[Path | None, typer.Argument(help="Run configuration (TOML).")] = None,
    resume: Annotated[
        Path | None, typer.Option("--resume", help="Continue the run in this directory.")
    ] = None,
    report: Annotated[
        Path | None, typer.Option("--report", help="Keep this HTML run report up to date (`evolve report`).")
    ] = None,
    yes: Annotated[
        bool, typer.Option("--yes", help="Start without asking, whatever the plan costs.")
    ] = False,
    budget: Annotated[
        list[str] | None,
        typer.Option(
            "--budget",
            metavar="NAME=VALUE",
            help="With --resume: change one of the run's budgets first (e.g. cpu_hours=5.5; none: no "
            "limit); repeatable, recorded in the run.",
        ),
    ] = None,
) -> None:
    """Run an evolution from CONFIG, or continue a stopped or crashed one with --resume RUN."""
    from evolve.config import load_config
    from evolve.errors import EvolveError

    if (config is None) == (resume is None):
        raise EvolveError("give a CONFIG to start a run, or --resume RUN to continue one (not both)")
    if config is not None:
        if budget:
            raise EvolveError(
                "--budget changes a stopped run's budget (with --resume); set a new run's in its "
                "config's [budget]"
            )
        loaded = load_config(config)
        _confirm_plan(loaded, yes)
        _execute(loaded, None, report)
    elif resume is not None:
        from evolve.archive import Run
        from evolve.config import limit_text, with_budget

        with Run.open(resume, writer=bool(budget)) as opened:
            loaded = opened.config
            if budget:
                loaded, changes = with_budget(loaded, budget)
                if changes:
                    opened.change_budget(loaded, changes)
                for name, (old, new) in changes.items():
                    typer.echo(f"budget.{name}: {limit_text(old)} -> {limit_text(new)}")
        _execute(loaded, resume, report)


def quickstart(
    archive: Annotated[Path, typer.Option(help="Where the run directory is created.")] = Path("archive"),
) -> None:
    """A short evolution on the embedded CPU model, Docker sandboxes and HGM (about 6 min on 2 idle cores)."""
    from evolve.config import load_config
    from evolve.configs import config_path

    config = load_config(config_path("quickstart"))
    name = f"quickstart-{time.strftime('%Y%m%d-%H%M%S')}"
    config = config.model_copy(
        update={"run": config.run.model_copy(update={"name": name, "archive_dir": archive})}
    )
    _execute(config, None)


def register(app: typer.Typer) -> None:
    app.command("run")(run)
    app.command("quickstart")(quickstart)
