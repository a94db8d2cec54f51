"""The sandbox interface: one protocol, its result type, its limits and its errors.

Modelled on inspect_ai's sandbox environment: `exec` takes an argument list, a non-zero exit
is a result (not an exception), a timeout returns the partial output with `timed_out=True`,
and only a failure of the isolation machinery itself raises `SandboxUnavailable`.
"""

from __future__ import annotations

import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, Self, runtime_checkable

from evolve.errors import EvolveError

RUN_LABEL = "evolve.run"
JOB_LABEL = "evolve.job"
GATEWAY_SOCKET_PATH = "/run/evolve/llm.sock"
"""Where the model gateway's host Unix socket appears inside a Docker sandbox."""


class SandboxError(EvolveError):
    """Base class of sandbox failures."""


class SandboxUnavailable(SandboxError):
    """The sandbox machinery failed (engine down, container gone, image missing): an `infra` outcome."""


class SandboxesClosed(SandboxUnavailable):
    """No sandbox is made any more: the run's sandboxes were closed (it is stopping). Work that goes on
    after one of its sandboxes failed ends at this one."""


class CopyRefused(SandboxError, tarfile.TarError):
    """A copy out of the sandbox was refused (the agent's doing, not an infra failure): it holds a
    special file, a link out of the copied tree, or more than the copy cap. Also a `TarError`, so a
    caller that treats a tar refusing to extract as the agent's doing treats this alike."""


class CopyTooLarge(CopyRefused):
    """A copy out of the sandbox was refused: what the sandbox holds is over the copy cap."""


def truncation_note(target: str, cap: int) -> bytes:
    """What ends a file copied out of a sandbox that was over the copy cap (both backends say alike)."""
    return f"\n[evolve: {target} is over the {cap}-byte copy cap; only its start was kept]\n".encode()


@dataclass(frozen=True)
class ExecResult:
    """What one command did. A non-zero `returncode` is a result like any other."""

    returncode: int
    """Exit status; 124/137 after a timeout, 137 after an out-of-memory kill, -1 when unknown."""
    stdout: str
    stderr: str
    duration: float
    """Wall-clock seconds, measured on the host."""
    timed_out: bool = False
    """The command hit its timeout (or the sandbox's wall clock) and was killed; output is partial."""
    oom_killed: bool = False
    """The kernel killed a process of this command for exceeding the memory limit."""
    truncated: bool = False
    """stdout + stderr exceeded the output cap; the rest was dropped and the command was killed."""
    disk_full: bool = False
    """A writable place of the sandbox (work dir, /tmp, home) was full when the command failed."""

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not (
            self.timed_out or self.oom_killed or self.truncated or self.disk_full
        )


@dataclass(frozen=True)
class SandboxLimits:
    """Hard limits of one sandbox (the Docker backend enforces all; the process backend only time/output)."""

    cpus: float = 1.0
    """CPU quota in cores."""
    memory: str = "2g"
    """Memory limit, docker syntax (512m, 2g); swap is not allowed on top."""
    pids: int = 256
    """Process/thread limit (stops fork bombs)."""
    wall_clock_s: float = 900.0
    """Lifetime of the sandbox: the container kills itself at it, and the host kills it too."""
    output_limit_bytes: int = 1_000_000
    """Cap on stdout + stderr captured per command."""
    kill_grace_s: float = 1.0
    """After a timeout's TERM, how long a command has before KILL."""
    disk: str | None = "1g"
    """Most each writable place may hold (work dir, /tmp, /var/tmp, home: tmpfs mounts on a read-only
    root, charged to `memory`, so together at most 3/4 of it: `docker_spec.mount_sizes`); None leaves the
    root writable and unbounded (images whose tools write anywhere, such as SWE-bench instances)."""
    copy_limit_bytes: int = 64 * 1024 * 1024
    """Cap on one copy out of the sandbox (a file read, a directory copied out)."""
    layer_disk: str = "10g"
    """Where `disk` is None (the root stays writable): the most the container's writable layer may hold.
    The host measures it every `layer_poll_s`; over it, the agent's processes are killed and commands
    refused (evolve.sandbox.layer)."""
    layer_poll_s: float = 1.0


@runtime_checkable
class Sandbox(Protocol):
    """One isolated place where agent code runs. Paths are relative to `workdir` unless absolute."""

    @property
    def workdir(self) -> str:
        """The working directory commands start in (`/work` in Docker)."""
        ...

    def exec(
        self,
        cmd: list[str],
        *,
        input: str | bytes | None = None,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        timeout: float | None = None,
    ) -> ExecResult:
        """Run `cmd` (no shell); raises `SandboxUnavailable` only when the sandbox itself fails."""
        ...

    def write_file(self, path: str, content: str | bytes) -> None:
        """Create or replace a file (parent directories are created)."""
        ...

    def read_file(self, path: str) -> bytes:
        """The file's bytes; `FileNotFoundError` when there is no such file."""
        ...

    def put_dir(self, host_dir: Path, path: str) -> None:
        """Copy the contents of a host directory into the sandbox directory `path`."""
        ...

    def get_dir(self, path: str, host_dir: Path) -> None:
        """Copy the contents of sandbox directory `path` into a host directory."""
        ...

    def close(self) -> None:
        """Destroy the sandbox; idempotent."""
        ...

    def __enter__(self) -> Self: ...

    def __exit__(self, *exc: object) -> None: ...
