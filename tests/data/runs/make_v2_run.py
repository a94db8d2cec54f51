"""Makes `v2-run.tar.gz` and `v2-run.json` here with evolve at 9c40030 (schema v2; kept for provenance).

    git archive 9c40030 | tar -x -C /tmp/old && PYTHONPATH=/tmp/old python3 tests/data/runs/make_v2_run.py

The run: a finished search of 8 evaluations with held-out scoring; a second session killed with jobs
in flight; a resume of it killed during its first re-run; an `evolve eval` job killed midway. The JSON
holds what that code answered on it: the status, the job rows, what a resume re-queues, and how a
resume with a budget of 14 evaluations at concurrency 1 ends.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import threading
from dataclasses import asdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
TASKS = [f"task-{i:02d}" for i in range(12)]
HELDOUT = ["held-0", "held-1", "held-2"]
SEED = 3


def _runner(run, worker, budget: int, concurrency: int):
    from evolve.config import BudgetConfig
    from evolve.engine.executors import LocalExecutor
    from evolve.engine.runner import Runner
    from evolve.search import HGMPolicy

    return Runner(run, HGMPolicy(), worker, LocalExecutor(concurrency), search_tasks=TASKS,
                  heldout_tasks=HELDOUT, budget=BudgetConfig(evaluations=budget), concurrency=concurrency,
                  seed=SEED)


def _killed_session(path: Path) -> None:
    """A second session at concurrency 2, killed (no cleanup at all) inside its third evaluation."""
    from evolve.archive import Run
    from evolve.standins.worker import ScriptedWorker

    calls = []
    lock = threading.Lock()

    class Killed(ScriptedWorker):
        def evaluate(self, job, node, task, split):
            with lock:
                calls.append(job.id)
                if len(calls) == 3:
                    threading.Timer(0.3, lambda: os._exit(9)).start()
            return super().evaluate(job, node, task, split) if len(calls) < 3 else threading.Event().wait(5)

    run = Run.open(path, writer=True)
    _runner(run, Killed(run, delay_s=0.05), budget=14, concurrency=2).execute()


def _make(path: Path) -> None:
    from evolve.archive import Run
    from evolve.engine.resume import recover
    from evolve.engine.runner import task_order
    from evolve.engine.state import SearchState
    from evolve.standins.worker import ScriptedWorker

    run = Run.create(path)
    seed = path.parent / "seed"
    seed.mkdir()
    (seed / "agent.py").write_text("print('seed')\n")
    run.add_node(seed)
    _runner(run, ScriptedWorker(run), budget=8, concurrency=1).execute()
    run.close()
    killed = subprocess.run([sys.executable, __file__, "--killed-session", str(path)], check=False)
    assert killed.returncode == 9, killed.returncode
    run = Run.open(path, writer=True)
    state = SearchState.from_run(run, task_order(TASKS, SEED))
    queue = recover(run, search_tasks=state.task_order, heldout_tasks=HELDOUT, evaluated=state.evaluated)
    run.start_job(queue.search[0].kind, queue.search[0].node, queue.search[0].task, requeues=queue.search[0])
    run.start_job("evaluate", "0", "task-05")  # `evolve eval` into the run, killed
    run.close()


def _answers(fixture: Path, scratch: Path) -> dict:
    from evolve.archive import Run
    from evolve.archive.summary import run_summary
    from evolve.engine.resume import recover
    from evolve.engine.runner import task_order
    from evolve.engine.state import SearchState
    from evolve.standins.worker import ScriptedWorker

    def status(run) -> dict:
        return {**run_summary(run), "path": None}

    with Run.open(fixture) as reader:
        answers = {"status": status(reader), "jobs": [asdict(j) for j in reader.jobs()],
                   "decisions_recorded": reader.decisions_recorded()}
    shutil.copytree(fixture, scratch / "a")
    with Run.open(scratch / "a", writer=True) as run:
        state = SearchState.from_run(run, task_order(TASKS, SEED))
        queue = recover(run, search_tasks=state.task_order, heldout_tasks=HELDOUT, evaluated=state.evaluated)
        answers["requeue"] = {"search": [j.id for j in queue.search],
                              "heldout": [j.id for j in queue.heldout]}
    shutil.copytree(fixture, scratch / "b")
    with Run.open(scratch / "b", writer=True) as run:
        runner = _runner(run, ScriptedWorker(run), budget=14, concurrency=1)
        outcome = runner.execute()
        runner.executor.shutdown()
        answers["resumed"] = {"outcome": asdict(outcome), "status": status(run),
                              "jobs": [asdict(j) for j in run.jobs()]}
    return answers


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "run"
        _make(path)
        with tarfile.open(HERE / "v2-run.tar.gz", "w:gz") as tar:
            tar.add(path, arcname="run")
        (Path(tmp) / "scratch").mkdir()
        answers = _answers(path, Path(tmp) / "scratch")
    (HERE / "v2-run.json").write_text(json.dumps(answers, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--killed-session"]:
        _killed_session(Path(sys.argv[2]))
    else:
        main()
