"""Runs (or resumes) a scripted evolution; the resume test SIGKILLs it midway."""

import sys
from pathlib import Path

from evolve.archive import Run
from evolve.config import BudgetConfig
from evolve.engine.executors import LocalExecutor
from evolve.engine.runner import Runner
from evolve.search import HGMPolicy
from evolve.standins.worker import ScriptedWorker


def main(path: str, delay: float) -> None:
    run_path = Path(path)
    if not (run_path / "run.sqlite").exists():
        run = Run.create(run_path)
        seed = run_path.parent / "seed-code"
        seed.mkdir(exist_ok=True)
        (seed / "agent.py").write_text("print('seed')\n")
        run.add_node(seed)
    else:
        run = Run.open(run_path, writer=True)
    executor = LocalExecutor(3)
    runner = Runner(
        run,
        HGMPolicy(),
        ScriptedWorker(run, delay_s=delay),
        executor,
        search_tasks=[f"t{i}" for i in range(15)],
        heldout_tasks=["h0", "h1"],
        budget=BudgetConfig(evaluations=40),
        concurrency=3,
        seed=5,
    )
    outcome = runner.execute()
    executor.shutdown()
    print(outcome, flush=True)


if __name__ == "__main__":
    main(sys.argv[1], float(sys.argv[2]))
