"""Containment tests: an adversary inside a real sandbox, the host side measured. Every container is
labelled with this session's run id, and the session fails if one is left."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from evolve.sandbox import DockerSandbox, SandboxLimits
from tests.integration.sandboxes import box_maker, labelled_run

LIMITS = SandboxLimits(cpus=1.0, memory="256m", pids=128, wall_clock_s=180, disk="64m")


def host_status(field: str) -> int:
    """A number from /proc/self/status (VmRSS in KiB, Threads)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise KeyError(field)


@pytest.fixture(scope="session")
def containment_run(docker_client) -> Iterator[str]:
    yield from labelled_run("test-containment", docker_client)


@pytest.fixture
def make_box(docker_client, base_image, containment_run, request) -> Iterator[Callable[..., DockerSandbox]]:
    yield from box_maker(base_image, containment_run, request.node.name, LIMITS, docker_client)
