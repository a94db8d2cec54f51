"""Sweeping leftover sandbox containers: by run (a run reaps its own on start) or all of evolve's."""

from __future__ import annotations

import docker
import docker.errors

from evolve.sandbox.engine import engine_client, infra
from evolve.sandbox.types import RUN_LABEL


def _label_filter(run_id: str | None) -> str:
    return RUN_LABEL if run_id is None else f"{RUN_LABEL}={run_id}"


def list_sandboxes(run_id: str | None = None, *, client: docker.DockerClient | None = None) -> list[str]:
    """Ids of the containers (running or not) labelled with `run_id`, or with any run when None."""
    with engine_client(client) as engine, infra("cannot list containers"):
        return [c.id for c in engine.containers.list(all=True, filters={"label": _label_filter(run_id)})]


def cleanup(run_id: str | None = None, *, client: docker.DockerClient | None = None) -> list[str]:
    """Remove the sandbox containers of `run_id` (of every run when None); returns the removed ids."""
    removed = []
    with engine_client(client) as engine:
        for container_id in list_sandboxes(run_id, client=engine):
            with infra(f"cannot remove container {container_id[:12]}"):
                try:
                    engine.api.remove_container(container_id, force=True)
                except docker.errors.NotFound:
                    continue  # removed meanwhile by its own sandbox
            removed.append(container_id)
    return removed


def reap_run(run_id: str, *, client: docker.DockerClient | None = None) -> list[str]:
    """What a run calls on start (and on resume): remove its containers left by an earlier crash."""
    if not run_id:
        raise ValueError("reap_run needs a run id; use cleanup() to sweep every run")
    return cleanup(run_id, client=client)
