"""Copies into and out of a running container through `docker exec` and tar, never the archive API.

The archive API cannot reach a container's tmpfs mounts (where a read-only sandbox keeps its files)
and loads whole archives into memory. Copies out are bounded: the size is measured inside the
container before anything is read, the stream is cut at the cap inside the container (`head -c`),
and the host counts what arrives too, writing it to a temporary file rather than memory.
"""

from __future__ import annotations

import contextlib
import logging
import shlex
import socket
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO

import docker
import docker.errors
from docker.utils.socket import frames_iter

from evolve.sandbox.docker_spec import AGENT_UID, home_of
from evolve.sandbox.engine import INFRA_ERRORS, infra
from evolve.sandbox.kill import kill_host_group
from evolve.sandbox.output import OutputCollector
from evolve.sandbox.types import CopyRefused, CopyTooLarge, SandboxUnavailable

_HOME_CAP = 64 * 1024 * 1024
"""An image's home directory bigger than this is not copied into a read-only sandbox's home."""
log = logging.getLogger(__name__)

# Every command of the engine's own in a container ends by a deadline (`timeout`): nothing left there
# may hold the engine waiting (no agent process outlives its command either: DockerSandbox.exec).
_IN = 'mkdir -p -- "$1" && exec timeout -k 5 600 tar -x --no-same-owner -f - -C "$1"'
# Several copies at once: each directory made, then one tar whose entries carry their full paths.
_IN_MANY = (
    'for d; do mkdir -p -- "$d" || exit 1; done; exec timeout -k 5 600 tar -x --no-same-owner -f - -C /'
)
# Gathered copies and then a command, in one exec (a second spared): the directories (one a line) made
# and the tar extracted as uid 1000, as `put_tars` does (a root command's exec drops to it with setpriv
# first; exit 3 when the image has none), COPIED written to stderr, and only then the command, so
# nothing the command writes can come before that line.
COPIED = b"[evolve: copies made]\n"
_COPY = (
    'printf "%s\\n" "$1" | while IFS= read -r d; do mkdir -p -- "$d" || exit 1; done && '
    "exec timeout -k 5 600 tar -x --no-same-owner -f - -C /"
)
_IN_THEN = (
    f'c={shlex.quote(_COPY)}; m=$1; d=$2; shift 2; if [ "$m" = drop ]; then '
    "command -v setpriv >/dev/null 2>&1 || exit 3; "
    f'setpriv --reuid={AGENT_UID} --regid={AGENT_UID} --clear-groups sh -c "$c" sh "$d" || exit 1; '
    'else sh -c "$c" sh "$d" || exit 1; fi; '
    f'printf "%s\\n" "{COPIED.decode().strip()}" >&2; exec "$@"'
)


class NoSetpriv(SandboxUnavailable):
    """The image has no `setpriv`, so a root command's copies cannot ride in its exec (nothing was run)."""


# stderr line 1: "<type>|<size>" (no link followed); stdout: at most $2 bytes, only of a regular file
# (a FIFO would block the read), under a timeout in case it is swapped for one meanwhile.
_READ = (
    't=$(timeout 60 stat -c "%F|%s" -- "$1") || exit 3; echo "$t" >&2; case "$t" in '
    '"regular file|"*|"regular empty file|"*) exec timeout 60 head -c "$2" -- "$1";; esac'
)
# stderr line 1: "<apparent bytes>" as the host reads them (sparse files and every hard link count in
# full); exit 4, nothing sent, when over the cap; else a tar cut at the cap inside the container.
_TAR_OUT = (
    'set -o pipefail; cd -- "$1" || exit 3; n=$(timeout 120 du -s -b -l . | cut -f1); echo "$n" >&2; '
    '[ -n "$n" ] && [ "$n" -le "$2" ] || exit 4; timeout 300 tar -c -f - . | head -c "$2"'
)


@dataclass(frozen=True)
class Exec:
    """Where commands of a copy run: the engine, the container, as which user."""

    client: docker.DockerClient
    container_id: str
    user: str

    def _create(self, cmd: list[str], *, stdin: bool = False, env: dict[str, str] | None = None) -> str:
        return self.client.api.exec_create(
            self.container_id, cmd, user=self.user, stdin=stdin, environment=env or {}
        )["Id"]

    def exit_code(self, exec_id: str) -> int:
        info = self.client.api.exec_inspect(exec_id)
        return info["ExitCode"] if info["ExitCode"] is not None else -1

    def wait_exit(self, exec_id: str) -> int:
        """The exit code, once the engine has it (the output may end a moment before); -1 if it never does."""
        for _ in range(50):
            info = self.client.api.exec_inspect(exec_id)
            if not info["Running"]:
                return info["ExitCode"] if info["ExitCode"] is not None else -1
            time.sleep(0.02)
        return -1

    def _send(self, exec_id: str, data: bytes):
        """Start the exec, write `data` to its stdin and close it; the socket its output comes on."""
        sock = self.client.api.exec_start(exec_id, socket=True)
        try:
            raw = getattr(sock, "_sock", sock)  # over a Unix socket the SDK wraps the socket in a SocketIO
            if not isinstance(raw, socket.socket):
                raise SandboxUnavailable(
                    f"the Docker engine gave no socket to write to ({type(raw).__name__})"
                )
            raw.sendall(data)
            raw.shutdown(socket.SHUT_WR)
        except BaseException:
            sock.close()
            raise
        return sock

    def kill_group(self, exec_id: str, pidfile: str) -> None:
        """Kill a command's process group (timeout made it the group leader): from the host when it
        sees the container's processes, and from inside with shell builtins only (no fork needed)."""
        with contextlib.suppress(*INFRA_ERRORS):
            host_pid = self.client.api.exec_inspect(exec_id).get("Pid") or 0
            if host_pid > 0:
                kill_host_group(host_pid, self.container_id)
            script = f'read -r p < {pidfile} && kill -KILL "-$p" 2>/dev/null'
            self.client.api.exec_start(self._create(["sh", "-c", script]))

    def feed(self, cmd: list[str], data: bytes) -> tuple[int, bytes]:
        """Run `cmd` with `data` on stdin; its exit code and output (stdout and stderr)."""
        exec_id = self._create(cmd, stdin=True)
        sock = self._send(exec_id, data)
        try:
            output = b"".join(frame for _stream, frame in frames_iter(sock, tty=False))
        finally:
            sock.close()
        return self.exit_code(exec_id), output

    def start_after_copies(
        self, directories: list[str], archive: bytes, cmd: list[str], env: dict[str, str], *, drop: bool
    ) -> tuple[str, Iterator[tuple[bytes | None, bytes | None]]]:
        """Extract `archive` as `put_tars` does, then start `cmd`, in one exec: its id and its output as
        (stdout, stderr) chunks from the command alone. SandboxUnavailable when the copy failed (the
        command never ran). `drop`: the exec's user is root, with the capabilities to make the copies
        as uid 1000; else it is uid 1000 itself."""
        if any("\n" in d for d in directories):
            raise ValueError("a directory to copy into has a newline in its name")
        exec_id = self._create(
            ["sh", "-c", _IN_THEN, "sh", "drop" if drop else "self", "\n".join(directories), *cmd],
            stdin=True,
            env=env,
        )
        sock = self._send(exec_id, archive)
        frames = frames_iter(sock, tty=False)
        early: list[bytes] = []  # the command's stdout may reach the stream before the line on stderr
        errors = b""
        try:
            for stream, frame in frames:
                if stream == 2:
                    errors += frame
                else:
                    early.append(frame)
                if len(errors) >= len(COPIED):
                    break
            if not errors.startswith(COPIED):
                errors += b"".join(frame for _stream, frame in frames)[-500:]
        except BaseException:
            sock.close()
            raise
        if not errors.startswith(COPIED):
            sock.close()
            text, code = errors.decode(errors="replace").strip()[-500:], self.wait_exit(exec_id)
            error = NoSetpriv if drop and code == 3 and not text else SandboxUnavailable
            raise error(f"cannot copy into {', '.join(directories)} (exit {code}): {text}")

        def chunks() -> Iterator[tuple[bytes | None, bytes | None]]:
            try:
                yield from ((out, None) for out in early)
                yield None, errors[len(COPIED) :]
                yield from ((frame, None) if stream == 1 else (None, frame) for stream, frame in frames)
            finally:
                sock.close()

        return exec_id, chunks()

    def drain(self, cmd: list[str], sink: IO[bytes], cap: int) -> tuple[int, int, bytes]:
        """Run `cmd`, writing at most `cap` bytes of its stdout to `sink` (the rest is not read).

        Returns (exit code, bytes written, stderr up to 64 KiB)."""
        exec_id = self._create(cmd)
        stream = self.client.api.exec_start(exec_id, stream=True, demux=True)
        written, errors = 0, b""
        try:
            for stdout, stderr in stream:
                if stderr and len(errors) < 65536:
                    errors += stderr[: 65536 - len(errors)]
                if stdout:
                    room = cap - written
                    sink.write(stdout[: max(room, 0)])
                    written += min(len(stdout), max(room, 0))
                    if len(stdout) > room:
                        return -2, written, errors  # over the cap: stop reading at once
        finally:
            close = getattr(stream, "close", None)
            if close is not None:
                close()
        return self.exit_code(exec_id), written, errors


def put_tar(where: Exec, directory: str, archive: bytes) -> None:
    """Extract a tar (made on the host) into `directory` of the container, creating it if needed."""
    with infra(f"cannot copy into {directory}"):
        code, output = where.feed(["sh", "-c", _IN, "sh", directory], archive)
    if code != 0:
        text = output.decode(errors="replace").strip()[-500:]
        raise SandboxUnavailable(f"cannot copy into {directory} (exit {code}): {text}")


def put_tars(where: Exec, directories: list[str], archive: bytes) -> None:
    """Extract a tar whose entries are paths from `/` (made on the host), after creating `directories`."""
    with infra(f"cannot copy into {', '.join(directories)}"):
        code, output = where.feed(["sh", "-c", _IN_MANY, "sh", *directories], archive)
    if code != 0:
        text = output.decode(errors="replace").strip()[-500:]
        raise SandboxUnavailable(f"cannot copy into {', '.join(directories)} (exit {code}): {text}")


def read_capped(where: Exec, path: str, cap: int, note: bytes) -> tuple[bytes, int]:
    """The first `cap` bytes of a regular file, followed by `note` when it is longer, and its
    apparent size (FileNotFoundError, IsADirectoryError as for a local file). Spooled through a file
    on disk, so the host holds one copy of at most `cap + len(note)` bytes."""
    with tempfile.TemporaryFile() as sink:
        with infra(f"cannot read {path}"):
            code, _written, errors = where.drain(["sh", "-c", _READ, "sh", path, str(cap)], sink, cap)
        kind, _, size = errors.decode(errors="replace").partition("\n")[0].partition("|")
        if code == 3 or not size.strip().isdigit():
            raise FileNotFoundError(path)
        if kind not in ("regular file", "regular empty file"):
            raise IsADirectoryError(path) if kind == "directory" else FileNotFoundError(path)
        if int(size) > cap:
            sink.write(note)
        sink.seek(0)
        return sink.read(), int(size)


def get_tar(where: Exec, directory: str, sink: IO[bytes], cap: int) -> None:
    """Write a tar of `directory`'s contents to `sink`; `CopyTooLarge` when its files' apparent size
    (sparse files count in full) or the tar itself passes `cap` bytes."""
    with infra(f"cannot copy {directory} out"):
        code, written, errors = where.drain(["bash", "-c", _TAR_OUT, "sh", directory, str(cap)], sink, cap)
    first = errors.decode(errors="replace").partition("\n")[0].strip()
    if code == 3:
        raise FileNotFoundError(directory)
    if code == 4 or code == -2 or written >= cap:
        size = f"{int(first)} bytes" if first.isdigit() else "more"
        raise CopyTooLarge(
            f"refused to copy {directory} out of the sandbox: it holds {size}, the cap is {cap}"
        )
    if code == -1:  # no exit code: the engine lost the command
        raise SandboxUnavailable(f"cannot copy {directory} out: {errors.decode(errors='replace')[-300:]}")
    # the tree is the agent's: a file it made unreadable, or changed by a process it left running
    if code != 0:
        raise CopyRefused(
            f"refused to copy {directory} out of the sandbox (exit {code}): "
            f"{errors.decode(errors='replace')[-300:]}"
        )


def image_home(container, options: dict, user: str) -> tuple[str, bytes] | None:
    """The image's home directory of the sandbox user as a tar (read before start, while no tmpfs
    hides it); None when the image has none."""
    home = home_of(user)  # the sandbox user's (the container's own process is root's)
    if home not in options["tmpfs"]:
        return None
    try:
        chunks, _stat = container.get_archive(home)
    except docker.errors.NotFound:
        return None
    data = bytearray()
    for chunk in chunks:
        data += chunk
        if len(data) > _HOME_CAP:
            log.warning("the image's %s is over %d bytes: the sandbox's home starts empty", home, _HOME_CAP)
            return None
    return home, bytes(data)


def drain(stream: Iterator[tuple[bytes | None, bytes | None]], collector: OutputCollector) -> None:
    # Keep reading past the cap (the collector drops the excess): an undrained exec stream
    # stalls the engine's handling of this container's later execs.
    try:
        for stdout, stderr in stream:
            collector.feed(stdout, stderr)
    except INFRA_ERRORS as exc:  # the container was killed under the stream: partial output stands
        log.debug("exec stream ended early: %s", exc)
    finally:
        collector.finished.set()


def full_mounts(where: Exec, mounts: list[str]) -> list[str]:
    """Which of `mounts` have under 1 MiB free; best effort (none when the engine fails)."""
    with contextlib.suppress(*INFRA_ERRORS):  # best effort: the command's own result stands
        exec_id = where._create(["timeout", "30", "df", "-P", "-k", *mounts])
        text = where.client.api.exec_start(exec_id).decode(errors="replace")
        return [
            row[5]
            for row in (line.split() for line in text.splitlines()[1:])
            if len(row) >= 6 and row[3].isdigit() and int(row[3]) < 1024
        ]
    return []


def cgroup_memory_text(where: Exec) -> str:
    """The container's memory cgroup counters (cgroup v1 `memory.oom_control` or v2 `memory.events`)."""
    script = (
        "timeout 30 cat /sys/fs/cgroup/memory/memory.oom_control 2>/dev/null || "
        "timeout 30 cat /sys/fs/cgroup/memory.events"
    )
    with infra("cannot read the memory cgroup"):
        exec_id = where._create(["sh", "-c", script])
        return where.client.api.exec_start(exec_id).decode(errors="replace")
