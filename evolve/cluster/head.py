"""The head-node half of remote jobs: the engine worker's place on a Ray cluster.

The runner, the archive, the policy, the gateway and each expansion's diagnosis stay on the head
(evolve.engine.worker). For each attempt `OnCluster` packs the node's commit as tar bytes, opens the
work's model channels on the head gateway (whose TCP listener worker nodes reach with the job's
bearer token), ships the work (the same evaluation or expansion function the local worker runs) to
a cluster executor (evolve.cluster.node), and unpacks the returned logs into the run. A lost worker
(`WorkerLost`: the node died, the process crashed) is an infra attempt, retried by the worker's one
rule on whichever node is alive, within the same runner job.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Protocol, TypeVar

from evolve.archive.records import Job, Node
from evolve.archive.store import Run
from evolve.cluster.node import RemoteOutcome, ShippedJob, run_shipped, unpack
from evolve.engine.context import SandboxMaker, Work
from evolve.engine.jobs import EvaluationResult, ExpansionResult
from evolve.engine.worker import EngineWorker, WorkerSettings
from evolve.errors import EvolveError
from evolve.llm.gateway import Gateway
from evolve.llm.relay import GatewayGrant
from evolve.tasks.types import Task

R = TypeVar("R")


class Cluster(Protocol):
    """Where the worker-node halves run (`RayExecutor` fits)."""

    def submit(self, fn: Callable[..., Any], /, *args: Any) -> Future: ...


def commit_tar(run: Run, node_id: str) -> bytes:
    """The files of a node's commit as a tar (`git archive` on the run's code store)."""
    commit = run.node(node_id).commit
    return subprocess.run(
        ["git", f"--git-dir={run.code.path}", "archive", "--format=tar", commit],
        capture_output=True,
        check=True,
    ).stdout


def relocate(result: Any, remote_log_dir: str, log_dir: Path) -> Any:
    """A result's paths, from the worker node's log directory to the run's."""
    if isinstance(result, EvaluationResult) and result.log_path is not None:
        return replace(result, log_path=str(log_dir))
    if isinstance(result, ExpansionResult) and result.code_dir is not None:
        return replace(result, code_dir=log_dir / result.code_dir.relative_to(remote_log_dir))
    return result


@dataclass(frozen=True)
class OnCluster:
    """A `Place` (evolve.engine.worker): each attempt's work runs on a node of `cluster`."""

    run: Run
    gateway: Gateway
    gateway_origin: str
    cluster: Cluster
    sandboxes: SandboxMaker
    """Made on the node: its limits travel with it."""

    def run_work(self, job: Job, node: Node, work: Work[R]) -> tuple[R, str]:
        opened: list[str] = []
        grants: dict[str, GatewayGrant] = {}
        try:
            for spec in work.channels(str(job.id)):
                channel = self.gateway.open_job(spec.job, node.id, spec.role, spec.tokens)
                opened.append(spec.job)
                grants[spec.role] = GatewayGrant(
                    self.gateway_origin, channel.token, spec.role, self.gateway.limits.max_request_bytes
                )
            shipped = ShippedJob(job.id, node.id, commit_tar(self.run, node.id), grants, self.sandboxes, work)
            outcome: RemoteOutcome = self.cluster.submit(run_shipped, shipped).result()
        finally:
            for name in opened:
                self.gateway.close_job(name)
        log_dir = unpack(outcome.logs, self.run.log_dir(job.id))
        return relocate(outcome.result, outcome.log_dir, log_dir), outcome.where


def cluster_worker(
    run: Run,
    tasks: Mapping[str, Task],
    *,
    gateway: Gateway,
    gateway_origin: str,
    cluster: Cluster,
    settings: WorkerSettings,
    sandboxes: SandboxMaker,
    seed: int,
    cancel: Callable[[], object] | None = None,
) -> EngineWorker:
    """The engine worker with its sandbox work on `cluster`."""
    place = OnCluster(run, gateway, gateway_origin, cluster, sandboxes)
    return EngineWorker(run, tasks, gateway=gateway, settings=settings, seed=seed, place=place, cancel=cancel)


@contextmanager
def ray_worker(
    run: Run,
    tasks: Mapping[str, Task],
    *,
    gateway: Gateway,
    address: str | None,
    settings: WorkerSettings,
    sandboxes: SandboxMaker,
    seed: int,
    gateway_host: str | None = None,
) -> Iterator[EngineWorker]:
    """Connect to the Ray cluster at `address`, serve the gateway to its nodes, and yield the worker.

    The gateway listens on the head's cluster address (or `gateway_host`); only open jobs' bearer
    tokens are accepted. Each node's leftover containers of this run are reaped on entry and exit."""
    from evolve.engine.executors import RayExecutor
    from evolve.sandbox import reap_run

    if address is not None and address.startswith("ray://"):
        raise EvolveError(
            "executor.ray_address: Ray Client (ray://) is not supported; run `evolve run` on a "
            'node of the cluster with ray_address = "auto" (worker nodes must reach its gateway)'
        )
    cluster = RayExecutor(address)
    host = gateway_host or cluster.driver_ip()
    origin = gateway.start_tcp(host=host).removesuffix("/v1")
    cluster.on_every_node(reap_run, run.id)

    def cancel() -> None:
        cluster.cancel_pending()
        cluster.on_every_node(reap_run, run.id)

    try:
        yield cluster_worker(
            run,
            tasks,
            gateway=gateway,
            gateway_origin=origin,
            cluster=cluster,
            settings=settings,
            sandboxes=sandboxes,
            seed=seed,
            cancel=cancel,
        )
    finally:
        cluster.cancel_pending()
        cluster.on_every_node(reap_run, run.id)
        cluster.shutdown(wait=False)
