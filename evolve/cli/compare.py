"""`evolve compare A B`: two agents' results on the same tasks, paired (see `evolve.archive.compare`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from evolve.errors import EvolveError


def compare_command(
    a: Annotated[
        str,
        typer.Argument(
            help="RUN or RUN:NODE; NODE may be `final`, the run's final agent (a run of one "
            "node, as `evolve eval` makes, needs no NODE)."
        ),
    ],
    b: Annotated[str, typer.Argument(help="RUN or RUN:NODE, compared against A (differences are B − A).")],
    split: Annotated[
        str | None, typer.Option(help="Only this split's results (dev or heldout; default: all).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Pass rates with Wilson 95 % intervals, the paired difference with its Newcombe 95 % interval, and the
    exact McNemar test, over the tasks both agents have a counted result on (the first that is not infra)."""
    from evolve.archive.compare import compare
    from evolve.archive.vocab import parse_split

    parse_split(split)
    (where_a, outcomes_a), (where_b, outcomes_b) = (_outcomes(side, split) for side in (a, b))
    result = compare(outcomes_a, outcomes_b, labels=(a, b))
    if as_json:
        typer.echo(json.dumps({**result.to_json(), "same_agent": where_a == where_b}))
        return
    if where_a == where_b:  # `RUN:0 RUN:final` where no agent beat the seed
        typer.echo(f"A and B are the same agent: node {where_a[1]} of {where_a[0]}")
    for side in (result.a, result.b):
        ci = side.interval
        typer.echo(f"{side.label}: {side.passed}/{side.total} = {ci.mean:.0%} [{ci.low:.0%}, {ci.high:.0%}]")
    d = result.difference
    typer.echo(
        f"paired over {result.tasks} tasks: B − A = {d.mean:+.3f} [{d.low:+.3f}, {d.high:+.3f}]; "
        f"only A passed {len(result.only_a)}, only B passed {len(result.only_b)}; "
        f"exact McNemar p = {result.mcnemar_p:.3g}"
    )
    if (note := result.small_sample_note()) is not None:
        typer.echo(note)
    if result.unpaired:
        typer.echo(f"left out: {result.unpaired} tasks counted on one side only")


def _outcomes(side: str, split: str | None) -> tuple[tuple[Path, str], dict[str, bool]]:
    """(the run's resolved path and the node's id, the node's counted outcomes by task)."""
    from evolve.archive.best import named_node
    from evolve.archive.compare import counted_outcomes
    from evolve.archive.store import Run

    path, sep, node = side.rpartition(":")
    if not sep or Path(side).is_dir():  # a run directory (whose name may hold a colon)
        path, node = side, ""
    with Run.open(path) as run:
        if not node:
            nodes = run.nodes()
            if len(nodes) != 1:
                raise EvolveError(f"{side}: the run has {len(nodes)} nodes; name one as RUN:NODE")
            node = nodes[0].id
        node = named_node(run, node)  # a missing node is named
        return (run.path.resolve(), node), counted_outcomes(run, node, split)


def register(app: typer.Typer) -> None:
    app.command("compare")(compare_command)
