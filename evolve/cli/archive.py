"""Archive commands: status, tree, show, diff, export, import."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from evolve.archive import Run, export_lineage, import_bundle
from evolve.archive.best import named_node, run_best
from evolve.archive.candidates import candidate_stages, render_stages
from evolve.archive.climb import LineageStep, lineage_steps
from evolve.archive.digest import run_digest
from evolve.archive.edits import RATE_LIMIT, code_edit_rate
from evolve.archive.lineage import left_out, lineage_ids
from evolve.archive.summary import render_node, render_summary, render_tree, run_summary
from evolve.errors import EvolveError
from evolve.report.climb import step_name


def status(
    run: Annotated[Path, typer.Argument(help="Run directory.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Nodes, evaluations, jobs and usage of a run, its code-edit rate and where its candidates ended."""
    with Run.open(run) as opened:
        summary = run_summary(opened)
        rate = code_edit_rate(opened)  # reads each child's changed files from git: here, not in the summary
        expansions, stages = candidate_stages(opened)
        steps = lineage_steps(opened)  # reads each step's changed files from git, as the code-edit rate
    summary["lineage"] = [{"node": step.node, "expansion": step.expansion,
                           "dev": [step.successes, step.failures],
                           "heldout": None if step.heldout is None else list(step.heldout), "edit": step.edit,
                           "name": step_name(step)} for step in steps]  # fmt: skip
    summary["code_edits"] = (
        None if rate is None else {"code": rate.code, "expansions": rate.expansions, "rate": rate.rate}
    )
    summary["candidates"] = (
        {"expansions": expansions, "stages": dict(stages.most_common())} if expansions else None
    )
    shown = f"over {RATE_LIMIT} children, not counted" if rate is None else f"{rate}"
    tried = f"\ncandidates: {render_stages(expansions, stages)}" if expansions else ""
    typer.echo(
        json.dumps(summary, indent=2)
        if as_json
        else render_summary(summary)
        + f"\ncode edits: {shown} (valid children with a code edit / expansions)"
        + tried
        + _lineage_text(steps)
    )


def _lineage_text(steps: list[LineageStep]) -> str:
    """The final agent's lineage, one step a line: node, dev own score, held-out where measured, edit."""
    if not steps:
        return ""
    return "\nlineage of the final agent (dev: own counted results; held-out where measured):" + "".join(
        f"\n  {step.line(step_name(step))}" for step in steps
    )


def tree(run: Annotated[Path, typer.Argument(help="Run directory.")]) -> None:
    """The clade tree, indented, with each node's own pass count and clade estimate; the best node and its
    lineage marked."""
    with Run.open(run) as opened:
        counted = opened.tree(with_tasks=False)
        typer.echo(render_tree(opened.nodes(), counted, run_best(opened, counted)))


def show(
    run: Annotated[Path, typer.Argument(help="Run directory.")],
    node: Annotated[str, typer.Argument(help="Node id, or `final` (the run's final agent).")],
) -> None:
    """One node: its record, counts, instructions and evaluations."""
    with Run.open(run) as opened:
        typer.echo(render_node(opened, named_node(opened, node)))


def diff(
    run: Annotated[Path, typer.Argument(help="Run directory.")],
    node: Annotated[str, typer.Argument(help="Node id, or `final` (the run's final agent).")],
    against: Annotated[str, typer.Option("--against", help="parent, root, or another node id.")] = "parent",
) -> None:
    """The unified diff of a node's code."""
    with Run.open(run) as opened:
        typer.echo(opened.diff(named_node(opened, node), against=against), nl=False)


def export(
    run: Annotated[Path, typer.Argument(help="Run directory.")],
    node: Annotated[
        str | None,
        typer.Argument(help="Export only this node's lineage (root to node)."),
    ] = None,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Bundle file to write.")] = None,
    without_logs: Annotated[
        bool,
        typer.Option(
            "--without-logs",
            help="Leave out each job's log directory (transcripts, outputs, "
            "diffs); the command says how much that is.",
        ),
    ] = False,
) -> None:
    """Write a lineage bundle (git bundle + nodes, evaluations, jobs, every model exchange, every job's logs)
    and print its digest."""
    with Run.open(run) as opened:
        dest = output or Path(f"{run.name}{'-' + node if node else ''}.evolve.tar.gz")
        export_lineage(opened, dest, node, with_logs=not without_logs)
        digest = run_digest(
            opened, [n.id for n in opened.nodes()] if node is None else lineage_ids(opened, node)
        )
        dropped = left_out(opened, node) if without_logs else None
        best = run_best(opened)
    typer.echo(f"wrote {dest}")
    if best is not None:
        typer.echo(f"the run's {best.line()}")
    if dropped is not None:
        typer.echo(dropped.line())
    typer.echo(f"digest {digest}  (publish it; `evolve replay {dest} --expect DIGEST` checks a copy)")


def import_(
    bundle: Annotated[
        Path,
        typer.Argument(help="A bundle written by `evolve export`, or a DGM/HGM run directory."),
    ],
    dest: Annotated[Path, typer.Option("--dest", help="Run directory to create.")],
    source: Annotated[
        str,
        typer.Option("--from", help="bundle, dgm or hgm (a published run directory)."),
    ] = "bundle",
    initial_code: Annotated[
        Path | None,
        typer.Option(
            "--initial-code", help="The code a DGM/HGM run started from (HGM default: RUN_DIR/initial/src)."
        ),
    ] = None,
    expect: Annotated[
        str | None,
        typer.Option(
            "--expect", help="Refuse a bundle whose lineage digest is not this (from `evolve export`)."
        ),
    ] = None,
) -> None:
    """Create a run from a lineage bundle, or from a DGM or HGM run directory (`--from dgm|hgm`)."""
    if source == "bundle":
        with import_bundle(bundle, dest, expect=expect) as run:
            typer.echo(f"imported {len(run.nodes())} nodes into {run.path}")
        return
    if expect is not None:
        raise EvolveError("--expect checks bundles only (a DGM/HGM directory has no published digest)")
    from evolve.cli.imports import import_published

    import_published(source, bundle, dest, initial_code)


def register(app: typer.Typer) -> None:
    """Mount the archive commands on the top-level app."""
    for command in (status, tree, show, diff, export):
        app.command()(command)
    app.command("import")(import_)
