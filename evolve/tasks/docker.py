"""Fresh Docker sandboxes for grading (no model channel, trusted code only until the diff is applied)."""

from __future__ import annotations

from evolve.sandbox.docker_backend import DockerSandbox
from evolve.sandbox.types import SandboxLimits

GRADING_LIMITS = SandboxLimits(cpus=2.0, memory="4g", pids=1024, wall_clock_s=3600.0)


def grading_sandbox(image: str, job: str, *, run_id: str = "tasks", limits: SandboxLimits = GRADING_LIMITS) -> DockerSandbox:
    return DockerSandbox.create(image, run_id=run_id, job_id=job, limits=limits)
