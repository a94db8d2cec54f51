"""From the run configuration to a sandbox: the one place a backend is chosen by name."""

from __future__ import annotations

from pathlib import Path

import docker

from evolve.config import SandboxConfig
from evolve.sandbox.docker_backend import DockerSandbox
from evolve.sandbox.process_backend import ProcessSandbox
from evolve.sandbox.types import Sandbox, SandboxLimits


def limits_from_config(config: SandboxConfig) -> SandboxLimits:
    return SandboxLimits(
        cpus=config.cpus,
        memory=config.memory,
        pids=config.pids,
        wall_clock_s=config.timeout_s,
        output_limit_bytes=config.output_limit_bytes,
        disk=None if config.disk == "none" else config.disk,
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
        return ProcessSandbox(limits=limits)
    return DockerSandbox.create(
        image or config.image,
        run_id=run_id,
        job_id=job_id,
        limits=limits,
        gateway_socket=gateway_socket,
        client=client,
    )
