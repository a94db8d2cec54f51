"""Assemble a run from its configuration: archive, tasks, models, gateway, sandboxes, policy, runner.

This is the one place concrete components are constructed; the runner receives instances.
"""

from __future__ import annotations

import signal
import tempfile
import threading
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from evolve.archive.store import Run
from evolve.config import RunConfig
from evolve.engine.costs import Priors
from evolve.engine.progress import ProgressSink
from evolve.engine.runner import Runner, RunOutcome
from evolve.errors import EvolveError
from evolve.meta import compiled
from evolve.search.policies import policies_from_config

if TYPE_CHECKING:
    from evolve.llm.client import ChatModel
    from evolve.llm.stack import ClientFactory
    from evolve.llm.types import Role


@dataclass(frozen=True)
class RunTasks:
    """The search split and the held-out split of the configured suite."""

    search: dict
    heldout: dict


def load_tasks(config: RunConfig) -> RunTasks:
    from evolve.tasks import load_suite

    suite = load_suite(config.tasks.suite, polyglot_dir=config.tasks.polyglot_dir)
    search = suite.split(config.tasks.split)
    known = {task.id for task in search}
    if missing := [i for i in config.tasks.ids or () if i not in known]:
        raise EvolveError(
            f"[tasks] ids: {', '.join(missing)} not in split {config.tasks.split!r} of {config.tasks.suite}"
        )
    search = search.select(config.tasks.ids, limit=config.tasks.limit)
    heldout = suite.split(config.tasks.heldout_split).select(limit=config.tasks.heldout_limit)
    if not len(search):
        raise EvolveError(f"suite {config.tasks.suite} has no tasks in split {config.tasks.split!r}")
    return RunTasks({t.id: t for t in search}, {t.id: t for t in heldout})


def check_new_run(config: RunConfig) -> Path:
    """The path of a new run, refused at once when it already holds one."""
    path = config.run.archive_dir / config.run.name
    if (path / "run.sqlite").exists():
        raise EvolveError(
            f"{path} already holds a run; resume it with `evolve run --resume {path}` "
            "or choose another run.name"
        )
    return path


def open_run(config: RunConfig, resume: Path | None) -> Run:
    """Resume the run at `resume`, or create `<archive_dir>/<name>` with the seed agent as its root."""
    if resume is not None:
        return Run.open(resume, writer=True)
    path = check_new_run(config)
    from evolve.seed import agent_problem, bundled_agent, copy_agent

    if config.seed.path is not None and (problem := agent_problem(config.seed.path)):
        raise EvolveError(f"[seed] path: {problem}")
    source = config.seed.path if config.seed.path is not None else bundled_agent(config.seed.agent)
    run = Run.create(path, config)
    with tempfile.TemporaryDirectory(prefix="evolve-seed-") as tmp:
        run.add_node(copy_agent(source, Path(tmp) / "seed"), origin="seed")
    return run


# What `kill`, systemd, Slurm, Kubernetes and a closed terminal send: each cancels at once, like a
# second Ctrl-C (jobs marked cancelled, containers removed), and the exit status says which it was.
CANCEL_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


@contextmanager
def interrupts(runner: Runner) -> Iterator[list[int]]:
    """First Ctrl-C: stop starting work; second (or SIGTERM, SIGHUP): cancel the work in flight.

    Yields the signals received, in order (`execute_with_signals` turns them into the exit status)."""
    received: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield received
        return

    def handle(signum, frame) -> None:
        received.append(signum)
        if signum == signal.SIGINT and len(received) == 1:
            print("\nstopping: no new jobs; running ones finish (Ctrl-C again to cancel them)", flush=True)
            runner.request_stop()
        else:
            print(f"\n{signal.Signals(signum).name}: cancelling the jobs in flight", flush=True)
            runner.cancel()

    previous = {number: signal.signal(number, handle) for number in (signal.SIGINT, *CANCEL_SIGNALS)}
    try:
        yield received
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def execute_with_signals(runner: Runner) -> RunOutcome:
    """`runner.execute()` under `interrupts`; the outcome names the signal that ended it (a SIGTERM
    or SIGHUP after a Ctrl-C counts, a second Ctrl-C does not change the first)."""
    with interrupts(runner) as received:
        outcome = runner.execute()
    cancelling = [number for number in received if number != signal.SIGINT]
    if received:
        outcome = replace(outcome, signal=cancelling[0] if cancelling else signal.SIGINT)
    return outcome


def exit_status(outcome: RunOutcome) -> int:
    """0, or 128 + the signal that stopped the run (130 Ctrl-C, 143 SIGTERM, 129 SIGHUP), as shells do."""
    return 0 if outcome.signal is None else 128 + outcome.signal


def run_evolution(
    config: RunConfig,
    *,
    resume: Path | None = None,
    progress: ProgressSink | None = None,
    models: Mapping[Role, ChatModel] | None = None,
    priors: Priors | None = None,
    standins: Mapping[str, ClientFactory] | None = None,
) -> tuple[Run, RunOutcome]:
    """Run (or resume) an evolution with real sandboxes and models; returns the run and how it ended.

    `models` (role → model) replaces the configured ones; tests pass scripted models here. `priors`:
    the plan's price of each job kind (`evolve run` passes `evolve plan`'s); a resume keeps the first's.
    `standins`: the stand-in providers a config may name (`evolve run` passes evolve.cli.standins').
    """
    from evolve.engine.executors import LocalExecutor
    from evolve.llm.budget import GatewayLimits
    from evolve.llm.gateway import Gateway
    from evolve.llm.stack import ModelStack
    from evolve.sandbox import image_id, reap_run

    if config.sandbox.backend != "docker":
        raise EvolveError(
            'evolve run needs sandbox.backend = "docker"; the process backend isolates '
            "nothing and serves `evolve sandbox exec` and tests only"
        )
    tasks = load_tasks(config)
    run = None
    if resume is not None:  # the writer lock first; the run's own config from then on
        run = open_run(config, resume)
        config = run.config
    else:
        check_new_run(config)
    policy = policies_from_config(config.policy)[config.policy.name]
    executor = LocalExecutor(config.executor.concurrency)
    runner: Runner | None = None
    try:
        # Models start (and API keys are read) before a new run is written: a missing key leaves nothing.
        with ExitStack() as servers:
            if models is None:
                # what the run runs beside the model
                beside = config.sandbox.cpus * config.executor.concurrency
                models = servers.enter_context(
                    ModelStack(config.models, seed=config.run.seed, standins=standins, beside_cpus=beside)
                ).models
            run = run or open_run(config, None)
            reap_run(run.id)  # leftovers of an earlier, crashed session of this run
            run.set_meta(f"image:{config.sandbox.image}", image_id(config.sandbox.image))
            from evolve.tracking import open_tracking

            tracking = servers.enter_context(open_tracking(config.tracking, run, cpus=config.sandbox.cpus))
            with (
                Gateway(
                    models,
                    exchanges_dir=run.path / "exchanges",
                    usage_sink=run,
                    seed=config.run.seed,
                    limits=GatewayLimits.of(config.gateway),
                ) as gateway,
                ExitStack() as cluster,
            ):
                worker = _worker(config, run, tasks, gateway, cluster)
                runner = Runner(
                    run,
                    policy,
                    worker,
                    executor,
                    search_tasks=list(tasks.search),
                    heldout_tasks=list(tasks.heldout),
                    heldout_seed=config.tasks.heldout_seed,
                    budget=config.budget,
                    concurrency=config.executor.concurrency,
                    seed=config.run.seed,
                    progress=progress,
                    fatal=lambda: gateway.fatal,
                    compiled_stage=compiled.stage_size(config, len(tasks.search)),
                    cpus_per_job=config.sandbox.cpus,
                    priors=priors,
                    events=tracking,
                )
                outcome = execute_with_signals(runner)
    finally:
        # After a cancel, abandoned threads end when the model server and sandboxes go away.
        executor.shutdown(cancel_pending=True, wait=runner is None or not runner.cancelled)
        if run is not None:
            reap_run(run.id)
    return run, outcome


def _worker(config: RunConfig, run: Run, tasks: RunTasks, gateway, cluster: ExitStack):
    """The engine's worker: Docker sandboxes here, or jobs on a Ray cluster (runner, archive, gateway stay
    here)."""
    from evolve.engine.evaluate import EvalSettings
    from evolve.engine.expand import ExpandSettings
    from evolve.engine.worker import EngineWorker, WorkerSettings
    from evolve.sandbox import limits_from_config, reap_run
    from evolve.sandbox.factory import DockerSandboxes
    from evolve.sandbox.pool import SandboxPool

    settings = WorkerSettings(
        eval=EvalSettings(budget_steps=config.budget.agent_steps, token_budget=config.budget.job_tokens),
        expand=ExpandSettings(
            image=config.sandbox.image,
            improve_steps=config.budget.improve_steps,
            job_tokens=config.budget.job_tokens,
            candidates=config.meta.candidates,
            temperature=config.meta.temperature,
            require_code=config.meta.require_code,
            replays=config.meta.replays,
            templates=config.meta.templates,
            locations=config.meta.locations,
            test_templates=config.meta.test_templates,
            test_locations=config.meta.test_locations,
            rerun=config.meta.rerun,
            rerun_passed=config.meta.rerun_passed,
            repairs=config.meta.repairs,
            repair_locations=config.meta.repair_locations,
            line_repairs=config.meta.line_repairs,
            line_locations=config.meta.line_locations,
        ),
        meta=config.meta,
        pooled_experience=config.policy.name == "gea",
    )
    sandboxes = DockerSandboxes(run.id, limits_from_config(config.sandbox))
    if config.executor.kind == "ray":
        from evolve.cluster.head import ray_worker

        return cluster.enter_context(
            ray_worker(
                run,
                {**tasks.search, **tasks.heldout},
                gateway=gateway,
                address=config.executor.ray_address,
                settings=settings,
                sandboxes=sandboxes,
                seed=config.run.seed,
            )
        )
    pool = cluster.enter_context(SandboxPool())  # fresh containers, started ahead; drained before the gateway
    return EngineWorker(
        run,
        {**tasks.search, **tasks.heldout},
        sandboxes=replace(sandboxes, pool=pool),
        gateway=gateway,
        settings=settings,
        seed=config.run.seed,
        cancel=lambda: reap_run(run.id),
    )
