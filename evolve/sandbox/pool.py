"""Containers started ahead of need: each is still a fresh sandbox, used by one job, then removed.

Starting a container (create, start, the home copy) and removing one each cost a few hundred
milliseconds of `runc` work, which an instant agent waits on twice per evaluation. A pool keeps, per
kind of sandbox (`SandboxSpec`), one container started and waiting (more, up to `most`, each time a job
found none ready: jobs running side by side ask for several at once); a job takes it (`DockerSandbox.claim`:
its name, its gateway socket, its wall clock from now on) and the next one starts in the background.
Nothing is reused: a container serves one job and is removed, off the job's path, when the job closes
it. A waiting container is made by the same code and options as a fresh one (same limits, run and
owner labels, mounts; the job label reads `ahead`), and no command has run in it but the home copy.
One that waited longer than its idle allowance (evolve.sandbox.docker_spec) is removed, not used.

`close` removes the waiting containers and waits for every removal; they carry the run and owner
labels, so `reap_run` and the orphan sweep also remove what a crashed process left.
"""

from __future__ import annotations

import concurrent.futures
import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Self

from evolve.sandbox.docker_backend import DockerSandbox
from evolve.sandbox.docker_spec import idle_allowance_s
from evolve.sandbox.docker_start import ImageHomes
from evolve.sandbox.types import SandboxError, SandboxesClosed, SandboxLimits, SandboxUnavailable

log = logging.getLogger(__name__)
AHEAD_JOB = "ahead"
"""The job label of a container started before its job was known."""


@dataclass(frozen=True)
class SandboxSpec:
    """What makes two sandboxes interchangeable before a job takes one."""

    image: str
    run_id: str
    limits: SandboxLimits
    user: str = "agent"
    workdir: str = "/work"
    cap_add: tuple[str, ...] = ()
    gateway: bool = False
    """Whether the job mounts the model gateway's socket (linked in when the job takes it)."""


@dataclass(frozen=True)
class _Waiting:
    started: float
    future: Future[DockerSandbox]


class SandboxPool:
    """Fresh Docker sandboxes, started ahead of need per spec; safe to use from several threads."""

    def __init__(self, *, ahead: int = 1, most: int = 4) -> None:
        """`ahead` containers kept started per spec at first, up to `most` as jobs find none ready."""
        self._ahead: dict[SandboxSpec, int] = {}
        self._first, self._most = ahead, max(ahead, most)
        self._executor = ThreadPoolExecutor(max_workers=2, thread_name_prefix="evolve-pool")
        self._lock = threading.RLock()  # a done future's callback runs at once, in the caller
        self._waiting: dict[SandboxSpec, deque[_Waiting]] = {}
        self._removals: set[Future[None]] = set()
        self._closed = False
        self._homes = ImageHomes()

    def sandbox(self, spec: SandboxSpec, job_id: str, gateway_socket: Path | None = None) -> DockerSandbox:
        """A fresh sandbox for `job_id`: the waiting one when it is ready, else one started now."""
        if spec.gateway != (gateway_socket is not None):
            raise ValueError("a spec with a gateway needs the job's socket, and only it")
        with self._lock:
            if self._closed:
                raise SandboxesClosed("the sandbox pool is closed")
            queue = self._waiting.setdefault(spec, deque())
            ready = next((w for w in queue if w.future.done()), None)
            if ready is not None:
                queue.remove(ready)
            elif spec in self._ahead:  # jobs ask faster than one started ahead serves them: start more
                self._ahead[spec] = min(self._ahead[spec] + 1, self._most)
            while len(queue) < self._ahead.setdefault(spec, self._first):
                queue.append(_Waiting(time.monotonic(), self._executor.submit(self._start_ahead, spec)))
        box = self._take(ready, spec, job_id, gateway_socket) if ready is not None else None
        if box is None:
            box = DockerSandbox.create(
                spec.image,
                run_id=spec.run_id,
                job_id=job_id,
                limits=spec.limits,
                gateway_socket=gateway_socket,
                user=spec.user,
                workdir=spec.workdir,
                cap_add=spec.cap_add,
                homes=self._homes,
            )
        box.release = self._release
        return box

    def close(self) -> None:
        """Remove the waiting containers and wait until every container this pool handed out is gone."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            waiting = [w for queue in self._waiting.values() for w in queue]
            self._waiting.clear()
        for entry in waiting:
            box = self._result(entry)
            if box is not None:
                box.close()
        with self._lock:
            removals = list(self._removals)
        concurrent.futures.wait(removals)
        self._executor.shutdown(wait=True)

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _start_ahead(self, spec: SandboxSpec) -> DockerSandbox:
        return DockerSandbox.create(
            spec.image,
            run_id=spec.run_id,
            job_id=AHEAD_JOB,
            limits=spec.limits,
            user=spec.user,
            workdir=spec.workdir,
            cap_add=spec.cap_add,
            gateway_slot=spec.gateway,
            homes=self._homes,
        )

    def _take(
        self, ready: _Waiting, spec: SandboxSpec, job_id: str, socket: Path | None
    ) -> DockerSandbox | None:
        box = self._result(ready)
        if box is None:
            return None
        box.release = self._release
        if time.monotonic() - ready.started > idle_allowance_s(spec.limits):
            box.close()  # its own clock would end before the job's wall clock: start a fresh one
            return None
        try:
            claimed = box.claim(spec.run_id, job_id, socket)
        except SandboxUnavailable as exc:
            log.warning(
                "a container started ahead could not be handed to job %s (a fresh one starts): %s",
                job_id,
                exc,
            )
            claimed = False
        if not claimed:
            box.close()
            return None
        return box

    @staticmethod
    def _result(entry: _Waiting) -> DockerSandbox | None:
        try:
            return entry.future.result()
        except SandboxError as exc:  # the engine failed to start it; the job starts its own (and sees why)
            log.warning("a container started ahead of need failed: %s", exc)
            return None

    def _release(self, remove: Callable[[], None]) -> None:
        """Remove a used container in the background (at once once the pool is closing)."""
        with self._lock:
            if not self._closed:
                future = self._executor.submit(remove)
                self._removals.add(future)
                future.add_done_callback(self._forget)
                return
        remove()

    def _forget(self, removal: Future[None]) -> None:
        with self._lock:
            self._removals.discard(removal)
