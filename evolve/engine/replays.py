"""Recorded evaluations replayed: which recorded evaluation came from which job, and the gateway channel
that answers a re-run from a job's recorded exchanges instead of a model. `evolve replay` (evolve.replay) and
the engine's own replay checks (evolve.engine.behaviour) both use them."""

from __future__ import annotations

from evolve.archive.records import Evaluation, Job
from evolve.archive.store import Run
from evolve.archive.vocab import JobState


def replayable(run: Run, node: str | None = None) -> list[tuple[Evaluation, Job | None]]:
    """Each recorded evaluation with the finished evaluation job that produced it (None: not found).

    Jobs carry no evaluation id, so they are paired by (node, task) in order: the k-th evaluation of
    a node on a task came from its k-th finished evaluation job (infra retries end `failed`).
    """
    jobs: dict[tuple[str, str | None], list[Job]] = {}
    for job in run.jobs(JobState.FINISHED):
        if job.kind == "evaluate":
            jobs.setdefault((job.node, job.task), []).append(job)
    pairs = []
    for evaluation in run.evaluations(node):
        queue = jobs.get((evaluation.node, evaluation.task), [])
        pairs.append((evaluation, queue.pop(0) if queue else None))
    return pairs


class ReplayChannels:
    """The gateway, with every job opened under the recorded job's id, so its exchanges are replayed; the
    gateway's report of each job is kept as it closes (`closed`)."""

    def __init__(self, gateway, recorded_job: int | str) -> None:
        self._gateway = gateway
        self._recorded = recorded_job
        self.closed: list = []

    def open_job(self, job_id: str | int, node_id: str, role: str, token_budget: int):
        return self._gateway.open_job(self._recorded, node_id, role, token_budget)

    def report(self, job_id: str | int):
        return self._gateway.report(self._recorded)

    def close_job(self, job_id: str | int):
        report = self._gateway.close_job(self._recorded)
        self.closed.append(report)
        return report
