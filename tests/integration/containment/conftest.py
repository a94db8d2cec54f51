"""Containment tests: an adversary inside a real sandbox, the host side measured. Every container is
labelled with this session's run id, and the session fails if one is left."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from evolve.sandbox import DockerSandbox, SandboxLimits, cleanup, list_sandboxes

LIMITS = SandboxLimits(cpus=1.0, memory="256m", pids=128, wall_clock_s=180, disk="64m")


def host_status(field: str) -> int:
    """A number from /proc/self/status (VmRSS in KiB, Threads)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise KeyError(field)


@pytest.fixture(scope="session")
def containment_run(docker_client) -> Iterator[str]:
    run_id = f"test-containment-{uuid.uuid4().hex[:8]}"
    yield run_id
    left = list_sandboxes(run_id, client=docker_client)
    cleanup(run_id, client=docker_client)
    assert left == [], f"tests left containers behind: {left}"


@pytest.fixture
def make_box(docker_client, base_image, containment_run, request) -> Iterator[Callable[..., DockerSandbox]]:
    made: list[DockerSandbox] = []

    def make(**kwargs) -> DockerSandbox:
        kwargs.setdefault("limits", LIMITS)
        box = DockerSandbox.create(base_image, run_id=containment_run, job_id=request.node.name[:40],
                                   client=docker_client, **kwargs)
        made.append(box)
        return box

    yield make
    for box in made:
        box.close()
