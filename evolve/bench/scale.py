"""`evolve bench scale`: job throughput of the executors with a scripted agent that sleeps a fixed time.

At each concurrency level c, c x `rounds` sleep-jobs go through the executor with c in flight; the
ideal is c / sleep_s jobs per second. Locally the executor is the thread pool; on Ray it is a
`RayExecutor` on a local cluster (a head and one worker node, started here) or on `ray_address`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, wait
from contextlib import ExitStack
from dataclasses import dataclass

from evolve.engine.executors import Executor, LocalExecutor
from evolve.engine.jobs import EvaluationResult
from evolve.errors import EvolveError

LEVELS = (1, 4, 16)


def sleep_job(seconds: float) -> EvaluationResult:
    """The scripted agent: sleeps, then reports a pass."""
    time.sleep(seconds)
    return EvaluationResult("pass", duration_s=seconds)


@dataclass(frozen=True)
class Throughput:
    jobs: int
    seconds: float
    jobs_per_s: float
    fraction_of_ideal: float

    def to_json(self) -> dict:
        return {
            "jobs_per_s": round(self.jobs_per_s, 3),
            "fraction_of_ideal": round(self.fraction_of_ideal, 3),
        }


@dataclass(frozen=True)
class ScaleBench:
    sleep_s: float
    local: dict[int, Throughput]
    ray: dict[int, Throughput] | None
    ray_skipped: str | None = None

    def to_json(self) -> dict:
        ray = (
            {str(c): t.to_json() for c, t in self.ray.items()}
            if self.ray is not None
            else {"skipped": self.ray_skipped}
        )
        return {"local": {str(c): t.to_json() for c, t in self.local.items()}, "ray": ray}


def measure(executor: Executor, concurrency: int, *, sleep_s: float, rounds: int) -> Throughput:
    """Keep `concurrency` sleep-jobs in flight until concurrency x rounds are done."""
    total = concurrency * rounds
    submitted = 0
    started = time.perf_counter()
    in_flight: set[Future[EvaluationResult]] = set()
    while submitted < total or in_flight:
        while submitted < total and len(in_flight) < concurrency:
            in_flight.add(executor.submit(sleep_job, sleep_s))
            submitted += 1
        done, in_flight = wait(in_flight, return_when=FIRST_COMPLETED)
        for future in done:
            if future.result().outcome != "pass":
                raise EvolveError("a sleep-job did not pass")
    seconds = time.perf_counter() - started
    rate = total / seconds
    return Throughput(total, seconds, rate, rate / (concurrency / sleep_s))


def bench_levels(
    make: Callable[[int], Executor], levels: Sequence[int], *, sleep_s: float, rounds: int
) -> dict[int, Throughput]:
    results = {}
    for level in levels:
        executor = make(level)
        try:
            results[level] = measure(executor, level, sleep_s=sleep_s, rounds=rounds)
        finally:
            executor.shutdown()
    return results


def _bench_ray(
    levels: Sequence[int], *, sleep_s: float, rounds: int, address: str | None
) -> dict[int, Throughput]:
    from evolve.cluster.local import LocalRayCluster
    from evolve.engine.executors import RayExecutor

    top = max(levels)
    half = top / 2
    with ExitStack() as cluster:
        started_here = address is None
        if address is None:
            address = cluster.enter_context(
                LocalRayCluster(head_cpus=half, worker_cpus=(top - half,))
            ).address
        executor = RayExecutor(address, cpus_per_job=1)
        try:
            executor.wait_for_cpus(top if started_here else 1)
            # Warm up: start the worker processes of every slot before anything is timed.
            measure(executor, top, sleep_s=sleep_s, rounds=1)
            return {level: measure(executor, level, sleep_s=sleep_s, rounds=rounds) for level in levels}
        finally:
            executor.shutdown(cancel_pending=True)


def bench_scale(
    levels: Sequence[int] = LEVELS,
    *,
    sleep_s: float = 0.5,
    rounds: int = 4,
    ray: bool = True,
    ray_address: str | None = None,
) -> ScaleBench:
    """Throughput at each level, locally and (when `ray` and Ray is installed) on a Ray cluster."""
    local = bench_levels(LocalExecutor, levels, sleep_s=sleep_s, rounds=rounds)
    if not ray:
        return ScaleBench(sleep_s, local, None, "not asked for (--no-ray)")
    try:
        import ray as _ray  # noqa: F401
    except ImportError:
        return ScaleBench(sleep_s, local, None, "ray is not installed: pip install 'evolve[distributed]'")
    return ScaleBench(sleep_s, local, _bench_ray(levels, sleep_s=sleep_s, rounds=rounds, address=ray_address))
