"""Sweeping leftover sandbox containers: by run (a run reaps its own on start), or every container
whose owning process is gone (a sweep that never touches a live run's sandboxes)."""

from __future__ import annotations

from dataclasses import dataclass

import docker
import docker.errors

from evolve.sandbox.engine import engine_client, infra, removal_in_progress
from evolve.sandbox.gateway_slot import sweep_slots
from evolve.sandbox.owner import OWNER_LABEL, owner_alive
from evolve.sandbox.types import RUN_LABEL


@dataclass(frozen=True)
class Sweep:
    """What a sweep removed, and what it kept with the reason."""

    removed: tuple[str, ...]
    kept: tuple[tuple[str, str], ...]
    """(container id, why it was kept)."""


def _label_filter(run_id: str | None) -> str:
    return RUN_LABEL if run_id is None else f"{RUN_LABEL}={run_id}"


def list_sandboxes(run_id: str | None = None, *, client: docker.DockerClient | None = None) -> list[str]:
    """Ids of the containers (running or not) labelled with `run_id`, or with any run when None."""
    with engine_client(client) as engine, infra("cannot list containers"):
        # The low-level list: the high-level one inspects each container, which fails for one that
        # its own sandbox removes meanwhile.
        return [c["Id"] for c in engine.api.containers(all=True, filters={"label": _label_filter(run_id)})]


def _remove(engine: docker.DockerClient, container_id: str) -> bool:
    with infra(f"cannot remove container {container_id[:12]}"):
        try:
            engine.api.remove_container(container_id, force=True)
        except docker.errors.NotFound:
            return False  # removed meanwhile by its own sandbox
        except docker.errors.APIError as exc:
            if not removal_in_progress(exc):
                raise
            return False  # being removed by its own sandbox
    return True


def cleanup(run_id: str | None = None, *, client: docker.DockerClient | None = None) -> list[str]:
    """Remove the sandbox containers of `run_id`; with None, only those whose owner is gone
    (`sweep_orphans`). Returns the removed ids."""
    if run_id is None:
        return list(sweep_orphans(client=client).removed)
    with engine_client(client) as engine:
        return [cid for cid in list_sandboxes(run_id, client=engine) if _remove(engine, cid)]


def sweep_orphans(*, client: docker.DockerClient | None = None) -> Sweep:
    """Remove every evolve container whose owning process (on this host) has died; keep the others:
    a live owner's, another host's (it cannot be told from here), and unlabelled ones."""
    removed: list[str] = []
    kept: list[tuple[str, str]] = []
    with engine_client(client) as engine:
        with infra("cannot list containers"):
            containers = engine.api.containers(all=True, filters={"label": RUN_LABEL})
        for container in containers:
            labels, container_id = container.get("Labels") or {}, container["Id"]
            label = labels.get(OWNER_LABEL)
            alive = owner_alive(label)
            if alive is False:
                if _remove(engine, container_id):
                    removed.append(container_id)
                continue
            why = "its owner is alive" if alive else "its owner cannot be checked from this host"
            kept.append((container_id, f"run {labels.get(RUN_LABEL)}: {why} ({label or 'no owner label'})"))
    return Sweep(tuple(removed), tuple(kept))


def reap_run(run_id: str, *, client: docker.DockerClient | None = None) -> list[str]:
    """What a run calls on start (and on resume): remove its containers left by an earlier crash, and
    any container whose owner died (a killed `evolve sandbox exec`, another crashed run)."""
    if not run_id:
        raise ValueError("reap_run needs a run id; use cleanup() to sweep every run")
    sweep_slots()  # gateway directories a killed engine left in the temp dir
    with engine_client(client) as engine:
        return cleanup(run_id, client=engine) + list(sweep_orphans(client=engine).removed)
