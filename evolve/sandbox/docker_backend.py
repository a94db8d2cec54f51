"""`DockerSandbox`: one fresh container per job, with hard limits and no network.

The container's main process ends at its wall clock (plus the pool's idle allowance,
evolve.sandbox.docker_spec) or when the lease its owner holds ends: within moments of the owner's
death, not at the next sweep (evolve.sandbox.docker_start.Lease); every command runs under
`timeout -k` in its own process group, and the host kills that group (or the whole container) when
a command outlives its deadline or its output cap. The only channel out is the model gateway's Unix
socket (evolve.sandbox.gateway_slot). Copies into a read-only sandbox are gathered into one tar and
extracted in the next command's own exec, before the command starts (or by one exec before anything
is read): each `docker exec` costs tens of milliseconds of `runc`.
"""

from __future__ import annotations

import contextlib
import logging
import posixpath
import tarfile
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Self

import docker
import docker.errors

from evolve.sandbox.docker_copy import (
    Exec,
    NoSetpriv,
    cgroup_memory_text,
    drain,
    full_mounts,
    get_tar,
    put_tar,
    put_tars,
    read_capped,
)
from evolve.sandbox.docker_spec import (
    AGENT_UID,
    container_name,
    container_options,
    exec_wrapper,
    mount_sizes,
)
from evolve.sandbox.docker_start import ImageHomes, Lease, start_container
from evolve.sandbox.engine import INFRA_ERRORS, infra, oom_kill_count, removal_in_progress
from evolve.sandbox.gateway_slot import link_socket, new_slot, remove_slot
from evolve.sandbox.kill import container_freezer, freezer_of, kill_frozen_uid
from evolve.sandbox.layer import LayerWatch
from evolve.sandbox.output import OutputCollector
from evolve.sandbox.tarballs import TarBuilder, extract_dir, tar_of_bytes, tar_of_dir, tar_of_dirs
from evolve.sandbox.types import CopyRefused, ExecResult, SandboxLimits, SandboxUnavailable, truncation_note

log = logging.getLogger(__name__)
_COPY_USERS = frozenset({"agent", str(AGENT_UID), f"{AGENT_UID}:{AGENT_UID}"})
"""Users whose commands take the gathered copies in their own exec: those the copies are made as (the
images' `agent` is uid 1000: sandboxes/base)."""


class DockerSandbox:
    """A running container; create it with `DockerSandbox.create(...)`, use it as a context manager."""

    def __init__(
        self,
        client: docker.DockerClient,
        container,
        *,
        limits: SandboxLimits,
        user: str,
        workdir: str,
        owns_client: bool,
        started_at: float | None = None,
        slot: Path | None = None,
        cap_add: tuple[str, ...] = (),
        lease: Lease | None = None,
    ) -> None:
        self._client = client
        self._container = container
        self._lease = lease
        self._limits = limits
        self._user = user
        self._workdir = workdir
        self._owns_client = owns_client
        # From before the container started: the host's deadline comes before the container's own.
        self._deadline = (started_at or time.monotonic()) + limits.wall_clock_s
        self._exec_count = 0
        self._oom_kills_seen = 0
        self._closed = False
        self._slot = slot
        self._pending: TarBuilder | None = None
        self._pending_dirs: list[str] = []
        # How gathered copies ride in the next command's exec: as its user, by dropping root's uid, or not.
        self._ride: str | None = (
            "self"
            if user in _COPY_USERS
            else ("drop" if user in ("root", "0") and {"SETUID", "SETGID"} <= set(cap_add) else None)
        )
        # a pool's: removes it off the job's path
        self.release: Callable[[Callable[[], None]], None] | None = None
        self._freezer: Path | None = None  # the container's freezer cgroup on this host, once looked up
        self._freezer_known = False
        self._layer = (
            None
            if limits.disk is not None
            else LayerWatch(
                client, container.id, cap=limits.layer_disk, poll_s=limits.layer_poll_s, uid=AGENT_UID
            )
        )

    @classmethod
    def create(
        cls,
        image: str = "evolve-base:latest",
        *,
        run_id: str,
        job_id: str,
        limits: SandboxLimits | None = None,
        gateway_socket: Path | None = None,
        user: str = "agent",
        workdir: str = "/work",
        client: docker.DockerClient | None = None,
        cap_add: tuple[str, ...] = (),
        gateway_slot: bool = False,
        homes: ImageHomes | None = None,
    ) -> DockerSandbox:
        """Start a fresh container labelled `evolve.run=run_id`, `evolve.job=job_id`.

        `gateway_slot` (for a container started ahead of its job) mounts an empty gateway directory,
        into which `claim` links the job's socket. `homes` keeps the image's home once read (a pool's)."""
        limits = limits or SandboxLimits()
        if gateway_socket is not None and not gateway_socket.is_socket():
            raise SandboxUnavailable(f"gateway socket {gateway_socket} is not a Unix socket")
        slot = new_slot() if gateway_socket is not None or gateway_slot else None
        if slot is not None and gateway_socket is not None and not link_socket(slot, gateway_socket):
            remove_slot(slot)
            slot = None  # the socket file itself is mounted
        options = container_options(
            run_id=run_id,
            job_id=job_id,
            limits=limits,
            user=user,
            workdir=workdir,
            gateway_socket=gateway_socket,
            cap_add=cap_add,
            gateway_dir=slot,
        )
        try:
            return cls._start(
                image, options, client, limits=limits, user=user, workdir=workdir, slot=slot, homes=homes
            )
        except BaseException:
            remove_slot(slot)
            raise

    @classmethod
    def _start(
        cls,
        image: str,
        options: dict,
        client: docker.DockerClient | None,
        *,
        limits: SandboxLimits,
        user: str,
        workdir: str,
        slot: Path | None,
        homes: ImageHomes | None,
    ) -> DockerSandbox:
        owns_client = client is None
        with infra("cannot reach the Docker engine"):
            client = client or docker.from_env(timeout=120)
        try:
            container, lease, started_at, home = start_container(client, image, options, workdir, user, homes)
        except BaseException:
            if owns_client:
                client.close()
            raise
        box = cls(
            client,
            container,
            limits=limits,
            user=user,
            workdir=workdir,
            owns_client=owns_client,
            started_at=started_at,
            slot=slot,
            cap_add=tuple(options["cap_add"]),
            lease=lease,
        )
        if home is not None:
            try:
                box._copy_home(*home)
            except BaseException:
                box.close()
                raise
        return box

    def claim(self, run_id: str, job_id: str, gateway_socket: Path | None) -> bool:
        """Hand a container started ahead to its job: its name, its gateway socket, its wall clock from
        now. False when it cannot be (the caller then closes it and starts a fresh one)."""
        if (gateway_socket is None) != (self._slot is None):
            return False
        if (
            gateway_socket is not None
            and self._slot is not None
            and not link_socket(self._slot, gateway_socket)
        ):
            return False
        with infra("cannot rename a container"):
            self._container.rename(container_name(run_id, job_id))
        self._deadline = time.monotonic() + self._limits.wall_clock_s
        return True

    # -- the Sandbox protocol ------------------------------------------------------------------

    @property
    def workdir(self) -> str:
        return self._workdir

    @property
    def container_id(self) -> str:
        return self._container.id

    def exec(
        self,
        cmd: list[str],
        *,
        input: str | bytes | None = None,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        timeout: float | None = None,
    ) -> ExecResult:
        if not cmd:
            raise ValueError("exec needs a command")
        if self._deadline <= time.monotonic():
            return self._exhausted()
        if self._layer_full():
            return ExecResult(
                -1, "", f"[evolve: {self._layer_note()}; no command runs in it now]\n", 0.0, disk_full=True
            )
        self._exec_count += 1
        pidfile = f"/tmp/.evolve-exec-{self._exec_count}.pid"
        stdin_file = ""
        if input is not None:
            stdin_file = f"/tmp/.evolve-stdin-{self._exec_count}"
            self.write_file(stdin_file, input)
        ride = self._ride is not None and not any("\n" in d for d in self._pending_dirs)
        copies = self._take_pending() if ride else None
        self._flush()
        started = time.monotonic()
        remaining = self._deadline - started
        if remaining <= 0:
            return self._exhausted()
        limit = remaining if timeout is None else min(timeout, remaining)
        wrapper = exec_wrapper(
            cmd,
            pidfile=pidfile,
            stdin_file=stdin_file,
            cwd=self._path(cwd or "."),
            limit_s=limit,
            grace_s=self._limits.kill_grace_s,
        )
        collector = OutputCollector(self._limits.output_limit_bytes)
        try:
            with infra("exec failed"):
                exec_id, stream = self._start_exec(wrapper, env or {}, copies)
        except SandboxUnavailable as exc:  # say how the container ended, if it did
            raise SandboxUnavailable(f"{exc}; {self._state()}") from exc
        started = time.monotonic()  # the command's own time, from when it started (after any copies)
        reader = threading.Thread(target=drain, args=(stream, collector), daemon=True)
        reader.start()
        finished = collector.finished.wait(limit + self._limits.kill_grace_s + 3.0)
        if not finished or collector.over_limit.is_set():
            self._exec_as().kill_group(exec_id, pidfile)
            reader.join(3.0)
            if reader.is_alive():
                self._kill_container()
                reader.join(3.0)
        duration = time.monotonic() - started
        with infra("cannot inspect exec"):
            returncode = self._exec_as().wait_exit(exec_id)
        timed_out = not finished or (returncode in (124, 137) and duration >= limit)
        if timed_out and finished:
            self._exec_as().kill_group(exec_id, pidfile)  # children that outlived timeout's TERM
        self.end_agent_processes()
        oom = returncode == 137 and not timed_out and self._new_oom_kill()
        stdout, stderr = collector.texts()
        full = self._full_mounts() if returncode != 0 and not timed_out else []
        if full:
            stderr += (
                f"\n[evolve: the sandbox's disk is full ({', '.join(full)}; its files may hold "
                f"{self._mount_note()})]\n"
            )
        elif self._layer_full():
            stderr += f"\n[evolve: {self._layer_note()}]\n"
        return ExecResult(
            returncode,
            stdout,
            stderr,
            duration,
            timed_out=timed_out,
            oom_killed=oom,
            truncated=collector.over_limit.is_set(),
            disk_full=bool(full) or self._layer_full(),
        )

    def end_agent_processes(self) -> None:
        """Kill every process of the agent's uid in the container. Run after every command, so none outlives
        the command that started it: a daemon the agent leaves (its own session, `setsid`) could otherwise
        stop or starve the engine's next command here (a copy out, a transcript read), which runs as the
        same uid. Atomically, so no fork slips between (a fork loop escapes any scan): from the host with
        the container's cgroup frozen where the host can write it, else from inside by a process of that
        uid (`kill -1`: every process it may signal, at once)."""
        if not self._freezer_known:
            self._freezer = container_freezer(self._container.id)
            if self._freezer is None:  # not where Docker usually puts it: by its main process
                with infra("cannot inspect the container"):
                    self._container.reload()
                self._freezer = freezer_of(self._container.attrs["State"].get("Pid") or 0)
            self._freezer_known = True
        if self._freezer is not None:
            try:
                if kill_frozen_uid(AGENT_UID, self._freezer) is not None:
                    return
            except OSError as exc:  # the cgroup went with the container, or is not ours: kill from inside
                log.debug("cannot freeze %s: %s", self._container.id[:12], exc)
        with contextlib.suppress(*INFRA_ERRORS):  # best effort: a container that is gone has no processes
            exec_id = self._client.api.exec_create(
                self._container.id, ["sh", "-c", "kill -KILL -1"], user=f"{AGENT_UID}:{AGENT_UID}"
            )["Id"]
            self._client.api.exec_start(exec_id)

    def write_file(self, path: str, content: str | bytes) -> None:
        data = content.encode() if isinstance(content, str) else content
        target = self._path(path)
        parent, name = posixpath.split(target)
        if self._limits.disk is not None:
            self._stage(parent).add_bytes(target.lstrip("/"), data)
        else:
            self._put(parent, tar_of_bytes(name, data))

    def read_file(self, path: str) -> bytes:
        """The file's bytes; one over the copy cap (sparse files count in full) is cut at the cap, with
        a note at its end saying so."""
        target = self._path(path)
        cap = self._limits.copy_limit_bytes
        note = truncation_note(target, cap)
        self._flush()
        data, size = read_capped(self._exec_as(), target, cap - len(note), note)
        if size > cap - len(note):
            log.warning("%s is %d bytes, over the copy cap of %d: truncated", target, size, cap)
        return data

    def put_dir(self, host_dir: Path, path: str) -> None:
        target = self._path(path)
        if self._limits.disk is not None:
            self._stage(target).add_tree(host_dir, target.lstrip("/"))
        else:
            self._put(target, tar_of_dir(host_dir))

    def get_dir(self, path: str, host_dir: Path) -> None:
        """Copy a directory out; `CopyTooLarge` (nothing copied) when it holds more than the copy cap."""
        self._flush()
        with tempfile.TemporaryFile() as spool:
            get_tar(self._exec_as(), self._path(path), spool, self._limits.copy_limit_bytes)
            spool.seek(0)
            try:
                extract_dir(spool, host_dir, strip=".", cap=self._limits.copy_limit_bytes)
            except tarfile.TarError as exc:  # a FIFO, a device, a link out of the tree, too deep: agent-made
                raise CopyRefused(f"refused to copy {self._path(path)} out of the sandbox: {exc}") from exc

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._pending, self._pending_dirs = None, []
        if self._lease is not None:
            self._lease.end()  # the container stops by itself now, even if its removal below fails
        if self._layer is not None:
            self._layer.stop()
        if self.release is not None:
            self.release(self._remove)
        else:
            self._remove()

    def _remove(self) -> None:
        try:
            self._container.remove(force=True)
        except docker.errors.NotFound:
            log.debug("container %s was already gone (reaped or engine restarted)", self._container.id[:12])
        except INFRA_ERRORS as exc:
            if isinstance(exc, docker.errors.APIError) and removal_in_progress(exc):
                log.debug("container %s is being removed by a sweep", self._container.id[:12])
                return
            log.warning(
                "could not remove container %s (the next reap removes it): %s", self._container.id[:12], exc
            )
        finally:
            remove_slot(self._slot)
            if self._owns_client:
                self._client.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- helpers -------------------------------------------------------------------------------

    def _path(self, path: str) -> str:
        return posixpath.normpath(posixpath.join(self._workdir, path))

    def _layer_full(self) -> bool:
        return self._layer is not None and self._layer.full.is_set()

    def _layer_note(self) -> str:
        return (
            f"the sandbox's writable layer passed its cap of {self._limits.layer_disk}: its processes "
            "were killed"
        )

    def _full_mounts(self) -> list[str]:
        """The writable mounts with under 1 MiB free (a failed command may have died of a full disk)."""
        if self._limits.disk is None:
            return []
        return full_mounts(self._exec_as(), list(self._mount_sizes()))

    def _mount_sizes(self) -> dict[str, int]:
        return mount_sizes(self._limits, user=self._user, workdir=self._workdir)

    def _mount_note(self) -> str:
        """The writable mounts' sizes, as a person reads them ("/work 96 MiB, /tmp 32 MiB, ...")."""
        return ", ".join(f"{place} {size >> 20} MiB" for place, size in self._mount_sizes().items())

    def _copy_home(self, home: str, archive: bytes) -> None:
        """The image's home, hidden by its tmpfs mount, copied onto it: root's now; any other user's
        (that tmpfs belongs to uid 1000) with the first copies in, sparing an exec."""
        parent = posixpath.dirname(home)
        if home == "/root":
            put_tar(Exec(self._client, self._container.id, self._user), parent, archive)
        else:
            self._stage(parent).add_archive(archive, parent.lstrip("/"))

    def _stage(self, directory: str) -> TarBuilder:
        """The tar of copies not yet made, to which one going into `directory` is added."""
        if directory not in self._pending_dirs:
            self._pending_dirs.append(directory)
        if self._pending is None:
            self._pending = TarBuilder()
        return self._pending

    def _flush(self) -> None:
        """Make the gathered copies. Files copied in belong to uid 1000 whoever the sandbox user is
        (graders running as root hand them to the tests). A read-only sandbox takes them through exec
        + tar (the archive API cannot reach its tmpfs mounts)."""
        copies = self._take_pending()
        if copies is None:
            return
        directories, archive = copies
        put_tars(Exec(self._client, self._container.id, f"{AGENT_UID}:{AGENT_UID}"), directories, archive)

    def _start_exec(self, wrapper: list[str], env: dict[str, str], copies: tuple[list[str], bytes] | None):
        """Start the command; with the gathered `copies` made first in the same exec (a second spared)."""
        if copies is not None:
            try:
                return self._exec_as().start_after_copies(*copies, wrapper, env, drop=self._ride == "drop")
            except NoSetpriv:  # this image has no setpriv: its copies take an exec of their own
                self._ride = None
                put_tars(Exec(self._client, self._container.id, f"{AGENT_UID}:{AGENT_UID}"), *copies)
        exec_id = self._client.api.exec_create(self._container.id, wrapper, user=self._user, environment=env)[
            "Id"
        ]
        return exec_id, self._client.api.exec_start(exec_id, stream=True, demux=True)

    def _take_pending(self) -> tuple[list[str], bytes] | None:
        """The copies not yet made (their directories and tar), now the caller's to make."""
        if self._pending is None:
            return None
        copies = self._pending_dirs, self._pending.getvalue()
        self._pending, self._pending_dirs = None, []
        return copies

    def _exhausted(self) -> ExecResult:
        self._kill_container()
        return ExecResult(-1, "", "sandbox wall clock exhausted", 0.0, timed_out=True)

    def _put(self, directory: str, archive: bytes) -> None:
        """A writable root takes copies through the archive API, anywhere, as before (uid 1000)."""
        with infra(f"cannot copy into {directory}"):
            try:
                self._container.put_archive(directory, archive)
            except docker.errors.NotFound:
                put_tar(self._exec_as(), directory, tar_of_dirs([]))  # mkdir -p as the sandbox user
                self._container.put_archive(directory, archive)

    def _exec_as(self) -> Exec:
        return Exec(self._client, self._container.id, self._user)

    def _state(self) -> str:
        """The container's state in Docker's words, for a failure's reason (how it ended, if it did)."""
        try:
            self._container.reload()
        except INFRA_ERRORS as exc:
            return f"its state cannot be read: {exc}"
        state = self._container.attrs.get("State", {})
        fields = ("Status", "ExitCode", "OOMKilled", "Error", "StartedAt", "FinishedAt")
        return "the container: " + ", ".join(f"{key} {state.get(key)!r}" for key in fields if key in state)

    def _kill_container(self) -> None:
        with contextlib.suppress(*INFRA_ERRORS):
            self._container.kill()

    def _new_oom_kill(self) -> bool:
        """Whether the cgroup's OOM-kill counter grew since the last look (cgroup v1 or v2)."""
        try:
            count = oom_kill_count(cgroup_memory_text(self._exec_as()))
        except SandboxUnavailable as exc:
            raise SandboxUnavailable(f"{exc}; {self._state()}") from exc
        if count is None:
            with infra("cannot inspect the container"):
                self._container.reload()
            return bool(self._container.attrs["State"].get("OOMKilled"))
        grew, self._oom_kills_seen = count > self._oom_kills_seen, count
        return grew
