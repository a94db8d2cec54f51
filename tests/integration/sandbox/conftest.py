"""Sandbox tests label every container with one run id; the session ends by proving none is left."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from evolve.sandbox import DockerSandbox, ProcessSandbox, Sandbox, SandboxLimits
from tests.integration.sandboxes import box_maker, labelled_run

SMALL = SandboxLimits(cpus=0.5, memory="128m", pids=64, wall_clock_s=120, output_limit_bytes=100_000)


@pytest.fixture(scope="session")
def test_run_id(docker_client) -> Iterator[str]:
    """The `evolve.run` label of this session's containers; teardown fails if any container is left."""
    yield from labelled_run("test-sandbox", docker_client)


@pytest.fixture
def make_docker(docker_client, base_image, test_run_id, request) -> Iterator[Callable[..., DockerSandbox]]:
    """Create Docker sandboxes for this test (closed at its end); keyword args go to `create`."""
    yield from box_maker(base_image, test_run_id, request.node.name, SMALL, docker_client)


@pytest.fixture(params=["process", "docker"])
def sandbox(request, tmp_path) -> Iterator[Sandbox]:
    """Each backend in turn, under small limits: the conformance suite runs against both."""
    if request.param == "process":
        boxes = tmp_path / "boxes"
        boxes.mkdir()
        with ProcessSandbox(limits=SMALL, base_dir=boxes) as box:
            yield box
    else:
        yield request.getfixturevalue("make_docker")()
