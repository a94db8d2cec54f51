"""`evolve import --from dgm|hgm`: a published DGM or HGM run directory into a new run."""

from __future__ import annotations

from pathlib import Path

import typer

from evolve.archive import import_dgm_run, import_hgm_run
from evolve.errors import EvolveError


def import_published(source: str, run_dir: Path, dest: Path, initial_code: Path | None) -> None:
    """Import, then print what was imported and every node that could not be reproduced."""
    if source == "dgm":
        if initial_code is None:
            raise EvolveError("--from dgm needs --initial-code DIR (the code the DGM run started from)")
        report = import_dgm_run(run_dir, initial_code, dest)
    elif source == "hgm":
        report = import_hgm_run(run_dir, initial_code, dest)
    else:
        raise EvolveError(f"--from must be bundle, dgm or hgm, not {source!r}")
    with report.run as run:
        invalid = sum(not node.valid for node in run.nodes())
        typer.echo(
            f"imported {report.nodes} nodes ({invalid} invalid) and {report.evaluations} evaluations "
            f"from {source} run {run_dir} into {run.path}"
        )
    for problem in report.problems:
        typer.echo(f"node {problem.node}: {problem.reason}")
    for warning in report.warnings:
        typer.echo(f"warning: {warning}", err=True)
