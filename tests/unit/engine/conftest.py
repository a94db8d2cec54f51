from __future__ import annotations

from pathlib import Path

import pytest

from evolve.archive import Run
from evolve.config import BudgetConfig
from evolve.engine.executors import LocalExecutor
from evolve.engine.runner import Runner
from evolve.search import HGMPolicy
from evolve.standins.worker import ScriptedWorker

TASKS = [f"task-{i:02d}" for i in range(12)]
HELDOUT = ["held-0", "held-1", "held-2"]


def seeded_run(path: Path) -> Run:
    run = Run.create(path)
    seed = path.parent / f"{path.name}-seed"
    seed.mkdir()
    (seed / "agent.py").write_text("print('seed')\n")
    run.add_node(seed)
    return run


@pytest.fixture
def make_runner(tmp_path):
    """make_runner(budget=BudgetConfig(...), worker_kwargs) -> (runner, run, worker)."""
    made = []

    def make(
        budget: BudgetConfig | None = None,
        policy=None,
        run: Run | None = None,
        concurrency: int = 2,
        heldout_seed: bool = False,
        **worker_kwargs,
    ):
        run = run or seeded_run(tmp_path / "run")
        worker = ScriptedWorker(run, **worker_kwargs)
        executor = LocalExecutor(concurrency)
        made.append(executor)
        runner = Runner(
            run,
            policy or HGMPolicy(),
            worker,
            executor,
            search_tasks=TASKS,
            heldout_tasks=HELDOUT,
            heldout_seed=heldout_seed,
            budget=budget or BudgetConfig(evaluations=30),
            concurrency=concurrency,
            seed=3,
        )
        return runner, run, worker

    yield make
    for executor in made:
        executor.shutdown(cancel_pending=True)
