"""The engine worker placed on a cluster (evolve.cluster.head) under the real Runner, with a stand-in cluster
that loses some attempts.

The cluster answers each shipped job as a worker node would (a result and its logs as bytes) but
raises `WorkerLost` for chosen attempts. Checks: code travels as a tar of the node's commit, lost
attempts run again, every dispatched job finishes exactly once, infra is never counted, gateway
grants are closed, and a job whose every attempt is lost ends as infra (evaluation) or a failed
job (expansion) without a node.
"""

from __future__ import annotations

import json
import tempfile
import threading
import zlib
from collections import Counter
from concurrent.futures import Future
from pathlib import Path

import pytest

from evolve.archive import Run
from evolve.archive.codetree import tree_entries, tree_id
from evolve.cluster.head import cluster_worker
from evolve.cluster.node import RemoteOutcome, pack_dir, unpack
from evolve.config import BudgetConfig
from evolve.engine.evaluate import Evaluation
from evolve.engine.executors import LocalExecutor, WorkerLost
from evolve.engine.expand import Expansion
from evolve.engine.jobs import EvaluationResult, ExpansionResult
from evolve.engine.runner import Runner
from evolve.engine.worker import WorkerSettings
from evolve.llm.gateway import Gateway, GatewayError
from evolve.sandbox.factory import ProcessSandboxes
from evolve.search import HGMPolicy
from evolve.standins.models import RoutedModel
from evolve.tasks.types import Task

TASKS = [f"task-{i:02d}" for i in range(8)]
DIAGNOSIS = (
    '```json\n{"problem": "p", "cause": "c", "change": "note each attempt in it", "files": ["agent.py"]}\n```'
)


class LosingCluster:
    """Answers like a worker node; loses the attempts for which `lose(payload, attempt)` is true."""

    def __init__(self, gateway: Gateway, lose) -> None:
        self.gateway, self.lose = gateway, lose
        self.attempts: Counter[int] = Counter()
        self.shipped: list[set[str]] = []
        self._lock = threading.Lock()

    def submit(self, fn, payload) -> Future:
        with self._lock:
            attempt = self.attempts[payload.job_id]
            self.attempts[payload.job_id] += 1
        future: Future = Future()
        for grant in payload.grants.values():  # open on the head while the attempt runs
            assert grant.origin == "http://head:1" and grant.token
        with tempfile.TemporaryDirectory() as tmp:
            code = unpack(payload.code, Path(tmp) / "code")
            self.shipped.append({p.name for p in code.iterdir()})
            if self.lose(payload, attempt):
                future.set_exception(WorkerLost("NodeDiedError: the node died"))
                return future
            logs = Path(tmp) / "logs"
            logs.mkdir()
            work = payload.work
            if isinstance(work, Evaluation):
                draw = zlib.crc32(f"{payload.node_id}/{work.task.id}".encode()) % 3
                result = EvaluationResult("pass" if draw == 0 else "fail", duration_s=0.1, log_path=str(logs))
                (logs / "agent.log").write_text(f"exit 0 on {work.task.id}\n")
            else:
                assert isinstance(work, Expansion)
                child = unpack(payload.code, logs / "child")
                (child / "CHANGES").write_text(f"job {payload.job_id}\n")
                result = ExpansionResult(
                    logs / "child",
                    valid=True,
                    instructions=work.instructions,
                    tree=tree_id(tree_entries(child)),
                )
            future.set_result(RemoteOutcome(result, pack_dir(logs), str(logs), where=f"node-{attempt}"))
        return future


def _task(name: str) -> Task:
    return Task(name, "fake", "dev", f"solve {name}", {"a.py": b""}, {}, "", "true")


def _run_with(tmp_path: Path, lose, evaluations: int = 8):
    run = Run.create(tmp_path / "run")
    seed = tmp_path / "seed"
    seed.mkdir()
    (seed / "agent.py").write_text("print('seed')\n")
    run.add_node(seed)
    models = {
        "diagnose": RoutedModel([], DIAGNOSIS),
        "modify": RoutedModel([], "x"),
        "solve": RoutedModel([], "x"),
    }
    gateway = Gateway(models, exchanges_dir=run.path / "exchanges")
    cluster = LosingCluster(gateway, lose)
    worker = cluster_worker(
        run,
        {t: _task(t) for t in TASKS},
        gateway=gateway,
        gateway_origin="http://head:1",
        cluster=cluster,
        settings=WorkerSettings(),
        sandboxes=ProcessSandboxes(),
        seed=1,
    )
    executor = LocalExecutor(3)
    runner = Runner(
        run,
        HGMPolicy(),
        worker,
        executor,
        search_tasks=TASKS,
        budget=BudgetConfig(evaluations=evaluations),
        concurrency=3,
        seed=2,
    )
    try:
        outcome = runner.execute()
        for job in run.jobs():  # every grant of every attempt was closed on the head
            for name in (str(job.id), f"{job.id}-diagnose", f"{job.id}-modify", f"{job.id}-validate"):
                with pytest.raises(GatewayError):
                    gateway.usage(name)
    finally:
        executor.shutdown()
        gateway.close()
    return run, cluster, outcome


def _attempts(run: Run, job_id: int) -> list[dict]:
    return [json.loads(line) for line in (run.log_dir(job_id) / "attempts.jsonl").read_text().splitlines()]


def test_lost_attempts_run_again_and_every_job_finishes_once(tmp_path):
    run, cluster, outcome = _run_with(
        tmp_path, lambda payload, attempt: payload.job_id % 3 == 0 and attempt == 0
    )
    assert outcome.stop_reason == "evaluation budget spent (8/8)"
    jobs = run.jobs()
    assert {j.state for j in jobs} == {"finished"}
    assert all(files >= {"agent.py"} for files in cluster.shipped)  # the node's commit, as tar bytes
    lost = [j for j in jobs if j.id % 3 == 0]
    assert lost and all(cluster.attempts[j.id] == 2 for j in lost)
    for job in lost:
        first, second = _attempts(run, job.id)
        assert first == {"attempt": 0, "lost": "worker lost: NodeDiedError: the node died"}
        assert second["where"] == "node-1"
    evaluations = run.evaluations()
    assert len(evaluations) == sum(j.kind == "evaluate" for j in jobs) and len(evaluations) == 8
    assert max(Counter((e.node, e.task) for e in evaluations).values()) == 1
    assert all(Path(e.log_path, "agent.log").is_file() for e in evaluations)  # logs came back as data
    children = [n for n in run.nodes() if n.parent is not None]
    assert children and all((run.checkout(n.id, tmp_path / n.id) / "CHANGES").is_file() for n in children)


def test_an_evaluation_whose_every_attempt_is_lost_is_infra_and_not_counted(tmp_path):
    run, cluster, _ = _run_with(tmp_path, lambda payload, attempt: payload.job_id == 1, evaluations=4)
    (first,) = [e for e in run.evaluations() if e.log_path is None]
    assert first.outcome == "infra" and cluster.attempts[1] == 3  # two re-runs, then given up
    assert len([e for e in run.evaluations() if e.outcome != "infra"]) == 4
    assert {j.state for j in run.jobs()} == {"finished"}


def test_an_expansion_whose_every_attempt_is_lost_fails_its_job_and_adds_no_node(tmp_path):
    doomed: list[int] = []

    def lose_the_first_expansion(payload, attempt: int) -> bool:
        if isinstance(payload.work, Expansion) and not doomed:
            doomed.append(payload.job_id)
        return payload.job_id in doomed

    run, cluster, _ = _run_with(tmp_path, lose_the_first_expansion, evaluations=6)
    (job_id,) = doomed
    job = next(j for j in run.jobs() if j.id == job_id)
    assert job.state == "failed" and "3 attempts lost their worker" in job.detail
    assert cluster.attempts[job_id] == 3 and len(_attempts(run, job_id)) == 3
    assert len(run.nodes()) == 1 + sum(j.kind == "expand" and j.state == "finished" for j in run.jobs())
