"""The one job pipeline on a local Ray cluster: the same evaluation and expansion work as
tests/unit/engine/test_pipeline.py, shipped to a worker process by the cluster place (evolve.cluster.head),
must come to the same outcomes and the same timeouts (tests/unit/engine/pipeline_cases.py)."""

from __future__ import annotations

from evolve.archive.store import Run
from evolve.cluster.head import OnCluster
from evolve.cluster.local import LocalRayCluster
from evolve.engine.executors import RayExecutor
from evolve.llm.gateway import Gateway
from tests.unit.engine.pipeline_cases import MODELS, agent_code, check, run_cases


def test_evaluation_and_expansion_on_ray_come_to_the_same_outcomes_and_timeouts(tmp_path, ray_module):
    run = Run.create(tmp_path / "run")
    run.add_node(agent_code(tmp_path / "agent"))
    with (
        LocalRayCluster(head_cpus=1, worker_cpus=(1,)) as cluster,
        Gateway(MODELS, exchanges_dir=run.path / "exchanges") as gateway,
    ):
        executor = RayExecutor(cluster.address)
        try:
            origin = gateway.start_tcp(host="127.0.0.1").removesuffix("/v1")
            got, wheres = run_cases(
                run, lambda sandboxes: OnCluster(run, gateway, origin, executor, sandboxes)
            )
            assert wheres <= set(executor.alive_nodes())  # shipped: run by Ray workers, not here
        finally:
            executor.shutdown(cancel_pending=True)
    check(got)
