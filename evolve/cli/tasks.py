"""`evolve tasks ...`: list a suite's tasks; check that every task's grader works (in Docker)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from evolve.tasks import load_suite, suite_names
from evolve.tasks.types import TaskError

app = typer.Typer(
    name="tasks", help="Benchmark tasks: list suites and tasks, check graders.", no_args_is_help=True
)


@app.command("list")
def list_tasks(
    suite: Annotated[str | None, typer.Argument(help="a suite name; omit to list the suites")] = None,
    split: Annotated[str | None, typer.Option(help="dev or heldout")] = None,
) -> None:
    """List the suites, or the tasks of one suite."""
    from evolve.archive.vocab import parse_split

    parse_split(split)
    console = Console(highlight=False)
    if suite is None:
        table = Table("suite", "tasks", "dev", "heldout")
        for name in suite_names():
            loaded = load_suite(name)
            table.add_row(
                name, str(len(loaded)), str(len(loaded.split("dev"))), str(len(loaded.split("heldout")))
            )
        console.print(table)
        return
    loaded = load_suite(suite).split(split)
    table = Table("task", "split", "difficulty", "files", title=f"{suite}: {len(loaded)} tasks")
    for task in loaded:
        table.add_row(task.id, task.split, task.difficulty, str(len(task.repo)))
    console.print(table)


@app.command("check")
def check(
    suite: Annotated[str, typer.Argument(help="the suite to check")],
    as_json: Annotated[bool, typer.Option("--json", help="print one JSON object")] = False,
    workers: Annotated[int, typer.Option(help="graders running at once in each sandbox")] = 2,
    task: Annotated[list[str] | None, typer.Option(help="check only these task ids")] = None,
    polyglot_dir: Annotated[Path | None, typer.Option(help="checkout of the polyglot benchmark")] = None,
    language: Annotated[list[str] | None, typer.Option(help="polyglot: only these languages")] = None,
) -> None:
    """Grade every task's reference solution (must pass) and untouched repo (must fail) in Docker."""
    from evolve.sandbox.factory import grading_sandbox
    from evolve.tasks.check import check_suite

    if suite == "polyglot" or suite.startswith("polyglot:"):
        from evolve.tasks.polyglot import polyglot_suite

        loaded = polyglot_suite(suite, polyglot_dir, language)
    else:
        loaded = load_suite(suite)
    if task:
        try:
            loaded = loaded.select(task)
        except TaskError as exc:
            raise typer.BadParameter(str(exc)) from exc
    if suite.startswith("swebench-"):
        from evolve.tasks.swebench_grading import check_swebench

        report = check_swebench(loaded)
    else:
        report = check_suite(loaded, grading_sandbox, workers=workers)
    summary = report.to_json()
    if as_json:
        typer.echo(json.dumps(summary))
    else:
        table = Table("task", "reference", "untouched", "ok", title=f"{suite}: grader check")
        for c in report.checks:
            table.add_row(c.task_id, c.reference.outcome, c.untouched.outcome, "yes" if c.ok else "NO")
        for task_id in report.errors:
            table.add_row(task_id, "infra", "infra", "NO")
        console = Console(highlight=False)
        console.print(table)
        console.print(
            f"{summary['reference_pass']}/{summary['tasks']} references pass, "
            f"{summary['untouched_fail']}/{summary['tasks']} untouched repos fail, "
            f"{len(summary['mismatches'])} mismatches"
        )
    if report.mismatches:
        raise typer.Exit(1)
