"""The worker-node half of a remote job: what travels (plain picklable data) and what runs there.

A job arrives as a `EvaluationJob` or `ExpansionJob`: the node's code as tar bytes (made on the
head from the run's git store, never a shared disk), the task, limits, and gateway grants. It runs
in sandboxes on the worker node's own Docker engine; the model channel is a relay to the head
gateway (evolve.llm.relay). What comes back is a `RemoteOutcome`: the result dataclass and the
job's log directory as tar bytes (an expansion's child code is part of it, under `child/`).
"""

from __future__ import annotations

import io
import shutil
import socket
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path

from evolve.engine.evaluate import EvalSettings, run_task
from evolve.engine.jobs import EvaluationResult, ExpansionResult
from evolve.llm.relay import GatewayGrant, RelayChannels
from evolve.sandbox.types import SandboxError, SandboxLimits
from evolve.tasks.docker import DockerSandboxes
from evolve.tasks.types import Task


def pack_dir(root: Path) -> bytes:
    """A directory as tar.gz bytes (paths relative to `root`)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for path in sorted(Path(root).rglob("*")):
            tar.add(path, arcname=path.relative_to(root).as_posix(), recursive=False)
    return buffer.getvalue()


def unpack(data: bytes, dest: Path) -> Path:
    """Extract tar bytes (plain or gzip) into `dest`; the `data` filter refuses links out and absolute paths."""
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as tar:
        tar.extractall(dest, filter="data")
    return dest


def where() -> str:
    """The Ray node this runs on (its hostname outside Ray)."""
    try:
        import ray
    except ImportError:
        return socket.gethostname()
    return ray.get_runtime_context().get_node_id() if ray.is_initialized() else socket.gethostname()


@dataclass(frozen=True)
class EvaluationJob:
    run_id: str
    job_id: int
    node_id: str
    code: bytes
    """The node's code: a tar of its commit."""
    task: Task
    grants: dict[str, GatewayGrant]
    settings: EvalSettings
    limits: SandboxLimits


@dataclass(frozen=True)
class ExpansionJob:
    run_id: str
    job_id: int
    node_id: str
    code: bytes
    instructions: str
    """The diagnosis, made on the head."""
    grants: dict[str, GatewayGrant]
    image: str
    improve_steps: int
    smoke_steps: int
    timeout_s: float
    limits: SandboxLimits


@dataclass(frozen=True)
class RemoteOutcome:
    result: EvaluationResult | ExpansionResult
    """For an expansion, `code_dir` is relative to the log directory (`child`) or None."""
    logs: bytes
    where: str


class ShippedRun:
    """What `run_task` asks of a `Run` (the node's code, a log directory), served from shipped bytes."""

    def __init__(self, code: bytes, root: Path) -> None:
        self._code = code
        self._root = root

    def checkout(self, node_id: str, dest: Path) -> Path:
        return unpack(self._code, dest)

    def log_dir(self, job_id: int) -> Path:
        directory = self._root / "logs"
        directory.mkdir(parents=True, exist_ok=True)
        return directory


def run_evaluation(job: EvaluationJob) -> RemoteOutcome:
    """Solve and grade one task on this node (one attempt; the head decides about retries)."""
    with tempfile.TemporaryDirectory(prefix="evolve-remote-") as tmp, RelayChannels(job.grants) as relay:
        shipped = ShippedRun(job.code, Path(tmp))
        result = run_task(shipped, job.node_id, job.task, job.job_id,  # type: ignore[arg-type]
                          sandboxes=DockerSandboxes(job.run_id, job.limits), gateway=relay, settings=job.settings)
        evaluation = EvaluationResult(result.outcome, result.duration_s, result.tokens, detail=result.detail)
        return RemoteOutcome(evaluation, pack_dir(shipped.log_dir(job.job_id)), where())


def run_expansion(job: ExpansionJob) -> RemoteOutcome:
    """Let the node's agent modify a copy of itself on this node, then validate the child."""
    from evolve.meta import self_modify, validate_child

    sandboxes = DockerSandboxes(job.run_id, job.limits)
    with tempfile.TemporaryDirectory(prefix="evolve-remote-") as tmp, RelayChannels(job.grants) as relay:
        parent = unpack(job.code, Path(tmp) / "parent")
        logs = Path(tmp) / "logs"
        logs.mkdir()
        try:
            channel = relay.open_job(f"{job.job_id}-modify", job.node_id, "modify", 0)
            try:
                with sandboxes(job.image, f"{job.job_id}-modify", gateway_socket=channel.socket_path) as box:
                    child = self_modify(box, parent, job.instructions, logs / "child", logs,
                                        channel_env=channel.sandbox_env(), budget_steps=job.improve_steps,
                                        timeout_s=job.timeout_s)
            finally:
                relay.close_job(f"{job.job_id}-modify")
            channel = relay.open_job(f"{job.job_id}-validate", job.node_id, "solve", 0)
            try:
                with sandboxes(job.image, f"{job.job_id}-validate", gateway_socket=channel.socket_path) as box:
                    verdict = validate_child(box, child.code_dir, child.diff, logs, channel_env=channel.sandbox_env(),
                                             served=lambda: relay.report(f"{job.job_id}-validate").requests,
                                             smoke_steps=job.smoke_steps, timeout_s=job.timeout_s)
            finally:
                relay.close_job(f"{job.job_id}-validate")
        except SandboxError as exc:
            result = ExpansionResult(None, valid=False, reason=f"sandbox failed: {exc}", instructions=job.instructions)
            shutil.rmtree(logs / "child", ignore_errors=True)  # no child: no copy of the parent's code in logs/
            return RemoteOutcome(result, pack_dir(logs), where())
        result = ExpansionResult(Path("child"), valid=verdict.valid, reason=verdict.reason,
                                 instructions=job.instructions)
        return RemoteOutcome(result, pack_dir(logs), where())
