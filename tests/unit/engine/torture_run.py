"""Runs (or resumes) a scripted evolution with held-out scoring; the torture test SIGKILLs it anywhere.

argv: RUN_DIR SEED CONCURRENCY DELAY_S. Prints the outcome's stop reason on a clean end.
"""

import sys
from pathlib import Path

from evolve.archive import Run
from evolve.config import BudgetConfig
from evolve.engine.executors import LocalExecutor
from evolve.engine.runner import Runner
from evolve.search import HGMPolicy
from evolve.standins.worker import ScriptedWorker

SEARCH = [f"t{i}" for i in range(10)]
HELDOUT = [f"h{i}" for i in range(4)]
BUDGET = BudgetConfig(evaluations=24, invalid_streak=6)


def open_or_create(path: Path) -> Run:
    if (path / "run.sqlite").exists():
        return Run.open(path, writer=True)
    run = Run.create(path)
    seed = path.parent / f"{path.name}-seed"
    seed.mkdir(exist_ok=True)
    (seed / "agent.py").write_text("print('seed')\n")
    run.add_node(seed)
    return run


def main(path: str, seed: int, concurrency: int, delay: float) -> None:
    run = open_or_create(Path(path))
    executor = LocalExecutor(concurrency)
    worker = ScriptedWorker(run, seed=seed, delay_s=delay, invalid_every=4)
    runner = Runner(
        run,
        HGMPolicy(),
        worker,
        executor,
        search_tasks=SEARCH,
        heldout_tasks=HELDOUT,
        budget=BUDGET,
        concurrency=concurrency,
        seed=seed,
    )
    outcome = runner.execute()
    executor.shutdown()
    run.close()
    print(
        f"stopped: {outcome.stop_reason}; best {outcome.best_node}; heldout {outcome.heldout_passed}"
        f"/{outcome.heldout_total} scored={outcome.heldout_scored}",
        flush=True,
    )


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]))
