"""`evolve replay BUNDLE|RUN`: rebuild every node's code and check its tree hash; `--rerun` re-runs the
recorded evaluations from their recorded model exchanges and reports per node how many outcomes match."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import typer

from evolve.archive.digest import check_expected
from evolve.replay import docker_evaluator, rerun, scratch_copy, verify


def replay(
    source: Annotated[Path, typer.Argument(help="A bundle from `evolve export`, or a run directory.")],
    node: Annotated[
        str | None,
        typer.Option("--node", help="Only this node's lineage (root to node)."),
    ] = None,
    rerun_jobs: Annotated[
        bool,
        typer.Option("--rerun", help="Re-run the recorded evaluations in replay mode (Docker; no model)."),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    expect: Annotated[
        str | None,
        typer.Option(
            "--expect", help="Refuse the lineage unless its digest is this (as `evolve export` printed)."
        ),
    ] = None,
) -> None:
    """Rebuild every node's code from a bundle or run and check the git tree hashes (and the lineage
    digest)."""
    verified_lineage = verify(source, node)
    check_expected(verified_lineage.digest, expect, str(source))  # before anything is re-run
    checks = verified_lineage.checks
    verified = sum(check.ok for check in checks)
    reruns = []
    if rerun_jobs:
        with scratch_copy(source) as run, docker_evaluator(run) as evaluate_one:
            lineage = {check.node for check in checks}
            reruns = [r for r in rerun(run, evaluate_one) if r.node in lineage]
    if as_json:
        typer.echo(
            json.dumps(
                {
                    "verified": verified,
                    "digest": verified_lineage.digest,
                    "nodes": len(checks),
                    "code": [{**asdict(c), "ok": c.ok} for c in checks],
                    "rerun": [asdict(r) for r in reruns],
                },
                indent=2,
            )
        )
    else:
        for check in checks:
            state = (
                "verified"
                if check.ok
                else (
                    f"MISMATCH: rebuilt {check.rebuilt_tree}"
                    if check.parent_ok
                    else "MISMATCH: wrong parent commit"
                )
            )
            typer.echo(f"node {check.node}: tree {check.recorded_tree[:12]} {state}")
        typer.echo(f"{verified}/{len(checks)} nodes' code verified")
        typer.echo(f"digest {verified_lineage.digest}" + (" (as expected)" if expect else ""))
        for result in reruns:
            extra = f", {len(result.skipped)} not replayable" if result.skipped else ""
            typer.echo(f"node {result.node}: {result.matching}/{result.compared} outcomes match{extra}")
            for miss in result.mismatches:
                typer.echo(
                    f"  {miss.task}: recorded {miss.recorded}, replayed {miss.replayed}: {miss.detail[:200]}"
                )
    if verified != len(checks):
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    """Mount `evolve replay` on the top-level app."""
    app.command()(replay)
