"""Fresh Docker sandboxes for grading and for agent jobs (evolve.sandbox's DockerSandbox, with limits)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from evolve.sandbox.docker_backend import DockerSandbox
from evolve.sandbox.pool import SandboxPool, SandboxSpec
from evolve.sandbox.types import SandboxLimits

GRADING_LIMITS = SandboxLimits(cpus=2.0, memory="4g", pids=1024, wall_clock_s=3600.0)
GRADER_CAPS = ("SETUID", "SETGID", "KILL", "CHOWN", "FOWNER", "DAC_OVERRIDE")
"""What the grader's root needs to run the tests as uid 1000, kill them and own its stage; the tests lose
every capability when they change uid (and no-new-privileges stops them regaining any)."""


def grading_sandbox(image: str, job: str, *, run_id: str = "tasks", limits: SandboxLimits = GRADING_LIMITS) -> DockerSandbox:
    """A grading container: the grader runs as root, the tests it starts as uid 1000 (evolve.tasks.grader_script)."""
    return DockerSandbox.create(image, run_id=run_id, job_id=job, limits=limits, user="root", cap_add=GRADER_CAPS)


@dataclass(frozen=True)
class DockerSandboxes:
    """A `SandboxMaker` (evolve.engine.evaluate): one fresh labelled container per call."""

    run_id: str
    limits: SandboxLimits = GRADING_LIMITS
    pool: SandboxPool | None = None
    """Starts each container ahead of need (still one fresh container per call); its owner closes it."""

    def __call__(self, image: str, job: str, *, gateway_socket: Path | None = None,
                 grader: bool = False) -> DockerSandbox:
        if self.pool is not None:
            spec = SandboxSpec(image, self.run_id, self.limits, gateway=gateway_socket is not None,
                               **({"user": "root", "cap_add": GRADER_CAPS} if grader else {}))
            return self.pool.sandbox(spec, job, gateway_socket)
        if grader:
            return grading_sandbox(image, job, run_id=self.run_id, limits=self.limits)
        return DockerSandbox.create(image, run_id=self.run_id, job_id=job, limits=self.limits,
                                    gateway_socket=gateway_socket)
