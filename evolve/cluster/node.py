"""The worker-node half of a remote job: what travels (plain picklable data) and what runs there.

A job arrives as a `ShippedJob`: the node's code as tar bytes (made on the head from the run's git
store, never a shared disk), the sandbox maker (its limits included), gateway grants, and the work
itself: the same evaluation or expansion function the local worker runs (evolve.engine.evaluate,
evolve.engine.expand), called here over a job context made from the shipped data. Its sandboxes run on
the worker node's own engine; the model channel is a relay to the head gateway (evolve.llm.relay).
What comes back is a `RemoteOutcome`: the result and the job's log directory as tar bytes (an
expansion's child code is part of it, under `child/`).
"""

from __future__ import annotations

import io
import socket
import tarfile
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evolve.engine.context import JobContext, SandboxMaker, Work
from evolve.llm.relay import GatewayGrant, RelayChannels


def pack_dir(root: Path) -> bytes:
    """A directory as tar.gz bytes (paths relative to `root`)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for path in sorted(Path(root).rglob("*")):
            tar.add(path, arcname=path.relative_to(root).as_posix(), recursive=False)
    return buffer.getvalue()


def unpack(data: bytes, dest: Path) -> Path:
    """Extract tar bytes (plain or gzip) into `dest`; the `data` filter refuses links out and absolute
    paths."""
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
class ShippedJob:
    job_id: int
    node_id: str
    code: bytes
    """The node's code: a tar of its commit."""
    grants: dict[str, GatewayGrant]
    """Per role, the head gateway's grant for the channel the work opens in that role."""
    sandboxes: SandboxMaker
    work: Work


@dataclass(frozen=True)
class RemoteOutcome:
    result: Any
    """What the work returned; its paths lie under `log_dir`."""
    logs: bytes
    log_dir: str
    """Where the logs were on the worker node."""
    where: str


def run_shipped(job: ShippedJob) -> RemoteOutcome:
    """Run the shipped work once on this node (the head decides about retries)."""
    with tempfile.TemporaryDirectory(prefix="evolve-remote-") as tmp, RelayChannels(job.grants) as relay:
        logs = Path(tmp) / "logs"
        logs.mkdir()
        ctx = JobContext(
            str(job.job_id), job.node_id, unpack(job.code, Path(tmp) / "code"), logs, job.sandboxes, relay
        )
        result = job.work(ctx)
        return RemoteOutcome(result, pack_dir(logs), str(logs), where())
