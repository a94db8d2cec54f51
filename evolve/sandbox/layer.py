"""The disk cap of a sandbox whose root stays writable (an image whose tools write anywhere: a SWE-bench
instance's). Such a root cannot be a size-capped tmpfs, and overlay2 on ext4 takes no size option, so
the host measures the container's writable layer (the engine's `SizeRw`) every `layer_poll_s`, for the
container's whole life (a process left in the background writes between commands too). Over the cap,
every process of the agent's uid in the container is killed and the sandbox refuses further commands
(`disk_full`); the engine's own copies out still work, so the job ends with the agent's failure, not
an infra verdict. A writer can pass the cap by what it writes between two looks: on the project's
machine one `head -c` loop wrote 2.2 GB in the 2 s of one look (`layer_poll_s` is 1 s by default).
"""

from __future__ import annotations

import contextlib
import logging
import threading

import docker
from docker.utils import parse_bytes

from evolve.sandbox.engine import INFRA_ERRORS
from evolve.sandbox.kill import kill_host_uid

log = logging.getLogger(__name__)


def layer_size(client: docker.DockerClient, container_id: str) -> int | None:
    """Bytes in the container's writable layer; None when the engine no longer lists it."""
    rows = client.api.containers(all=True, filters={"id": container_id}, size=True)
    return int(rows[0].get("SizeRw") or 0) if rows else None


class LayerWatch:
    """Watches one container's writable layer from a daemon thread until `stop()`."""

    def __init__(self, client: docker.DockerClient, container_id: str, *, cap: str, poll_s: float, uid: int):
        self.cap = parse_bytes(cap)
        self.full = threading.Event()
        """Set once the layer passed the cap (the agent's processes are then killed)."""
        self._client, self._container_id, self._poll_s, self._uid = client, container_id, poll_s, uid
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name=f"layer-{container_id[:12]}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not threading.current_thread():
            self._thread.join(self._poll_s + 30.0)

    def _watch(self) -> None:
        while not self._stop.wait(self._poll_s):
            try:
                size = layer_size(self._client, self._container_id)
            except INFRA_ERRORS as exc:  # the engine is busy or restarting: look again next time
                log.debug("cannot measure the writable layer of %s: %s", self._container_id[:12], exc)
                continue
            if size is None:
                return  # the container is gone
            if size > self.cap:
                self.full.set()
                log.warning(
                    "sandbox %s wrote %d bytes to its writable layer, over its cap of %d: its agent's "
                    "processes are killed",
                    self._container_id[:12],
                    size,
                    self.cap,
                )
                self._kill()
                return

    def _kill(self) -> None:
        """Every process of the agent's uid: from the host, which a full pids cgroup cannot stop, and
        from inside with a shell builtin where the engine is remote."""
        kill_host_uid(self._uid, self._container_id)
        with contextlib.suppress(*INFRA_ERRORS):
            exec_id = self._client.api.exec_create(
                self._container_id, ["sh", "-c", "kill -KILL -1"], user=f"{self._uid}:{self._uid}"
            )["Id"]
            self._client.api.exec_start(exec_id)
