"""`evolve report RUN`: the run as one self-contained HTML page; `--watch` keeps it up to date."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from evolve.errors import EvolveError


def report(
    runs: Annotated[
        list[Path],
        typer.Argument(
            help="A run directory (`evolve import` makes one from a bundle); more runs are drawn over it."
        ),
    ],
    out: Annotated[
        Path | None, typer.Option("-o", "--out", help="The page to write (default: RUN/report.html).")
    ] = None,
    watch: Annotated[
        float | None,
        typer.Option(
            "--watch",
            help="Rewrite the page every SECONDS until interrupted (reads only; the run may be live).",
        ),
    ] = None,
) -> None:
    """Write the run's report: the answer, config, budget, best node, clade tree, node table, curves,
    outcomes and usage; with more runs, their curves and answers overlaid."""
    from evolve.report import watch_report, write_report

    for given in runs:
        if not (given / "run.sqlite").is_file():
            raise EvolveError(
                f"{given}: not a run directory (no run.sqlite); import a bundle first with `evolve import`"
            )
    run, others = runs[0], runs[1:]
    if watch is not None and others:
        raise EvolveError("--watch follows one run; overlay other runs without it")
    if watch is not None and watch <= 0:
        raise EvolveError(f"--watch {watch:g}: give a positive number of seconds")
    page = out if out is not None else run / "report.html"
    if watch is None:
        write_report(run, page, others=others)
        typer.echo(f"report: {page}")
        return
    typer.echo(f"report: {page} (rewritten every {watch:g} s; Ctrl-C stops)")
    try:
        watch_report(run, page, watch)
    except KeyboardInterrupt:
        typer.echo("stopped watching; the page holds the last state written")


def register(app: typer.Typer) -> None:
    app.command("report")(report)
