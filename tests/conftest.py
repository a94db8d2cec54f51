"""Test tiers: `unit` (no Docker, no model), `docker` (a real engine), `e2e` (engine + embedded model).

Tests are marked by the directory they live in. Without a Docker engine the docker tier skips,
unless EVOLVE_REQUIRE_DOCKER=1 (set by .ci/run), where a missing engine is a failure.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

_TIER_BY_DIR = {"unit": "unit", "integration": "docker", "adversarial": "docker", "e2e": "e2e"}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        parts = Path(str(item.fspath)).parts
        for directory, marker in _TIER_BY_DIR.items():
            if directory in parts:
                item.add_marker(getattr(pytest.mark, marker))


def _docker_problem() -> str | None:
    try:
        import docker
        from docker.errors import DockerException
    except ImportError as exc:
        return f"the docker SDK is not installed: {exc}"
    try:
        client = docker.from_env(timeout=10)
        client.ping()
        client.close()
    except (DockerException, OSError) as exc:  # OSError covers requests' connection errors
        return f"no Docker engine answers: {exc}"
    return None


@pytest.fixture(scope="session")
def docker_client():
    """A docker SDK client to a live engine; skips (or fails under EVOLVE_REQUIRE_DOCKER=1) without one."""
    problem = _docker_problem()
    if problem is not None:
        if os.environ.get("EVOLVE_REQUIRE_DOCKER") == "1":
            pytest.fail(f"EVOLVE_REQUIRE_DOCKER=1 but {problem}")
        pytest.skip(problem)
    import docker

    client = docker.from_env(timeout=120)
    yield client
    client.close()


@pytest.fixture(scope="session")
def base_image(docker_client) -> str:
    """The evolve base image, which .ci/run builds offline (sandboxes/base/build-offline.sh)."""
    import docker.errors

    name = os.environ.get("EVOLVE_BASE_IMAGE", "evolve-base:latest")
    try:
        docker_client.images.get(name)
    except docker.errors.ImageNotFound:
        message = f"image {name} is missing; build it with sandboxes/base/build-offline.sh"
        if os.environ.get("EVOLVE_REQUIRE_DOCKER") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return name


SWEBENCH_DATA = Path(__file__).resolve().parent / "data" / "swebench"
SWEBENCH_FAKE_IMAGE = "evolve-test/swebench-fake:latest"


@pytest.fixture(scope="session")
def swebench_image(docker_client, base_image) -> str:
    """The fake SWE-bench instance image of the fixture (tests/data/swebench), built offline FROM the base
    image (seconds: two layers on it), shared by every test that grades or solves a fixture instance."""
    docker_client.images.build(
        path=str(SWEBENCH_DATA), tag=SWEBENCH_FAKE_IMAGE, buildargs={"BASE": base_image}, rm=True
    )
    return SWEBENCH_FAKE_IMAGE


@pytest.fixture(scope="session")
def polyglot_cpp_image(docker_client, base_image) -> str:
    """A polyglot image with the C++ toolchain: $EVOLVE_POLYGLOT_IMAGE, evolve-polyglot:latest or the C++-only
    evolve-polyglot:cpp (which setup and CI build), else evolve-polyglot:cpp built now (minutes, once)."""
    import subprocess

    import docker.errors

    for name in (os.environ.get("EVOLVE_POLYGLOT_IMAGE"), "evolve-polyglot:latest", "evolve-polyglot:cpp"):
        if not name:
            continue
        try:
            docker_client.images.get(name)
            return name
        except docker.errors.ImageNotFound:
            continue
    build = Path(__file__).resolve().parents[1] / "sandboxes" / "polyglot" / "build.sh"
    done = subprocess.run(
        ["bash", str(build), "evolve-polyglot:cpp", "cpp"],
        capture_output=True,
        text=True,
        check=False,
        timeout=1800,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return "evolve-polyglot:cpp"
