"""The Docker engine seam: a client when none is given, and engine failures as `SandboxUnavailable`."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator

import docker
import docker.errors
import requests.exceptions

from evolve.sandbox.types import SandboxUnavailable

INFRA_ERRORS = (docker.errors.DockerException, requests.exceptions.RequestException)


@contextlib.contextmanager
def infra(what: str) -> Iterator[None]:
    """Turn engine failures into `SandboxUnavailable` (an infra outcome, retried by the runner)."""
    try:
        yield
    except INFRA_ERRORS as exc:
        raise SandboxUnavailable(f"{what}: {exc}") from exc


def removal_in_progress(exc: docker.errors.APIError) -> bool:
    """The engine answered 409: it is already removing the container (its own sandbox's removal, which
    a run's closing sweep races after a stop). The container goes either way."""
    return exc.status_code == 409 and "already in progress" in str(exc.explanation or exc)


@contextlib.contextmanager
def engine_client(client: docker.DockerClient | None = None) -> Iterator[docker.DockerClient]:
    """`client` itself, or a fresh client to the local engine that is closed afterwards."""
    if client is not None:
        yield client
        return
    with infra("cannot reach the Docker engine"):
        owned = docker.from_env(timeout=120)
    try:
        yield owned
    finally:
        owned.close()


def oom_kill_count(cgroup_text: str) -> int | None:
    """The `oom_kill N` counter of a cgroup v1 `memory.oom_control` or v2 `memory.events` file."""
    match = re.search(r"^oom_kill (\d+)$", cgroup_text, flags=re.MULTILINE)
    return int(match.group(1)) if match else None
