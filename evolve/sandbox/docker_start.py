"""Creating and starting one sandbox container (evolve.sandbox.docker_backend wraps it)."""

from __future__ import annotations

import contextlib
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


def start_container(client: docker.DockerClient, image: str, options: dict, workdir: str, user: str,
                    homes: ImageHomes | None = None):
    """Create and start a container from `options` (evolve.sandbox.docker_spec); removed again if that
    fails. Returns it, the time just before it started, and the image's home as (path, tar) or None."""
    container = None
    try:
        with infra(f"cannot start a container from {image}"):
            container = client.containers.create(image, **options)
            home = None
            if options["read_only"]:
                home = homes.of(container, options, user) if homes is not None else image_home(container, options, user)
            if not options["read_only"]:  # docker would create the work dir as root
                container.put_archive("/", tar_of_dirs([workdir.strip("/")]))
            started_at = time.monotonic()
            container.start()
    except BaseException:
        if container is not None:
            with contextlib.suppress(*INFRA_ERRORS):
                container.remove(force=True)
        raise
    return container, started_at, home
