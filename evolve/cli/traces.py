"""`evolve export-traces RUN`: the run's model exchanges as a fine-tuning data set (evolve.traces)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

import typer

from evolve.errors import EvolveError


def export_traces(
    run: Annotated[Path, typer.Argument(help="A run directory (`evolve import` makes one from a bundle).")],
    out: Annotated[
        Path | None,
        typer.Option(
            "-o", "--out", help="Where to write (default: RUN/traces.jsonl, or RUN/traces/ with --format hf)."
        ),
    ] = None,
    format: Annotated[
        str,
        typer.Option(
            "--format",
            help="jsonl: chat-format JSONL with a `messages` column; hf: a Hugging Face `datasets` "
            "directory (load_from_disk).",
        ),
    ] = "jsonl",
    passing_solves: Annotated[
        bool, typer.Option("--passing-solves", help="Keep the solve exchanges of evaluations that passed.")
    ] = False,
    improving_expansions: Annotated[
        bool,
        typer.Option(
            "--improving-expansions",
            help="Keep the diagnose and modify exchanges of expansions whose child was valid and beat its "
            "parent.",
        ),
    ] = False,
    include_heldout: Annotated[
        bool,
        typer.Option(
            "--include-heldout",
            help="Also the held-out tasks' exchanges (left out by default: never train on the test set).",
        ),
    ] = False,
) -> None:
    """Write RUN's model exchanges as a data set a trainer reads (TRL's SFTTrainer, OpenAI fine-tuning), each
    record labelled with its role, node, task, split, outcome and the child it led to; the two recipe
    filters together keep what either keeps."""
    from evolve.archive import Run
    from evolve.traces import TraceFilter, export_traces

    if format not in ("jsonl", "hf"):
        raise EvolveError(f"--format must be jsonl or hf, not {format!r}")
    if not (run / "run.sqlite").is_file():
        raise EvolveError(
            f"{run}: not a run directory (no run.sqlite); import a bundle first with `evolve import`"
        )
    chosen: Literal["jsonl", "hf"] = "hf" if format == "hf" else "jsonl"
    dest = out if out is not None else run / ("traces" if chosen == "hf" else "traces.jsonl")
    keep = TraceFilter(
        passing_solves=passing_solves,
        improving_expansions=improving_expansions,
        include_heldout=include_heldout,
    )
    with Run.open(run) as opened:
        written = export_traces(opened, dest, keep=keep, fmt=chosen)
    typer.echo(written.line())


def register(app: typer.Typer) -> None:
    app.command("export-traces")(export_traces)
