"""Creating and starting one sandbox container (evolve.sandbox.docker_backend wraps it)."""

from __future__ import annotations

import contextlib
import time

import docker

from evolve.sandbox.docker_copy import image_home
from evolve.sandbox.engine import INFRA_ERRORS, infra
from evolve.sandbox.tarballs import tar_of_dirs


def start_container(client: docker.DockerClient, image: str, options: dict, workdir: str, user: str):
    """Create and start a container from `options` (evolve.sandbox.docker_spec); removed again if that
    fails. Returns it, the time just before it started, and the image's home as (path, tar) or None."""
    container = None
    try:
        with infra(f"cannot start a container from {image}"):
            container = client.containers.create(image, **options)
            home = image_home(container, options, user) if options["read_only"] else None
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
