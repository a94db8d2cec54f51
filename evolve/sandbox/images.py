"""Building the base image (online from the Dockerfile, offline from a debootstrap rootfs) and
naming images by id, so a run can record exactly what its agents ran in."""

from __future__ import annotations

import re
import subprocess
import tempfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import docker
import docker.errors

from evolve.sandbox.engine import engine_client, infra
from evolve.sandbox.types import SandboxError, SandboxUnavailable

DEFAULT_IMAGE = "evolve-base:latest"


class ImageBuildFailed(SandboxError):
    """An image build failed; the message ends with the tail of the build's output."""


@dataclass(frozen=True)
class ImageInfo:
    """An image as a run records it."""

    name: str
    id: str
    """The content-addressed image id (`sha256:...`); stable for one build."""
    digests: tuple[str, ...] = ()
    """Registry digests (`repo@sha256:...`); empty for images built or imported locally."""
    how: str = "existing"
    """How `build_image` produced it: `online`, `offline` or `existing`."""


def default_recipe_dir() -> Path:
    """`sandboxes/base/` of this checkout."""
    return Path(__file__).resolve().parents[2] / "sandboxes" / "base"


def image_info(name: str = DEFAULT_IMAGE, *, client: docker.DockerClient | None = None) -> ImageInfo:
    """The id and digests of a local image; `SandboxUnavailable` when it is missing."""
    with engine_client(client) as engine, infra(f"cannot inspect image {name}"):
        try:
            image = engine.images.get(name)
        except docker.errors.ImageNotFound:
            raise SandboxUnavailable(
                f"image {name} is missing; build it with `evolve sandbox build`"
            ) from None
        if image.id is None:  # a local image always has one; the SDK types it optional
            raise SandboxUnavailable(f"image {name} has no id")
        return ImageInfo(name, image.id, tuple(image.attrs.get("RepoDigests") or ()))


def image_id(name: str = DEFAULT_IMAGE, *, client: docker.DockerClient | None = None) -> str:
    """The image id (`sha256:...`) a run records for the image it uses."""
    return image_info(name, client=client).id


def base_of(dockerfile: Path) -> str:
    """The image a Dockerfile builds FROM."""
    match = re.search(r"^\s*FROM\s+(\S+)", dockerfile.read_text(), flags=re.MULTILINE | re.IGNORECASE)
    if match is None:
        raise ImageBuildFailed(f"{dockerfile} has no FROM line")
    return match.group(1)


def registry_reachable(reference: str, *, client: docker.DockerClient | None = None) -> bool:
    """Whether the engine can build FROM `reference`: it has it locally or its registry answers."""
    with engine_client(client) as engine:
        with infra(f"cannot look up {reference}"):
            if engine.images.list(name=reference):
                return True
        try:
            engine.api.inspect_distribution(reference)
            return True
        except docker.errors.APIError:
            return False


def seed_requirements() -> list[str]:
    """The seed agent's requirements (package data `evolve/seed/requirements.txt`), comments dropped."""
    source = resources.files("evolve") / "seed" / "requirements.txt"
    if not source.is_file():
        return []
    return parse_requirements(source.read_text())


def parse_requirements(text: str) -> list[str]:
    lines = (line.split("#", 1)[0].strip() for line in text.splitlines())
    return [line for line in lines if line]


def build_image(
    tag: str = DEFAULT_IMAGE,
    *,
    offline: bool | None = None,
    recipe_dir: Path | None = None,
    requirements: list[str] | None = None,
    client: docker.DockerClient | None = None,
) -> ImageInfo:
    """Build the base image: from the Dockerfile when a registry is reachable, else offline.

    `offline=None` decides by itself (offline when the Dockerfile's FROM image is neither local nor
    reachable). `requirements` (default: the seed agent's) are installed from wheels downloaded
    on the host, since images reach no package index.
    """
    recipe = recipe_dir or default_recipe_dir()
    wanted = seed_requirements() if requirements is None else requirements
    with engine_client(client) as engine:
        if offline is None:
            offline = not registry_reachable(base_of(recipe / "Dockerfile"), client=engine)
        if offline:
            _run(["bash", str(recipe / "build-offline.sh"), tag], "offline build")
        else:
            with infra("docker build failed"):
                try:
                    engine.images.build(path=str(recipe), tag=tag, pull=True, rm=True)
                except docker.errors.BuildError as exc:
                    raise ImageBuildFailed(f"docker build of {recipe} failed: {exc}") from exc
        if wanted:
            _add_requirements(engine, tag, wanted)
        info = image_info(tag, client=engine)
    return ImageInfo(info.name, info.id, info.digests, "offline" if offline else "online")


def requirements_dockerfile(base: str, requirements: list[str]) -> str:
    """A layer that installs `requirements` from the wheels in the build context's `wheels/`."""
    quoted = " ".join(f"'{requirement}'" for requirement in requirements)
    return (
        f"FROM {base}\nUSER root\nCOPY wheels /tmp/wheels\n"
        "RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends"
        " python3-pip && rm -rf /var/lib/apt/lists/*\n"
        f"RUN python3 -m pip install --break-system-packages --no-index --find-links /tmp/wheels {quoted}"
        " && rm -rf /tmp/wheels\n"
    )


def _add_requirements(engine: docker.DockerClient, tag: str, requirements: list[str]) -> None:
    with tempfile.TemporaryDirectory(prefix="evolve-wheels-") as context:
        _run(
            [
                "python3",
                "-m",
                "pip",
                "download",
                "--quiet",
                "--only-binary=:all:",
                "--python-version",
                "3.11",
                "-d",
                f"{context}/wheels",
                *requirements,
            ],
            "pip download",
        )
        Path(context, "Dockerfile").write_text(requirements_dockerfile(tag, requirements))
        with infra("docker build of the requirements layer failed"):
            try:
                engine.images.build(path=context, tag=tag, rm=True)
            except docker.errors.BuildError as exc:
                raise ImageBuildFailed(f"installing {requirements} failed: {exc}") from exc


def _run(command: list[str], what: str) -> None:
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        tail = (result.stdout + result.stderr).strip()[-2000:]
        raise ImageBuildFailed(f"{what} failed ({result.returncode}): {tail}")
