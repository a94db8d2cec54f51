"""From the configuration to sandboxes: the one place a backend is chosen and a job's sandboxes are made.

A `SandboxMaker` (`DockerSandboxes`, `ProcessSandboxes`) is plain data, so a job shipped to a cluster
node carries it and makes its sandboxes there. Its `limits` are every sandbox's, and the agent's
timeouts derive from their wall clock (evolve.engine.context.agent_timeout).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

import docker

from evolve.config import SandboxConfig
from evolve.sandbox.docker_backend import DockerSandbox
from evolve.sandbox.docker_spec import AGENT_UID
from evolve.sandbox.pool import SandboxPool, SandboxSpec
from evolve.sandbox.process_backend import ProcessSandbox
from evolve.sandbox.types import GATEWAY_SOCKET_PATH, Sandbox, SandboxLimits

GRADING_LIMITS = SandboxLimits(cpus=2.0, memory="4g", pids=1024, wall_clock_s=3600.0)
GRADER_CAPS = ("SETUID", "SETGID", "KILL", "CHOWN", "FOWNER", "DAC_OVERRIDE")
"""What the grader's root needs to run the tests as uid 1000, kill them and own its stage; the tests lose
every capability when they change uid (and no-new-privileges stops them regaining any)."""


def limits_from_config(config: SandboxConfig) -> SandboxLimits:
    return SandboxLimits(
        cpus=config.cpus,
        memory=config.memory,
        pids=config.pids,
        wall_clock_s=config.timeout_s,
        output_limit_bytes=config.output_limit_bytes,
        disk=None if config.disk == "none" else config.disk,
        layer_disk=config.layer_disk,
        copy_limit_bytes=config.copy_limit_bytes,
    )


def open_sandbox(
    config: SandboxConfig,
    *,
    run_id: str,
    job_id: str,
    image: str | None = None,
    gateway_socket: Path | None = None,
    client: docker.DockerClient | None = None,
) -> Sandbox:
    """A fresh sandbox for one job, of the backend the config names (`docker` unless it says `process`)."""
    limits = limits_from_config(config)
    if config.backend == "process":
        return ProcessSandboxes(limits)(image or config.image, job_id, gateway_socket=gateway_socket)
    return DockerSandbox.create(
        image or config.image,
        run_id=run_id,
        job_id=job_id,
        limits=limits,
        gateway_socket=gateway_socket,
        client=client,
    )


def grading_sandbox(
    image: str, job: str, *, run_id: str = "tasks", limits: SandboxLimits = GRADING_LIMITS
) -> DockerSandbox:
    """A grading container: the grader runs as root, the tests it starts as uid 1000
    (evolve.tasks.grader_script)."""
    return DockerSandbox.create(
        image, run_id=run_id, job_id=job, limits=limits, user="root", cap_add=GRADER_CAPS
    )


@dataclass(frozen=True)
class DockerSandboxes:
    """A `SandboxMaker` (evolve.engine.context): one fresh labelled container per call."""

    run_id: str
    limits: SandboxLimits = GRADING_LIMITS
    pool: SandboxPool | None = None
    """Starts each container ahead of need (still one fresh container per call); its owner closes it."""
    isolating: bool = field(default=True, init=False)
    """Its graders run the tests as another uid (evolve.tasks.grading's `isolate`)."""

    def __call__(
        self,
        image: str,
        job: str,
        *,
        gateway_socket: Path | None = None,
        grader: bool = False,
        writable_root: bool = False,
    ) -> DockerSandbox:
        # An image whose tools write anywhere (a SWE-bench instance's) keeps a writable root, capped by
        # `layer_disk` (evolve.sandbox.layer), and may lack the `agent` user: its agent runs as that uid.
        limits = replace(self.limits, disk=None) if writable_root else self.limits
        user = f"{AGENT_UID}:{AGENT_UID}" if writable_root else "agent"
        if self.pool is not None:
            spec = SandboxSpec(image, self.run_id, limits, user=user, gateway=gateway_socket is not None)
            if grader:
                spec = replace(spec, user="root", cap_add=tuple(GRADER_CAPS))
            return self.pool.sandbox(spec, job, gateway_socket)
        if grader:
            return grading_sandbox(image, job, run_id=self.run_id, limits=limits)
        return DockerSandbox.create(
            image, run_id=self.run_id, job_id=job, limits=limits, user=user, gateway_socket=gateway_socket
        )


@dataclass(frozen=True)
class ProcessSandboxes:
    """A `SandboxMaker` of process sandboxes, for tests and development only (they isolate nothing).

    `image` is ignored; the model channel's socket appears at the path a container mounts it at."""

    limits: SandboxLimits = GRADING_LIMITS
    isolating: bool = field(default=False, init=False)

    def __call__(
        self,
        image: str,
        job: str,
        *,
        gateway_socket: Path | None = None,
        grader: bool = False,
        writable_root: bool = False,
    ) -> ProcessSandbox:
        mounts = {} if gateway_socket is None else {GATEWAY_SOCKET_PATH: gateway_socket}
        return ProcessSandbox(limits=self.limits, mounts=mounts)
