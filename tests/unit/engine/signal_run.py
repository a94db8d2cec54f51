"""A scripted evolution under the CLI's signal handling; exits as `evolve run` does (128 + signal).

argv: RUN_DIR. Jobs take 0.4 s, so a signal finds some in flight.
"""

import sys
from pathlib import Path

from evolve.archive import Run
from evolve.config import BudgetConfig
from evolve.engine.executors import LocalExecutor
from evolve.engine.runner import Runner
from evolve.launch import execute_with_signals, exit_status
from evolve.search import HGMPolicy
from evolve.standins.worker import ScriptedWorker


def main(path: str) -> int:
    run = Run.create(Path(path))
    seed = Path(path).parent / "seed-code"
    seed.mkdir(exist_ok=True)
    (seed / "agent.py").write_text("print('seed')\n")
    run.add_node(seed)
    executor = LocalExecutor(2)
    worker = ScriptedWorker(run, delay_s=0.4)
    runner = Runner(
        run,
        HGMPolicy(),
        worker,
        executor,
        search_tasks=[f"t{i}" for i in range(20)],
        heldout_tasks=["h0"],
        budget=BudgetConfig(evaluations=500),
        concurrency=2,
        seed=1,
    )
    outcome = execute_with_signals(runner)
    executor.shutdown(cancel_pending=True, wait=not runner.cancelled)
    print(f"stopped: {outcome.stop_reason}; worker cancelled: {worker.cancelled.is_set()}", flush=True)
    return exit_status(outcome)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
