"""The head-node half of remote jobs: a `Worker` whose sandbox work runs as Ray tasks on worker nodes.

The runner, the archive, the policy and the gateway stay on the head. For each job `RemoteWorker`
packs the node's commit as tar bytes, opens the job on the head gateway (whose TCP listener worker
nodes reach with the job's bearer token), submits the worker-node half (evolve.cluster.node) to a
cluster executor, and unpacks the returned logs into the run. A lost worker (`WorkerLost`: the node
died, the process crashed) is an `infra` attempt: the job is tried again, on whichever node is
alive, within the same runner job, so the runner records exactly one result per job. Every attempt
is a line of the job's `attempts.jsonl`.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
import threading
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any, Protocol

from evolve.archive.records import Job, Node
from evolve.archive.store import Run
from evolve.errors import EvolveError
from evolve.engine.executors import WorkerLost
from evolve.engine.jobs import EvaluationResult, ExpansionResult
from evolve.llm.gateway import Gateway
from evolve.llm.relay import GatewayGrant
from evolve.cluster.node import (
    EvaluationJob,
    ExpansionJob,
    RemoteOutcome,
    run_evaluation,
    run_expansion,
    unpack,
)
from evolve.sandbox.types import SandboxLimits
from evolve.tasks.types import Task
from evolve.engine.worker import WorkerSettings, agent_files, diagnose_node


class Cluster(Protocol):
    """Where the worker-node halves run (`RayExecutor` fits)."""

    def submit(self, fn: Callable[..., Any], /, *args: Any) -> Future: ...


def commit_tar(run: Run, node_id: str) -> bytes:
    """The files of a node's commit as a tar (`git archive` on the run's code store)."""
    commit = run.node(node_id).commit
    return subprocess.run(["git", f"--git-dir={run.code.path}", "archive", "--format=tar", commit],
                          capture_output=True, check=True).stdout


class RemoteWorker:
    """Runs a run's jobs on a cluster; safe to call from several runner threads at once."""

    def __init__(self, run: Run, tasks: Mapping[str, Task], *, gateway: Gateway, gateway_origin: str,
                 cluster: Cluster, settings: WorkerSettings, limits: SandboxLimits, seed: int,
                 lost_retries: int = 2, cancel: Callable[[], None] | None = None) -> None:
        self.run = run
        self.tasks = dict(tasks)
        self.gateway = gateway
        self.gateway_origin = gateway_origin
        self.cluster = cluster
        self.settings = settings
        self.limits = limits
        self.seed = seed
        self.lost_retries = lost_retries
        self._cancel = cancel
        self._cancelled = threading.Event()

    def _grant(self, gateway_job: str, node_id: str, role: str, token_budget: int) -> GatewayGrant:
        channel = self.gateway.open_job(gateway_job, node_id, role, token_budget)
        return GatewayGrant(self.gateway_origin, channel.token, role)

    def _attempt(self, job: Job, attempt: int, fn: Callable[[Any], RemoteOutcome], payload: Any) -> RemoteOutcome | str:
        """One remote attempt: its outcome, or why the worker was lost; logged in attempts.jsonl."""
        try:
            outcome: RemoteOutcome | str = self.cluster.submit(fn, payload).result()
        except WorkerLost as exc:
            outcome = f"worker lost: {exc}"
        line = ({"attempt": attempt, "lost": outcome} if isinstance(outcome, str) else
                {"attempt": attempt, "where": outcome.where, "outcome": getattr(outcome.result, "outcome", None)})
        with (self.run.log_dir(job.id) / "attempts.jsonl").open("a") as log:
            log.write(json.dumps(line) + "\n")
        return outcome

    def evaluate(self, job: Job, node: Node, task: str, split: str) -> EvaluationResult:
        code = commit_tar(self.run, node.id)
        lost = infra = 0
        while True:
            grants = {"solve": self._grant(str(job.id), node.id, "solve", self.settings.eval.token_budget)}
            payload = EvaluationJob(self.run.id, job.id, node.id, code, self.tasks[task], grants,
                                    self.settings.eval, self.limits)
            try:
                outcome = self._attempt(job, lost + infra, run_evaluation, payload)
            finally:
                self.gateway.close_job(str(job.id))
            if isinstance(outcome, str):
                lost += 1
                if lost > self.lost_retries or self._cancelled.is_set():
                    return EvaluationResult("infra", detail=outcome)
                continue
            log_dir = unpack(outcome.logs, self.run.log_dir(job.id))
            result = outcome.result
            assert isinstance(result, EvaluationResult)
            if result.outcome == "infra" and infra < self.settings.eval.infra_retries:
                infra += 1
                continue
            return replace(result, log_path=str(log_dir))

    def expand(self, job: Job, node: Node) -> ExpansionResult:
        log_dir = self.run.log_dir(job.id)
        instructions = self._diagnose(job, node, log_dir)
        if isinstance(instructions, ExpansionResult):
            return instructions
        code = commit_tar(self.run, node.id)
        lost = ""
        for attempt in range(self.lost_retries + 1):
            budget = self.settings.job_tokens
            grants = {"modify": self._grant(f"{job.id}-modify", node.id, "modify", budget),
                      "solve": self._grant(f"{job.id}-validate", node.id, "solve", budget)}
            payload = ExpansionJob(self.run.id, job.id, node.id, code, instructions, grants, self.settings.image,
                                   self.settings.improve_steps, self.settings.smoke_steps,
                                   self.settings.job_timeout_s, self.limits)
            try:
                outcome = self._attempt(job, attempt, run_expansion, payload)
            finally:
                self.gateway.close_job(f"{job.id}-modify")
                self.gateway.close_job(f"{job.id}-validate")
            if isinstance(outcome, str):
                lost = outcome
                if self._cancelled.is_set():
                    break
                continue
            unpack(outcome.logs, log_dir)
            result = outcome.result
            assert isinstance(result, ExpansionResult)
            child = None if result.code_dir is None else log_dir / result.code_dir
            return ExpansionResult(child, result.valid, result.reason, result.instructions)
        # Not an invalid child: the runner marks the job failed, counts no expansion, and may expand again.
        raise WorkerLost(f"{attempt + 1} attempts lost their worker; last: {lost}")

    def _diagnose(self, job: Job, node: Node, log_dir: Path) -> str | ExpansionResult:
        """The diagnosis, on the head (a model call, no sandbox): instructions, or the failed expansion."""
        with tempfile.TemporaryDirectory(prefix="evolve-files-") as tmp:
            files = agent_files(unpack(commit_tar(self.run, node.id), Path(tmp)))
        return diagnose_node(self.run, job, node, self.tasks, self.gateway, files,
                             seed=self.seed, job_tokens=self.settings.job_tokens)

    def cancel(self) -> None:
        self._cancelled.set()  # lost attempts are not tried again
        if self._cancel is not None:
            self._cancel()


@contextmanager
def ray_worker(run: Run, tasks: Mapping[str, Task], *, gateway: Gateway, address: str | None,
               settings: WorkerSettings, limits: SandboxLimits, seed: int,
               gateway_host: str | None = None) -> Iterator[RemoteWorker]:
    """Connect to the Ray cluster at `address`, serve the gateway to its nodes, and yield the worker.

    The gateway listens on the head's cluster address (or `gateway_host`); only open jobs' bearer
    tokens are accepted. Each node's leftover containers of this run are reaped on entry and exit."""
    from evolve.engine.executors import RayExecutor
    from evolve.sandbox import reap_run

    if address is not None and address.startswith("ray://"):
        raise EvolveError("executor.ray_address: Ray Client (ray://) is not supported; run `evolve run` on a "
                          "node of the cluster with ray_address = \"auto\" (worker nodes must reach its gateway)")
    cluster = RayExecutor(address)
    host = gateway_host or cluster.driver_ip()
    origin = gateway.start_tcp(host=host).removesuffix("/v1")
    cluster.on_every_node(reap_run, run.id)

    def cancel() -> None:
        cluster.cancel_pending()
        cluster.on_every_node(reap_run, run.id)

    worker = RemoteWorker(run, tasks, gateway=gateway, gateway_origin=origin, cluster=cluster, settings=settings,
                          limits=limits, seed=seed, cancel=cancel)
    try:
        yield worker
    finally:
        cluster.cancel_pending()
        cluster.on_every_node(reap_run, run.id)
        cluster.shutdown(wait=False)
