"""Sandbox tests label every container with one run id; the session ends by proving none is left."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator

import pytest

from evolve.sandbox import DockerSandbox, ProcessSandbox, Sandbox, SandboxLimits, cleanup, list_sandboxes

SMALL = SandboxLimits(cpus=0.5, memory="128m", pids=64, wall_clock_s=120, output_limit_bytes=100_000)


@pytest.fixture(scope="session")
def test_run_id(docker_client) -> Iterator[str]:
    """The `evolve.run` label of this session's containers; teardown fails if any container is left."""
    run_id = f"test-sandbox-{uuid.uuid4().hex[:8]}"
    yield run_id
    left = list_sandboxes(run_id, client=docker_client)
    cleanup(run_id, client=docker_client)
    assert left == [], f"tests left containers behind: {left}"


@pytest.fixture
def make_docker(docker_client, base_image, test_run_id, request) -> Callable[..., DockerSandbox]:
    """Create Docker sandboxes for this test (closed at its end); keyword args go to `create`."""
    made: list[DockerSandbox] = []

    def make(**kwargs) -> DockerSandbox:
        kwargs.setdefault("limits", SMALL)
        box = DockerSandbox.create(
            base_image, run_id=test_run_id, job_id=request.node.name[:40], client=docker_client, **kwargs
        )
        made.append(box)
        return box

    yield make
    for box in made:
        box.close()


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
