"""`evolve bench engine`: the engine's own overhead per evaluation job, with an instant scripted agent.

The real path runs (Docker sandbox for the agent, copy in, diff out, a second sandbox to grade,
the archive write); the model answers `done` at once, so what is left is the engine's cost. The
agent process's own time (from the job's agent.log) is subtracted from each job's wall time. The
sandboxes come from a pool, as in `evolve run`: each job still gets fresh containers, started ahead.
"""

from __future__ import annotations

import re
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

_AGENT_TIME = re.compile(r"^exit -?\d+, ([0-9.]+) s")


@dataclass(frozen=True)
class EngineBench:
    overhead_median_s: float
    overhead_p95_s: float
    jobs_per_s: dict[int, float]
    median_by_level: dict[int, float] = field(default_factory=dict)
    """The median overhead at each concurrency level (jobs share the cores above 1)."""

    def to_json(self) -> dict:
        return {
            "overhead_s_per_eval": {
                "median": round(self.overhead_median_s, 3),
                "p95": round(self.overhead_p95_s, 3),
                "median_by_concurrency": {str(k): round(v, 3) for k, v in self.median_by_level.items()},
            },
            "jobs_per_s": {str(k): round(v, 3) for k, v in self.jobs_per_s.items()},
        }


def agent_seconds(log_dir: Path | None) -> float:
    """The agent process's own run time, from the first line of the job's agent.log."""
    if log_dir is None or not (Path(log_dir) / "agent.log").is_file():
        return 0.0
    match = _AGENT_TIME.match((Path(log_dir) / "agent.log").read_text())
    return float(match.group(1)) if match else 0.0


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def bench_engine(
    jobs: int = 8, levels: tuple[int, ...] = (1, 2, 4), image: str = "evolve-base:latest"
) -> EngineBench:
    """Run `jobs` evaluation jobs at each concurrency level and measure overhead and throughput."""
    from evolve.archive import Run
    from evolve.archive.vocab import JobKind
    from evolve.engine.evaluate import EvalSettings
    from evolve.engine.executors import LocalExecutor
    from evolve.engine.expand import ExpandSettings
    from evolve.engine.worker import EngineWorker, WorkerSettings
    from evolve.llm.gateway import Gateway
    from evolve.sandbox import SandboxLimits, reap_run
    from evolve.sandbox.factory import DockerSandboxes
    from evolve.sandbox.pool import SandboxPool
    from evolve.seed import copy_seed
    from evolve.standins.models import RoutedModel
    from evolve.tasks import load_suite

    tasks = list(load_suite("humaneval").split("dev").select(limit=jobs))
    instant = RoutedModel([], "```done\n```", name="instant")
    overheads: list[float] = []
    by_level: dict[int, list[float]] = {}
    throughput: dict[int, float] = {}
    with tempfile.TemporaryDirectory(prefix="evolve-bench-engine-") as tmp:
        run = Run.create(Path(tmp) / "run")
        node = run.add_node(copy_seed(Path(tmp) / "seed"))
        settings = WorkerSettings(
            eval=EvalSettings(budget_steps=1, infra_retries=0), expand=ExpandSettings(image=image)
        )
        try:
            with (
                Gateway(
                    {"solve": instant, "modify": instant, "diagnose": instant},
                    exchanges_dir=run.path / "exchanges",
                    usage_sink=run,
                ) as gateway,
                SandboxPool() as pool,
            ):
                worker = EngineWorker(
                    run,
                    {t.id: t for t in tasks},
                    sandboxes=DockerSandboxes(run.id, SandboxLimits(memory="512m"), pool),
                    gateway=gateway,
                    settings=settings,
                    seed=0,
                )
                for level in levels:
                    executor = LocalExecutor(level)
                    start = time.monotonic()
                    pending = []
                    for task in tasks:
                        job = run.start_job(JobKind.EVALUATE, node.id, task.id)
                        pending.append(
                            (job, task.id, executor.submit(worker.evaluate, job, node, task.id, "dev"))
                        )
                    for job, task_id, future in pending:
                        result = future.result()
                        run.record_evaluation(
                            node.id,
                            task_id,
                            result.outcome,
                            duration_s=result.duration_s,
                            log_path=result.log_path,
                            job_id=job.id,
                        )
                        log_dir = Path(result.log_path) if result.log_path else None
                        overheads.append(max(result.duration_s - agent_seconds(log_dir), 0.0))
                        by_level.setdefault(level, []).append(overheads[-1])
                    throughput[level] = len(tasks) / (time.monotonic() - start)
                    executor.shutdown()
        finally:
            reap_run(run.id)
            run.close()
    return EngineBench(
        statistics.median(overheads),
        _p95(overheads),
        throughput,
        {level: statistics.median(values) for level, values in by_level.items()},
    )
