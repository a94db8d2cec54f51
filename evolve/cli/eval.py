"""`evolve eval`: evaluate one agent (the seed, a directory, or RUN:NODE) on a suite; print a per-task table
and the pass rate."""

from __future__ import annotations

import json
import signal
import sys
import tempfile
import time
from contextlib import closing
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.table import Table

from evolve.errors import EvolveError

if TYPE_CHECKING:
    from evolve.archive.store import Run
    from evolve.config import RunConfig


def register(app: typer.Typer) -> None:
    app.command("eval")(eval_command)


def run_seed(run: Run, config: RunConfig) -> int:
    """The seed the gateway derives each request's sampling seed from, as a run's does: the run's own
    (its run.toml: a fresh evaluation run records `config`), or `config`'s for a run imported without one."""
    return run.config.run.seed if (run.path / "run.toml").is_file() else config.run.seed


def open_agent(agent: str, archive: Path, config: RunConfig) -> tuple[Run, str]:
    """(run, node id) for `seed` or a directory that meets the agent contract (a fresh run holding only that
    agent), or `RUN:NODE` (an existing run)."""
    from evolve.archive.best import named_node
    from evolve.archive.store import Run
    from evolve.seed import agent_problem, copy_agent

    if agent == "seed" or Path(agent).is_dir():
        source = None if agent == "seed" else Path(agent)
        if source is not None and (problem := agent_problem(source)):
            raise EvolveError(f"--agent {problem}")
        run = Run.create(archive / time.strftime("eval-seed-%Y%m%d-%H%M%S"), config)
        with tempfile.TemporaryDirectory() as tmp:
            node = run.add_node(copy_agent(source, Path(tmp) / "seed"), origin="seed")
        return run, node.id
    run_path, sep, node_id = agent.rpartition(":")
    if not sep or not run_path or not node_id:
        raise EvolveError(f"--agent must be 'seed', an agent directory or RUN:NODE, not {agent!r}")
    run = Run.open(run_path, writer=True)  # one writer: refused while `evolve run` writes the run
    try:
        node_id = named_node(run, node_id)  # an id, or `final`
    except BaseException:
        run.close()
        raise
    return run, node_id


def eval_command(
    agent: Annotated[
        str,
        typer.Option(
            help="'seed', an agent directory (the agent contract), or RUN:NODE (NODE may be "
            "`final`, the run's final agent)"
        ),
    ] = "seed",
    suite: Annotated[str, typer.Option(help="task suite")] = "builtin",
    split: Annotated[str | None, typer.Option(help="dev or heldout (default: all)")] = None,
    limit: Annotated[int | None, typer.Option(help="evaluate only the first N tasks")] = None,
    task: Annotated[list[str] | None, typer.Option(help="evaluate only these task ids")] = None,
    config: Annotated[Path | None, typer.Option(help="run config TOML (models, sandbox limits)")] = None,
    steps: Annotated[int, typer.Option(help="the agent's step cap")] = 20,
    archive: Annotated[Path, typer.Option(help="where a seed evaluation run is created")] = Path("archive"),
    as_json: Annotated[bool, typer.Option("--json", help="print one JSON object at the end")] = False,
) -> None:
    """Evaluate one agent on a suite (Docker sandboxes, the configured models through the gateway)."""
    from evolve.archive.vocab import parse_split
    from evolve.config import RunConfig, load_config
    from evolve.engine.evaluate import EvalSettings, evaluate_all
    from evolve.llm.budget import GatewayLimits
    from evolve.llm.gateway import Gateway
    from evolve.llm.stack import ModelStack
    from evolve.sandbox.factory import DockerSandboxes, limits_from_config
    from evolve.tasks import load_suite

    parse_split(split)
    cfg = load_config(config) if config else RunConfig()
    tasks = list(load_suite(suite).split(split).select(task, limit))
    # models start (and API keys are read) before anything is written
    from evolve.cli.standins import STANDINS

    # one task at a time
    stack = ModelStack(cfg.models, seed=cfg.run.seed, beside_cpus=cfg.sandbox.cpus, standins=STANDINS).start()
    try:
        run, node_id = open_agent(agent, archive, cfg)
    except BaseException:
        stack.close()
        raise
    console = Console(highlight=False, stderr=as_json)
    console.print(f"evaluating {agent} (run {run.path}, node {node_id}) on {len(tasks)} tasks of {suite}")
    # the agent's timeout derives from the sandboxes' wall clock (evolve.engine.context.agent_timeout)
    limits = limits_from_config(cfg.sandbox)
    table = Table("task", "outcome", "s", "tokens", "detail")

    def show(result) -> None:
        console.print(
            f"  {result.task_id}: {result.outcome} ({result.duration_s:.0f} s, {result.tokens} tokens)"
        )
        table.add_row(
            result.task_id, result.outcome, f"{result.duration_s:.0f}", str(result.tokens), result.detail[:60]
        )

    # SIGTERM unwinds like Ctrl-C, so the model servers stop and the containers are removed
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    signal.signal(signal.SIGHUP, lambda *_: sys.exit(129))
    with (
        closing(stack),
        run,
        Gateway(
            stack.models,
            exchanges_dir=run.path / "exchanges",
            usage_sink=run,
            seed=run_seed(run, cfg),
            limits=GatewayLimits.of(cfg.gateway),
        ) as gateway,
    ):
        results = evaluate_all(
            run,
            node_id,
            tasks,
            sandboxes=DockerSandboxes(run.id, limits),
            gateway=gateway,
            settings=EvalSettings(budget_steps=steps),
            on_result=show,
        )
    counted = [r for r in results if r.outcome != "infra"]
    passed = sum(r.outcome == "pass" for r in counted)
    rate = passed / len(counted) if counted else 0.0
    console.print(table)
    console.print(
        f"pass rate {passed}/{len(counted)} = {rate:.0%} (infra: {len(results) - len(counted)}); "
        f"logs under {run.path / 'logs'}"
    )
    if as_json:
        typer.echo(
            json.dumps(
                {
                    "run": str(run.path),
                    "node": node_id,
                    "suite": suite,
                    "tasks": len(results),
                    "passed": passed,
                    "infra": len(results) - len(counted),
                    "pass_rate": rate,
                    "outcomes": {r.task_id: r.outcome for r in results},
                }
            )
        )
