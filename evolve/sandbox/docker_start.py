"""Creating and starting one sandbox container (evolve.sandbox.docker_backend wraps it)."""

from __future__ import annotations

import contextlib
import socket
import threading
import time

import docker

from evolve.sandbox.docker_copy import image_home
from evolve.sandbox.engine import INFRA_ERRORS, infra
from evolve.sandbox.tarballs import tar_of_dirs

Home = tuple[str, bytes] | None
"""An image's home directory of the sandbox user: its path and a tar of it, or None (it has none)."""


class ImageHomes:
    """The image homes read so far, by image id and user (evolve.sandbox.pool keeps one): reading one
    from a created container mounts its root filesystem, tens of milliseconds per container, and an
    image's files are the same in every container made from it. Safe to use from several threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._homes: dict[tuple[str, str], Home] = {}

    def of(self, container, options: dict, user: str) -> Home:
        key = (str(container.attrs.get("Image") or container.id), user)  # the image's id, not its tag
        with self._lock:
            if key in self._homes:
                return self._homes[key]
        home = image_home(container, options, user)
        with self._lock:
            self._homes[key] = home
        return home


def start_container(
    client: docker.DockerClient,
    image: str,
    options: dict,
    workdir: str,
    user: str,
    homes: ImageHomes | None = None,
):
    """Create and start a container from `options` (evolve.sandbox.docker_spec); removed again if that
    fails. Returns it, its lease, the time just before it started, and the image's home as (path, tar) or
    None. The lease is attached before the container starts, so there is no moment the container runs
    without one."""
    container = lease = None
    try:
        with infra(f"cannot start a container from {image}"):
            container = client.containers.create(image, **options)
            home = None
            if options["read_only"]:
                home = (
                    homes.of(container, options, user)
                    if homes is not None
                    else image_home(container, options, user)
                )
            if not options["read_only"]:  # docker would create the work dir as root
                container.put_archive("/", tar_of_dirs([workdir.strip("/")]))
            lease = Lease.attach(client, str(container.id))
            started_at = time.monotonic()
            container.start()
    except BaseException:
        if lease is not None:
            lease.end()
        if container is not None:
            with contextlib.suppress(*INFRA_ERRORS):
                container.remove(force=True)
        raise
    return container, lease, started_at, home


class Lease:
    """The container's life line: a connection to its main process's stdin (evolve.sandbox.docker_spec,
    `lease_command`) that this process holds. Ending it, or this process's death (the kernel closes the
    connection), closes that stdin, and the container stops within moments, with no sweep."""

    def __init__(self, connection: socket.socket) -> None:
        self._connection = connection

    @classmethod
    def attach(cls, client: docker.DockerClient, container_id: str) -> Lease:
        raw = client.api.attach_socket(container_id, params={"stdin": 1, "stream": 1})
        # docker-py hands the raw socket's file wrapper on Unix sockets
        return cls(getattr(raw, "_sock", raw))

    def end(self) -> None:
        """Close the lease: the container's main process sees the end of its input and exits."""
        with contextlib.suppress(OSError):
            self._connection.shutdown(socket.SHUT_RDWR)  # ends the connection whatever else holds it
        self._connection.close()
