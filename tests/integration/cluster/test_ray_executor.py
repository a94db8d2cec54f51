"""RayExecutor on a local cluster (a head and one worker node): results as data, errors as they are,
a lost worker as `WorkerLost`, and the scale benchmark's Ray half."""

from __future__ import annotations

import os
import time

import pytest

from evolve.bench.scale import bench_scale
from evolve.cluster.local import LocalRayCluster
from evolve.engine.executors import RayExecutor, WorkerLost


def _where(seconds: float) -> str:
    import ray

    time.sleep(seconds)
    return ray.get_runtime_context().get_node_id()


def _fail() -> None:
    raise KeyError("the job's own bug")


def _crash() -> None:
    os._exit(3)


@pytest.fixture(scope="module")
def cluster(ray_module):
    with LocalRayCluster(head_cpus=1, worker_cpus=(1,)) as local:
        yield local


@pytest.fixture
def executor(cluster):
    executor = RayExecutor(cluster.address)
    executor.wait_for_cpus(cluster.cpus)
    yield executor
    executor.shutdown(cancel_pending=True)


def test_jobs_run_on_both_nodes_and_return_data(executor):
    futures = [executor.submit(_where, 1.0) for _ in range(2)]
    nodes = {future.result(timeout=60) for future in futures}
    assert nodes == set(executor.alive_nodes()) and len(nodes) == 2
    assert set(executor.on_every_node(_where, 0.0)) == nodes


def test_an_exception_of_the_job_arrives_as_itself(executor):
    with pytest.raises(KeyError, match="the job's own bug"):
        executor.submit(_fail).result(timeout=60)


def test_a_crashed_worker_process_is_a_lost_worker_and_not_retried_by_ray(executor):
    with pytest.raises(WorkerLost, match="WorkerCrashedError"):
        executor.submit(_crash).result(timeout=60)


def test_the_ray_half_of_the_scale_benchmark(cluster):
    result = bench_scale(levels=(1, 2), sleep_s=0.3, rounds=2, ray_address=cluster.address).to_json()
    assert set(result) == {"local", "ray"} and set(result["ray"]) == {"1", "2"}
    for row in result["ray"].values():
        assert 0.5 < row["fraction_of_ideal"] <= 1.01 and row["jobs_per_s"] > 0


def test_a_node_that_dies_midway_fails_its_jobs_with_worker_lost(cluster, executor):
    futures = [executor.submit(_where, 8.0) for _ in range(2)]  # one per node
    time.sleep(3)
    cluster.workers[0].kill()
    outcomes = []
    for future in futures:
        try:
            outcomes.append(future.result(timeout=120))
        except WorkerLost as exc:
            outcomes.append(exc)
    lost = [o for o in outcomes if isinstance(o, WorkerLost)]
    assert len(lost) == 1
    assert "NodeDiedError" in str(lost[0]) or "WorkerCrashedError" in str(lost[0])
    deadline = time.monotonic() + 60  # the head notices a dead node by its missed heartbeats
    while len(executor.alive_nodes()) != 1 and time.monotonic() < deadline:
        time.sleep(0.5)
    assert len(executor.alive_nodes()) == 1
